/* test_capture_trace.c — device events in the Chrome trace, parsed back: GPU rows, launches, ac2g flows, annotations, memory. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "t.h"

#if PROF_HAVE_CUPTI

typedef struct Buf {
  char *data;
  size_t len, cap;
} Buf;

static int buf_write(void *ud, const char *s, size_t n) {
  Buf *b = ud;
  if (b->len + n + 1 > b->cap) {
    b->cap = 2 * (b->len + n + 1);
    b->data = realloc(b->data, b->cap);
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *args(const cJSON *o) { return cJSON_GetObjectItemCaseSensitive(o, "args"); }

/* The first trace event with ph, cat (NULL: any) and name (NULL: any). */
static const cJSON *find(const cJSON *events, const char *ph, const char *cat, const char *name) {
  const cJSON *e;
  cJSON_ArrayForEach(e, events) {
    if (str(e, "ph") == NULL || strcmp(str(e, "ph"), ph) != 0) continue;
    if (cat != NULL && (str(e, "cat") == NULL || strcmp(str(e, "cat"), cat) != 0)) continue;
    if (name != NULL && (str(e, "name") == NULL || strcmp(str(e, "name"), name) != 0)) continue;
    return e;
  }
  return NULL;
}

/* ts in the trace is µs with three decimals from base: back to ns. */
static int64_t ns_of(const cJSON *e, const char *k) { return llround(num(e, k) * 1000.0); }

static prof_Event device_event(prof_State *S, int kind, const char *name) {
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if ((int)e.kind == kind && (name == NULL || strcmp(e.name, name) == 0)) return e;
  }
  prof_Event none = {.kind = (prof_EventKind)-1};
  return none;
}

/* A fixture with a GPU allocation in its own window, replayed beside live launches: the fixture
   window replaces the session's, so it spans everything. */
static const char *fixture(char *buf, size_t size, int64_t t) {
  snprintf(buf, size,
           "{\"schema\": \"profrun.cupti/1\", \"window\": [%lld, %lld], \"buffers\": [{\"records\": ["
           "{\"kind\": \"memory\", \"op\": \"alloc\", \"address\": 4096, \"bytes\": 2048, "
           "\"timestamp\": %lld, \"device\": 0}]}]}",
           (long long)(t - 1000000000), (long long)(t + 1000000000), (long long)t);
  return buf;
}

