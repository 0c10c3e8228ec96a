/* fixture_save.c — a capture's records saved as a "profrun.cupti/1" fixture while they are decoded, for later replays. */
#include <stdio.h>
#include <string.h>

#include "capture.h"

#if PROF_HAVE_CUPTI
#include <cupti.h>
#endif

/* Buffered: the JSON writer emits a token per call. */
#define SAVE_BUF (64 * 1024)
struct profK_Saver {
  char path[PROF_PATH_SIZE];
  prof_Staged st;
  int fd;
  int failed;
  profW_Writer w;
  int64_t dev_base, host_base; /* times are written relative to these (exact in a double) */
  size_t len;
  char buf[SAVE_BUF];
};

static void flush_buf(profK_Capture *C) {
  profK_Saver *v = C->saver;
  if (v->len > 0 && !v->failed && profI_out_write(C->S, v->path, v->fd, v->buf, v->len) != PROF_OK)
    v->failed = 1;
  v->len = 0;
}

static int sink(void *ud, const char *s, size_t n) {
  profK_Capture *C = ud;
  profK_Saver *v = C->saver;
  if (v->len + n > SAVE_BUF) flush_buf(C);
  if (n > SAVE_BUF) {
    if (!v->failed && profI_out_write(C->S, v->path, v->fd, s, n) != PROF_OK) v->failed = 1;
    return v->failed;
  }
  memcpy(v->buf + v->len, s, n);
  v->len += n;
  return 0;
}

int profK_save_open(profK_Capture *C, const char *path) {
  prof_State *S = C->S;
  if (strlen(path) >= PROF_PATH_SIZE)
    return profI_error(S, PROF_ERRARG, "prof_capture_open: save_path is too long");
  profK_Saver *v = profI_alloc(S, sizeof *v);
  if (v == NULL) return profI_error(S, PROF_ERRMEM, "prof_capture_open: out of memory for save_path");
  memset(v, 0, sizeof *v);
  snprintf(v->path, sizeof v->path, "%s", path);
  int rc = profI_out_open(S, v->path, &v->st, &v->fd);
  if (rc != PROF_OK) {
    profI_free(S, v, sizeof *v);
    return rc;
  }
  if (C->time.n > 0) {
    v->dev_base = C->time.pair[0].dev;
    v->host_base = C->time.pair[0].host;
  }
  C->saver = v;
  profW_init(&v->w, sink, C, 0);
  char base[64];
  profW_begin_object(&v->w);
  profW_key(&v->w, "schema");
  profW_string(&v->w, "profrun.cupti/1");
  profW_key(&v->w, "comment");
  profW_string(&v->w, "saved by profrun's capture (prof_CaptureOptions.save_path)");
  profW_key(&v->w, "time_base");
  profW_begin_object(&v->w);
  snprintf(base, sizeof base, "%lld", (long long)v->dev_base);
  profW_key(&v->w, "device");
  profW_string(&v->w, base);
  snprintf(base, sizeof base, "%lld", (long long)v->host_base);
  profW_key(&v->w, "host");
  profW_string(&v->w, base);
  profW_end_object(&v->w);
  profW_key(&v->w, "buffers");
  profW_begin_array(&v->w);
  return PROF_OK;
}

void profK_save_buffer(profK_Capture *C, int begin, int64_t dropped) {
  profK_Saver *v = C->saver;
  if (v == NULL) return;
  if (begin) {
    profW_begin_object(&v->w);
    profW_key(&v->w, "dropped");
    profW_int(&v->w, dropped);
    profW_key(&v->w, "records");
    profW_begin_array(&v->w);
  } else {
    profW_end_array(&v->w);
    profW_end_object(&v->w);
  }
}

#if PROF_HAVE_CUPTI
static void num(profW_Writer *w, const char *k, int64_t v) {
  profW_key(w, k);
  profW_int(w, v);
}

/* A device time relative to the base; 0 (a zeroed record) stays what it was once added back. */
static void dev_time(profK_Saver *v, const char *k, uint64_t t) { num(&v->w, k, (int64_t)t - v->dev_base); }

static void place(profW_Writer *w, uint32_t dev, uint32_t ctx, uint32_t stream, uint32_t corr) {
  num(w, "device", dev);
  num(w, "context", ctx);
  num(w, "stream", stream);
  num(w, "correlation", corr);
}

static void dims(profW_Writer *w, const char *k, int32_t x, int32_t y, int32_t z) {
  profW_key(w, k);
  profW_begin_array(w);
  profW_int(w, x);
  profW_int(w, y);
  profW_int(w, z);
  profW_end_array(w);
}

/* Memcpy6 and MemcpyPtoP4 name the fields a saved copy keeps alike: one body for both (a peer
   copy is saved as a copy; its peers are not replayed). */
