/* recorder.h — finding the calling thread's recorder on the hot path: one thread-local cache entry. */
#ifndef PROF_RECORDER_H
#define PROF_RECORDER_H

#include "saturate.h"
#include "session.h"

typedef struct profR_Cache {
  const prof_State *S;
  int64_t serial;
  profR_Recorder *R;
} profR_Cache;

PROF_INTERNAL __attribute__((tls_model("initial-exec"))) _Thread_local profR_Cache profR_cache;

/* Grows R's per-module slots to hold module need - 1 (and every module registered so far), and
   makes phase's if it has none. */
PROF_INTERNAL int profR_grow_slots(profR_Recorder *R, int32_t need, int phase) __attribute__((cold));
/* Doubles R's frame stack (up to PROF_STACK_MAX frames). */
PROF_INTERNAL int profR_grow_stack(profR_Recorder *R) __attribute__((cold));
/* Gives every recorder an event buffer of the session's capacity. */
PROF_INTERNAL int profR_resize_events(prof_State *S);

/* record_modules.c: events */
/* A new event of kind on R's buffer (phase, module and times zeroed but for the innermost module)
   or NULL, counting a drop, when the buffer is full or there is none. */
PROF_INTERNAL profR_Event *profR_push(profR_Recorder *R, int kind, const char *name);
PROF_INTERNAL void profR_push_module(profR_Recorder *R, const profT_Frame *f, int64_t now);

/* tree.c: id's path for a message in buf: whole, or its first and last parts around the count
   of levels left out when it does not fit (a deep model's path would hide the reason). */
PROF_INTERNAL void profT_short_path(prof_State *S, prof_ModuleId id, char *buf, size_t size);
/* tree.c: the child of parent called name (a root when parent is PROF_NO_MODULE), added if new */
PROF_INTERNAL int profT_child_named(prof_State *S, prof_ModuleId parent, const char *name,
                                    const char *type, prof_ModuleId *id);

/* The calling thread's recorder, made on first use; NULL only when out of memory. */
static inline profR_Recorder *profR_get(prof_State *S) {
  if (__builtin_expect(profR_cache.S == S && profR_cache.serial == S->serial, 1))
    return profR_cache.R;
  return profR_lookup(S, 1);
}

/* The calling thread's recorder if it has one (readers never make one). */
static inline profR_Recorder *profR_find(prof_State *S) {
  if (profR_cache.S == S && profR_cache.serial == S->serial) return profR_cache.R;
  return profR_lookup(S, 0);
}

/* Slot k of R in its current phase, grown on the first record of a module registered after R's
   last growth, or in a phase R had not recorded in. */
static inline profR_Slot *profR_slot(profR_Recorder *R, int32_t k) {
  if (__builtin_expect(k >= R->cap_slots || R->slots[R->phase] == NULL, 0) &&
      profR_grow_slots(R, k + 1, R->phase) != PROF_OK)
    return NULL;
  return &R->slots[R->phase][k];
}

/* Where ops run now: the innermost open frame's attribution node, or -1. */
static inline int32_t profR_attr_node(const profR_Recorder *R) {
  return R->sp > 0 ? R->stack[R->sp - 1].attr_node : -1;
}

/* recorder.c: a's four counts plus these, saturating (saturate.h). */
PROF_INTERNAL void profR_acc_add_sat(profT_Acc *a, int64_t macs, int64_t flops, int64_t br,
                                     int64_t bw);
/* recorder.c: profR_add's cold half, once a total passed INT64_MAX: saturating sums. */
PROF_INTERNAL void profR_add_slow(profR_Recorder *R, profT_Acc *self, int64_t macs, int64_t flops,
                                  int64_t br, int64_t bw) __attribute__((cold));

/* The device capture's correlation hooks (session.h): a predictable branch when none is open. */
static inline void profR_corr_push(prof_State *S, int kind, uint64_t id) {
  if (__builtin_expect(S->corr_push != NULL, 0)) S->corr_push(S->corr_ud, kind, id);
}
static inline void profR_corr_pop(prof_State *S, int kind) {
  if (__builtin_expect(S->corr_pop != NULL, 0)) S->corr_pop(S->corr_ud, kind);
}

/* A count added as unsigned: no undefined behaviour whatever it holds. */
#define PROFR_UADD(x, v) ((x) = (int64_t)((uint64_t)(x) + (uint64_t)(v)))

/*
** Adds to R's totals (every open frame sees them at exit) and to node k's own counts. Inline:
** it is most of an op record's work. k < cap_slots: k is an open frame's node, and entering it
** grew the slots; the current phase has slots: entering a frame or switching phase made them.
**
** Counts are non-negative and a node's own counts are a part of the phase's total, so only the
** total can pass INT64_MAX first: its four sums are made unsigned and their sign bits tested at
** once (one branch, never taken in practice). When one passes, the cold half saturates every sum
** from then on and marks the recorder (close_frame and the snapshot read the mark).
*/
static inline void profR_add(profR_Recorder *R, int32_t k, int64_t macs, int64_t flops,
                             int64_t br, int64_t bw) {
  profT_Acc *tot = &R->totals[R->phase];
  profT_Acc *self = k >= 0 ? &R->slots[R->phase][k].self : &R->unattributed[R->phase];
  tot->calls++;
  self->calls++;
  uint64_t m = (uint64_t)tot->macs + (uint64_t)macs, f = (uint64_t)tot->flops + (uint64_t)flops;
  uint64_t r = (uint64_t)tot->bytes_read + (uint64_t)br;
  uint64_t w = (uint64_t)tot->bytes_written + (uint64_t)bw;
  if (__builtin_expect((int64_t)(m | f | r | w) < 0, 0)) {
    profR_add_slow(R, self, macs, flops, br, bw);
    return;
  }
  tot->macs = (int64_t)m;
  tot->flops = (int64_t)f;
  tot->bytes_read = (int64_t)r;
  tot->bytes_written = (int64_t)w;
  PROFR_UADD(self->macs, macs);
  PROFR_UADD(self->flops, flops);
  PROFR_UADD(self->bytes_read, br);
  PROFR_UADD(self->bytes_written, bw);
}

#endif
