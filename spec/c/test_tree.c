/* test_tree.c — the module tree: registration, inclusive/self accumulation, ignores, stack errors. */
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "t.h"

/* A custom op of known counts, so these tests depend on the tree alone, not on formulas. */
static void op(prof_State *S, int64_t macs, int64_t flops) {
  prof_Op o = {0};
  o.kind = PROF_OP_CUSTOM;
  o.macs = macs;
  o.flops = flops;
  o.bytes_read = 10;
  o.bytes_written = 1;
  prof_op_record(S, &o);
}

static prof_ModuleInfo info(prof_State *S, prof_ModuleId id) {
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, id, &i);
  return i;
}

/* A session's one root module of type, without parameters. */
static prof_ModuleId root_of_type(prof_State *S, const char *type) {
  prof_ModuleId r = PROF_NO_MODULE;
  prof_module_add(S, PROF_NO_MODULE, "", type, 0, &r);
  return r;
}

/* root -> a -> (a0, a1); root -> b. */
typedef struct Tree { prof_ModuleId root, a, a0, a1, b; } Tree;

static Tree build(prof_State *S) {
  Tree t;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 110, &t.root);
  prof_module_add(S, t.root, "a", "Sequential", 100, &t.a);
  prof_module_add(S, t.a, "0", "Linear", 60, &t.a0);
  prof_module_add(S, t.a, "1", "Linear", 40, &t.a1);
  prof_module_add(S, t.root, "b", "ReLU", 0, &t.b);
  return t;
}

static void test_inclusive_and_self(void) {
  prof_State *S = prof_new(NULL, NULL);
  Tree t = build(S);
  prof_start(S);
  prof_module_enter(S, t.root);
  op(S, 0, 5);              /* the root's own body */
  prof_module_enter(S, t.a);
  prof_module_enter(S, t.a0);
  op(S, 100, 200);
  prof_module_exit(S, t.a0);
  prof_module_enter(S, t.a1);
  op(S, 30, 60);
  prof_module_exit(S, t.a1);
  prof_module_exit(S, t.a);
  prof_module_enter(S, t.b);
  op(S, 0, 7);
  prof_module_exit(S, t.b);
  prof_module_exit(S, t.root);
  prof_stop(S);
  /* inclusive: root = 5 + 200 + 60 + 7; a = 200 + 60 */
  T_EQ_INT(info(S, t.root).phase[0].flops, 272);
  T_EQ_INT(info(S, t.root).phase[0].macs, 130);
  T_EQ_INT(info(S, t.root).phase[0].self_flops, 5);
  T_EQ_INT(info(S, t.a).phase[0].flops, 260);
  T_EQ_INT(info(S, t.a).phase[0].self_flops, 0);
  T_EQ_INT(info(S, t.a0).phase[0].flops, 200);
  T_EQ_INT(info(S, t.b).phase[0].flops, 7);
  /* bytes: four ops of 10 read and 1 written */
  T_EQ_INT(info(S, t.root).phase[0].bytes_read, 40);
  T_EQ_INT(info(S, t.root).phase[0].bytes_written, 4);
  T_EQ_INT(info(S, t.root).phase[0].calls, 1);
  T_CHECK(info(S, t.root).phase[0].time_ns > 0);
  T_EQ_INT(info(S, t.a0).depth, 2);
  T_EQ_INT(prof_check(S), PROF_OK);
  prof_close(S);
}

static void test_repeated_calls_accumulate_and_restart_resets(void) {
  prof_State *S = prof_new(NULL, NULL);
  Tree t = build(S);
  for (int run = 0; run < 2; run++) {
    prof_start(S);
    for (int i = 0; i < 3; i++) {
      prof_module_enter(S, t.a0);
      op(S, 10, 20);
      prof_module_exit(S, t.a0);
    }
    prof_stop(S);
    /* three calls of 20 flops, the same in the second session: nothing grows across sessions */
    T_EQ_INT(info(S, t.a0).phase[0].flops, 60);
    T_EQ_INT(info(S, t.a0).phase[0].calls, 3);
  }
  prof_close(S);
}

