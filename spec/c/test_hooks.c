/* test_hooks.c — the C twins of the Lua hooks: ignore filters, schedules, the DeepSpeed text report. */
#include <stdlib.h>

#include "prof.h"
#include "t.h"

static void custom(prof_State *S, int64_t macs, int64_t flops) {
  prof_Op o = {.kind = PROF_OP_CUSTOM, .macs = macs, .flops = flops};
  prof_op_record(S, &o);
}

static prof_Counts fwd(prof_State *S, prof_ModuleId id) {
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, id, &i);
  return i.phase[PROF_PHASE_FORWARD];
}

/* ---- schedules ---- */

/* torch's docs: schedule(wait=1, warmup=1, active=2, repeat=1) is NONE, WARMUP, RECORD,
   RECORD_AND_SAVE, then NONE forever. */
static void test_torch_schedule(void) {
  prof_Schedule s = {.wait = 1, .warmup = 1, .active = 2, .repeat = 1};
  const prof_Action want[] = {PROF_ACTION_NONE, PROF_ACTION_WARMUP, PROF_ACTION_RECORD,
                              PROF_ACTION_RECORD_AND_SAVE, PROF_ACTION_NONE, PROF_ACTION_NONE};
  for (int i = 0; i < 6; i++) T_EQ_INT(prof_schedule_torch(&s, i, -1), want[i]);
  /* skip_first = 2 shifts the same cycle by two steps */
  s.skip_first = 2;
  for (int i = 0; i < 8; i++)
    T_EQ_INT(prof_schedule_torch(&s, i, -1), i < 2 ? PROF_ACTION_NONE : want[i - 2]);
  /* skip_first_wait: the first cycle starts at its warmup */
  prof_Schedule w = {.wait = 1, .warmup = 1, .active = 1, .skip_first_wait = 1};
  T_EQ_INT(prof_schedule_torch(&w, 0, -1), PROF_ACTION_WARMUP);
  T_EQ_INT(prof_schedule_torch(&w, 1, -1), PROF_ACTION_RECORD_AND_SAVE);
  T_EQ_INT(prof_schedule_torch(&w, 2, -1), PROF_ACTION_NONE);    /* the second cycle's wait */
  /* repeat = 0 cycles forever: step 3 + 1000 * 4 is a cycle's RECORD_AND_SAVE */
  prof_Schedule f = {.wait = 1, .warmup = 1, .active = 2};
  T_EQ_INT(prof_schedule_torch(&f, 4003, -1), PROF_ACTION_RECORD_AND_SAVE);
  /* invalid: no active step */
  prof_Schedule bad = {.active = 0};
  T_EQ_INT(prof_schedule_torch(&bad, 0, -1), PROF_ACTION_NONE);
  T_EQ_STR(prof_action_name(PROF_ACTION_RECORD_AND_SAVE), "RECORD_AND_SAVE");
  T_CHECK(prof_action_name((prof_Action)7) == NULL);
}

static int items_equal(const prof_ScheduleItem *got, const prof_ScheduleItem *want) {
  for (;; got++, want++) {
    if (*got != *want) return 0;
    if (*got == PROF_ITEM_END) return 1;
  }
}

/* torch/profiler/profiler.py's _transit_action, a few rows copied from it by hand. */
static void test_transitions(void) {
  const prof_ScheduleItem none_record[] = {PROF_ITEM_PREPARE, PROF_ITEM_START, PROF_ITEM_END};
  const prof_ScheduleItem warmup_none[] = {PROF_ITEM_WARN, PROF_ITEM_START, PROF_ITEM_STOP, PROF_ITEM_END};
  const prof_ScheduleItem save_record[] = {PROF_ITEM_STOP, PROF_ITEM_TRACE_READY, PROF_ITEM_PREPARE,
                                           PROF_ITEM_START, PROF_ITEM_END};
  const prof_ScheduleItem record_exit[] = {PROF_ITEM_STOP, PROF_ITEM_TRACE_READY, PROF_ITEM_END};
  const prof_ScheduleItem empty[] = {PROF_ITEM_END};
  T_CHECK(items_equal(prof_schedule_transition(PROF_ACTION_NONE, PROF_ACTION_RECORD), none_record));
  T_CHECK(items_equal(prof_schedule_transition(PROF_ACTION_WARMUP, PROF_ACTION_NONE), warmup_none));
  T_CHECK(items_equal(prof_schedule_transition(PROF_ACTION_RECORD_AND_SAVE, PROF_ACTION_RECORD), save_record));
  T_CHECK(items_equal(prof_schedule_transition(PROF_ACTION_RECORD, -1), record_exit));
  T_CHECK(items_equal(prof_schedule_transition(PROF_ACTION_RECORD, PROF_ACTION_RECORD), empty));
  T_CHECK(items_equal(prof_schedule_transition(9, 0), empty));
}

