/* test_capture_decode.c — CUDA 13 activity records replayed: decoding, time mapping, window, bad times, drops, pool. */
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "t.h"

#if PROF_HAVE_CUPTI
#include <cupti.h>

/* A replay stream being built: [u32 kind][u32 size][struct], padded to 8 (prof.h's layout). */
typedef struct Stream {
  _Alignas(8) uint8_t buf[8192];
  size_t len;
} Stream;

static void add(Stream *s, const void *rec, uint32_t size) {
  memcpy(s->buf + s->len, rec, 4);
  memcpy(s->buf + s->len + 4, &size, 4);
  memcpy(s->buf + s->len + 8, rec, size);
  size_t padded = (size + 7u) & ~7u;
  memset(s->buf + s->len + 8 + size, 0, padded - size);
  s->len += 8 + padded;
}

static void kernel(Stream *s, uint64_t start, uint64_t end, uint32_t corr, const char *name) {
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 1;
  k.contextId = 3;
  k.streamId = 13;
  k.gridX = 4, k.gridY = 2, k.gridZ = 1;
  k.blockX = 128, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 512;
  k.correlationId = corr;
  k.name = name;
  add(s, &k, sizeof k);
}

static void external(Stream *s, int custom, uint64_t id, uint32_t corr) {
  CUpti_ActivityExternalCorrelation x;
  memset(&x, 0, sizeof x);
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = (CUpti_ExternalCorrelationKind)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 + custom);
  x.externalId = id;
  x.correlationId = corr;
  add(s, &x, sizeof x);
}

static prof_Event event(prof_State *S, int64_t i) {
  prof_Event e;
  memset(&e, 0xab, sizeof e);   /* every field must be set by prof_event_at */
  e.size = sizeof e;
  T_EQ_INT(prof_event_at(S, i, &e), PROF_OK);
  return e;
}

/* The i-th device event of kind (they follow the host events), or -1. */
static int64_t find(prof_State *S, int kind, int nth) {
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = event(S, i);
    if ((int)e.kind == kind && nth-- == 0) return i;
  }
  return -1;
}

static prof_CaptureStats stats(prof_State *S) {
  prof_CaptureStats st = {.size = sizeof st};
  prof_capture_stats(S, &st);
  return st;
}

