/* test_cycles.c — start/stop cycles after the first allocate nothing: a training loop's profile windows cost no malloc. */
#include <stdlib.h>

#include "prof.h"
#include "t.h"

typedef struct Counting { long calls, live; } Counting;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Counting *c = ud;
  c->calls++;
  if (nsize == 0) {
    if (ptr) c->live -= (long)osize;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p) c->live += (long)nsize - (ptr ? (long)osize : 0);
  return p;
}

static void one_window(prof_State *S, prof_ModuleId root, prof_ModuleId child) {
  T_EQ_INT(prof_start(S), PROF_OK);
  prof_module_enter(S, root);
  prof_module_enter(S, child);
  prof_Op o = {.size = sizeof o, .kind = PROF_OP_CUSTOM, .macs = 3, .flops = 6};
  prof_op_record(S, &o);
  prof_module_exit(S, child);
  prof_module_exit(S, root);
  T_EQ_INT(prof_stop(S), PROF_OK);
}

static void test_cycles_allocate_nothing(prof_Conventions conv) {
  Counting c = {0, 0};
  prof_State *S = prof_new(counting_alloc, &c);
  T_CHECK(S != NULL);
  prof_set_conventions(S, conv);
  prof_ModuleId root, child, hidden;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 30, &root);
  prof_module_add(S, root, "0", "Linear", 20, &child);
  prof_module_add(S, root, "1", "Dropout", 10, &hidden);
  prof_module_set_flags(S, hidden, PROF_MODULE_IGNORED);
  one_window(S, root, child);             /* the first window sizes the recorder and the snapshot */
  long after_first = c.calls;
  for (int i = 0; i < 100; i++) one_window(S, root, child);
  T_EQ_INT(c.calls, after_first);
  /* the kept buffers still give this window's counts, not a sum over windows */
  prof_ModuleInfo info = {.size = sizeof info};
  T_EQ_INT(prof_module_info(S, root, &info), PROF_OK);
  T_EQ_INT(info.phase[PROF_PHASE_FORWARD].macs, 3);
  T_EQ_INT(info.phase[PROF_PHASE_FORWARD].calls, 1);
  /* under exact conventions the ignored Dropout's 10 params leave the root's count */
  T_EQ_INT(info.params_counted, conv == PROF_CONV_EXACT ? 20 : 30);
  prof_close(S);
  T_EQ_INT(c.live, 0);
}

static void test_cycles_exact(void) { test_cycles_allocate_nothing(PROF_CONV_EXACT); }
static void test_cycles_deepspeed(void) { test_cycles_allocate_nothing(PROF_CONV_DEEPSPEED); }

int main(void) {
  T_RUN(test_cycles_exact);
  T_RUN(test_cycles_deepspeed);
  return T_DONE();
}
