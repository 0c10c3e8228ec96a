/* clock.c — the host's monotonic nanosecond clock, and the TSC calibrated against it. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>

#include "clock.h"

#if PROF_HAVE_TSC
#include <cpuid.h>
#endif

int64_t profI_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t prof_now_ns(void) { return profI_now_ns(); }

/* An invariant TSC ticks at one rate in every power state and on every core (CPUID
   0x80000007, EDX bit 8): only then is it a clock. */
static int invariant_tsc(void) {
#if PROF_HAVE_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0x80000000, NULL) < 0x80000007) return 0;
  if (!__get_cpuid(0x80000007, &a, &b, &c, &d)) return 0;
  return (d >> 8) & 1;
#else
  return 0;
#endif
}

/* Both clocks read as close together as they can be: the TSC read between two clock reads, the
   tightest of a few tries (a preemption inside one would put its midpoint off by its length). */
static void pair(profH_Clock *c, int64_t *tick, int64_t *ns) {
  int64_t best = INT64_MAX;
  for (int i = 0; i < 5; i++) {
    int64_t a = profI_now_ns();
    int64_t t = profH_ticks(c);
    int64_t b = profI_now_ns();
    if (b - a < best) {
      best = b - a;
      *tick = t;
      *ns = a + (b - a) / 2;
    }
  }
}

/* A first rate from 100 µs of both clocks, so readings are right before any calibration. */
void profH_init(profH_Clock *c) {
  c->tsc = invariant_tsc();
  c->ns_per_tick = 1.0;
  if (!c->tsc) return;
  int64_t t0, n0, t1, n1;
  pair(c, &t0, &n0);
  do pair(c, &t1, &n1);
  while (n1 - n0 < 100000);
  c->ns_per_tick = t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
  c->tick0 = t0;
  c->ns0 = n0;
}

void profH_start(profH_Clock *c) {
  if (c->tsc) pair(c, &c->tick0, &c->ns0);
}

/* The rate over the whole run since prof_start, at least 1 ms of it (clock_gettime's jitter of
   tens of ns is then a few parts in 10^5): a short run waits out the rest of that millisecond. */
void profH_calibrate(profH_Clock *c) {
  if (!c->tsc) return;
  int64_t t1, n1;
  do pair(c, &t1, &n1);
  while (n1 - c->ns0 < 1000000);
  if (t1 > c->tick0) c->ns_per_tick = (double)(n1 - c->ns0) / (double)(t1 - c->tick0);
}