typedef struct Windows {
  int n;
  int64_t last_step[4];
  int64_t calls[4], flops[4];
  prof_ModuleId id;
  int fail;
} Windows;

static int on_window(void *ud, prof_State *S, int64_t step) {
  Windows *w = ud;
  if (w->fail) return 1;
  T_CHECK(!prof_is_active(S));     /* handed on stopped, its snapshot readable */
  if (w->n < 4) {
    prof_Counts c = fwd(S, w->id);
    w->last_step[w->n] = step;
    w->calls[w->n] = c.calls;
    w->flops[w->n] = c.flops;
  }
  w->n++;
  return 0;
}

/* wait 1, warmup 1, active 2, repeat 2 over 10 steps of one call each (10 flops): windows are
   steps 2-3 and 6-7, each 2 calls and 20 flops; the warmup steps (1, 5) count nothing. */
static void test_scheduler(void) {
  prof_State *S = prof_new(NULL, NULL);
  Windows w = {0};
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &w.id);
  prof_Schedule s = {.wait = 1, .warmup = 1, .active = 2, .repeat = 2};
  prof_Scheduler *sch = prof_scheduler_new(S, prof_schedule_torch, &s, on_window, &w);
  T_CHECK(sch != NULL);
  T_CHECK(!prof_is_active(S));
  for (int step = 0; step < 10; step++) {
    T_EQ_INT(prof_scheduler_step_num(sch), step);
    prof_module_enter(S, w.id);
    custom(S, 5, 10);
    prof_module_exit(S, w.id);
    T_EQ_INT(prof_scheduler_step(sch), PROF_OK);
  }
  T_EQ_INT(prof_scheduler_close(sch), PROF_OK);
  T_EQ_INT(w.n, 2);
  T_EQ_INT(w.last_step[0], 3);
  T_EQ_INT(w.last_step[1], 7);
  T_EQ_INT(w.calls[0], 2);
  T_EQ_INT(w.calls[1], 2);
  T_EQ_INT(w.flops[0], 20);
  T_EQ_INT(w.flops[1], 20);
  prof_close(S);
}

/* A host's own schedule: record from step 0, the window left open at close is handed on. */
static prof_Action always(void *ud, int64_t step, int64_t step_ns) {
  int64_t *seen_ns = ud;
  if (step > 0) *seen_ns = step_ns;
  return PROF_ACTION_RECORD;
}

static void test_scheduler_custom_and_close(void) {
  prof_State *S = prof_new(NULL, NULL);
  Windows w = {0};
  int64_t step_ns = -2;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &w.id);
  prof_Scheduler *sch = prof_scheduler_new(S, always, &step_ns, on_window, &w);
  T_CHECK(prof_is_active(S));      /* step 0 records: started at once */
  for (int step = 0; step < 3; step++) {
    prof_module_enter(S, w.id);
    custom(S, 0, 1);
    prof_module_exit(S, w.id);
    prof_scheduler_step(sch);
  }
  T_CHECK(step_ns >= 0);           /* the step's duration reached the schedule */
  T_EQ_INT(prof_scheduler_action(sch), PROF_ACTION_RECORD);
  T_EQ_INT(prof_scheduler_close(sch), PROF_OK);
  T_EQ_INT(w.n, 1);
  T_EQ_INT(w.last_step[0], 3);
  T_EQ_INT(w.calls[0], 3);
  T_CHECK(!prof_is_active(S));
  T_EQ_INT(prof_scheduler_close(NULL), PROF_OK);
  T_CHECK(prof_scheduler_new(S, NULL, NULL, NULL, NULL) == NULL);
  T_CONTAINS(prof_errmsg(S), "no schedule function");
  prof_close(S);
}

