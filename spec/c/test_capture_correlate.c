/* test_capture_correlate.c — launches inside real ops, ranges and modules: each device event names its op, range, module and phase. */
#include <string.h>

#include "prof.h"
#include "t.h"

#if PROF_HAVE_CUPTI

static prof_Event event(prof_State *S, int64_t i) {
  prof_Event e;
  memset(&e, 0xab, sizeof e);
  e.size = sizeof e;
  T_EQ_INT(prof_event_at(S, i, &e), PROF_OK);
  return e;
}

/* The first event of kind named name, or one with .kind = -1. */
static prof_Event named(prof_State *S, int kind, const char *name) {
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = event(S, i);
    if ((int)e.kind == kind && e.name != NULL && strcmp(e.name, name) == 0) return e;
  }
  prof_Event none = {.kind = (prof_EventKind)-1};
  T_FAIL_("no event %s", name);
  return none;
}

static uint64_t launch(prof_State *S, prof_EventKind kind, const char *name, int64_t dur) {
  prof_ReplayLaunch l = {.size = sizeof l, .kind = kind, .name = name, .duration_ns = dur,
                         .bytes = kind == PROF_EVENT_KERNEL ? 0 : 1024};
  uint64_t flow = 0;
  T_EQ_INT(prof_capture_replay_launch(S, &l, &flow), PROF_OK);
  return flow;
}

/*
** Net { range "step" { block { fc { op mm: gemm (5 us), a copy (2 us) } ; relu (1 us) outside any op } } ;
** backward: op mm_backward in Net: gemm_bwd (3 us) } ; a kernel outside everything (4 us).
*/
static void test_launches_are_attributed_to_op_range_module_and_phase(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, block, fc;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_module_add(S, net, "block", "Block", 0, &block);
  prof_module_add(S, block, "fc", "Linear", 0, &fc);
  prof_set_event_capacity(S, 256);
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL), PROF_OK);
  T_EQ_INT(prof_start(S), PROF_OK);
  prof_module_enter(S, net);
  prof_range_push(S, "step");
  prof_module_enter(S, block);
  prof_module_enter(S, fc);
  prof_Op mm = {.kind = PROF_OP_CUSTOM, .name = "aten::mm", .flops = 10};
  prof_op_begin(S, &mm);
  uint64_t gemm_flow = launch(S, PROF_EVENT_KERNEL, "gemm", 5000);
  launch(S, PROF_EVENT_MEMCPY, NULL, 2000);
  prof_op_end(S, &mm);
  prof_module_exit(S, fc);
  launch(S, PROF_EVENT_KERNEL, "relu", 1000);
  prof_module_exit(S, block);
  prof_range_pop(S);
  prof_set_phase(S, PROF_PHASE_BACKWARD);
  prof_Op mmb = {.kind = PROF_OP_CUSTOM, .name = "aten::mm_backward"};
  prof_op_begin(S, &mmb);
  launch(S, PROF_EVENT_KERNEL, "gemm_bwd", 3000);
  prof_op_end(S, &mmb);
  prof_set_phase(S, PROF_PHASE_FORWARD);
  prof_module_exit(S, net);
  launch(S, PROF_EVENT_KERNEL, "lonely", 4000);
  T_EQ_INT(prof_stop(S), PROF_OK);
  T_EQ_INT(prof_check(S), PROF_OK);

  prof_Event step = named(S, PROF_EVENT_RANGE, "step");
  T_CHECK(step.correlation != 0);               /* a range has a correlation while capturing */
  T_CHECK(mm.correlation != 0 && mmb.correlation != 0);

  prof_Event g = named(S, PROF_EVENT_KERNEL, "gemm");
  T_EQ_INT(g.correlation, mm.correlation);      /* the op's External id */
  T_EQ_INT(g.range, step.correlation);
  T_EQ_INT(g.module, fc);
  T_EQ_INT(g.phase, PROF_PHASE_FORWARD);
  T_EQ_INT(g.flow, gemm_flow);
  T_EQ_INT(g.t_end_ns - g.t_begin_ns, 5000);
  T_EQ_INT(g.stream, 7);
  /* the device work follows its launch call, which lies inside the op */
  prof_Event mm_ev = named(S, PROF_EVENT_OP, "aten::mm");
  prof_Event call = {0};
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = event(S, i);
    if (e.kind == PROF_EVENT_RUNTIME && e.flow == gemm_flow) call = e;
  }
  T_EQ_STR(call.name, "cudaLaunchKernel");
  T_EQ_INT(call.correlation, mm.correlation);
  T_CHECK(call.t_begin_ns >= mm_ev.t_begin_ns && call.t_end_ns <= mm_ev.t_end_ns);
  T_CHECK(g.t_begin_ns >= call.t_end_ns);

  prof_Event c = named(S, PROF_EVENT_MEMCPY, "Memcpy HtoD (Pageable -> Device)");
  T_EQ_INT(c.correlation, mm.correlation);
  T_EQ_INT(c.module, fc);
  T_EQ_INT(c.bytes, 1024);

  prof_Event r = named(S, PROF_EVENT_KERNEL, "relu");
  T_EQ_INT(r.correlation, 0);                   /* launched outside every op */
  T_EQ_INT(r.range, step.correlation);
  T_EQ_INT(r.module, block);

  prof_Event b = named(S, PROF_EVENT_KERNEL, "gemm_bwd");
  T_EQ_INT(b.correlation, mmb.correlation);
  T_EQ_INT(b.range, 0);                         /* the range had closed */
  T_EQ_INT(b.module, net);
  T_EQ_INT(b.phase, PROF_PHASE_BACKWARD);       /* set_phase re-labels the open call */

  prof_Event l = named(S, PROF_EVENT_KERNEL, "lonely");
  T_EQ_INT(l.module, PROF_NO_MODULE);
  T_EQ_INT(l.correlation, 0);
  T_EQ_INT(l.range, 0);

  /* attribution: 4 of the 5 device ops ran inside modules, 2 inside ops; time per module by hand */
  prof_CaptureStats st = {.size = sizeof st};
  prof_capture_stats(S, &st);
  T_EQ_INT(st.device_ops, 5);
  T_EQ_INT(st.attributed_module, 4);
  T_EQ_INT(st.attributed_op, 3);
  T_EQ_INT(st.attributed_range, 3);
  prof_ModuleInfo in = {.size = sizeof in}, ib = {.size = sizeof ib}, ifc = {.size = sizeof ifc};
  prof_module_info(S, net, &in);
  prof_module_info(S, block, &ib);
  prof_module_info(S, fc, &ifc);
  T_EQ_INT(ifc.self_device_time_ns[PROF_PHASE_FORWARD], 7000);
  T_EQ_INT(ib.self_device_time_ns[PROF_PHASE_FORWARD], 1000);
  T_EQ_INT(ib.device_time_ns[PROF_PHASE_FORWARD], 8000);
  T_EQ_INT(in.device_time_ns[PROF_PHASE_FORWARD], 8000);
  T_EQ_INT(in.self_device_time_ns[PROF_PHASE_FORWARD], 0);
  T_EQ_INT(in.device_time_ns[PROF_PHASE_BACKWARD], 3000);
  T_EQ_INT(in.device_ops[PROF_PHASE_FORWARD], 3);
  T_EQ_INT(ifc.device_ops[PROF_PHASE_BACKWARD], 0);
  prof_close(S);
}

