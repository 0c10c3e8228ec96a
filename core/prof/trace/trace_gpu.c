/* trace_gpu.c — the device capture's events in a Kineto trace: GPU stream rows, launches, ac2g flows, annotations, memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "trace_internal.h"

/* A literal, its length counted by the compiler. */
#define RAW(k, lit) (k)->raw((k)->ud, "" lit, sizeof(lit) - 1)

static int device_op(int kind) {
  return kind == PROF_EVENT_KERNEL || kind == PROF_EVENT_MEMCPY || kind == PROF_EVENT_MEMSET;
}

__attribute__((format(printf, 2, 3))) static void out(const profX_Sink *k, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) k->raw(k->ud, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* ns relative to the base as µs with three decimals, Kineto's "{us}.{ns:03}". */
static void us(const profX_Sink *k, int64_t ns) {
  int64_t d = ns - k->base;
  uint64_t a = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
  out(k, "%s%" PRIu64 ".%03u", d < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* The start of an event: the comma, ph, pid, tid, ts. */
static void head(const profX_Sink *k, char ph, int64_t pid, int64_t tid, int64_t ts) {
  if (!*k->first_event) RAW(k, ",\n");
  *k->first_event = 0;
  out(k, "{\"ph\":\"%c\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", ph, pid, tid);
  us(k, ts);
}

static void meta(const profX_Sink *k, const char *what, int64_t pid, int64_t tid, const char *key,
                 const char *str, int64_t num) {
  head(k, 'M', pid, tid, k->base);
  out(k, ",\"name\":\"%s\",\"args\":{\"%s\":", what, key);
  if (str != NULL) k->str(k->ud, str);
  else out(k, "%" PRId64, num);
  RAW(k, "}}");
}

static int64_t host_tid(const profK_Event *e) { return (int64_t)e->thread + PROF_TRACE_TID_BASE; }

/* {====================== indexes ======================} */

typedef struct Key {
  uint64_t a, b;
  int64_t i;
} Key;

static int by_key(const void *x, const void *y) {
  const Key *p = x, *q = y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}

/* The first key with a == a in the sorted keys, or NULL. */
static const Key *find(const Key *keys, int64_t n, uint64_t a) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid].a < a) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && keys[lo].a == a ? &keys[lo] : NULL;
}

/* {====================== rows ======================} */

/* Kineto's GPU rows: a process per device (label "GPU n", sorted below the CPU's), a thread per
   stream ("stream N "). */
static void rows(const profX_Sink *k, const profK_Capture *C) {
  uint64_t seen_dev = 0;
  for (int64_t i = 0; i < C->n_events; i++) {
    const profK_Event *e = &C->events[i];
    if (!device_op(e->kind) && e->kind != PROF_EVENT_GPU_MEMORY) continue;
    if (e->device < 0 || e->device >= 64 || (seen_dev >> e->device & 1)) continue;
    seen_dev |= (uint64_t)1 << e->device;
    char label[32];
    snprintf(label, sizeof label, "GPU %d", (int)e->device);
    meta(k, "process_name", e->device, 0, "name", k->process_name, 0);
    meta(k, "process_labels", e->device, 0, "labels", label, 0);
    meta(k, "process_sort_index", e->device, 0, "sort_index", NULL, 5000000 + e->device);
  }
}

static void stream_rows(const profX_Sink *k, const Key *ops, int64_t n) {
  /* ops sorted by (device, stream): one row name per pair */
  for (int64_t i = 0; i < n; i++) {
    if (i > 0 && ops[i].a == ops[i - 1].a) continue;
    int64_t dev = (int64_t)(ops[i].a >> 32), stream = (int64_t)(uint32_t)ops[i].a;
    char name[48];
    snprintf(name, sizeof name, "stream %" PRId64 " ", stream);
    meta(k, "thread_name", dev, stream, "name", name, 0);
    meta(k, "thread_sort_index", dev, stream, "sort_index", NULL, stream);
  }
}

/* {====================== events ======================} */