static void test_gpu_rows_flows_and_annotations(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_set_event_capacity(S, 256);
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL), PROF_OK);
  int64_t t0 = prof_now_ns();
  T_EQ_INT(prof_start(S), PROF_OK);
  prof_module_enter(S, net);
  prof_range_push(S, "step");
  prof_Op op = {.kind = PROF_OP_CUSTOM, .name = "aten::mm"};
  prof_op_begin(S, &op);
  prof_ReplayLaunch k1 = {.size = sizeof k1, .name = "gemm", .duration_ns = 4000, .grid = {8, 2, 1},
                          .block = {256, 1, 1}};
  uint64_t flow1 = 0;
  T_EQ_INT(prof_capture_replay_launch(S, &k1, &flow1), PROF_OK);
  prof_ReplayLaunch k2 = {.size = sizeof k2, .name = "epilogue", .duration_ns = 1000};
  T_EQ_INT(prof_capture_replay_launch(S, &k2, NULL), PROF_OK);
  prof_ReplayLaunch c = {.size = sizeof c, .kind = PROF_EVENT_MEMCPY, .bytes = 8000,
                         .duration_ns = 2000, .copy_kind = PROF_COPY_DTOH, .stream = 9};
  T_EQ_INT(prof_capture_replay_launch(S, &c, NULL), PROF_OK);
  prof_op_end(S, &op);
  prof_range_pop(S);
  prof_module_exit(S, net);
  char fx[512];
  const char *text = fixture(fx, sizeof fx, prof_now_ns());
  T_EQ_INT(prof_capture_replay_json(S, text, strlen(text), "inline"), PROF_OK);
  T_EQ_INT(prof_stop(S), PROF_OK);

  prof_TraceInfo info;
  prof_traceinfo_init(&info);
  info.base_ns = t0;
  info.pid = 4242;
  Buf b = {0};
  T_EQ_INT(prof_write_chrome_trace(S, &info, buf_write, &b), PROF_OK);
  cJSON *doc = cJSON_Parse(b.data);
  T_CHECK(doc != NULL);
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");

  /* the kernel on its GPU row: pid = device, tid = stream, Kineto's args */
  prof_Event g = device_event(S, PROF_EVENT_KERNEL, "gemm");
  const cJSON *gk = find(ev, "X", "kernel", "gemm");
  T_CHECK(gk != NULL);
  T_EQ_INT(num(gk, "pid"), 0);
  T_EQ_INT(num(gk, "tid"), 7);
  T_EQ_INT(ns_of(gk, "ts"), g.t_begin_ns - t0);
  T_EQ_INT(ns_of(gk, "dur"), 4000);
  T_EQ_INT(num(args(gk), "correlation"), flow1);
  T_EQ_INT(num(args(gk), "External id"), (double)op.correlation);
  T_EQ_INT(num(args(gk), "device"), 0);
  T_EQ_INT(num(args(gk), "stream"), 7);
  const cJSON *grid = cJSON_GetObjectItemCaseSensitive(args(gk), "grid");
  T_EQ_INT(cJSON_GetArraySize(grid), 3);
  T_EQ_INT(cJSON_GetArrayItem(grid, 0)->valuedouble, 8);
  T_EQ_INT(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(args(gk), "block"), 0)->valuedouble, 256);
  T_EQ_STR(str(args(gk), "Module Path"), "");   /* the root's path */

  /* the launch on the CPU thread's row, and the ac2g arrow from it to the kernel */
  const cJSON *call = NULL, *e;
  cJSON_ArrayForEach(e, ev) {
    if (str(e, "cat") && strcmp(str(e, "cat"), "cuda_runtime") == 0 &&
        num(args(e), "correlation") == (double)flow1)
      call = e;
  }
  T_CHECK(call != NULL);
  T_EQ_STR(str(call, "name"), "cudaLaunchKernel");
  T_EQ_INT(num(call, "pid"), 4242);
  T_EQ_INT(num(call, "tid"), PROF_TRACE_TID_BASE);
  T_EQ_INT(num(args(call), "cbid"), 211);
  T_EQ_INT(num(args(call), "External id"), (double)op.correlation);
  const cJSON *s = NULL, *f = NULL;
  cJSON_ArrayForEach(e, ev) {
    if (num(e, "id") != (double)flow1) continue;
    if (strcmp(str(e, "ph"), "s") == 0) s = e;
    if (strcmp(str(e, "ph"), "f") == 0) f = e;
  }
  T_CHECK(s != NULL && f != NULL);
  T_EQ_STR(str(s, "cat"), "ac2g");
  T_EQ_INT(num(s, "pid"), 4242);
  T_EQ_INT(ns_of(s, "ts"), ns_of(call, "ts"));
  T_EQ_STR(str(f, "bp"), "e");
  T_EQ_INT(num(f, "pid"), 0);
  T_EQ_INT(num(f, "tid"), 7);
  T_EQ_INT(ns_of(f, "ts"), ns_of(gk, "ts"));

  /* "step" over its kernels on stream 7 (gemm then epilogue), 1 ns earlier, 2 ns longer; and on
     stream 9 over the copy alone */
  prof_Event ep = device_event(S, PROF_EVENT_KERNEL, "epilogue");
  const cJSON *ann7 = NULL, *ann9 = NULL;
  cJSON_ArrayForEach(e, ev) {
    if (!str(e, "cat") || strcmp(str(e, "cat"), "gpu_user_annotation") != 0) continue;
    if (num(e, "tid") == 7) ann7 = e;
    if (num(e, "tid") == 9) ann9 = e;
  }
  T_CHECK(ann7 != NULL && ann9 != NULL);
  T_EQ_STR(str(ann7, "name"), "step");
  T_EQ_INT(ns_of(ann7, "ts"), g.t_begin_ns - 1 - t0);
  T_EQ_INT(ns_of(ann7, "dur"), ep.t_end_ns - g.t_begin_ns + 2);
  T_EQ_INT(ns_of(ann9, "dur"), 2000 + 2);

  /* the copy, Kineto's name and bandwidth: 8000 bytes in 2000 ns = 4 GB/s */
  const cJSON *cp = find(ev, "X", "gpu_memcpy", NULL);
  T_CHECK(cp != NULL);
  T_EQ_STR(str(cp, "name"), "Memcpy DtoH (Device -> Pageable)");
  T_EQ_INT(num(args(cp), "bytes"), 8000);
  T_NEAR(num(args(cp), "memory bandwidth (GB/s)"), 4.0, 1e-9);
  T_EQ_INT(num(cp, "tid"), 9);

  /* rows: the GPU's process (below the CPU's) and the stream's thread name */
  int labelled = 0, stream_named = 0;
  cJSON_ArrayForEach(e, ev) {
    if (strcmp(str(e, "ph"), "M") != 0 || num(e, "pid") != 0) continue;
    if (strcmp(str(e, "name"), "process_labels") == 0)
      labelled = str(args(e), "labels") && strcmp(str(args(e), "labels"), "GPU 0") == 0;
    if (strcmp(str(e, "name"), "thread_name") == 0 && num(e, "tid") == 7)
      stream_named = str(args(e), "name") && strcmp(str(args(e), "name"), "stream 7 ") == 0;
  }
  T_CHECK(labelled);
  T_CHECK(stream_named);

  /* the GPU memory counter from the fixture's allocation */
  const cJSON *mem = find(ev, "C", NULL, "GPU Memory Allocated");
  T_CHECK(mem != NULL);
  T_EQ_INT(num(args(mem), "Allocated"), 2048);
  T_EQ_INT(num(mem, "pid"), 0);

  const cJSON *cupti = cJSON_GetObjectItemCaseSensitive(doc, "cupti");
  T_EQ_INT(num(cupti, "kernels"), 2);
  T_EQ_INT(num(cupti, "memcpys"), 1);
  T_EQ_INT(num(cupti, "attributedToOp"), 3);
  T_EQ_INT(num(cupti, "deviceOps"), 3);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(S);
}

int main(void) {
  T_RUN(test_gpu_rows_flows_and_annotations);
  return T_DONE();
}

#else

int main(void) {
  printf("built without the CUPTI headers: nothing to replay\n");
  (void)t_current_failed_;
  return T_DONE();
}

#endif