static void test_scheduler_ready_fails(void) {
  prof_State *S = prof_new(NULL, NULL);
  Windows w = {.fail = 1};
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &w.id);
  prof_Schedule s = {.active = 1, .repeat = 1};   /* step 0 alone, RECORD_AND_SAVE */
  prof_Scheduler *sch = prof_scheduler_new(S, prof_schedule_torch, &s, on_window, &w);
  T_EQ_INT(prof_scheduler_step(sch), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), "ending at step 0");
  prof_scheduler_close(sch);
  prof_close(S);
}

/* ---- ignore filters ---- */

typedef struct Seen {
  int calls;
  char paths[8][32];
} Seen;

static int ignore_dropout_and_decoder(void *ud, prof_State *S, prof_ModuleId id, const char *path,
                                      const char *type) {
  (void)S, (void)id;
  Seen *seen = ud;
  if (seen->calls < 8) snprintf(seen->paths[seen->calls], sizeof seen->paths[0], "%s", path);
  seen->calls++;
  return strcmp(type, "Dropout") == 0 || strncmp(path, "dec.", 4) == 0;
}

/* Net { enc: Linear (100 flops), drop: Dropout (7), dec: Seq { 0: Linear (50) } }: the filter sees
   every module with its path and ignores drop and dec.0. Exact conventions: their flops and
   params leave the totals: 100 flops and 10 params remain. */
static void test_ignore_apply(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, enc, drop, dec, dec0;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 15, &net);
  prof_module_add(S, net, "enc", "Linear", 10, &enc);
  prof_module_add(S, net, "drop", "Dropout", 0, &drop);
  prof_module_add(S, net, "dec", "Seq", 5, &dec);
  prof_module_add(S, dec, "0", "Linear", 5, &dec0);
  Seen seen = {0};
  T_EQ_INT(prof_ignore_apply(S, ignore_dropout_and_decoder, &seen), 2);
  T_EQ_INT(seen.calls, 5);
  /* pre-order, each with its dotted path */
  const char *want[] = {"", "enc", "drop", "dec", "dec.0"};
  for (int i = 0; i < 5; i++) T_EQ_STR(seen.paths[i], want[i]);
  prof_start(S);
  prof_module_enter(S, net);
  prof_module_enter(S, enc), custom(S, 50, 100), prof_module_exit(S, enc);
  prof_module_enter(S, drop), custom(S, 0, 7), prof_module_exit(S, drop);
  prof_module_enter(S, dec);
  prof_module_enter(S, dec0), custom(S, 25, 50), prof_module_exit(S, dec0);
  prof_module_exit(S, dec);
  prof_module_exit(S, net);
  prof_stop(S);
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, net, &i);
  T_EQ_INT(i.phase[PROF_PHASE_FORWARD].flops, 100);
  T_EQ_INT(i.params_counted, 10);
  prof_module_info(S, drop, &i);
  T_CHECK(i.hidden && (i.flags & PROF_MODULE_IGNORED));
  T_EQ_INT(prof_ignore_apply(S, NULL, NULL), -PROF_ERRARG);
  prof_close(S);
}

/* ---- the DeepSpeed text report ---- */

typedef struct Buf {
  char data[16384];
  size_t len;
} Buf;

static int to_buf(void *ud, const char *data, size_t len) {
  Buf *b = ud;
  if (b->len + len >= sizeof b->data) return 1;
  memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return 0;
}

static int failing_write(void *ud, const char *data, size_t len) {
  (void)ud, (void)data, (void)len;
  return 1;
}