static void device_span(const profX_Sink *k, prof_State *S, const profK_Event *e, char *path,
                        size_t path_size) {
  head(k, 'X', e->device, e->stream, e->t_begin);
  int64_t dur = e->t_end - e->t_begin;
  RAW(k, ",\"dur\":");
  us(k, k->base + dur);
  const char *cat = e->kind == PROF_EVENT_KERNEL ? "kernel" : e->kind == PROF_EVENT_MEMCPY ? "gpu_memcpy" : "gpu_memset";
  out(k, ",\"cat\":\"%s\",\"name\":", cat);
  k->str(k->ud, e->name);
  RAW(k, ",\"args\":{");
  if (e->op != 0) out(k, "\"External id\":%" PRIu64 ",", e->op);
  out(k, "\"device\":%d,\"context\":%d,\"stream\":%d,\"correlation\":%u", (int)e->device,
      (int)e->context, (int)e->stream, (unsigned)e->flow);
  if (e->kind == PROF_EVENT_KERNEL) {
    out(k, ",\"registers per thread\":%d,\"shared memory\":%d,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]",
        (int)e->registers, (int)e->shared_memory, (int)e->grid[0], (int)e->grid[1], (int)e->grid[2],
        (int)e->block[0], (int)e->block[1], (int)e->block[2]);
  } else {
    /* Kineto's bandwidth: bytes per ns is GB/s */
    out(k, ",\"bytes\":%" PRId64 ",\"memory bandwidth (GB/s)\":%.6g", e->bytes,
        dur > 0 ? (double)e->bytes / (double)dur : 0.0);
  }
  if (e->module >= 0 && prof_module_path(S, e->module, path, path_size) >= 0) {
    RAW(k, ",\"Module Path\":");
    k->str(k->ud, path);
  }
  RAW(k, "}}");
}

static void runtime_span(const profX_Sink *k, const profK_Event *e) {
  head(k, 'X', k->pid, host_tid(e), e->t_begin);
  RAW(k, ",\"dur\":");
  us(k, k->base + e->t_end - e->t_begin);
  out(k, ",\"cat\":\"%s\",\"name\":", e->api ? "cuda_driver" : "cuda_runtime");
  k->str(k->ud, e->name);
  RAW(k, ",\"args\":{");
  if (e->op != 0) out(k, "\"External id\":%" PRIu64 ",", e->op);
  out(k, "\"cbid\":%d,\"correlation\":%u}}", (int)e->cbid, (unsigned)e->flow);
}

static void overhead_span(const profX_Sink *k, const profK_Event *e) {
  head(k, 'X', -1, 0, e->t_begin);
  RAW(k, ",\"dur\":");
  us(k, k->base + e->t_end - e->t_begin);
  RAW(k, ",\"cat\":\"overhead\",\"name\":");
  k->str(k->ud, e->name);
  RAW(k, "}");
}

static void memory_counter(const profX_Sink *k, const profK_Event *e) {
  head(k, 'C', e->device, 0, e->t_begin);
  out(k, ",\"name\":\"GPU Memory Allocated\",\"args\":{\"Allocated\":%" PRId64 "}}", e->total);
}

/* An ac2g arrow: "s" on the launch, "f" (bound to the enclosing slice) on the device op. */
static void flow(const profX_Sink *k, const profK_Event *call, const profK_Event *op) {
  head(k, 's', k->pid, host_tid(call), call->t_begin);
  out(k, ",\"id\":%u,\"cat\":\"ac2g\",\"name\":\"ac2g\"}", (unsigned)call->flow);
  head(k, 'f', op->device, op->stream, op->t_begin);
  out(k, ",\"id\":%u,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", (unsigned)op->flow);
}

/* A range's span on one stream, over the device ops launched inside it (Kineto's, 1 ns earlier
   and 2 ns longer so that it sorts before its first kernel and encloses its last). */
