/* test_threads.c — many threads recording into one session: merged totals exact, drops counted, no races (TSan). */
#include <pthread.h>
#include <stdlib.h>

#include "prof.h"
#include "t.h"

#define THREADS 8

typedef struct Worker {
  prof_State *S;
  prof_ModuleId root;
  int index;
  int64_t iterations;
  prof_ModuleId own;           /* registered by the thread itself, concurrently with the others */
  int rc;
} Worker;

/*
** Each iteration: root -> "t<i>" (the thread's own module) -> one op of 3 FLOPs (1 MAC) and one
** bracketed op of 5 FLOPs that allocates 64 bytes and frees 16. So per thread and iteration the
** root and the thread's module each get one call and 8 FLOPs, and the recorder sees 4 events
** (2 ops, 2 module calls), 6 with memory events (an allocation and a free).
*/
static void *work(void *ud) {
  Worker *w = ud;
  char name[16];
  snprintf(name, sizeof name, "t%d", w->index);
  for (int64_t i = 0; i < w->iterations; i++) {
    prof_module_enter(w->S, w->root);
    if (i == 0) w->rc = prof_module_enter_named(w->S, name, "Worker", &w->own);
    else prof_module_enter(w->S, w->own);
    prof_Op op = {.kind = PROF_OP_CUSTOM, .macs = 1, .flops = 3};
    prof_op_record(w->S, &op);
    prof_Op br = {.kind = PROF_OP_CUSTOM, .flops = 5, .name = "bracketed"};
    if (prof_op_begin(w->S, &br) != PROF_OK) w->rc = -1;
    static const char block[64];
    prof_mem_alloc(w->S, PROF_DEVICE_CPU, block, 64);
    prof_mem_free(w->S, PROF_DEVICE_CPU, block, 16);
    prof_op_end(w->S, &br);
    if (br.bytes_allocated != 64 || br.bytes_freed != 16) w->rc = -2;
    prof_module_exit(w->S, w->own);
    prof_module_exit(w->S, w->root);
  }
  return NULL;
}

/* Runs THREADS workers of n iterations each on S (already started) and joins them. */
static void run_workers(prof_State *S, prof_ModuleId root, int64_t n, Worker *w) {
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (Worker){S, root, i, n, PROF_NO_MODULE, PROF_OK};
    T_EQ_INT(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
}

static prof_ModuleInfo info(prof_State *S, prof_ModuleId id) {
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, id, &i);
  return i;
}

static void test_merged_totals_are_exact(void) {
  const int64_t n = 1000000;
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  T_EQ_INT(prof_set_event_capacity(S, 1024), PROF_OK);   /* tiny next to 6 M events a thread */
  T_EQ_INT(prof_set_memory_events(S, 1), PROF_OK);        /* and the session's live bytes */
  T_EQ_INT(prof_start(S), PROF_OK);
  Worker w[THREADS];
  run_workers(S, root, n, w);
  T_EQ_INT(prof_stop(S), PROF_OK);
  T_EQ_INT(prof_check(S), PROF_OK);
  /* the root: 8 threads x 1 M calls, 8 FLOPs and 1 MAC each */
  prof_ModuleInfo r = info(S, root);
  T_EQ_INT(r.phase[PROF_PHASE_FORWARD].calls, THREADS * n);
  T_EQ_INT(r.phase[PROF_PHASE_FORWARD].flops, 8 * THREADS * n);
  T_EQ_INT(r.phase[PROF_PHASE_FORWARD].macs, THREADS * n);
  T_EQ_INT(r.phase[PROF_PHASE_FORWARD].self_flops, 0);
  /* one module per thread, added concurrently under the root, each with its own thread's calls */
  T_EQ_INT(prof_module_count(S), 1 + THREADS);
  for (int i = 0; i < THREADS; i++) {
    T_EQ_INT(w[i].rc, PROF_OK);
    prof_ModuleInfo m = info(S, w[i].own);
    char want[16];
    snprintf(want, sizeof want, "t%d", i);
    T_EQ_STR(m.name, want);
    T_EQ_INT(m.parent, root);
    T_EQ_INT(m.phase[PROF_PHASE_FORWARD].calls, n);
    T_EQ_INT(m.phase[PROF_PHASE_FORWARD].self_flops, 8 * n);
  }
  prof_Counts tot;
  prof_totals(S, PROF_PHASE_FORWARD, &tot);
  T_EQ_INT(tot.calls, 2 * THREADS * n);   /* ops */
  T_EQ_INT(tot.flops, 8 * THREADS * n);
  /* each thread kept its first 1024 of 6 M events (2 ops, 2 module calls, an allocation and a
     free an iteration) and counted the rest as dropped */
  T_EQ_INT(prof_event_count(S), THREADS * 1024);
  T_EQ_INT(prof_events_dropped(S), THREADS * (6 * n - 1024));
  /* live bytes are the session's: each iteration leaves 48 of its 64 live, so 8 * 48 * n remain;
     the peak came just before a last free (+16) and at most all 8 threads were there (+8 * 16) */
  int64_t peak = prof_memory_peak(S, PROF_DEVICE_CPU);
  T_CHECK(peak >= THREADS * 48 * n + 16);
  T_CHECK(peak <= THREADS * 48 * n + THREADS * 16);
  prof_close(S);
}

