/* trace_sort.c — the order a trace lists events in: per thread, every span before what it encloses. */
#include <string.h>

#include "session.h"
#include "trace_internal.h"

/* a goes before b: it begins first, or lasts longer, or (equal times) closed later. */
static inline int before(const profX_Key *a, const profX_Key *b) {
  if (a->begin != b->begin) return a->begin < b->begin;
  if (a->end != b->end) return a->end > b->end;
  return a->index > b->index;
}

static void insertion_sort(profX_Key *a, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    profX_Key k = a[i];
    int64_t j = i;
    for (; j > 0 && before(&k, &a[j - 1]); j--) a[j] = a[j - 1];
    a[j] = k;
  }
}

/* Top-down merge sort. Recorders buffer in close order, so most halves are already in order
   and the check before merging makes those O(1). tmp holds n / 2 keys. */
static void merge_sort(profX_Key *a, profX_Key *tmp, int64_t n) {
  if (n <= 16) {
    insertion_sort(a, n);
    return;
  }
  int64_t h = n / 2;
  merge_sort(a, tmp, h);
  merge_sort(a + h, tmp, n - h);
  if (!before(&a[h], &a[h - 1])) return;
  memcpy(tmp, a, (size_t)h * sizeof *a);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) a[k++] = before(&a[j], &tmp[i]) ? a[j++] : tmp[i++];
  while (i < h) a[k++] = tmp[i++];
}

static int add_run(prof_State *S, profX_Order *o, int64_t start, int32_t thread) {
  if (o->n_runs == o->cap_runs) {
    int32_t cap = o->cap_runs ? 2 * o->cap_runs : 8;
    profX_Run *r = profI_realloc(S, o->runs, (size_t)o->cap_runs * sizeof *r, (size_t)cap * sizeof *r);
    if (r == NULL) return profI_error(S, PROF_ERRMEM, "trace: out of memory for thread runs");
    o->runs = r;
    o->cap_runs = cap;
  }
  o->runs[o->n_runs++] = (profX_Run){.start = start, .end = start, .thread = thread};
  return PROF_OK;
}

int profX_order(prof_State *S, profX_Order *o) {
  memset(o, 0, sizeof *o);
  int64_t n = S->snap.n_host_events;   /* device events are written by trace_gpu.c */
  profX_Key *tmp = NULL;
  int rc = PROF_OK;
  if (n == 0) return PROF_OK;
  o->keys = profI_alloc(S, (size_t)n * sizeof *o->keys);
  o->n = n;
  tmp = profI_alloc(S, (size_t)(n / 2 + 1) * sizeof *tmp);
  if (o->keys == NULL || tmp == NULL) {
    rc = profI_error(S, PROF_ERRMEM, "trace: out of memory ordering %lld events", (long long)n);
    goto end;
  }
  o->min_begin = INT64_MAX;
  o->max_end = INT64_MIN;
  /* The recorders' buffers read in place, in prof_event_at's order (threads in creation order,
     each in record order), so that global index i is what prof_event_at(S, i) returns: one
     event fetch per key instead of a walk and a copy. */
  int64_t i = 0;
  for (const profR_Recorder *R = S->recorders; R != NULL && i < n; R = R->next) {
    if (R->n_events == 0) continue;
    if ((rc = add_run(S, o, i, R->index)) != PROF_OK) goto end;
    for (int64_t j = 0; j < R->n_events && i < n; j++, i++) {
      const profR_Event *e = &R->events[j];
      int64_t begin = profH_ns(&S->clock, e->t_begin), end = profH_ns(&S->clock, e->t_end);
      if (end < begin) end = begin;
      o->keys[i] = (profX_Key){.begin = begin, .end = end, .index = i};
      if (begin < o->min_begin) o->min_begin = begin;
      if (end > o->max_end) o->max_end = end;
    }
    o->runs[o->n_runs - 1].end = i;
  }
  if (i < n) {
    rc = profI_error(S, PROF_ERRSTATE, "trace: %lld events vanished while writing", (long long)(n - i));
    goto end;
  }
  for (int32_t r = 0; r < o->n_runs; r++)
    merge_sort(o->keys + o->runs[r].start, tmp, o->runs[r].end - o->runs[r].start);
end:
  profI_free(S, tmp, (size_t)(n / 2 + 1) * sizeof *tmp);
  if (rc != PROF_OK) profX_order_free(S, o);
  return rc;
}

void profX_order_free(prof_State *S, profX_Order *o) {
  profI_free(S, o->keys, (size_t)o->n * sizeof *o->keys);
  profI_free(S, o->runs, (size_t)o->cap_runs * sizeof *o->runs);
  memset(o, 0, sizeof *o);
}