#define SAVE_COPY(w, v, m)                                                       \
  do {                                                                           \
    kind(w, "memcpy");                                                           \
    num(w, "copy_kind", (m)->copyKind);                                          \
    num(w, "src_kind", (m)->srcKind);                                            \
    num(w, "dst_kind", (m)->dstKind);                                            \
    num(w, "bytes", (int64_t)(m)->bytes);                                        \
    dev_time(v, "start", (m)->start);                                            \
    dev_time(v, "end", (m)->end);                                                \
    place(w, (m)->deviceId, (m)->contextId, (m)->streamId, (m)->correlationId);  \
  } while (0)

static void kind(profW_Writer *w, const char *k) {
  profW_begin_object(w);
  profW_key(w, "kind");
  profW_string(w, k);
}

void profK_save_record(profK_Capture *C, const void *rec) {
  profK_Saver *v = C->saver;
  if (v == NULL) return;
  profW_Writer *w = &v->w;
  const CUpti_Activity *r = rec;
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const CUpti_ActivityKernel10 *k = rec;
      kind(w, "kernel");
      profW_key(w, "name");
      profW_string(w, k->name != NULL ? k->name : "unknown");
      dev_time(v, "start", k->start);
      dev_time(v, "end", k->end);
      place(w, k->deviceId, k->contextId, k->streamId, k->correlationId);
      dims(w, "grid", k->gridX, k->gridY, k->gridZ);
      dims(w, "block", k->blockX, k->blockY, k->blockZ);
      num(w, "registers", k->registersPerThread);
      num(w, "static_shared", k->staticSharedMemory);
      num(w, "dynamic_shared", k->dynamicSharedMemory);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const CUpti_ActivityMemcpy6 *m = rec;
      SAVE_COPY(w, v, m);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const CUpti_ActivityMemcpyPtoP4 *m = rec;
      SAVE_COPY(w, v, m);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const CUpti_ActivityMemset4 *m = rec;
      kind(w, "memset");
      num(w, "bytes", (int64_t)m->bytes);
      num(w, "value", m->value);
      num(w, "memory_kind", m->memoryKind);
      dev_time(v, "start", m->start);
      dev_time(v, "end", m->end);
      place(w, m->deviceId, m->contextId, m->streamId, m->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const CUpti_ActivityAPI *a = rec;
      kind(w, r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "runtime" : "driver");
      num(w, "cbid", a->cbid);
      dev_time(v, "start", a->start);
      dev_time(v, "end", a->end);
      num(w, "correlation", a->correlationId);
      num(w, "thread", a->threadId);
      num(w, "process", a->processId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const CUpti_ActivityMemory4 *m = rec;
      kind(w, "memory");
      num(w, "op", m->memoryOperationType);
      num(w, "memory_kind", m->memoryKind);
      num(w, "address", (int64_t)m->address);
      num(w, "bytes", (int64_t)m->bytes);
      dev_time(v, "timestamp", m->timestamp);
      place(w, m->deviceId, m->contextId, m->streamId, m->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const CUpti_ActivityExternalCorrelation *x = rec;
      int k = (int)x->externalKind - PROFK_CUPTI_CUSTOM0;
      if (k < 0 || k >= PROFK_EXT_KINDS) return;   /* not ours: nothing to replay */
      kind(w, "external");
      num(w, "external_kind", k);
      num(w, "external_id", (int64_t)x->externalId);
      num(w, "correlation", x->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const CUpti_ActivityOverhead3 *o = rec;
      kind(w, "overhead");
      num(w, "overhead_kind", o->overheadKind);
      dev_time(v, "start", o->start);
      dev_time(v, "end", o->end);
      num(w, "correlation", o->correlationId);
      break;
    }
    default: return;   /* a kind the decoder does not read is not replayed either */
  }
  profW_end_object(w);
}
#else
void profK_save_record(profK_Capture *C, const void *rec) {
  (void)C, (void)rec;
}
#endif

void profK_save_close(profK_Capture *C) {
  profK_Saver *v = C->saver;
  if (v == NULL) return;
  prof_State *S = C->S;
  profW_Writer *w = &v->w;
  profW_end_array(w);   /* buffers */
  profW_key(w, "clock");
  profW_begin_array(w);
  for (int32_t i = 0; i < C->time.n; i++) {
    profW_begin_array(w);
    profW_int(w, C->time.pair[i].dev - v->dev_base);
    profW_int(w, C->time.pair[i].host - v->host_base);
    profW_end_array(w);
  }
  profW_end_array(w);
  if (C->started && C->window_end != INT64_MAX) {
    profW_key(w, "window");
    profW_begin_array(w);
    profW_int(w, C->window_begin - v->host_base);
    profW_int(w, C->window_end - v->host_base);
    profW_end_array(w);
  }
  profW_end_object(w);
  sink(C, "\n", 1);
  flush_buf(C);
  int failed = v->failed || w->failed;
  int rc = profI_out_close(S, v->path, v->fd);
  /* a capture's close never fails: a save that could not be written leaves nothing behind */
  if (failed || rc != PROF_OK || prof_commit_file(S, v->path, &v->st) != PROF_OK)
    prof_abandon_file(S, &v->st);
  profI_free(S, v, sizeof *v);
  C->saver = NULL;
}