/*
** The time map by hand. Pairs (device 1000, host 5000) and (3000, 9000): 2 host ns per device ns.
**   device 1500 -> 5000 + 500 * 2 = 6000;   device 2500 -> 8000;  2000 -> 7000;  2250 -> 7500
**   device 2600 -> 9000 + (2600 - 3000) * 2 = 8200;  2700 -> 8400  (inside the second pair: same line)
**   device 1200 -> 5400;  device 1400 -> 5800, 1450 -> 5900
**   device 100 -> 5000 - 900 * 2 = 3200 (before the first pair: the first segment's line)
**   device 9000 -> 9000 + 6000 * 2 = 21000 (after the last: the last segment's line)
** The window is [4500, 20000] host ns.
*/
static void test_records_decode_onto_the_host_clock(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, fc;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_module_add(S, net, "fc", "Linear", 0, &fc);
  prof_set_event_capacity(S, 64);
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL), PROF_OK);
  T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_REPLAY);
  T_EQ_INT(prof_capture_replay_clock(S, 1000, 5000), PROF_OK);
  T_EQ_INT(prof_capture_replay_clock(S, 3000, 9000), PROF_OK);
  T_EQ_INT(prof_capture_replay_clock(S, 2000, 1), PROF_ERRARG);   /* out of order */
  T_EQ_INT(prof_capture_replay_window(S, 4500, 20000), PROF_OK);
  T_EQ_INT(prof_start(S), PROF_OK);

  Stream *s = calloc(1, sizeof *s);
  uint64_t op = ((uint64_t)2 << 40) | 5;         /* recorder 1's fifth correlation */
  uint64_t range = ((uint64_t)2 << 40) | 4;
  uint64_t fwd_fc = ((uint64_t)(PROF_PHASE_FORWARD + 1) << 32) | (uint32_t)(fc + 1);
  uint64_t bwd_net = ((uint64_t)(PROF_PHASE_BACKWARD + 1) << 32) | (uint32_t)(net + 1);
  external(s, 0, op, 10);
  external(s, 1, range, 10);
  external(s, 2, fwd_fc, 10);
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  a.start = 1400;
  a.end = 1450;
  a.correlationId = 10;
  add(s, &a, sizeof a);
  kernel(s, 1500, 2500, 10, "gemm_kernel");
  CUpti_ActivityMemcpy6 m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 4096;
  m.start = 2000;
  m.end = 2250;
  m.deviceId = 1;
  m.streamId = 14;
  m.correlationId = 10;
  add(s, &m, sizeof m);
  external(s, 2, bwd_net, 11);
  CUpti_ActivityMemset4 z;
  memset(&z, 0, sizeof z);
  z.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  z.value = 0;
  z.bytes = 256;
  z.start = 2600;
  z.end = 2700;
  z.deviceId = 1;
  z.streamId = 13;
  z.correlationId = 11;
  z.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  add(s, &z, sizeof z);
  CUpti_ActivityMemory4 mem;
  memset(&mem, 0, sizeof mem);
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  mem.address = 0x7f0000001000ull;
  mem.bytes = 1 << 20;
  mem.timestamp = 1200;
  mem.deviceId = 1;
  add(s, &mem, sizeof mem);
  mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  mem.bytes = 1 << 18;
  mem.timestamp = 1250;   /* -> 5500 */
  add(s, &mem, sizeof mem);
  kernel(s, 100, 200, 12, "before_window");      /* -> [3200, 3400]: out of the window */
  kernel(s, 9000, 9100, 12, "after_window");     /* -> [21000, 21200]: out of the window */
  kernel(s, 0, 2000, 12, "zero_start");
  kernel(s, 2000, 0, 12, "zero_end");
  kernel(s, 2400, 2300, 12, "inverted");
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, s->len, 3), PROF_OK);
  T_EQ_INT(prof_stop(S), PROF_OK);

  prof_CaptureStats st = stats(S);
  T_EQ_INT(st.buffers, 1);
  T_EQ_INT(st.records, 15);   /* 4 external, 1 runtime, 6 kernels, a copy, a memset, 2 memory */
  T_EQ_INT(st.kernels, 1);
  T_EQ_INT(st.memcpys, 1);
  T_EQ_INT(st.memsets, 1);
  T_EQ_INT(st.runtime_calls, 1);
  T_EQ_INT(st.memory_records, 2);
  T_EQ_INT(st.external_correlations, 4);
  T_EQ_INT(st.out_of_window, 2);
  T_EQ_INT(st.bad_timestamps, 3);
  T_EQ_INT(st.dropped_cupti, 3);
  T_EQ_INT(st.device_ops, 3);
  T_EQ_INT(st.attributed_op, 2);       /* the memset's launch had a module id only */
  T_EQ_INT(st.attributed_range, 2);
  T_EQ_INT(st.attributed_module, 3);
  T_EQ_INT(st.device_time_ns, 2000 + 500 + 200);

  prof_Event k = event(S, find(S, PROF_EVENT_KERNEL, 0));
  T_EQ_STR(k.name, "gemm_kernel");
  T_EQ_INT(k.t_begin_ns, 6000);
  T_EQ_INT(k.t_end_ns, 8000);
  T_EQ_INT(k.device, PROF_DEVICE_CUDA);
  T_EQ_INT(k.device_index, 1);
  T_EQ_INT(k.context, 3);
  T_EQ_INT(k.stream, 13);
  T_EQ_INT(k.flow, 10);
  T_EQ_INT(k.correlation, op);
  T_EQ_INT(k.range, range);
  T_EQ_INT(k.module, fc);
  T_EQ_INT(k.phase, PROF_PHASE_FORWARD);
  T_EQ_INT(k.thread, 1);
  T_EQ_INT(k.grid[0], 4);
  T_EQ_INT(k.grid[1], 2);
  T_EQ_INT(k.block[0], 128);
  T_EQ_INT(k.registers, 32);
  T_EQ_INT(k.shared_memory, 1536);
  T_EQ_INT(k.ninputs, 0);
  T_EQ_INT(k.macs, 0);

  prof_Event c = event(S, find(S, PROF_EVENT_MEMCPY, 0));
  T_EQ_INT(c.t_begin_ns, 7000);
  T_EQ_INT(c.t_end_ns, 7500);
  T_EQ_INT(c.bytes, 4096);
  T_EQ_STR(c.name, "Memcpy HtoD (Pinned -> Device)");   /* Kineto's name */
  T_EQ_INT(c.copy_kind, PROF_COPY_HTOD);
  T_EQ_STR(prof_copy_kind_name(c.copy_kind), "HtoD");
  T_EQ_STR(prof_mem_kind_name(c.src_kind), "Pinned");
  T_EQ_STR(prof_mem_kind_name(c.dst_kind), "Device");
  T_EQ_INT(c.stream, 14);
  T_EQ_INT(c.module, fc);

  prof_Event z0 = event(S, find(S, PROF_EVENT_MEMSET, 0));
  T_EQ_INT(z0.t_begin_ns, 8200);
  T_EQ_INT(z0.t_end_ns, 8400);
  T_EQ_INT(z0.bytes, 256);
  T_EQ_STR(z0.name, "Memset (Device)");
  T_EQ_INT(z0.module, net);
  T_EQ_INT(z0.phase, PROF_PHASE_BACKWARD);
  T_EQ_INT(z0.correlation, 0);

  prof_Event r = event(S, find(S, PROF_EVENT_RUNTIME, 0));
  T_EQ_STR(r.name, "cudaLaunchKernel");
  T_EQ_INT(r.t_begin_ns, 5800);
  T_EQ_INT(r.t_end_ns, 5900);
  T_EQ_INT(r.cbid, 211);
  T_EQ_INT(r.api, 0);
  T_EQ_INT(r.flow, 10);
  T_EQ_INT(r.thread, 1);

  prof_Event g0 = event(S, find(S, PROF_EVENT_GPU_MEMORY, 0));
  prof_Event g1 = event(S, find(S, PROF_EVENT_GPU_MEMORY, 1));
  T_EQ_INT(g0.t_begin_ns, 5400);
  T_EQ_INT(g0.value, 1 << 20);
  T_EQ_INT(g0.total, 1 << 20);
  T_EQ_INT(g0.address, 0x7f0000001000ull);
  T_EQ_INT(g1.t_begin_ns, 5500);
  T_EQ_INT(g1.value, -(1 << 18));
  T_EQ_INT(g1.total, (1 << 20) - (1 << 18));

  /* GPU time per module: fc's forward holds the kernel and the copy; Net's backward the memset */
  prof_ModuleInfo in = {.size = sizeof in}, ifc = {.size = sizeof ifc};
  prof_module_info(S, net, &in);
  prof_module_info(S, fc, &ifc);
  T_EQ_INT(ifc.self_device_time_ns[PROF_PHASE_FORWARD], 2500);
  T_EQ_INT(ifc.device_time_ns[PROF_PHASE_FORWARD], 2500);
  T_EQ_INT(ifc.device_ops[PROF_PHASE_FORWARD], 2);
  T_EQ_INT(in.self_device_time_ns[PROF_PHASE_FORWARD], 0);
  T_EQ_INT(in.device_time_ns[PROF_PHASE_FORWARD], 2500);
  T_EQ_INT(in.device_time_ns[PROF_PHASE_BACKWARD], 200);
  T_EQ_INT(in.self_device_time_ns[PROF_PHASE_BACKWARD], 200);
  T_EQ_INT(in.device_ops[PROF_PHASE_FORWARD], 2);
  prof_capture_close(S);
  T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_NONE);
  T_EQ_INT(prof_event_count(S), 6);   /* decoded events outlive the capture */
  free(s);
  prof_close(S);
}