static void annotation(const profX_Sink *k, const char *name, int64_t value, const profK_Event *first,
                       int64_t begin, int64_t end) {
  head(k, 'X', first->device, first->stream, begin - 1);
  RAW(k, ",\"dur\":");
  us(k, k->base + end - begin + 2);
  RAW(k, ",\"cat\":\"gpu_user_annotation\",\"name\":");
  if (value >= 0) {
    char buf[600];
    snprintf(buf, sizeof buf, "%s#%" PRId64, name, value);
    k->str(k->ud, buf);
  } else {
    k->str(k->ud, name);
  }
  out(k, ",\"args\":{\"External id\":%" PRIu64 "}}", first->range);
}

/* Range correlation -> the range event (its name), from the host events. */
static int range_index(prof_State *S, Key **out, int64_t *n) {
  int64_t hosts = S->snap.n_host_events, m = 0;
  *out = NULL;
  *n = 0;
  for (int64_t i = 0; i < hosts; i++) {
    prof_Event e = {.size = offsetof(prof_Event, input)};
    if (prof_event_at(S, i, &e) == PROF_OK && e.kind == PROF_EVENT_RANGE && e.correlation != 0) m++;
  }
  if (m == 0) return PROF_OK;
  Key *keys = profI_alloc(S, sizeof *keys * (size_t)m);
  if (keys == NULL) return profI_error(S, PROF_ERRMEM, "trace: out of memory indexing ranges");
  int64_t j = 0;
  for (int64_t i = 0; i < hosts && j < m; i++) {
    prof_Event e = {.size = offsetof(prof_Event, input)};
    if (prof_event_at(S, i, &e) == PROF_OK && e.kind == PROF_EVENT_RANGE && e.correlation != 0)
      keys[j++] = (Key){.a = e.correlation, .b = 0, .i = i};
  }
  qsort(keys, (size_t)j, sizeof *keys, by_key);
  *out = keys;
  *n = j;
  return PROF_OK;
}

static void annotations(const profX_Sink *k, prof_State *S, const profK_Capture *C, Key *by_range,
                        int64_t n, const Key *ranges, int64_t n_ranges) {
  /* device ops with a range, by (range, device << 32 | stream): one span per group */
  qsort(by_range, (size_t)n, sizeof *by_range, by_key);
  for (int64_t i = 0; i < n;) {
    int64_t j = i;
    const profK_Event *first = &C->events[by_range[i].i];
    int64_t begin = first->t_begin, end = first->t_end;
    while (j < n && by_range[j].a == by_range[i].a && by_range[j].b == by_range[i].b) {
      const profK_Event *e = &C->events[by_range[j].i];
      if (e->t_begin < begin) begin = e->t_begin;
      if (e->t_end > end) end = e->t_end;
      j++;
    }
    const Key *r = find(ranges, n_ranges, by_range[i].a);
    if (r != NULL) {
      prof_Event ev = {.size = offsetof(prof_Event, input)};
      if (prof_event_at(S, r->i, &ev) == PROF_OK)
        annotation(k, ev.name != NULL ? ev.name : "", ev.value, first, begin, end);
    }
    i = j;
  }
}

