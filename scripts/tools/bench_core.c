/* bench_core.c — the core's hot-path cost from C: module enter+exit, op records, buffered op and range events. */
/* Linked with the static library (build/lib/libprof.a, the Makefile's rule): every prof_* call is
   a direct call, its thread-local cache a fixed offset, as a host that embeds libprof.a gets them.
   Through libprof.so each call would add a PLT jump and the cache a GOT load (1-2 ns a pair). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "prof.h"

#define N 1000000
#define RUNS 15

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

/* The loop without instrumentation, so that its own cost can be subtracted (Tracy's method). */
static double clean_loop(void) {
  volatile int64_t sink = 0;
  int64_t t0 = prof_now_ns();
  for (int i = 0; i < N; i++) sink += i;
  return (double)(prof_now_ns() - t0);
}

int main(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, leaf;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  prof_module_add(S, root, "fc", "Linear", 0, &leaf);
  prof_Op lin = {0};
  lin.kind = PROF_OP_LINEAR;
  lin.ninputs = 2;
  lin.in[0] = (prof_Operand){2, PROF_F32, {8, 64}};
  lin.in[1] = (prof_Operand){2, PROF_F32, {64, 64}};
  lin.out = (prof_Operand){2, PROF_F32, {8, 64}};
  prof_Op custom = {0};
  custom.kind = PROF_OP_CUSTOM;
  custom.flops = 2;
  double enter_exit[RUNS], rec_linear[RUNS], rec_custom[RUNS], clean[RUNS];
  prof_start(S);
  prof_module_enter(S, root);
  for (int r = 0; r < RUNS; r++) {
    volatile int64_t sink = 0;
    clean[r] = clean_loop();
    int64_t t0 = prof_now_ns();
    for (int i = 0; i < N; i++) {
      sink += i;
      prof_module_enter(S, leaf);
      prof_module_exit(S, leaf);
    }
    enter_exit[r] = ((double)(prof_now_ns() - t0) - clean[r]) / N;
    prof_module_enter(S, leaf);
    t0 = prof_now_ns();
    for (int i = 0; i < N; i++) {
      sink += i;
      prof_op_record(S, &lin);
    }
    rec_linear[r] = ((double)(prof_now_ns() - t0) - clean[r]) / N;
    t0 = prof_now_ns();
    for (int i = 0; i < N; i++) {
      sink += i;
      prof_op_record(S, &custom);
    }
    rec_custom[r] = ((double)(prof_now_ns() - t0) - clean[r]) / N;
    prof_module_exit(S, leaf);
  }
  prof_module_exit(S, root);
  prof_stop(S);
  int bad = prof_check(S) != PROF_OK;
  /* An op bracketed around a (here empty) kernel with events buffered: two clock reads and one
     event written per op. The buffer holds one run; each prof_start empties it. */
  enum { NE = N / 4 };
  double bracketed[RUNS];
  bad |= prof_set_event_capacity(S, NE + 8) != PROF_OK;
  for (int r = 0; r < RUNS; r++) {
    volatile int64_t sink = 0;
    prof_start(S);
    prof_module_enter(S, leaf);
    int64_t t0 = prof_now_ns();
    for (int i = 0; i < NE; i++) {
      sink += i;
      prof_op_begin(S, &custom);
      prof_op_end(S, &custom);
    }
    bracketed[r] = ((double)(prof_now_ns() - t0) - clean[r] / 4) / NE;
    prof_module_exit(S, leaf);
    prof_stop(S);
    bad |= prof_event_count(S) != NE + 1 || prof_events_dropped(S) != 0;
  }
  /* A user range push + pop with its event kept, and one raw read of the clock beside it: a pair
     reads the clock twice. */
  double ranges[RUNS], clock_read[RUNS], tsc_read[RUNS], idle[RUNS], ranges_small[RUNS];
  for (int r = 0; r < RUNS; r++) {
    volatile int64_t sink = 0;
    prof_start(S);
    int64_t t0 = prof_now_ns();
    for (int i = 0; i < NE; i++) {
      sink += i;
      prof_range_push(S, "model_forward");
      prof_range_pop(S);
    }
    ranges[r] = ((double)(prof_now_ns() - t0) - clean[r] / 4) / NE;
    prof_stop(S);
    bad |= prof_event_count(S) != NE || prof_check(S) != PROF_OK;
    t0 = prof_now_ns();
    for (int i = 0; i < NE; i++) sink += prof_now_ns();
    clock_read[r] = ((double)(prof_now_ns() - t0) - clean[r] / 4) / NE;
    /* the recorders' own tick source where the TSC is invariant (clock.h) */
    t0 = prof_now_ns();
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < NE; i++) sink += (int64_t)__rdtsc();
#endif
    tsc_read[r] = ((double)(prof_now_ns() - t0) - clean[r] / 4) / NE;
    /* the path a host's annotations take while no window records: the session is idle */
    t0 = prof_now_ns();
    for (int i = 0; i < NE; i++) {
      sink += i;
      PROF_RANGE_PUSH(S, "model_forward");
      PROF_RANGE_POP(S);
    }
    idle[r] = (double)(prof_now_ns() - t0) / NE;   /* the loop included: an upper bound */
  }
  /* The same pairs into a window of 4096 events (480 KB, in cache), as a step-sized window keeps
     them: the CPU's cost, where the run above also streams 30 MB of events to memory. Each window
     alternates with the pair's floor, the same loop reading the TSC twice and storing both reads
     (no implementation that timestamps both ends can cost less), so that drift hits both alike. */
  enum { NS = 4096 };
  double floor_small[RUNS], own_small[RUNS];
  bad |= prof_set_event_capacity(S, NS) != PROF_OK;
  for (int r = 0; r < RUNS; r++) {
    volatile int64_t sink = 0, read0 = 0, read1 = 0;
    int64_t spent = 0, spent_floor = 0;
    for (int w = 0; w < NE / NS; w++) {
      prof_start(S);
      int64_t t0 = prof_now_ns();
      for (int i = 0; i < NS; i++) {
        sink += i;
        prof_range_push(S, "model_forward");
        prof_range_pop(S);
      }
      spent += prof_now_ns() - t0;
      prof_stop(S);
      bad |= prof_event_count(S) != NS;
      t0 = prof_now_ns();
#if defined(__x86_64__) || defined(__i386__)
      for (int i = 0; i < NS; i++) {
        sink += i;
        read0 = (int64_t)__rdtsc();
        read1 = (int64_t)__rdtsc();
      }
#endif
      spent_floor += prof_now_ns() - t0;
    }
    double loop = clean[r] / 4 * (double)(NE / NS * NS) / NE, pairs = NE / NS * NS;
    ranges_small[r] = ((double)spent - loop) / pairs;
    floor_small[r] = ((double)spent_floor - loop) / pairs;
    own_small[r] = ((double)(spent - spent_floor)) / pairs;
    (void)read0, (void)read1;
  }
  printf("C   module enter+exit        %7.1f ns per call   (median of %d runs of %d)\n",
         median(enter_exit, RUNS), RUNS, N);
  printf("C   op record (linear)       %7.1f ns per op\n", median(rec_linear, RUNS));
  printf("C   op record (custom)       %7.1f ns per op\n", median(rec_custom, RUNS));
  printf("C   op begin+end, event kept %7.1f ns per op\n", median(bracketed, RUNS));
  printf("C   range push+pop, kept     %7.1f ns per pair (one clock read: TSC %.1f ns, "
         "clock_gettime %.1f ns)\n", median(ranges, RUNS), median(tsc_read, RUNS),
         median(clock_read, RUNS));
  printf("C   range push+pop, kept     %7.1f ns per pair in a 4096-event window (in cache); its floor, "
         "two TSC reads in the same loop, %.1f ns: the pair's own work %.1f ns (alternated, median "
         "of %d)\n", median(ranges_small, RUNS), median(floor_small, RUNS), median(own_small, RUNS),
         RUNS);
  printf("C   range push+pop, idle     %7.1f ns per pair, loop included (no window; under "
         "PROF_DISABLE no code)\n",
         median(idle, RUNS));
  printf("C   clean loop               %7.2f ns per iteration (subtracted)\n", median(clean, RUNS) / N);
  prof_close(S);
  return bad;
}
