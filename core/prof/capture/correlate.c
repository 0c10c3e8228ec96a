/* correlate.c — CUPTI correlation id -> what EXTERNAL_CORRELATION records said: op, range, module. */
#include <string.h>

#include "capture.h"

/*
** Two generations of open-addressed tables, each at most half full: ids go into the current one;
** when it holds limit / 2, it becomes the previous one and the older generation is forgotten. So a
** run of any length keeps the last limit / 2 .. limit launches: CUPTI hands records over within a
** few buffers of their launch, long before that many more launches happen.
*/
int profK_corr_init(prof_State *S, profK_CorrMap *m, int64_t limit) {
  memset(m, 0, sizeof *m);
  int64_t half = limit / 2 > 0 ? limit / 2 : 1, cap = 64;
  while (cap < 2 * half) cap *= 2;
  m->slot = profI_alloc(S, sizeof *m->slot * (size_t)(2 * cap));
  if (m->slot == NULL)
    return profI_error(S, PROF_ERRMEM, "capture: out of memory for %lld correlations",
                       (long long)limit);
  m->cap = cap;
  m->limit = half;
  profK_corr_clear(m);
  return PROF_OK;
}

void profK_corr_free(prof_State *S, profK_CorrMap *m) {
  profI_free(S, m->slot, sizeof *m->slot * (size_t)(2 * m->cap));
  memset(m, 0, sizeof *m);
}

void profK_corr_clear(profK_CorrMap *m) {
  if (m->slot != NULL) memset(m->slot, 0, sizeof *m->slot * (size_t)(2 * m->cap));
  m->n = 0;
  m->current = 0;
}

/* Fibonacci hashing: CUPTI's ids are consecutive, which a mask alone would cluster. */
static int64_t home(const profK_CorrMap *m, uint32_t id) {
  return (int64_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (m->cap - 1);
}

/* id's slot in generation g: the one holding it, or the empty one where it would go. */
static profK_Corr *probe(const profK_CorrMap *m, int g, uint32_t id) {
  profK_Corr *t = m->slot + (size_t)g * (size_t)m->cap;
  for (int64_t k = home(m, id);; k = (k + 1) & (m->cap - 1))
    if (t[k].id == id || t[k].id == 0) return &t[k];
}

profK_Corr *profK_corr_put(profK_CorrMap *m, uint32_t id) {
  if (id == 0 || m->slot == NULL) return NULL;
  profK_Corr *c = probe(m, m->current, id);
  if (c->id == id) return c;
  profK_Corr *old = probe(m, 1 - m->current, id);
  if (old->id == id) return old;
  if (m->n >= m->limit) {
    /* the current generation is full: it becomes the previous one, the oldest is forgotten */
    m->current = 1 - m->current;
    memset(m->slot + (size_t)m->current * (size_t)m->cap, 0, sizeof *m->slot * (size_t)m->cap);
    m->n = 0;
    c = probe(m, m->current, id);
  }
  m->n++;
  c->id = id;
  return c;
}

const profK_Corr *profK_corr_get(const profK_CorrMap *m, uint32_t id) {
  if (id == 0 || m->slot == NULL) return NULL;
  const profK_Corr *c = probe(m, m->current, id);
  if (c->id == id) return c;
  c = probe(m, 1 - m->current, id);
  return c->id == id ? c : NULL;
}
