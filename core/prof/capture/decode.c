/* decode.c — CUDA 13 activity records -> device events: times checked and mapped, window applied, correlation kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

#if PROF_HAVE_CUPTI
#include <cupti.h>

size_t profK_record_size(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

int profK_replay_next(uint64_t *at, const uint8_t *buf, size_t valid, const void **rec) {
  *rec = NULL;
  if (*at >= valid) return PROF_OK;
  if (valid - *at < 8) return PROF_ERRARG;
  uint32_t kind, size;
  memcpy(&kind, buf + *at, 4);
  memcpy(&size, buf + *at + 4, 4);
  size_t padded = ((size_t)size + 7) & ~(size_t)7;
  if (size < sizeof(CUpti_Activity) || padded > valid - *at - 8) return PROF_ERRARG;
  /* a known kind must hold its whole struct: the decoder reads every field */
  size_t need = profK_record_size(kind);
  if (need != 0 && size < need) return PROF_ERRARG;
  uint32_t inner;
  memcpy(&inner, buf + *at + 8, 4);
  if (inner != kind) return PROF_ERRARG;
  *rec = buf + *at + 8;
  *at += 8 + padded;
  return PROF_OK;
}

/* A new device event, or NULL (counted) when the store is full. */
static profK_Event *new_event(profK_Capture *C, int kind) {
  if (C->n_events >= C->cap_events) {
    C->stats.dropped_events++;
    return NULL;
  }
  profK_Event *e = &C->events[C->n_events++];
  memset(e, 0, sizeof *e);
  e->kind = (uint8_t)kind;
  e->module = PROF_NO_MODULE;
  return e;
}

/* A span's device times checked (zero or inverted: counted, none emitted), mapped onto the host
   clock and held against the window. 1 when it is to be emitted. */
static int span_times(profK_Capture *C, uint64_t start, uint64_t end, int64_t *b, int64_t *e) {
  if (start == 0 || end == 0 || end < start) {
    C->stats.bad_timestamps++;
    return 0;
  }
  *b = profK_time_map(&C->time, (int64_t)start);
  *e = profK_time_map(&C->time, (int64_t)end);
  if (*e < *b) *e = *b;   /* a map cannot invert a span; rounding could by a ns */
  if (*b < C->window_begin || *e > C->window_end) {
    C->stats.out_of_window++;
    return 0;
  }
  return 1;
}

/* Interned once per distinct name: CUPTI shares one pointer across a kernel's records. */
static const char *kernel_name(profK_Capture *C, const char *name) {
  if (name == NULL) return "unknown";
  if (name == C->last_name_in && C->last_name_raw != NULL && strcmp(name, C->last_name_raw) == 0)
    return C->last_name_out;
  const char *s = NULL;
  if (C->demangle != NULL && name[0] == '_' && name[1] == 'Z') {
    int status = -1;
    char *d = C->demangle(name, NULL, NULL, &status);   /* malloc'ed by the C++ runtime */
    if (d != NULL && status == 0) s = prof_intern(C->S, d);
    free(d);
  }
  const char *raw = prof_intern(C->S, name);
  if (s == NULL) s = raw;
  if (s == NULL || raw == NULL) return "unknown";
  C->last_name_in = name;
  C->last_name_raw = raw;
  C->last_name_out = s;
  return s;
}

/* Where a device record ran and which launch made it: the same field names in every record
   struct that has them (kernels, copies, memsets). */
#define PLACE(d, r)                              \
  do {                                           \
    (d)->device = (int32_t)(r)->deviceId;        \
    (d)->context = (int32_t)(r)->contextId;      \
    (d)->stream = (int32_t)(r)->streamId;        \
    (d)->flow = (r)->correlationId;              \
  } while (0)

static void kernel(profK_Capture *C, const CUpti_ActivityKernel10 *k) {
  int64_t b, e;
  if (!span_times(C, k->start, k->end, &b, &e)) return;
  profK_Event *d = new_event(C, PROF_EVENT_KERNEL);
  if (d == NULL) return;
  d->t_begin = b;
  d->t_end = e;
  PLACE(d, k);
  d->grid[0] = k->gridX, d->grid[1] = k->gridY, d->grid[2] = k->gridZ;
  d->block[0] = k->blockX, d->block[1] = k->blockY, d->block[2] = k->blockZ;
  d->registers = k->registersPerThread;
  d->shared_memory = k->staticSharedMemory + k->dynamicSharedMemory;
  d->name = kernel_name(C, k->name);
  C->stats.kernels++;
}

