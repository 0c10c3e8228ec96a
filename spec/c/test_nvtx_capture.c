/* test_nvtx_capture.c — kernels launched inside NVTX ranges land on the innermost range's module and op (replayed CUPTI records). */
#include <stdlib.h>
#include <string.h>

#include "inject/inject.h"
#include "t.h"

static prof_ModuleId find(prof_State *S, const char *path) {
  char buf[256];
  for (prof_ModuleId i = 1; i < prof_module_count(S); i++)
    if (prof_module_path(S, i, buf, sizeof buf) >= 0 && strcmp(buf, path) == 0) return i;
  return -1;
}

static void launch(prof_State *S, const char *name, int64_t duration_ns) {
  prof_ReplayLaunch l = {.size = sizeof l, .kind = PROF_EVENT_KERNEL, .name = name,
                         .duration_ns = duration_ns};
  T_EQ_INT(prof_capture_replay_launch(S, &l, NULL), PROF_OK);
}

/* The op event named name (its correlation), 0 when none. */
static uint64_t op_correlation(prof_State *S, const char *name) {
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if (e.kind == PROF_EVENT_OP && strcmp(e.name, name) == 0) return e.correlation;
  }
  return 0;
}

static void test_kernels_on_innermost_range(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 256);
  injT_Tree *T;
  T_EQ_INT(injT_new(S, "app", &T), PROF_OK);
  /* as the injection does: the capture opens before the session starts, outside every range */
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL), PROF_OK);
  prof_start(S);
  injT_Thread *th = injT_thread(T);
  injT_push(T, th, 0, 0, "encoder:BertEncoder");
  injT_push(T, th, 0, 0, "encoder.layer.0:BertLayer");
  injT_push(T, th, 0, 0, "aten::addmm, seq = 1, sizes = [[64], [32, 128], [128, 64], [], []]");
  launch(S, "gemm_kernel", 5000);              /* inside the op, inside BertLayer */
  injT_pop(T, th, 0);
  launch(S, "layer_norm_kernel", 2000);        /* BertLayer, no op */
  injT_pop(T, th, 0);
  uint64_t r = injT_start(T, th, 0, 0, "attention");
  launch(S, "softmax_kernel", 1000);           /* a start/end range is innermost */
  injT_end(T, th, r);
  injT_pop(T, th, 0);
  launch(S, "outside_kernel", 700);            /* only the root is open */
  /* the device "finishes" before the stop, as the injection's cuCtxSynchronize makes it */
  int64_t until = prof_now_ns() + 20000;
  while (prof_now_ns() < until) {
  }
  injT_close_all(T);
  prof_stop(S);

  prof_ModuleId layer = find(S, "encoder.layer.0"), attn = find(S, "encoder.attention");
  prof_ModuleId enc = find(S, "encoder");
  T_CHECK(layer > 0 && attn > 0 && enc > 0);
  uint64_t addmm = op_correlation(S, "aten::addmm");
  T_CHECK(addmm != 0);
  int kernels = 0;
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if (e.kind != PROF_EVENT_KERNEL) continue;
    kernels++;
    T_EQ_INT(e.device, PROF_DEVICE_CUDA);
    if (strcmp(e.name, "gemm_kernel") == 0) {
      T_EQ_INT(e.module, layer);
      T_EQ_INT(e.correlation, addmm);          /* Kineto's External id: the launching op */
      T_EQ_INT(e.t_end_ns - e.t_begin_ns, 5000);
    } else if (strcmp(e.name, "layer_norm_kernel") == 0) {
      T_EQ_INT(e.module, layer);
      T_EQ_INT(e.correlation, 0);
    } else if (strcmp(e.name, "softmax_kernel") == 0) {
      T_EQ_INT(e.module, attn);
    } else {
      T_EQ_STR(e.name, "outside_kernel");
      T_EQ_INT(e.module, 0);                   /* the program's root module */
    }
  }
  T_EQ_INT(kernels, 4);
  /* per-module GPU time, inclusive: BertLayer 5000 + 2000; the encoder adds attention's 1000 */
  prof_ModuleInfo mi = {.size = sizeof mi};
  prof_module_info(S, layer, &mi);
  T_EQ_INT(mi.device_time_ns[PROF_PHASE_FORWARD], 7000);
  T_EQ_INT(mi.device_ops[PROF_PHASE_FORWARD], 2);
  prof_module_info(S, enc, &mi);
  T_EQ_INT(mi.device_time_ns[PROF_PHASE_FORWARD], 8000);
  prof_module_info(S, 0, &mi);
  T_EQ_INT(mi.device_time_ns[PROF_PHASE_FORWARD], 8700);
  prof_CaptureStats cs = {.size = sizeof cs};
  prof_capture_stats(S, &cs);
  T_EQ_INT(cs.kernels, 4);
  T_EQ_INT(cs.attributed_op, 1);
  prof_capture_close(S);
  injT_free(T);
  prof_close(S);
}

int main(void) {
  T_RUN(test_kernels_on_innermost_range);
  return T_DONE();
}