int profX_gpu_events(prof_State *S, const profX_Sink *k) {
  const profK_Capture *C = S->capture;
  if (C == NULL || C->n_events == 0) return PROF_OK;
  int64_t n = C->n_events, n_ops = 0, n_calls = 0, n_ranged = 0, n_ranges = 0;
  Key *ops = profI_alloc(S, sizeof *ops * (size_t)n);
  Key *by_flow = profI_alloc(S, sizeof *by_flow * (size_t)n);
  Key *calls = profI_alloc(S, sizeof *calls * (size_t)n);
  Key *ranged = profI_alloc(S, sizeof *ranged * (size_t)n);
  Key *ranges = NULL;
  char *path = profI_alloc(S, PROF_PATH_SIZE);
  int rc = PROF_OK;
  if (ops == NULL || by_flow == NULL || calls == NULL || ranged == NULL || path == NULL) {
    rc = profI_error(S, PROF_ERRMEM, "trace: out of memory indexing %lld device events", (long long)n);
    goto end;
  }
  if ((rc = range_index(S, &ranges, &n_ranges)) != PROF_OK) goto end;
  for (int64_t i = 0; i < n; i++) {
    const profK_Event *e = &C->events[i];
    uint64_t where = (uint64_t)(uint32_t)e->device << 32 | (uint32_t)e->stream;
    if (device_op(e->kind)) {
      by_flow[n_ops] = (Key){.a = e->flow, .b = (uint64_t)e->t_begin, .i = i};
      ops[n_ops++] = (Key){.a = where, .b = (uint64_t)e->t_begin, .i = i};
      if (e->range != 0) ranged[n_ranged++] = (Key){.a = e->range, .b = where, .i = i};
    } else if (e->kind == PROF_EVENT_RUNTIME && e->flow != 0) {
      calls[n_calls++] = (Key){.a = e->flow, .b = 0, .i = i};
    }
  }
  rows(k, C);
  qsort(ops, (size_t)n_ops, sizeof *ops, by_key);
  stream_rows(k, ops, n_ops);
  for (int64_t i = 0; i < n; i++) {
    const profK_Event *e = &C->events[i];
    if (device_op(e->kind)) device_span(k, S, e, path, PROF_PATH_SIZE);
    else if (e->kind == PROF_EVENT_RUNTIME) runtime_span(k, e);
    else if (e->kind == PROF_EVENT_OVERHEAD) overhead_span(k, e);
    else if (e->kind == PROF_EVENT_GPU_MEMORY) memory_counter(k, e);
  }
  /* one arrow per launch, to the first device op it made (a graph launch makes many) */
  qsort(calls, (size_t)n_calls, sizeof *calls, by_key);
  qsort(by_flow, (size_t)n_ops, sizeof *by_flow, by_key);   /* by flow, then begin */
  for (int64_t i = 0; i < n_calls; i++) {
    if (i > 0 && calls[i].a == calls[i - 1].a) continue;
    const Key *first = find(by_flow, n_ops, calls[i].a);
    if (first != NULL) flow(k, &C->events[calls[i].i], &C->events[first->i]);
  }
  annotations(k, S, C, ranged, n_ranged, ranges, n_ranges);
end:
  profI_free(S, ops, sizeof *ops * (size_t)n);
  profI_free(S, by_flow, sizeof *by_flow * (size_t)n);
  profI_free(S, calls, sizeof *calls * (size_t)n);
  profI_free(S, ranged, sizeof *ranged * (size_t)n);
  profI_free(S, ranges, sizeof *ranges * (size_t)n_ranges);
  profI_free(S, path, PROF_PATH_SIZE);
  return rc;
}

void profX_gpu_bounds(const prof_State *S, int64_t *min_begin, int64_t *max_end) {
  const profK_Capture *C = S->capture;
  if (C == NULL) return;
  for (int64_t i = 0; i < C->n_events; i++) {
    if (C->events[i].t_begin < *min_begin) *min_begin = C->events[i].t_begin;
    if (C->events[i].t_end > *max_end) *max_end = C->events[i].t_end;
  }
}

void profX_gpu_summary(const prof_State *S, const profX_Sink *k) {
  if (S->capture == NULL) return;
  prof_CaptureStats st = {.size = sizeof st};
  prof_capture_stats(S, &st);
  out(k, ",\n\"cupti\":{\"kernels\":%" PRId64 ",\"memcpys\":%" PRId64 ",\"memsets\":%" PRId64
      ",\"runtimeCalls\":%" PRId64 ",\"memoryRecords\":%" PRId64 ",\"droppedRecords\":%" PRId64,
      st.kernels, st.memcpys, st.memsets, st.runtime_calls, st.memory_records, st.dropped_cupti);
  out(k, ",\"refusedBuffers\":%" PRId64 ",\"droppedEvents\":%" PRId64 ",\"outOfWindow\":%" PRId64
      ",\"badTimestamps\":%" PRId64 ",\"attributedToOp\":%" PRId64 ",\"deviceOps\":%" PRId64 "}",
      st.dropped_pool, st.dropped_events, st.out_of_window, st.bad_timestamps, st.attributed_op,
      st.device_ops);
}
