/* timemap.c — CUPTI's clock onto the host's: a piecewise-linear map through sampled pairs. */
#include "capture.h"

int profK_time_add(profK_TimeMap *m, int64_t dev, int64_t host) {
  if (m->n > 0 && dev < m->pair[m->n - 1].dev) return PROF_ERRARG;
  if (m->n > 0 && dev == m->pair[m->n - 1].dev) {
    m->pair[m->n - 1].host = host;   /* the same instant sampled again: the later reading wins */
    return PROF_OK;
  }
  if (m->n == PROFK_PAIRS_MAX) {
    /* keep the first, every other one after it, and room at the end: the span stays covered */
    int32_t k = 1;
    for (int32_t i = 2; i < m->n; i += 2) m->pair[k++] = m->pair[i];
    m->n = k;
  }
  m->pair[m->n++] = (profK_Pair){.dev = dev, .host = host};
  return PROF_OK;
}

/* a's line through b, at dev: host = a.host + (dev - a.dev) * slope, in double (ns over hours
   fit a double's 53 bits to well under a ns) */
static int64_t on_line(const profK_Pair *a, const profK_Pair *b, int64_t dev) {
  double slope = (double)(b->host - a->host) / (double)(b->dev - a->dev);
  double d = (double)(dev - a->dev) * slope;
  return a->host + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

int64_t profK_time_map(const profK_TimeMap *m, int64_t dev) {
  if (m->n == 0) return dev;
  if (m->n == 1) return dev - m->pair[0].dev + m->pair[0].host;
  /* the segment [lo, lo + 1] around dev (binary search), clamped to the first and last */
  int32_t lo = 0, hi = m->n - 1;
  if (dev <= m->pair[0].dev) return on_line(&m->pair[0], &m->pair[1], dev);
  if (dev >= m->pair[hi].dev) return on_line(&m->pair[hi - 1], &m->pair[hi], dev);
  while (hi - lo > 1) {
    int32_t mid = lo + (hi - lo) / 2;
    if (m->pair[mid].dev <= dev) lo = mid;
    else hi = mid;
  }
  return on_line(&m->pair[lo], &m->pair[lo + 1], dev);
}