static void test_events_carry_thread_module_and_correlation(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  prof_set_event_capacity(S, 100);
  prof_start(S);
  Worker w[THREADS];
  run_workers(S, root, 10, w);   /* 40 events a thread: none dropped */
  prof_stop(S);
  T_EQ_INT(prof_event_count(S), THREADS * 40);
  T_EQ_INT(prof_events_dropped(S), 0);
  int per_thread[THREADS] = {0}, ops = 0, modules = 0, bad = 0;
  uint64_t *corr = calloc(THREADS * 40, sizeof *corr);
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    T_EQ_INT(prof_event_at(S, i, &e), PROF_OK);
    if (e.thread < 0 || e.thread >= THREADS) {
      bad++;
      continue;
    }
    per_thread[e.thread]++;
    if (e.t_end_ns < e.t_begin_ns || e.t_begin_ns <= 0) bad++;
    if (e.kind == PROF_EVENT_OP) {
      if (e.correlation == 0) bad++;
      for (int j = 0; j < ops; j++)
        if (corr[j] == e.correlation) bad++;   /* unique across threads */
      corr[ops++] = e.correlation;
      if (strcmp(e.name, "bracketed") == 0 && (e.bytes_allocated != 64 || e.bytes_freed != 16))
        bad++;
      if (e.module == root) bad++;            /* ops run inside the thread's own module */
    } else {
      modules++;
    }
  }
  free(corr);
  T_EQ_INT(bad, 0);
  T_EQ_INT(ops, THREADS * 20);
  T_EQ_INT(modules, THREADS * 20);
  for (int i = 0; i < THREADS; i++) T_EQ_INT(per_thread[i], 40);
  T_EQ_INT(prof_event_at(S, THREADS * 40, &(prof_Event){.size = sizeof(prof_Event)}), PROF_ERRARG);
  prof_close(S);
}

/* Sticky errors stay on the thread that made them; prof_check reports and clears them all. */
static void *bad_exit(void *ud) {
  prof_State *S = ud;
  prof_module_exit(S, 0);   /* never entered on this thread */
  return NULL;
}

static void test_sticky_errors_are_per_thread(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  prof_start(S);
  prof_module_enter(S, root);   /* open on the main thread only */
  pthread_t th;
  pthread_create(&th, NULL, bad_exit, S);
  pthread_join(th, NULL);
  prof_module_exit(S, root);    /* fine here */
  prof_stop(S);
  T_EQ_INT(prof_check(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "module is not open");
  T_EQ_INT(prof_check(S), PROF_OK);
  T_EQ_INT(info(S, root).phase[PROF_PHASE_FORWARD].calls, 1);
  prof_close(S);
}

/* A session closed and another made at the same address: a thread's cached recorder must not
   be reused (it belonged to the closed one). */
static void test_new_session_does_not_reuse_a_closed_ones_recorder(void) {
  for (int round = 0; round < 50; round++) {
    prof_State *S = prof_new(NULL, NULL);
    prof_ModuleId root;
    prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
    prof_start(S);
    prof_module_enter(S, root);
    prof_module_exit(S, root);
    prof_stop(S);
    T_EQ_INT(info(S, root).phase[PROF_PHASE_FORWARD].calls, 1);
    prof_close(S);
  }
}

int main(void) {
  T_RUN(test_merged_totals_are_exact);
  T_RUN(test_events_carry_thread_module_and_correlation);
  T_RUN(test_sticky_errors_are_per_thread);
  T_RUN(test_new_session_does_not_reuse_a_closed_ones_recorder);
  return T_DONE();
}
