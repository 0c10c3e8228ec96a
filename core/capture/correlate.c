/* correlate.c — CUPTI correlation id -> what EXTERNAL_CORRELATION records said: op, range, module. */
#include <string.h>

#include "capture.h"

int profK_corr_init(prof_State *S, profK_CorrMap *m, int64_t limit) {
  memset(m, 0, sizeof *m);
  int64_t cap = 64;
  while (cap < 2 * limit) cap *= 2;   /* at most half full: short probes */
  m->slot = profI_alloc(S, sizeof *m->slot * (size_t)cap);
  if (m->slot == NULL)
    return profI_error(S, PROF_ERRMEM, "capture: out of memory for %lld correlations",
                       (long long)limit);
  m->cap = cap;
  m->limit = limit;
  profK_corr_clear(m);
  return PROF_OK;
}

void profK_corr_free(prof_State *S, profK_CorrMap *m) {
  profI_free(S, m->slot, sizeof *m->slot * (size_t)m->cap);
  memset(m, 0, sizeof *m);
}

void profK_corr_clear(profK_CorrMap *m) {
  if (m->slot != NULL) memset(m->slot, 0, sizeof *m->slot * (size_t)m->cap);
  m->n = 0;
  m->refused = 0;
}

/* Fibonacci hashing: CUPTI's ids are consecutive, which a mask alone would cluster. */
static int64_t home(const profK_CorrMap *m, uint32_t id) {
  return (int64_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (m->cap - 1);
}

profK_Corr *profK_corr_put(profK_CorrMap *m, uint32_t id) {
  if (id == 0 || m->slot == NULL) return NULL;
  for (int64_t k = home(m, id);; k = (k + 1) & (m->cap - 1)) {
    profK_Corr *c = &m->slot[k];
    if (c->id == id) return c;
    if (c->id == 0) {
      if (m->n >= m->limit) {
        m->refused++;
        return NULL;
      }
      m->n++;
      c->id = id;
      return c;
    }
  }
}

const profK_Corr *profK_corr_get(const profK_CorrMap *m, uint32_t id) {
  if (id == 0 || m->slot == NULL) return NULL;
  for (int64_t k = home(m, id);; k = (k + 1) & (m->cap - 1)) {
    const profK_Corr *c = &m->slot[k];
    if (c->id == id) return c;
    if (c->id == 0) return NULL;
  }
}
