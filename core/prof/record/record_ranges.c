/* record_ranges.c — user ranges, instants and counters on the calling thread's recorder. */
#include <string.h>

#include "recorder.h"

/* A range's head (session.h): kind, op_kind -1 and module as the value of the event's first 8
   bytes (kind in the low byte, then phase, op_kind, module), the phase left for the pop. Made at
   the push, where it costs less than in the pop (measured: 0.3 ns a pair). */
static inline uint64_t range_head(int32_t module) {
  return PROF_EVENT_RANGE | (uint64_t)0xffff << 16 | (uint64_t)(uint32_t)module << 32;
}

/* The event of the range r closed at now, as event n of R's buffer: the first 64 bytes only
   (prof_event_at supplies the zero counts of a range, so the event's second half is never
   touched), without a struct assignment or memset (they become `rep stos`, slow to start).
   kind, phase, op_kind and module are one 8-byte store where the byte order allows, and name ..
   t_begin are copied in the range's order, which is the event's (session.h): two 16-byte moves. */
static inline void put_range(profR_Recorder *R, int64_t n, const profR_Range *r, int64_t now) {
  profR_Event *e = &R->events[n];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  _Static_assert(offsetof(profR_Event, phase) == 1 && offsetof(profR_Event, op_kind) == 2 &&
                     offsetof(profR_Event, module) == 4, "the event's head is range_head's");
  uint64_t head = r->head | (uint64_t)(uint8_t)R->phase << 8;
  memcpy(e, &head, sizeof head);
#else
  e->kind = PROF_EVENT_RANGE;
  e->phase = (uint8_t)R->phase;
  e->op_kind = -1;
  e->module = (int32_t)(uint32_t)(r->head >> 32);
#endif
  e->device = 0;
  e->shapes = 0;
  /* name, stack, correlation, t_begin */
  memcpy((char *)e + offsetof(profR_Event, name), (const char *)r + offsetof(profR_Range, name),
         offsetof(profR_Event, t_begin) + sizeof e->t_begin - offsetof(profR_Event, name));
  e->t_end = now;
  e->value = r->number1;
}

/* A popped slot as the leaf push expects to find it: no stack, no correlation (the leaf push
   writes neither, two stores fewer on the path every range takes). */
static inline void free_range(profR_Range *r) {
  r->stack = NULL;
  r->corr = 0;
}

/* The common case of both ends: a thread seen before (its recorder cached), the session active
   on the TSC, no stack hook, no device capture. One compare (range_fast holds the serial only
   then), tested before anything else, so that path is a leaf: no call, no register saved. When
   it holds, profR_cache.R is the recorder, never NULL (profR_lookup caches only one it found or
   made; the entry's S is NULL until then), so nothing tests it. */
static inline int fast_path(prof_State *S) {
#if PROF_HAVE_TSC
  return __builtin_expect(profR_cache.S == S &&
                              profR_cache.serial ==
                                  atomic_load_explicit(&S->range_fast, memory_order_relaxed),
                          1);
#else
  (void)S;
  return 0;
#endif
}

/* number + 1, so the zeroed events of other kinds read as unnumbered. Every case: a new thread,
   no TSC, with_stack, too deep. */
__attribute__((noinline)) static void push_any(prof_State *S, const char *name, int64_t number1) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  int32_t k = R->n_ranges;
  if (k == PROF_RANGE_MAX) {
    profR_sticky(R, PROF_ERRSTATE, "prof_range_push: ranges nested too deep", profR_attr_node(R));
    return;
  }
  profR_Range *r = &R->ranges[k];
  R->n_ranges = k + 1;
  r->name = name;
  r->number1 = number1;
  r->stack = S->stack_fn != NULL ? S->stack_fn(S->stack_ud, S) : NULL;   /* where it opened */
  r->head = range_head(profR_attr_node(R));
  /* with a device capture open the range gets a correlation (an op's kind: the thread in the
     high bits), pushed so that the kernels launched inside it name it */
  r->corr = 0;
  if (S->corr_push != NULL) {
    r->corr = ((uint64_t)(R->index + 1) << 40) | ++R->next_correlation;
    S->corr_push(S->corr_ud, PROFK_EXT_RANGE, r->corr);
  }
  r->t0 = profH_ticks(&S->clock);
}