/* Kineto's names: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)"; interned once each. */
static const char *copy_name(profK_Capture *C, uint8_t copy, uint8_t src, uint8_t dst) {
  if (copy >= PROFK_COPY_KINDS || src >= PROFK_MEMORY_KINDS || dst >= PROFK_MEMORY_KINDS)
    return "Memcpy";
  const char **slot = &C->copy_names[copy][src][dst];
  if (*slot == NULL) {
    char buf[96];
    snprintf(buf, sizeof buf, "Memcpy %s (%s -> %s)", prof_copy_kind_name(copy),
             prof_mem_kind_name(src), prof_mem_kind_name(dst));
    *slot = prof_intern(C->S, buf);
  }
  return *slot != NULL ? *slot : "Memcpy";
}

static const char *set_name(profK_Capture *C, uint16_t kind) {
  if (kind >= PROFK_MEMORY_KINDS) return "Memset";
  if (C->set_names[kind] == NULL) {
    char buf[64];
    snprintf(buf, sizeof buf, "Memset (%s)", prof_mem_kind_name(kind));
    C->set_names[kind] = prof_intern(C->S, buf);
  }
  return C->set_names[kind] != NULL ? C->set_names[kind] : "Memset";
}

static void copy_common(profK_Capture *C, profK_Event *d, int64_t b, int64_t e, uint8_t copy,
                        uint8_t src, uint8_t dst, uint64_t bytes) {
  d->t_begin = b;
  d->t_end = e;
  d->copy_kind = (int8_t)copy;
  d->src_kind = (int8_t)src;
  d->dst_kind = (int8_t)dst;
  d->bytes = (int64_t)bytes;
  d->name = copy_name(C, copy, src, dst);
  C->stats.memcpys++;
}

/* Memcpy6 and MemcpyPtoP4 name the fields a copy event reads alike: one body for both. */
#define COPY_RECORD(C, m)                                                                 \
  do {                                                                                    \
    int64_t b_, e_;                                                                       \
    if (!span_times((C), (m)->start, (m)->end, &b_, &e_)) return;                         \
    profK_Event *d_ = new_event((C), PROF_EVENT_MEMCPY);                                  \
    if (d_ == NULL) return;                                                               \
    copy_common((C), d_, b_, e_, (m)->copyKind, (m)->srcKind, (m)->dstKind, (m)->bytes);  \
    PLACE(d_, m);                                                                         \
  } while (0)

static void memcpy_rec(profK_Capture *C, const CUpti_ActivityMemcpy6 *m) { COPY_RECORD(C, m); }

static void memcpy_p2p(profK_Capture *C, const CUpti_ActivityMemcpyPtoP4 *m) { COPY_RECORD(C, m); }

static void memset_rec(profK_Capture *C, const CUpti_ActivityMemset4 *m) {
  int64_t b, e;
  if (!span_times(C, m->start, m->end, &b, &e)) return;
  profK_Event *d = new_event(C, PROF_EVENT_MEMSET);
  if (d == NULL) return;
  d->t_begin = b;
  d->t_end = e;
  PLACE(d, m);
  d->bytes = (int64_t)m->bytes;
  d->value = m->value;
  d->dst_kind = (int8_t)m->memoryKind;
  d->name = set_name(C, m->memoryKind);
  C->stats.memsets++;
}

/* Driver calls are kept for launches only (Kineto's filter): the runtime's own record covers
   the rest, and every runtime call makes several driver ones. */
static int driver_launch(uint32_t cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
}

static void api(profK_Capture *C, const CUpti_ActivityAPI *a, int driver) {
  if (driver && !driver_launch(a->cbid)) return;
  int64_t b, e;
  if (!span_times(C, a->start, a->end, &b, &e)) return;
  profK_Event *d = new_event(C, PROF_EVENT_RUNTIME);
  if (d == NULL) return;
  d->t_begin = b;
  d->t_end = e;
  d->api = (uint8_t)driver;
  d->cbid = (int32_t)a->cbid;
  d->flow = a->correlationId;
  d->device = -1;
  d->stream = -1;
  const char *name = C->src->api_name != NULL ? C->src->api_name(C, driver, d->cbid) : NULL;
  d->name = name != NULL ? name : driver ? "cuda driver call" : "cuda runtime call";
  C->stats.runtime_calls++;
}

static void memory(profK_Capture *C, const CUpti_ActivityMemory4 *m) {
  int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
    C->stats.unknown_records++;
    return;
  }
  if (m->timestamp == 0) {
    C->stats.bad_timestamps++;
    return;
  }
  int64_t t = profK_time_map(&C->time, (int64_t)m->timestamp);
  /* live bytes follow every record, in the window or not: a block made in warmup and freed in
     the window must not drive the total below what is really live */
  uint32_t dev = m->deviceId < PROFK_MAX_DEVICES ? m->deviceId : PROFK_MAX_DEVICES - 1;
  int64_t delta = alloc ? (int64_t)m->bytes : -(int64_t)m->bytes;
  if (t < C->window_begin || t > C->window_end) {
    C->stats.out_of_window++;
    return;
  }
  C->live[dev] += delta;
  profK_Event *d = new_event(C, PROF_EVENT_GPU_MEMORY);
  if (d == NULL) return;
  d->t_begin = d->t_end = t;
  PLACE(d, m);
  d->address = m->address;
  d->bytes = (int64_t)m->bytes;
  d->value = delta;
  d->total = C->live[dev];
  d->dst_kind = (int8_t)m->memoryKind;
  d->name = "[gpu memory]";
  C->stats.memory_records++;
}