static void test_shared_module_counts_per_call(void) {
  /* DeepSpeed #7256: one Linear under three parents, called once in each: 3 calls, not 9. */
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, p[3], shared;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  for (int i = 0; i < 3; i++) prof_module_add(S, root, "p", "Block", 0, &p[i]);
  prof_module_add(S, p[0], "shared", "Linear", 0, &shared);
  prof_start(S);
  prof_module_enter(S, root);
  for (int i = 0; i < 3; i++) {
    prof_module_enter(S, p[i]);
    prof_module_enter(S, shared);
    op(S, 10000, 20000);
    prof_module_exit(S, shared);
    prof_module_exit(S, p[i]);
  }
  prof_module_exit(S, root);
  prof_stop(S);
  T_EQ_INT(info(S, root).phase[0].flops, 60000);
  T_EQ_INT(info(S, shared).phase[0].flops, 60000);
  T_EQ_INT(info(S, p[1]).phase[0].flops, 20000);
  prof_close(S);
}

static void test_recursion_counted_once(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId r = root_of_type(S, "Rec");
  prof_start(S);
  prof_module_enter(S, r);
  op(S, 1, 2);
  prof_module_enter(S, r);   /* calls itself */
  op(S, 1, 2);
  prof_module_exit(S, r);
  prof_module_exit(S, r);
  prof_stop(S);
  /* two ops of 2 flops: 4, not 6 (the inner activation must not add again) */
  T_EQ_INT(info(S, r).phase[0].flops, 4);
  T_EQ_INT(prof_check(S), PROF_OK);
  prof_close(S);
}

static void test_ignored_exact_and_deepspeed(void) {
  for (int conv = 0; conv < 2; conv++) {
    prof_State *S = prof_new(NULL, NULL);
    prof_set_conventions(S, conv ? PROF_CONV_DEEPSPEED : PROF_CONV_EXACT);
    Tree t = build(S);
    prof_module_set_flags(S, t.a, PROF_MODULE_IGNORED);
    prof_start(S);
    prof_module_enter(S, t.root);
    prof_module_enter(S, t.a);
    op(S, 0, 3);               /* the ignored module's own body */
    prof_module_enter(S, t.a0);
    op(S, 100, 200);
    prof_module_exit(S, t.a0);
    prof_module_exit(S, t.a);
    prof_module_exit(S, t.root);
    prof_stop(S);
    if (conv == 0) {
      /* exact: the ignored module and all it runs leave the totals */
      T_EQ_INT(info(S, t.root).phase[0].flops, 0);
      T_EQ_INT(info(S, t.a0).phase[0].flops, 0);
    } else {
      /* deepspeed: its own ops count for the parent, its children keep theirs */
      T_EQ_INT(info(S, t.root).phase[0].flops, 203);
      T_EQ_INT(info(S, t.root).phase[0].self_flops, 3);
      T_EQ_INT(info(S, t.a0).phase[0].flops, 200);
      T_EQ_INT(info(S, t.a).phase[0].flops, 0);
    }
    prof_close(S);
  }
}

static void test_mismatched_exit_is_survived(void) {
  prof_State *S = prof_new(NULL, NULL);
  Tree t = build(S);
  prof_start(S);
  prof_module_enter(S, t.root);
  prof_module_enter(S, t.a);
  prof_module_enter(S, t.a0);
  op(S, 1, 2);
  prof_module_exit(S, t.root);    /* a and a0 were never exited: an error unwound them */
  prof_module_exit(S, t.b);       /* never entered */
  prof_module_enter(S, 999);      /* unknown */
  prof_stop(S);
  T_EQ_INT(info(S, t.root).phase[0].flops, 2);
  T_EQ_INT(info(S, t.a0).phase[0].flops, 2);
  T_EQ_INT(prof_module_current(S), PROF_NO_MODULE);
  T_EQ_INT(prof_check(S), PROF_ERRSTATE);   /* the first error is the one reported */
  T_CONTAINS(prof_errmsg(S), "inner modules left open");
  T_CONTAINS(prof_errmsg(S), "path \"\"");
  T_EQ_INT(prof_check(S), PROF_OK);         /* cleared */
  prof_close(S);
}