/* One pair: an offset; none: the identity. */
/* Kernel names come demangled, as Kineto shows them (the C++ runtime's demangler: libstdc++ is
   part of every Debian system, apt depends on it). */
static void test_kernel_names_are_demangled(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  prof_capture_replay_window(S, 0, 100000);
  prof_start(S);
  Stream *s = calloc(1, sizeof *s);
  kernel(s, 10, 20, 1, "_Z4gemmPfS_i");
  kernel(s, 30, 40, 2, "_Z4gemmPfS_i");
  kernel(s, 50, 60, 3, "plain_c_kernel");
  prof_capture_replay_buffer(S, s->buf, s->len, 0);
  prof_stop(S);
  T_EQ_STR(event(S, find(S, PROF_EVENT_KERNEL, 0)).name, "gemm(float*, float*, int)");
  T_EQ_STR(event(S, find(S, PROF_EVENT_KERNEL, 1)).name, "gemm(float*, float*, int)");
  T_EQ_STR(event(S, find(S, PROF_EVENT_KERNEL, 2)).name, "plain_c_kernel");
  free(s);
  prof_close(S);
}

static void test_time_map_with_one_pair_or_none(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  prof_capture_replay_clock(S, 1000, 5000);
  prof_capture_replay_window(S, 0, 100000);
  prof_start(S);
  Stream *s = calloc(1, sizeof *s);
  kernel(s, 2000, 2100, 1, "k");   /* 2000 - 1000 + 5000 = 6000 */
  prof_capture_replay_buffer(S, s->buf, s->len, 0);
  prof_stop(S);
  prof_Event k = event(S, find(S, PROF_EVENT_KERNEL, 0));
  T_EQ_INT(k.t_begin_ns, 6000);
  T_EQ_INT(k.t_end_ns, 6100);
  T_EQ_INT(k.module, PROF_NO_MODULE);   /* no external record: nothing to attribute */
  T_EQ_INT(k.correlation, 0);
  prof_capture_close(S);
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  prof_capture_replay_window(S, 0, 100000);
  prof_start(S);
  prof_capture_replay_buffer(S, s->buf, s->len, 0);
  prof_stop(S);
  k = event(S, find(S, PROF_EVENT_KERNEL, 0));
  T_EQ_INT(k.t_begin_ns, 2000);
  free(s);
  prof_close(S);
}