/*
** Net (params 1,234,567) { fc: Linear (110 params, 100 MACs, 210 flops), mid: Hidden (ignored,
** deepspeed conventions: its row gives way to its child) { leaf: Conv (999,999 MACs) } }, untimed.
** By hand, DeepSpeed's formatters: 1,234,567 params "1.23 M"; 1,000,099 MACs "1 MMACs"; 999,999
** MACs "1000 KMACs" (the unit is picked before rounding); 110 / 1,234,567 = 0.0089 % -> "0.01".
*/
static void test_deepspeed_report(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, fc, mid, leaf;
  prof_set_conventions(S, PROF_CONV_DEEPSPEED);
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 1234567, &net);
  prof_module_add(S, net, "fc", "Linear", 110, &fc);
  prof_module_add(S, net, "mid", "Hidden", 0, &mid);
  prof_module_add(S, mid, "leaf", "Conv", 0, &leaf);
  prof_module_set_flags(S, mid, PROF_MODULE_IGNORED);
  Buf b = {.len = 0};
  T_EQ_INT(prof_write_deepspeed_report(S, NULL, to_buf, &b), PROF_OK);   /* before any record */
  prof_start(S);
  prof_module_enter(S, net);
  prof_module_enter(S, fc), custom(S, 100, 210), prof_module_exit(S, fc);
  prof_module_enter(S, mid);
  prof_module_enter(S, leaf), custom(S, 999999, 1999998), prof_module_exit(S, leaf);
  prof_module_exit(S, mid);
  prof_module_exit(S, net);
  prof_stop(S);
  prof_ReportOptions o;
  prof_report_options_init(&o);
  o.timed = 0;
  o.top_modules = 3;
  b.len = 0;
  T_EQ_INT(prof_write_deepspeed_report(S, &o, to_buf, &b), PROF_OK);
  T_CONTAINS(b.data, "\n-------------------------- DeepSpeed Flops Profiler --------------------------\n"
                     "Profile Summary at step 1:\nNotations:\n");
  /* '{:<70}  {:<8}': the label padded to 70, two spaces, the value padded to 8 */
  T_CONTAINS(b.data, "\nparams per GPU:                                                         1.23 M  \n");
  T_CONTAINS(b.data, "\nfwd MACs per GPU:                                                       1 MMACs \n");
  T_CONTAINS(b.data, "\nfwd latency:                                                            n/a     \n");
  T_CONTAINS(b.data, "\nTop 3 modules in terms of params, MACs or fwd latency at different model depths:\n"
                     "depth 0:\n    params      - {'Net': '1.23 M'}\n");
  /* depth 1: Conv (the hidden module's child) before Linear by MACs; params tie keeps order */
  T_CONTAINS(b.data, "depth 1:\n    params      - {'Linear': '110', 'Conv': '0'}\n"
                     "    MACs        - {'Conv': '1000 KMACs', 'Linear': '100 MACs'}\n"
                     "    fwd latency - {'Linear': 'n/a', 'Conv': 'n/a'}\n");
  T_CONTAINS(b.data, "\nNet(\n  1.23 M = 100% Params, 1 MMACs = 100% MACs, n/a latency, n/a FLOPS\n"
                     "  (fc): Linear(110 = 0.01% Params, 100 MACs = 0.01% MACs, n/a latency, n/a FLOPS)\n"
                     "  (leaf): Conv(0 = 0% Params, 1000 KMACs = 99.99% MACs, n/a latency, n/a FLOPS)\n"
                     ")\n------------------------------------------------------------------------------\n");
  T_CHECK(strstr(b.data, "Hidden") == NULL);
  /* detailed off: no tree */
  o.detailed = 0;
  b.len = 0;
  T_EQ_INT(prof_write_deepspeed_report(S, &o, to_buf, &b), PROF_OK);
  T_CHECK(strstr(b.data, "Detailed Profile") == NULL);
  T_EQ_INT(prof_write_deepspeed_report(S, &o, failing_write, NULL), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), "write function failed");
  prof_close(S);
  prof_State *E = prof_new(NULL, NULL);
  T_EQ_INT(prof_write_deepspeed_report(E, NULL, to_buf, &b), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(E), "no module");
  prof_close(E);
}

/* Timed: a module's latency is its calls' wall time; a container that is never called sums its
   children's (DeepSpeed's get_module_duration). */
