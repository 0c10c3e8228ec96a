/* test_clock.c — recorder ticks (the TSC where invariant) land on prof_now_ns's nanoseconds. */
#include "clock.h"
#include "prof.h"
#include "t.h"

/* Spins until prof_now_ns has moved on by ns. */
static void spin(int64_t ns) {
  int64_t t0 = prof_now_ns();
  while (prof_now_ns() - t0 < ns) {
  }
}

/* An instant stamped between two reads of prof_now_ns is reported between them. */
static void test_events_sit_on_the_monotonic_clock(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 4);
  prof_start(S);
  spin(2000000);
  int64_t before = prof_now_ns();
  prof_instant(S, "mark");
  int64_t after = prof_now_ns();
  prof_stop(S);
  prof_Event e = {.size = sizeof e};
  T_EQ_INT(prof_event_at(S, 0, &e), PROF_OK);
  /* the mapping is calibrated over the run; 20 µs covers the reads' own jitter on a busy machine
     (a TSC taken as nanoseconds unmapped would be off by seconds) */
  T_CHECK(e.t_begin_ns >= before - 20000);
  T_CHECK(e.t_begin_ns <= after + 20000);
  prof_close(S);
}

/* A module call that spins 5 ms reports 5 ms, however short the whole run: at least 5 ms, and at
   most the wall time around the call (a preempted spin lasts longer: the bound moves with it),
   well under the 2x a TSC read as nanoseconds at 2+ GHz would give. */
static void test_module_time_is_nanoseconds(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId m;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &m);
  prof_start(S);
  int64_t before = prof_now_ns();
  prof_module_enter(S, m);
  spin(5000000);
  prof_module_exit(S, m);
  int64_t wall = prof_now_ns() - before;
  prof_stop(S);
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, m, &i);
  T_CHECK(i.phase[PROF_PHASE_FORWARD].time_ns >= 4950000);   /* less a calibration error */
  T_CHECK(i.phase[PROF_PHASE_FORWARD].time_ns <= wall + wall / 20);
  prof_close(S);
}

/* Without an invariant TSC ticks are the monotonic clock's nanoseconds: the mapping is the
   identity whatever the pair and rate say. */
static void test_without_tsc_ticks_are_nanoseconds(void) {
  profH_Clock c = {.tsc = 0, .tick0 = 123, .ns0 = 456, .ns_per_tick = 0.37};
  T_EQ_INT(profH_ns(&c, 1000), 1000);
  T_EQ_INT(profH_dur_ns(&c, 1000), 1000);
  int64_t a = prof_now_ns(), t = profH_ticks(&c), b = prof_now_ns();
  T_CHECK(a <= t && t <= b);
  /* with one: ns0 + (ticks - tick0) * rate, rounded */
  profH_Clock d = {.tsc = 1, .tick0 = 1000, .ns0 = 5000, .ns_per_tick = 0.5};
  T_EQ_INT(profH_ns(&d, 3000), 6000);
  T_EQ_INT(profH_dur_ns(&d, 3001), 1501);
}

int main(void) {
  T_RUN(test_events_sit_on_the_monotonic_clock);
  T_RUN(test_module_time_is_nanoseconds);
  T_RUN(test_without_tsc_ticks_are_nanoseconds);
  return T_DONE();
}