/* The session's own window (no replay window): records before prof_start are dropped, counted. */
static void test_warmup_records_fall_out_of_the_window(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  Stream *s = calloc(1, sizeof *s);
  uint64_t warm = (uint64_t)prof_now_ns();
  kernel(s, warm, warm + 10, 1, "warmup");      /* identity map: host time = device time */
  prof_capture_replay_buffer(S, s->buf, s->len, 0);
  T_EQ_INT(prof_capture_drain(S), PROF_OK);      /* before prof_start: kept queued */
  T_EQ_INT(stats(S).records, 0);
  prof_start(S);
  s->len = 0;
  uint64_t now = (uint64_t)prof_now_ns();
  kernel(s, now, now + 10, 2, "in_window");
  prof_capture_replay_buffer(S, s->buf, s->len, 0);
  prof_stop(S);
  prof_CaptureStats st = stats(S);
  T_EQ_INT(st.records, 2);
  T_EQ_INT(st.out_of_window, 1);
  T_EQ_INT(st.kernels, 1);
  T_EQ_STR(event(S, find(S, PROF_EVENT_KERNEL, 0)).name, "in_window");
  free(s);
  prof_close(S);
}

static void test_pool_exhaustion_and_full_event_store_are_counted(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  o.buffers = 2;
  o.device_events = 2;
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, &o), PROF_OK);
  prof_capture_replay_window(S, 0, 1000000);
  prof_start(S);
  Stream *s = calloc(1, sizeof *s);
  kernel(s, 10, 20, 1, "a");
  kernel(s, 30, 40, 2, "b");
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, s->len, 0), PROF_OK);
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, s->len, 0), PROF_OK);
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, s->len, 0), PROF_ERRMEM);   /* both in use */
  T_CONTAINS(prof_errmsg(S), "2 activity buffers");
  T_EQ_INT(stats(S).dropped_pool, 1);
  T_EQ_INT(prof_capture_drain(S), PROF_OK);     /* gives both back */
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, s->len, 0), PROF_OK);
  prof_stop(S);
  prof_CaptureStats st = stats(S);
  T_EQ_INT(st.kernels, 2);            /* the store holds two */
  T_EQ_INT(st.dropped_events, 4);
  T_EQ_INT(st.dropped_pool, 1);
  free(s);
  prof_close(S);
}