static void test_stack_overflow_is_survived(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId r = root_of_type(S, "Deep");
  prof_start(S);
  /* the frame stack grows to 65,536 open calls (PROF_STACK_MAX); one more is a sticky error */
  for (int i = 0; i < 65536 + 4; i++) prof_module_enter(S, r);
  T_EQ_INT(prof_check(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "more than 65536 nested module calls");
  prof_module_exit(S, r);
  prof_stop(S);
  prof_close(S);
}

static void test_paths_and_preorder(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, l, l0, c1, head;
  prof_module_add(S, PROF_NO_MODULE, "", "ResNet", 0, &root);
  prof_module_add(S, root, "layer1", "Sequential", 0, &l);
  prof_module_add(S, root, "fc", "Linear", 0, &head);
  prof_module_add(S, l, "0", "BasicBlock", 0, &l0);       /* added after fc: pre-order fixes it */
  prof_module_add(S, l0, "conv1", "Conv2d", 0, &c1);
  char buf[64];
  T_EQ_INT(prof_module_path(S, c1, buf, sizeof buf), 14);
  T_EQ_STR(buf, "layer1.0.conv1");
  T_EQ_INT(prof_module_path(S, root, buf, sizeof buf), 0);
  T_EQ_STR(buf, "");
  T_EQ_INT(prof_module_path(S, c1, buf, 7), 14);   /* truncated, length still reported */
  T_EQ_STR(buf, "layer1");
  T_EQ_INT(prof_module_path(S, 42, buf, sizeof buf), -1);
  prof_ModuleId ids[8];
  T_EQ_INT(prof_module_preorder(S, ids, 8), 5);
  T_EQ_INT(ids[0], root);
  T_EQ_INT(ids[1], l);
  T_EQ_INT(ids[2], l0);
  T_EQ_INT(ids[3], c1);
  T_EQ_INT(ids[4], head);
  T_EQ_INT(prof_module_add(S, 77, "x", "X", 0, NULL), PROF_ERRARG);
  T_CONTAINS(prof_errmsg(S), "unknown parent id 77");
  prof_close(S);
}

/* prof_module_preorder_from: slices of the pre-order, from the snapshot's copy while the tree is
   as it was, walked once it has changed (a module added after the snapshot). */
static void test_preorder_slices(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, l, l0, c1, head, late;
  prof_module_add(S, PROF_NO_MODULE, "", "ResNet", 0, &root);
  prof_module_add(S, root, "layer1", "Sequential", 0, &l);
  prof_module_add(S, root, "fc", "Linear", 0, &head);
  prof_module_add(S, l, "0", "BasicBlock", 0, &l0);
  prof_module_add(S, l0, "conv1", "Conv2d", 0, &c1);
  T_EQ_INT(prof_snapshot(S), PROF_OK);
  prof_ModuleId ids[8] = {0};
  /* positions 1 .. 3 of root, layer1, layer1.0, layer1.0.conv1, fc */
  T_EQ_INT(prof_module_preorder_from(S, 1, ids, 3), 3);
  T_EQ_INT(ids[0], l);
  T_EQ_INT(ids[1], l0);
  T_EQ_INT(ids[2], c1);
  T_EQ_INT(prof_module_preorder_from(S, 3, ids, 8), 2);   /* fewer at the end */
  T_EQ_INT(ids[0], c1);
  T_EQ_INT(ids[1], head);
  T_EQ_INT(prof_module_preorder_from(S, 5, ids, 8), 0);
  T_EQ_INT(prof_module_preorder_from(S, -1, ids, 8), 0);
  /* a module under layer1.0 after the snapshot: position 4 is now it, fc moves to 5 */
  prof_module_add(S, l0, "bn1", "BatchNorm2d", 0, &late);
  T_EQ_INT(prof_module_preorder_from(S, 3, ids, 8), 3);
  T_EQ_INT(ids[0], c1);
  T_EQ_INT(ids[1], late);
  T_EQ_INT(ids[2], head);
  prof_close(S);
}

static void test_enter_named_builds_the_tree(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId a, b, a2;
  prof_start(S);
  prof_module_enter_named(S, "", "Host", &a);
  prof_module_enter_named(S, "encoder", "Encoder", &b);
  op(S, 1, 2);
  prof_module_exit(S, b);
  prof_module_enter_named(S, "encoder", "Encoder", &a2);   /* found again, not added */
  prof_module_exit(S, a2);
  prof_module_exit(S, a);
  prof_stop(S);
  T_EQ_INT(b, a2);
  T_EQ_INT(prof_module_count(S), 2);
  T_EQ_INT(info(S, b).phase[0].calls, 2);
  T_EQ_INT(info(S, a).phase[0].flops, 2);
  prof_close(S);
}

static void test_phases_and_unattributed(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId r = root_of_type(S, "Net");
  prof_start(S);
  op(S, 1, 1);                         /* outside every module */
  prof_module_enter(S, r);
  op(S, 2, 4);
  prof_module_exit(S, r);
  prof_set_phase(S, PROF_PHASE_BACKWARD);
  prof_module_enter(S, r);
  op(S, 4, 8);
  prof_module_exit(S, r);
  prof_set_phase(S, PROF_PHASE_FORWARD);
  prof_stop(S);
  op(S, 100, 100);                     /* after stop: ignored */
  T_EQ_INT(info(S, r).phase[PROF_PHASE_FORWARD].flops, 4);
  T_EQ_INT(info(S, r).phase[PROF_PHASE_BACKWARD].flops, 8);
  prof_Counts c;
  prof_totals(S, PROF_PHASE_FORWARD, &c);
  T_EQ_INT(c.flops, 5);
  T_EQ_INT(c.self_flops, 1);
  prof_close(S);
}

static void test_lifecycle_errors(void) {
  prof_State *S = prof_new(NULL, NULL);
  T_EQ_INT(prof_stop(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "not active");
  T_EQ_INT(prof_start(S), PROF_OK);
  T_EQ_INT(prof_start(S), PROF_ERRSTATE);
  T_EQ_INT(prof_module_apply_rule(S, 3, NULL, 0, NULL, 0, NULL), PROF_ERRSTATE);
  T_EQ_INT(prof_set_event_capacity(S, 10), PROF_ERRSTATE);
  T_EQ_INT(prof_set_conventions(S, (prof_Conventions)7), PROF_ERRARG);
  T_EQ_INT(prof_conventions_parse("deepspeed"), PROF_CONV_DEEPSPEED);
  T_EQ_INT(prof_conventions_parse("fast"), -1);
  T_EQ_STR(prof_version(), PROF_VERSION);
  prof_close(S);
  prof_close(NULL);
}

/* Fails the k-th allocation: every out-of-memory path must fail cleanly and leak nothing. */
typedef struct FailAlloc { int countdown; long live; } FailAlloc;

static void *fail_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  FailAlloc *fa = ud;
  if (nsize == 0) {
    if (ptr) fa->live -= (long)osize;
    free(ptr);
    return NULL;
  }
  if (fa->countdown-- == 0) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) fa->live += (long)nsize - (ptr ? (long)osize : 0);
  return p;
}