static void test_deepspeed_report_timed(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, a;
  prof_module_add(S, PROF_NO_MODULE, "", "List", 0, &net);
  prof_module_add(S, net, "0", "Leaf", 0, &a);
  prof_start(S);
  prof_module_enter(S, a), custom(S, 0, 1000), prof_module_exit(S, a);
  prof_stop(S);
  Buf b = {.len = 0};
  T_EQ_INT(prof_write_deepspeed_report(S, NULL, to_buf, &b), PROF_OK);
  /* the root was never entered: its latency is its child's, 100% of the total */
  T_CONTAINS(b.data, "% latency, ");
  T_CONTAINS(b.data, "\nList(\n  0 = 0% Params, 0 MACs = 0% MACs, ");
  const char *leaf = strstr(b.data, "(0): Leaf(");
  T_CHECK(leaf != NULL);
  if (leaf) T_CONTAINS(leaf, "= 100% latency, ");
  prof_close(S);
}

static int count_bytes(void *ud, const char *data, size_t len) {
  (void)data;
  *(size_t *)ud += len;
  return 0;
}

/* A chain 5,000 deep and 3,000 siblings under one root: the walks keep their own stacks (no C
   recursion), and the aggregated profile lists every depth. Without the tree the text is the
   summary plus 4 lines per depth. */
static void test_deepspeed_report_shapes(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId id = PROF_NO_MODULE, root;
  for (int d = 0; d < 5000; d++) prof_module_add(S, id, d == 0 ? "" : "c", "Chain", 0, &id);
  prof_ReportOptions o;
  prof_report_options_init(&o);
  o.detailed = 0;
  size_t bytes = 0;
  T_EQ_INT(prof_write_deepspeed_report(S, &o, count_bytes, &bytes), PROF_OK);
  T_CHECK(bytes > 5000 * 4 * 20);
  prof_close(S);
  S = prof_new(NULL, NULL);
  prof_module_add(S, PROF_NO_MODULE, "", "Wide", 0, &root);
  for (int i = 0; i < 3000; i++) prof_module_add(S, root, "k", "Leaf", 1, &id);
  bytes = 0;
  T_EQ_INT(prof_write_deepspeed_report(S, NULL, count_bytes, &bytes), PROF_OK);
  T_CHECK(bytes > 3000 * 60);
  prof_close(S);
}

/* An allocator that fails once its budget of allocations is spent (-1: never). */
static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  int *budget = ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (ptr == NULL && *budget >= 0 && (*budget)-- == 0) return NULL;
  return realloc(ptr, nsize);
}

/* Every allocation the report makes may fail: each failure is PROF_ERRMEM, freed (ASan checks),
   and a budget large enough writes the whole text. */
static void test_deepspeed_report_out_of_memory(void) {
  int budget = -1;
  prof_State *S = prof_new(budget_alloc, &budget);
  prof_ModuleId root, leaf;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 1, &root);
  prof_module_add(S, root, "a", "Leaf", 1, &leaf);
  prof_start(S);
  prof_stop(S);
  int ok_at = -1;
  for (int n = 0; n < 32 && ok_at < 0; n++) {
    size_t bytes = 0;
    budget = n;
    int rc = prof_write_deepspeed_report(S, NULL, count_bytes, &bytes);
    if (rc == PROF_OK) ok_at = n;
    else {
      T_EQ_INT(rc, PROF_ERRMEM);
      T_CONTAINS(prof_errmsg(S), "out of memory");
    }
  }
  budget = -1;
  T_CHECK(ok_at > 0);
  prof_close(S);
}

int main(void) {
  T_RUN(test_torch_schedule);
  T_RUN(test_transitions);
  T_RUN(test_scheduler);
  T_RUN(test_scheduler_custom_and_close);
  T_RUN(test_scheduler_ready_fails);
  T_RUN(test_ignore_apply);
  T_RUN(test_deepspeed_report);
  T_RUN(test_deepspeed_report_timed);
  T_RUN(test_deepspeed_report_shapes);
  T_RUN(test_deepspeed_report_out_of_memory);
  return T_DONE();
}