static const char *overhead_name(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "Resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "Runtime Triggered Module Loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "Lazy Function Loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "Command Buffer Full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "Activity Buffer Request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM Activity Init";
    default: return "Unknown";
  }
}

static void overhead(profK_Capture *C, const CUpti_ActivityOverhead3 *o) {
  int64_t b, e;
  if (!span_times(C, o->start, o->end, &b, &e)) return;
  profK_Event *d = new_event(C, PROF_EVENT_OVERHEAD);
  if (d == NULL) return;
  d->t_begin = b;
  d->t_end = e;
  d->cbid = (int32_t)o->overheadKind;
  d->flow = o->correlationId;
  d->device = -1;
  d->stream = -1;
  d->name = overhead_name((uint32_t)o->overheadKind);
  C->stats.overheads++;
}

/* CUSTOM0..2 are the hooks' op, range and module ids; other kinds (OpenACC) are not ours. */
static void external(profK_Capture *C, const CUpti_ActivityExternalCorrelation *x) {
  C->stats.external_correlations++;
  int k = (int)x->externalKind - PROFK_CUPTI_CUSTOM0;
  if (k < 0 || k >= PROFK_EXT_KINDS) return;
  profK_Corr *c = profK_corr_put(&C->corr, x->correlationId);
  if (c != NULL) c->ext[k] = x->externalId;
}

static void record(profK_Capture *C, const CUpti_Activity *r) {
  C->stats.records++;
  if (C->saver != NULL) profK_save_record(C, r);
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: kernel(C, (const void *)r); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: memcpy_rec(C, (const void *)r); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2: memcpy_p2p(C, (const void *)r); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: memset_rec(C, (const void *)r); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME: api(C, (const void *)r, 0); break;
    case CUPTI_ACTIVITY_KIND_DRIVER: api(C, (const void *)r, 1); break;
    case CUPTI_ACTIVITY_KIND_MEMORY2: memory(C, (const void *)r); break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: external(C, (const void *)r); break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: overhead(C, (const void *)r); break;
    default: C->stats.unknown_records++; break;
  }
}

int profK_decode_buffer(profK_Capture *C, const uint8_t *buf, size_t valid, profK_NextFn next) {
  uint64_t cursor = 0;
  if (next == NULL) next = profK_replay_next;
  C->stats.buffers++;
  for (;;) {
    const void *rec;
    uint64_t before = cursor;
    /* records sit at multiples of 8 in an 8-aligned buffer: read in place */
    if (((uintptr_t)buf & 7) != 0 || next(&cursor, buf, valid, &rec) != PROF_OK)
      return profI_error(C->S, PROF_ERRARG,
                         "capture: malformed activity buffer at byte %llu of %zu (a record is a "
                         "uint32 kind, a uint32 size and at least its CUDA 13 struct's bytes, "
                         "padded to 8)",
                         (unsigned long long)before, valid);
    if (rec == NULL) return PROF_OK;
    record(C, rec);
  }
}

#else /* no CUPTI headers: nothing to decode */

size_t profK_record_size(uint32_t kind) {
  (void)kind;
  return 0;
}

int profK_replay_next(uint64_t *at, const uint8_t *buf, size_t valid, const void **rec) {
  (void)at, (void)buf, (void)valid;
  *rec = NULL;
  return PROF_OK;
}

int profK_decode_buffer(profK_Capture *C, const uint8_t *buf, size_t valid, profK_NextFn next) {
  (void)buf, (void)valid, (void)next;
  return profI_error(C->S, PROF_ERRDEVICE, "capture: built without the CUPTI headers");
}

#endif

int profK_decode_ready(profK_Capture *C) {
  int rc = PROF_OK;
  for (int32_t i; (i = profK_pool_next_ready(&C->pool)) >= 0;) {
    profK_Buffer *b = &C->pool.buf[i];
    C->dropped_cupti += b->dropped;
    profK_save_buffer(C, 1, b->dropped);
    int r = profK_decode_buffer(C, b->data, b->valid, C->src->next);
    profK_save_buffer(C, 0, 0);
    if (r != PROF_OK && rc == PROF_OK) rc = r;
    profK_pool_release(&C->pool, i);
  }
  return rc;
}