static void test_out_of_memory_paths(void) {
  int succeeded = 0;
  for (int k = 0; k < 400 && !succeeded; k++) {
    FailAlloc fa = {k, 0};
    prof_State *S = prof_new(fail_alloc, &fa);
    if (S == NULL) {
      T_EQ_INT(fa.live, 0);
      continue;
    }
    int ok = 1;
    for (int i = 0; i < 70 && ok; i++) {   /* 70 > 64: the node array grows once */
      int rc = prof_module_add(S, i == 0 ? PROF_NO_MODULE : 0, "m", "Module", 1, NULL);
      if (rc != PROF_OK) {
        T_EQ_INT(rc, PROF_ERRMEM);
        T_CONTAINS(prof_errmsg(S), "out of memory");
        T_EQ_INT(prof_module_count(S), i);   /* nothing half-added */
        ok = 0;
      }
    }
    succeeded = ok;
    prof_close(S);
    T_EQ_INT(fa.live, 0);
  }
  T_CHECK(succeeded);
}

/* A phase switched while a frame is open: the ops after it are the frame's in the new phase
   (a phase's counters are made when the thread first records in it). */
static void test_phase_switch_inside_a_frame(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId r = root_of_type(S, "Net");
  prof_start(S);
  prof_module_enter(S, r);
  op(S, 1, 2);
  prof_set_phase(S, PROF_PHASE_BACKWARD);
  op(S, 4, 8);
  prof_set_phase(S, PROF_PHASE_STEP);
  op(S, 16, 32);
  prof_set_phase(S, PROF_PHASE_FORWARD);
  prof_module_exit(S, r);
  prof_stop(S);
  T_EQ_INT(prof_check(S), PROF_OK);
  prof_ModuleInfo i = info(S, r);
  T_EQ_INT(i.phase[PROF_PHASE_FORWARD].self_flops, 2);
  T_EQ_INT(i.phase[PROF_PHASE_BACKWARD].self_flops, 8);
  T_EQ_INT(i.phase[PROF_PHASE_STEP].self_flops, 32);
  T_EQ_INT(i.phase[PROF_PHASE_FORWARD].flops, 2);   /* the frame is the forward's */
  T_EQ_INT(i.phase[PROF_PHASE_FORWARD].calls, 1);
  /* a new window starts from zero in every phase, the made ones too */
  prof_start(S);
  prof_module_enter(S, r);
  op(S, 1, 1);
  prof_module_exit(S, r);
  prof_stop(S);
  i = info(S, r);
  T_EQ_INT(i.phase[PROF_PHASE_FORWARD].self_flops, 1);
  T_EQ_INT(i.phase[PROF_PHASE_BACKWARD].self_flops, 0);
  T_EQ_INT(i.phase[PROF_PHASE_STEP].self_flops, 0);
  prof_close(S);
}

