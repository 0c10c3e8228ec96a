/* source_replay.c — the replay and null capture sources: recorded or synthesised records through the CUPTI decoder. */
#include <string.h>

#include "capture.h"
#include "session.h"

#if PROF_HAVE_CUPTI
#include <cupti.h>
#endif

const profK_Source profK_null_source = {.name = "null"};

/* The hooks keep each kind's stack, as CUPTI keeps them per thread: a synthesised launch takes
   the tops. One recording thread (tests and specs). */
static void replay_push(void *ud, int kind, uint64_t id) {
  profK_ReplayStacks *r = &((profK_Capture *)ud)->replay;
  if (r->n[kind] < PROFK_REPLAY_DEPTH) r->id[kind][r->n[kind]] = id;
  r->n[kind]++;
}

static void replay_pop(void *ud, int kind) {
  profK_ReplayStacks *r = &((profK_Capture *)ud)->replay;
  if (r->n[kind] > 0) r->n[kind]--;
}

static int replay_enable(profK_Capture *C) {
#if PROF_HAVE_CUPTI
  (void)C;
  return PROF_OK;
#else
  return profI_error(C->S, PROF_ERRDEVICE,
                     "replay capture: built without the CUPTI headers (the records are CUDA 13's structs)");
#endif
}

#if PROF_HAVE_CUPTI
static const char *replay_api_name(profK_Capture *C, int driver, int32_t cbid) {
  (void)C;
  if (driver) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return "cuLaunchKernel";
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: return "cuLaunchKernelEx";
      default: return NULL;
    }
  }
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: return "cudaMalloc";
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: return "cudaFree";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020: return "cudaMemcpy";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: return "cudaMemcpyAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020: return "cudaMemset";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: return "cudaMemsetAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: return "cudaStreamSynchronize";
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020: return "cudaDeviceSynchronize";
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: return "cudaLaunchKernel";
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000: return "cudaGraphLaunch";
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: return "cudaLaunchKernelExC";
    default: return NULL;
  }
}
#else
#define replay_api_name NULL
#endif

const profK_Source profK_replay_source = {.name = "replay",
                                          .enable = replay_enable,
                                          .api_name = replay_api_name,
                                          .push = replay_push,
                                          .pop = replay_pop};

static profK_Capture *replay_capture(prof_State *S, const char *fn) {
  profK_Capture *C = S->capture;
  if (C == NULL || C->src != &profK_replay_source) {
    profI_error(S, PROF_ERRSTATE, "%s: no replay capture is open (prof_capture_open with "
                "PROF_CAPTURE_REPLAY)", fn);
    return NULL;
  }
  return C;
}

int prof_capture_replay_buffer(prof_State *S, const void *records, size_t len, int64_t dropped) {
  profK_Capture *C = replay_capture(S, "prof_capture_replay_buffer");
  if (C == NULL) return PROF_ERRSTATE;
  if (len > C->pool.size)
    return profI_error(S, PROF_ERRARG, "prof_capture_replay_buffer: %zu bytes do not fit a %zu-byte "
                       "activity buffer", len, C->pool.size);
  /* the layout is checked now, so that a bad buffer fails here and not at a later drain */
  uint64_t at = 0;
  for (const void *rec;;) {
    uint64_t before = at;
    if (profK_replay_next(&at, records, len, &rec) != PROF_OK)
      return profI_error(S, PROF_ERRARG,
                         "prof_capture_replay_buffer: malformed record at byte %llu of %zu (a "
                         "record is a uint32 kind, a uint32 size and at least its CUDA 13 "
                         "struct's bytes, padded to 8)", (unsigned long long)before, len);
    if (rec == NULL) break;
  }
  int32_t i = profK_pool_take(&C->pool);
  if (i < 0)
    return profI_error(S, PROF_ERRMEM, "prof_capture_replay_buffer: every one of the %d activity "
                       "buffers is in use (drain them)", (int)C->pool.n);
  memcpy(C->pool.buf[i].data, records, len);
  profK_pool_complete(&C->pool, C->pool.buf[i].data, len, dropped);
  return PROF_OK;
}

int prof_capture_replay_clock(prof_State *S, int64_t device_ns, int64_t host_ns) {
  profK_Capture *C = replay_capture(S, "prof_capture_replay_clock");
  if (C == NULL) return PROF_ERRSTATE;
  if (profK_time_add(&C->time, device_ns, host_ns) != PROF_OK)
    return profI_error(S, PROF_ERRARG, "prof_capture_replay_clock: device time %lld is before the "
                       "previous pair's", (long long)device_ns);
  C->stats.clock_pairs++;
  return PROF_OK;
}

int prof_capture_replay_window(prof_State *S, int64_t begin_ns, int64_t end_ns) {
  profK_Capture *C = replay_capture(S, "prof_capture_replay_window");
  if (C == NULL) return PROF_ERRSTATE;
  if (end_ns < begin_ns)
    return profI_error(S, PROF_ERRARG, "prof_capture_replay_window: end %lld is before begin %lld",
                       (long long)end_ns, (long long)begin_ns);
  C->window_begin = begin_ns;
  C->window_end = end_ns;
  C->window_fixed = 1;
  return PROF_OK;
}

#if PROF_HAVE_CUPTI
/* Appends one record (kind, size, struct, padded) to a replay stream. */
static size_t put_record(uint8_t *out, size_t at, const void *rec, uint32_t size) {
  uint32_t kind;
  memcpy(&kind, rec, 4);
  memcpy(out + at, &kind, 4);
  memcpy(out + at + 4, &size, 4);
  memcpy(out + at + 8, rec, size);
  size_t padded = ((size_t)size + 7) & ~(size_t)7;
  memset(out + at + 8 + size, 0, padded - size);
  return at + 8 + padded;
}

