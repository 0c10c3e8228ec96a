/* test_threads_smoke.c — two threads, each on its own prof_State, count ops and read the clock at once. */
#include <pthread.h>

#include "prof.h"
#include "t.h"

enum { ROUNDS = 20000 };

typedef struct Worker {
  prof_Conventions conv;
  int64_t batch;
  /* results, read by the main thread after the join */
  int status;
  int64_t macs, flops, first_ns, last_ns;
  int clock_backwards;
} Worker;

/* Linear(10 -> 10) with its bias at `batch` rows, counted ROUNDS times on the worker's own state. */
static void *work(void *arg) {
  Worker *w = arg;
  prof_State *S = prof_new(NULL, NULL);
  if (S == NULL || prof_set_conventions(S, w->conv) != PROF_OK) {
    w->status = PROF_ERRMEM;
    prof_close(S);
    return NULL;
  }
  w->first_ns = w->last_ns = prof_now_ns();
  for (int i = 0; i < ROUNDS && w->status == PROF_OK; i++) {
    prof_Op op = {.kind = PROF_OP_LINEAR, .ninputs = 3, .flags = PROF_OPF_BIAS};
    op.in[0] = (prof_Operand){2, PROF_F32, {w->batch, 10}};
    op.in[1] = (prof_Operand){2, PROF_F32, {10, 10}};
    op.in[2] = (prof_Operand){1, PROF_F32, {10}};
    op.out = (prof_Operand){2, PROF_F32, {w->batch, 10}};
    w->status = prof_op_count(S, &op);
    w->macs = op.macs;
    w->flops = op.flops;
    int64_t now = prof_now_ns();
    if (now < w->last_ns) w->clock_backwards = 1;
    w->last_ns = now;
  }
  prof_close(S);
  return NULL;
}

/*
** Hand derivation: batch x 10 x 10 MACs. Exact counts 2 flops per MAC plus one add per output
** element for the bias (batch 3: 300 MACs, 600 + 30 = 630 flops); DeepSpeed leaves the bias out
** (batch 5: 500 MACs, 1000 flops). Different conventions per thread show the states are separate.
*/
static void test_two_threads_own_states(void) {
  Worker w[2] = {{.conv = PROF_CONV_EXACT, .batch = 3}, {.conv = PROF_CONV_DEEPSPEED, .batch = 5}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) T_EQ_INT(pthread_create(&th[i], NULL, work, &w[i]), 0);
  for (int i = 0; i < 2; i++) T_EQ_INT(pthread_join(th[i], NULL), 0);
  T_EQ_INT(w[0].status, PROF_OK);
  T_EQ_INT(w[0].macs, 300);
  T_EQ_INT(w[0].flops, 630);
  T_EQ_INT(w[1].status, PROF_OK);
  T_EQ_INT(w[1].macs, 500);
  T_EQ_INT(w[1].flops, 1000);
  for (int i = 0; i < 2; i++) {
    T_CHECK(w[i].first_ns > 0);
    T_CHECK(w[i].last_ns > w[i].first_ns);   /* 20000 rounds take far more than a tick */
    T_EQ_INT(w[i].clock_backwards, 0);
  }
}

int main(void) {
  T_RUN(test_two_threads_own_states);
  return T_DONE();
}