/* Every allocation of a phase switch and of the snapshot's phase arrays may fail: no crash, no
   leak, and a failed switch says so (prof_check) and keeps the phase. */
static void test_phase_counters_out_of_memory(void) {
  int succeeded = 0, switch_failed = 0;
  for (int k = 0; k < 200 && !succeeded; k++) {
    FailAlloc fa = {k, 0};
    prof_State *S = prof_new(fail_alloc, &fa);
    if (S == NULL) continue;
    prof_ModuleId r;
    if (prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &r) != PROF_OK) {
      prof_close(S);
      T_EQ_INT(fa.live, 0);
      continue;
    }
    int ok = prof_start(S) == PROF_OK;
    prof_module_enter(S, r);
    op(S, 1, 2);
    prof_set_phase(S, PROF_PHASE_BACKWARD);
    prof_Phase now = prof_get_phase(S);
    op(S, 4, 8);
    prof_module_exit(S, r);
    prof_set_phase(S, PROF_PHASE_FORWARD);
    int rc = ok ? prof_stop(S) : PROF_ERRMEM;
    int sticky = prof_check(S);
    if (sticky == PROF_ERRMEM) T_CONTAINS(prof_errmsg(S), "out of memory");
    if (sticky == PROF_ERRMEM && strstr(prof_errmsg(S), "prof_set_phase") != NULL) {
      T_EQ_INT(now, PROF_PHASE_FORWARD);   /* the switch did not happen */
      switch_failed = 1;
    }
    /* the thread's recorder could not be made at the enter: the exit finds nothing open */
    if (sticky == PROF_ERRSTATE) T_CONTAINS(prof_errmsg(S), "module is not open");
    T_CHECK(sticky == PROF_OK || sticky == PROF_ERRMEM || sticky == PROF_ERRSTATE);
    if (ok && rc == PROF_OK && sticky == PROF_OK) {
      T_EQ_INT(now, PROF_PHASE_BACKWARD);
      T_EQ_INT(info(S, r).phase[PROF_PHASE_BACKWARD].self_flops, 8);
      succeeded = 1;
    }
    prof_close(S);
    T_EQ_INT(fa.live, 0);
  }
  T_CHECK(succeeded);
  T_CHECK(switch_failed);
}