int prof_capture_replay_launch(prof_State *S, const prof_ReplayLaunch *l, uint64_t *flow) {
  profK_Capture *C = replay_capture(S, "prof_capture_replay_launch");
  if (C == NULL) return PROF_ERRSTATE;
  prof_ReplayLaunch L;
  memset(&L, 0, sizeof L);
  if (l != NULL) {
    size_t n = l->size != 0 && l->size < sizeof L ? l->size : sizeof L;
    memcpy(&L, l, n);
  }
  int kind = L.kind == 0 ? PROF_EVENT_KERNEL : (int)L.kind;
  if (kind != PROF_EVENT_KERNEL && kind != PROF_EVENT_MEMCPY && kind != PROF_EVENT_MEMSET)
    return profI_error(S, PROF_ERRARG, "prof_capture_replay_launch: kind %d is not a kernel, "
                       "memcpy or memset", kind);
  if (L.launch_ns < 0 || L.delay_ns < 0 || L.duration_ns < 0)
    return profI_error(S, PROF_ERRARG, "prof_capture_replay_launch: negative times");
  int64_t launch = L.launch_ns > 0 ? L.launch_ns : 1000, dur = L.duration_ns > 0 ? L.duration_ns : 1000;
  int32_t stream = L.device == 0 && L.stream == 0 ? 7 : L.stream;
  const char *name = L.name != NULL ? prof_intern(S, L.name) : "replay_kernel";
  if (name == NULL) return profI_error(S, PROF_ERRMEM, "prof_capture_replay_launch: out of memory");
  uint32_t corr = ++C->next_flow;
  uint64_t t0 = (uint64_t)prof_now_ns();
  _Alignas(8) uint8_t buf[1024];
  size_t at = 0;
  /* CUPTI writes the external ids before the API record they belong to */
  for (int k = 0; k < PROFK_EXT_KINDS; k++) {
    int32_t n = C->replay.n[k];
    if (n <= 0 || n > PROFK_REPLAY_DEPTH) continue;
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = (CUpti_ExternalCorrelationKind)(PROFK_CUPTI_CUSTOM0 + k);
    x.externalId = C->replay.id[k][n - 1];
    x.correlationId = corr;
    at = put_record(buf, at, &x, sizeof x);
  }
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = kind == PROF_EVENT_KERNEL ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
           : kind == PROF_EVENT_MEMCPY ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
                                       : CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020;
  a.start = t0;
  a.end = t0 + (uint64_t)launch;
  a.correlationId = corr;
  at = put_record(buf, at, &a, sizeof a);
  uint64_t start = a.end + (uint64_t)L.delay_ns, end = start + (uint64_t)dur;
  if (kind == PROF_EVENT_KERNEL) {
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = end;
    k.deviceId = (uint32_t)L.device;
    k.contextId = 1;
    k.streamId = (uint32_t)stream;
    k.gridX = L.grid[0] > 0 ? L.grid[0] : 1;
    k.gridY = L.grid[1] > 0 ? L.grid[1] : 1;
    k.gridZ = L.grid[2] > 0 ? L.grid[2] : 1;
    k.blockX = L.block[0] > 0 ? L.block[0] : 1;
    k.blockY = L.block[1] > 0 ? L.block[1] : 1;
    k.blockZ = L.block[2] > 0 ? L.block[2] : 1;
    k.correlationId = corr;
    k.name = name;
    at = put_record(buf, at, &k, sizeof k);
  } else if (kind == PROF_EVENT_MEMCPY) {
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)(L.copy_kind > 0 ? L.copy_kind : PROF_COPY_HTOD);
    m.srcKind = m.copyKind == PROF_COPY_HTOD || m.copyKind == PROF_COPY_HTOH ? PROF_MEMKIND_PAGEABLE
                                                                             : PROF_MEMKIND_DEVICE;
    m.dstKind = m.copyKind == PROF_COPY_DTOH || m.copyKind == PROF_COPY_HTOH ? PROF_MEMKIND_PAGEABLE
                                                                             : PROF_MEMKIND_DEVICE;
    m.bytes = (uint64_t)L.bytes;
    m.start = start;
    m.end = end;
    m.deviceId = (uint32_t)L.device;
    m.contextId = 1;
    m.streamId = (uint32_t)stream;
    m.correlationId = corr;
    at = put_record(buf, at, &m, sizeof m);
  } else {
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = (uint64_t)L.bytes;
    m.start = start;
    m.end = end;
    m.deviceId = (uint32_t)L.device;
    m.contextId = 1;
    m.streamId = (uint32_t)stream;
    m.correlationId = corr;
    m.memoryKind = PROF_MEMKIND_DEVICE;
    at = put_record(buf, at, &m, sizeof m);
  }
  int rc = prof_capture_replay_buffer(S, buf, at, 0);
  if (rc == PROF_OK && flow != NULL) *flow = corr;
  /* synchronous, as a launch followed by a device synchronize: the work has ended on the host
     clock when this returns, so it lies inside the window and the op around the call */
  while ((uint64_t)prof_now_ns() < end) {
  }
  return rc;
}
#else
int prof_capture_replay_launch(prof_State *S, const prof_ReplayLaunch *l, uint64_t *flow) {
  (void)l, (void)flow;
  return replay_capture(S, "prof_capture_replay_launch") == NULL
             ? PROF_ERRSTATE
             : profI_error(S, PROF_ERRDEVICE, "replay capture: built without the CUPTI headers");
}
#endif
