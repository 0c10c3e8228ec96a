/* clock.h — the recorders' tick source: the invariant TSC where there is one, else the monotonic clock, mapped to ns afterwards. */
#ifndef PROF_CLOCK_H
#define PROF_CLOCK_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PROF_HAVE_TSC 1
#else
#define PROF_HAVE_TSC 0
#endif

#include "prof_internal.h"

/*
** Ticks are read on the hot path and turned into nanoseconds of the monotonic clock only when
** counts or events are read (Tracy's way): a TSC read costs about half of a clock_gettime. With
** no invariant TSC a tick is a nanosecond of that clock and the mapping is the identity.
*/
typedef struct profH_Clock {
  int tsc;                     /* ticks are TSC cycles */
  int64_t tick0, ns0;          /* a pair read together at prof_start */
  double ns_per_tick;          /* measured between that pair and the last snapshot */
} profH_Clock;

static inline int64_t profH_ticks(const profH_Clock *c) {
#if PROF_HAVE_TSC
  if (c->tsc) return (int64_t)__rdtsc();
#endif
  (void)c;
  return profI_now_ns();
}

/* A tick count as nanoseconds on prof_now_ns's clock; a duration in ticks as nanoseconds. */
static inline int64_t profH_ns(const profH_Clock *c, int64_t ticks) {
  if (!c->tsc) return ticks;
  return c->ns0 + (int64_t)((double)(ticks - c->tick0) * c->ns_per_tick + 0.5);
}
static inline int64_t profH_dur_ns(const profH_Clock *c, int64_t ticks) {
  if (!c->tsc) return ticks;
  return (int64_t)((double)ticks * c->ns_per_tick + 0.5);
}

/* clock.c: whether this machine's TSC is invariant; a pair of readings; the calibration */
PROF_INTERNAL void profH_init(profH_Clock *c);
PROF_INTERNAL void profH_start(profH_Clock *c);
PROF_INTERNAL void profH_calibrate(profH_Clock *c);

#endif