static void test_children(void) {
  prof_State *S = prof_new(NULL, NULL);
  Tree t = build(S);
  prof_ModuleId ids[4] = {-1, -1, -1, -1};
  T_EQ_INT(prof_module_children(S, t.root, ids, 4), 2);
  T_EQ_INT(ids[0], t.a);
  T_EQ_INT(ids[1], t.b);
  T_EQ_INT(prof_module_children(S, t.a, ids, 1), 2);   /* the count, whatever fits */
  T_EQ_INT(ids[0], t.a0);
  T_EQ_INT(ids[1], t.b);                               /* not written past n */
  T_EQ_INT(prof_module_children(S, t.b, ids, 4), 0);
  T_EQ_INT(prof_module_children(S, 99, ids, 4), 0);
  T_EQ_INT(prof_module_children(S, -1, ids, 4), 0);
  prof_close(S);
}

/* prof_trim frees the recorders' counters after a window: the snapshot's counts stand (a second
   prof_snapshot keeps them), the next window counts from zero, and it is refused while active
   or with a call open. */
static void test_trim_keeps_the_window(void) {
  prof_State *S = prof_new(NULL, NULL);
  Tree t = build(S);
  T_EQ_INT(prof_trim(S), PROF_OK);   /* nothing recorded yet: nothing to free */
  prof_start(S);
  T_EQ_INT(prof_trim(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "active");
  prof_module_enter(S, t.root);
  prof_module_enter(S, t.a);
  op(S, 3, 6);
  prof_module_exit(S, t.a);
  prof_module_exit(S, t.root);
  prof_stop(S);
  T_EQ_INT(prof_trim(S), PROF_OK);
  T_EQ_INT(info(S, t.a).phase[PROF_PHASE_FORWARD].flops, 6);
  T_EQ_INT(prof_snapshot(S), PROF_OK);
  T_EQ_INT(info(S, t.a).phase[PROF_PHASE_FORWARD].flops, 6);
  T_EQ_INT(info(S, t.root).phase[PROF_PHASE_FORWARD].flops, 6);
  prof_start(S);
  prof_module_enter(S, t.root);
  prof_set_phase(S, PROF_PHASE_BACKWARD);   /* a phase made again after the trim */
  op(S, 1, 2);
  prof_set_phase(S, PROF_PHASE_FORWARD);
  prof_module_enter(S, t.b);
  op(S, 1, 1);
  prof_module_exit(S, t.b);
  prof_stop(S);
  T_EQ_INT(prof_check(S), PROF_OK);
  T_EQ_INT(info(S, t.a).phase[PROF_PHASE_FORWARD].flops, 0);
  T_EQ_INT(info(S, t.b).phase[PROF_PHASE_FORWARD].flops, 1);
  T_EQ_INT(info(S, t.root).phase[PROF_PHASE_BACKWARD].self_flops, 2);
  /* a call left open (a stop inside a module's forward): refused, nothing freed */
  T_EQ_INT(prof_trim(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "module call is open");
  prof_module_exit(S, t.root);
  T_EQ_INT(prof_trim(S), PROF_OK);
  prof_close(S);
}

int main(void) {
  T_RUN(test_inclusive_and_self);
  T_RUN(test_repeated_calls_accumulate_and_restart_resets);
  T_RUN(test_shared_module_counts_per_call);
  T_RUN(test_recursion_counted_once);
  T_RUN(test_ignored_exact_and_deepspeed);
  T_RUN(test_mismatched_exit_is_survived);
  T_RUN(test_stack_overflow_is_survived);
  T_RUN(test_paths_and_preorder);
  T_RUN(test_preorder_slices);
  T_RUN(test_enter_named_builds_the_tree);
  T_RUN(test_phases_and_unattributed);
  T_RUN(test_lifecycle_errors);
  T_RUN(test_out_of_memory_paths);
  T_RUN(test_phase_switch_inside_a_frame);
  T_RUN(test_phase_counters_out_of_memory);
  T_RUN(test_children);
  T_RUN(test_trim_keeps_the_window);
  return T_DONE();
}
