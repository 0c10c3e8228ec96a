/* record_ranges.c — user ranges, instants and counters on the calling thread's recorder. */
#include "recorder.h"

/* number + 1, so the zeroed events of other kinds read as unnumbered */
static void range_push(prof_State *S, const char *name, int64_t number1) {
  if (!profR_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  if (R->n_ranges == PROF_RANGE_MAX) {
    profR_sticky(R, PROF_ERRSTATE, "prof_range_push: ranges nested too deep", profR_attr_node(R));
    return;
  }
  profR_Range *r = &R->ranges[R->n_ranges++];
  r->name = name;
  r->number1 = number1;
  r->stack = S->stack_fn != NULL ? S->stack_fn(S->stack_ud, S) : NULL;   /* where it opened */
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
  if (R == NULL) return;
  if (R->n_ranges == 0) {
    profR_sticky(R, PROF_ERRSTATE, "prof_range_pop: no range is open", profR_attr_node(R));
    return;
  }
  int64_t now = profC_ticks(&S->clock);
  const profR_Range *r = &R->ranges[--R->n_ranges];
  profR_Event *e = profR_push(R, PROF_EVENT_RANGE, r->name);
  if (e == NULL) return;
  e->module = r->module;
  e->t_begin = r->t0;
  e->t_end = now;
  e->value = r->number1;
  e->stack = r->stack;
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