/*
** correlations = 4 keeps two generations of 2 ids: external ids for launches 1..6 arrive, then the
** kernels. 1, 2 | 3 (full: 1, 2 become the old generation) 4 | 5 (3, 4 old, 1 and 2 forgotten)
** 6: launches 3..6 stay attributable, 1 and 2 do not.
*/
static void test_correlations_keep_the_most_recent_launches(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  o.correlations = 4;
  prof_capture_open(S, PROF_CAPTURE_REPLAY, &o);
  prof_capture_replay_window(S, 0, 1000000);
  prof_start(S);
  Stream *s = calloc(1, sizeof *s);
  for (uint32_t c = 1; c <= 6; c++) external(s, 0, ((uint64_t)1 << 40) | c, c);
  for (uint32_t c = 1; c <= 6; c++) kernel(s, 100 * c, 100 * c + 50, c, "k");
  prof_capture_replay_buffer(S, s->buf, s->len, 0);
  prof_stop(S);
  prof_CaptureStats st = stats(S);
  T_EQ_INT(st.kernels, 6);
  T_EQ_INT(st.attributed_op, 4);
  T_EQ_INT(event(S, find(S, PROF_EVENT_KERNEL, 0)).correlation, 0);
  T_EQ_INT(event(S, find(S, PROF_EVENT_KERNEL, 2)).correlation, ((uint64_t)1 << 40) | 3);
  T_EQ_INT(event(S, find(S, PROF_EVENT_KERNEL, 5)).correlation, ((uint64_t)1 << 40) | 6);
  free(s);
  prof_close(S);
}

static void test_malformed_buffers_and_states_fail_with_a_message(void) {
  prof_State *S = prof_new(NULL, NULL);
  uint8_t junk[16] = {0};
  T_EQ_INT(prof_capture_replay_buffer(S, junk, sizeof junk, 0), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "no replay capture");
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_NULL, NULL), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "already open");
  Stream *s = calloc(1, sizeof *s);
  kernel(s, 10, 20, 1, "a");
  uint32_t short_size = 40;   /* a kernel record cut short of CUpti_ActivityKernel10 */
  memcpy(s->buf + 4, &short_size, 4);
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, 48, 0), PROF_ERRARG);
  T_CONTAINS(prof_errmsg(S), "malformed record at byte 0");
  s->len = 0;
  kernel(s, 10, 20, 1, "a");
  T_EQ_INT(prof_capture_replay_buffer(S, s->buf, s->len - 8, 0), PROF_ERRARG);   /* truncated */
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  o.buffers = 0;
  prof_capture_close(S);
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, &o), PROF_ERRARG);
  T_CONTAINS(prof_errmsg(S), "buffers 0");
  free(s);
  prof_close(S);
}

/* Without a driver (this machine) CUPTI capture is refused with what is missing, never a crash. */
static void test_cupti_says_what_is_missing(void) {
  char why[256];
  int ok = prof_capture_available(why, sizeof why);
  prof_State *S = prof_new(NULL, NULL);
  int rc = prof_capture_open(S, PROF_CAPTURE_CUPTI, NULL);
  if (ok) {
    T_EQ_INT(rc, PROF_OK);
    prof_capture_close(S);
  } else {
    T_CHECK(why[0] != '\0');
    T_EQ_INT(rc, PROF_ERRDEVICE);
    T_CONTAINS(prof_errmsg(S), why);
    T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_NONE);
  }
  prof_close(S);
}

int main(void) {
  T_RUN(test_records_decode_onto_the_host_clock);
  T_RUN(test_time_map_with_one_pair_or_none);
  T_RUN(test_kernel_names_are_demangled);
  T_RUN(test_warmup_records_fall_out_of_the_window);
  T_RUN(test_pool_exhaustion_and_full_event_store_are_counted);
  T_RUN(test_correlations_keep_the_most_recent_launches);
  T_RUN(test_malformed_buffers_and_states_fail_with_a_message);
  T_RUN(test_cupti_says_what_is_missing);
  return T_DONE();
}

#else

int main(void) {
  printf("built without the CUPTI headers: nothing to replay\n");
  (void)t_current_failed_;
  return T_DONE();
}

#endif