/* Every kernel launched inside an op is attributed to it: the rate the GPU target names. */
static void test_every_kernel_inside_an_op_is_attributed(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_set_event_capacity(S, 4096);
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  o.buffers = 128;             /* a synthesised launch fills one buffer; 100 between drains */
  o.buffer_bytes = 4096;
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, &o), PROF_OK);
  prof_start(S);
  prof_module_enter(S, net);
  for (int i = 0; i < 200; i++) {
    prof_Op op = {.kind = PROF_OP_CUSTOM, .name = "aten::add"};
    prof_op_begin(S, &op);
    prof_Op inner = {.kind = PROF_OP_CUSTOM, .name = "aten::mul"};
    prof_op_begin(S, &inner);   /* nested ops: the innermost wins, as in Kineto */
    prof_ReplayLaunch l = {.size = sizeof l, .name = "k"};
    prof_capture_replay_launch(S, &l, NULL);
    prof_op_end(S, &inner);
    prof_capture_replay_launch(S, &l, NULL);
    prof_op_end(S, &op);
    if (i % 50 == 49) T_EQ_INT(prof_capture_drain(S), PROF_OK);   /* drained while running */
  }
  prof_module_exit(S, net);
  prof_stop(S);
  prof_CaptureStats st = {.size = sizeof st};
  prof_capture_stats(S, &st);
  T_EQ_INT(st.kernels, 400);
  T_EQ_INT(st.attributed_op, 400);
  T_EQ_INT(st.attributed_module, 400);
  T_EQ_INT(st.dropped_pool, 0);
  int64_t inner_named = 0;
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = event(S, i);
    if (e.kind != PROF_EVENT_KERNEL) continue;
    /* the op event whose correlation matches is aten::mul for every second kernel */
    for (int64_t j = 0; j < prof_event_count(S); j++) {
      prof_Event op_ev = event(S, j);
      if (op_ev.kind == PROF_EVENT_OP && op_ev.correlation == e.correlation &&
          strcmp(op_ev.name, "aten::mul") == 0)
        inner_named++;
    }
  }
  T_EQ_INT(inner_named, 200);
  prof_close(S);
}

/* Without a capture the hooks push nothing and ranges keep correlation 0 (the contract). */
static void test_no_capture_no_correlation(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 16);
  prof_start(S);
  prof_range_push(S, "r");
  prof_range_pop(S);
  prof_stop(S);
  T_EQ_INT(event(S, 0).correlation, 0);
  T_EQ_INT(event(S, 0).flow, 0);
  T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_NONE);
  prof_close(S);
}

int main(void) {
  T_RUN(test_launches_are_attributed_to_op_range_module_and_phase);
  T_RUN(test_every_kernel_inside_an_op_is_attributed);
  T_RUN(test_no_capture_no_correlation);
  return T_DONE();
}

#else

int main(void) {
  printf("built without the CUPTI headers: nothing to replay\n");
  (void)t_current_failed_;
  return T_DONE();
}

#endif