/* The leaf push reads the clock before it writes anything: the read waits for the stores ahead
   of it (measured: the same five stores before `rdtsc` cost 1.4 ns more per pair than after it),
   and the range begins at the read either way. What it loads first (the depth, the innermost
   module) the slot needs anyway, so the range still leaves out the push's own lookups. */
static inline void range_push(prof_State *S, const char *name, int64_t number1) {
  if (fast_path(S)) {
    profR_Recorder *R = profR_cache.R;
    int32_t k = R->n_ranges;
    if (__builtin_expect(k < PROF_RANGE_MAX, 1)) {
      int32_t module = profR_attr_node(R);
#if PROF_HAVE_TSC
      int64_t t0 = (int64_t)__rdtsc();
#else
      int64_t t0 = 0;   /* not reached: fast_path is false without the TSC */
#endif
      R->n_ranges = k + 1;
      profR_Range *r = &R->ranges[k];
      r->name = name;
      r->number1 = number1;
      r->head = range_head(module);
      r->t0 = t0;
      /* stack and corr stay as every pop leaves a free slot: NULL and 0 */
      return;
    }
  }
  if (profI_active(S)) push_any(S, name, number1);
}

void prof_range_push(prof_State *S, const char *name) { range_push(S, name, 0); }

void prof_range_push_numbered(prof_State *S, const char *name, int64_t n) {
  range_push(S, name, n < 0 ? 0 : n + 1);
}

__attribute__((noinline)) static void pop_any(prof_State *S) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  int64_t now = profH_ticks(&S->clock);
  if (R->n_ranges == 0) {
    profR_sticky(R, PROF_ERRSTATE, "prof_range_pop: no range is open", profR_attr_node(R));
    return;
  }
  profR_Range *r = &R->ranges[--R->n_ranges];
  if (r->corr != 0) profR_corr_pop(S, PROFK_EXT_RANGE);
  if (R->n_events < R->cap_events) put_range(R, R->n_events++, r, now);
  else if (R->cap_events > 0) R->dropped++;
  free_range(r);
}

void prof_range_pop(prof_State *S) {
  if (fast_path(S)) {
    profR_Recorder *R = profR_cache.R;
    /* the checks' loads come before the clock (reading it first, then checking, measured 2 ns
       more per pair), read once: the compiler reloads what is read again after `rdtsc` */
    int32_t k = R->n_ranges;
    int64_t n = R->n_events;
    if (__builtin_expect(k > 0 && n < R->cap_events, 1)) {
#if PROF_HAVE_TSC
      int64_t now = (int64_t)__rdtsc();
#else
      int64_t now = 0;
#endif
      R->n_ranges = k - 1;
      R->n_events = n + 1;
      profR_Range *r = &R->ranges[k - 1];
      put_range(R, n, r, now);
      if (__builtin_expect(r->stack != NULL || r->corr != 0, 0)) free_range(r);
      return;
    }
  }
  if (profI_active(S)) pop_any(S);
}

void prof_instant(prof_State *S, const char *name) {
  if (!profI_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  profR_Event *e = profR_push(R, PROF_EVENT_INSTANT, name);
  if (e != NULL) e->t_begin = e->t_end = profH_ticks(&S->clock);
}

void prof_counter(prof_State *S, const char *name, int64_t value) {
  if (!profI_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  profR_Event *e = profR_push(R, PROF_EVENT_COUNTER, name);
  if (e == NULL) return;
  e->t_begin = e->t_end = profH_ticks(&S->clock);
  e->value = value;
}
