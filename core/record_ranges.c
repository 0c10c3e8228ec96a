/* record_ranges.c — user ranges, instants and counters on the calling thread's recorder. */
#include "recorder.h"

/* with_stack's location, out of line: the hot path then saves no registers for the call */
__attribute__((noinline, cold)) static const char *stack_of(prof_State *S) {
  return S->stack_fn(S->stack_ud, S);
}

/* number + 1, so the zeroed events of other kinds read as unnumbered */
static inline void range_push(prof_State *S, const char *name, int64_t number1) {
  if (!profR_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (__builtin_expect(R == NULL, 0)) return;
  int32_t k = R->n_ranges;
  if (__builtin_expect(k == PROF_RANGE_MAX, 0)) {
    profR_sticky(R, PROF_ERRSTATE, "prof_range_push: ranges nested too deep", profR_attr_node(R));
    return;
  }
  profR_Range *r = &R->ranges[k];
  R->n_ranges = k + 1;
  r->name = name;
  r->number1 = number1;
  r->stack = __builtin_expect(S->stack_fn != NULL, 0) ? stack_of(S) : NULL;   /* where it opened */
  r->module = profR_attr_node(R);
  r->t0 = profC_ticks(&S->clock);
}

void prof_range_push(prof_State *S, const char *name) { range_push(S, name, 0); }

void prof_range_push_numbered(prof_State *S, const char *name, int64_t n) {
  range_push(S, name, n < 0 ? 0 : n + 1);
}

void prof_range_pop(prof_State *S) {
  if (!profR_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (__builtin_expect(R == NULL, 0)) return;
  int64_t now = profC_ticks(&S->clock);
  if (__builtin_expect(R->n_ranges == 0, 0)) {
    profR_sticky(R, PROF_ERRSTATE, "prof_range_pop: no range is open", profR_attr_node(R));
    return;
  }
  const profR_Range *r = &R->ranges[--R->n_ranges];
  if (__builtin_expect(R->n_events >= R->cap_events, 0)) {
    if (R->cap_events > 0) R->dropped++;
    return;
  }
  /* field by field: a struct assignment becomes `rep stos`, slow to start for 120 bytes */
  profR_Event *e = &R->events[R->n_events++];
  e->kind = PROF_EVENT_RANGE;
  e->phase = (uint8_t)R->phase;
  e->op_kind = -1;
  e->module = r->module;
  e->device = 0;
  e->shapes = 0;
  e->name = r->name;
  e->stack = r->stack;
  e->correlation = 0;
  e->t_begin = r->t0;
  e->t_end = now;
  e->macs = e->flops = e->bytes_read = e->bytes_written = 0;
  e->bytes_allocated = e->bytes_freed = 0;
  e->value = r->number1;
  e->total = 0;
}

void prof_instant(prof_State *S, const char *name) {
  if (!profR_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  profR_Event *e = profR_push(R, PROF_EVENT_INSTANT, name);
  if (e != NULL) e->t_begin = e->t_end = profC_ticks(&S->clock);
}

void prof_counter(prof_State *S, const char *name, int64_t value) {
  if (!profR_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  profR_Event *e = profR_push(R, PROF_EVENT_COUNTER, name);
  if (e == NULL) return;
  e->t_begin = e->t_end = profC_ticks(&S->clock);
  e->value = value;
}
