/* fixture_json.c — replay fixtures ("profrun.cupti/1" JSON) into CUDA 13 activity records, fed to the replay source. */
#include <cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"

#if PROF_HAVE_CUPTI
#include <cupti.h>

/* Where a message points: the fixture, the buffer and record, the key. */
typedef struct Ctx {
  prof_State *S;
  const char *origin;
  int buffer, record;
  int64_t dev_base, host_base; /* "time_base": added to device and host times */
} Ctx;

__attribute__((format(printf, 2, 3))) static int bad(const Ctx *c, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (c->record >= 0)
    return profI_error(c->S, PROF_ERRARG, "%s: buffers[%d].records[%d]: %s", c->origin, c->buffer,
                       c->record, what);
  return profI_error(c->S, PROF_ERRARG, "%s: %s", c->origin, what);
}

static const char *const kind_names[] = {"kernel", "memcpy", "memset", "runtime", "driver",
                                         "memory", "external", "overhead", NULL};

/* The keys each kind may have, beyond "kind": a misspelt key is an error, not a silent zero. */
static const char *const keys_of[][16] = {
    {"start", "end", "device", "context", "stream", "correlation", "name", "grid", "block",
     "registers", "static_shared", "dynamic_shared", NULL},
    {"start", "end", "device", "context", "stream", "correlation", "bytes", "copy_kind",
     "src_kind", "dst_kind", NULL},
    {"start", "end", "device", "context", "stream", "correlation", "bytes", "value",
     "memory_kind", NULL},
    {"start", "end", "correlation", "cbid", "thread", "process", NULL},
    {"start", "end", "correlation", "cbid", "thread", "process", NULL},
    {"op", "address", "bytes", "timestamp", "device", "context", "stream", "correlation",
     "memory_kind", NULL},
    {"external_kind", "external_id", "module", "phase", "correlation", NULL},
    {"overhead_kind", "start", "end", "correlation", NULL},
};

static int index_of(const char *const *names, const char *s) {
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp(names[i], s) == 0) return i;
  return -1;
}

/* An integer field (absent: def); a number that is not a whole one is an error. */
static int num(const Ctx *c, const cJSON *r, const char *key, int64_t def, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  if (v == NULL) {
    *out = def;
    return PROF_OK;
  }
  if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble)
    return bad(c, "\"%s\" must be an integer", key);
  *out = (int64_t)v->valuedouble;
  return PROF_OK;
}

/* A field given by name (from names, "HtoD") or by its number. */
static int named(const Ctx *c, const cJSON *r, const char *key, const char *(*name_of)(int32_t),
                 int32_t n, int64_t def, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  if (cJSON_IsString(v)) {
    for (int32_t i = 0; i < n; i++)
      if (strcmp(name_of(i), v->valuestring) == 0) {
        *out = i;
        return PROF_OK;
      }
    return bad(c, "\"%s\": unknown value \"%s\"", key, v->valuestring);
  }
  return num(c, r, key, def, out);
}

static int dims(const Ctx *c, const cJSON *r, const char *key, int32_t out[3]) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  out[0] = out[1] = out[2] = 1;
  if (v == NULL) return PROF_OK;
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3) return bad(c, "\"%s\" must be [x, y, z]", key);
  for (int i = 0; i < 3; i++) {
    const cJSON *d = cJSON_GetArrayItem(v, i);
    if (!cJSON_IsNumber(d)) return bad(c, "\"%s\" must be [x, y, z]", key);
    out[i] = (int32_t)d->valuedouble;
  }
  return PROF_OK;
}

static const char *phase_name(int32_t p) {
  static const char *const n[] = {"forward", "backward", "step"};
  return p >= 0 && p < 3 ? n[p] : "";
}
static const char *ext_name(int32_t k) {
  static const char *const n[] = {"op", "range", "module"};
  return k >= 0 && k < 3 ? n[k] : "";
}
static const char *mem_op_name(int32_t k) {
  static const char *const n[] = {"", "alloc", "release"};
  return k >= 0 && k < 3 ? n[k] : "";
}
static const char *overhead_name(int32_t k) {
  static const char *const n[] = {"unknown", "driver_compiler", "buffer_flush", "instrumentation",
                                  "resource", "module_loading", "lazy_function_loading"};
  return k >= 0 && k < 7 ? n[k] : "";
}
static const uint32_t overhead_kinds[] = {
    CUPTI_ACTIVITY_OVERHEAD_UNKNOWN, CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER,
    CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION,
    CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE, CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING,
    CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING};

/* Appends a record in the replay layout; 0 when it does not fit. */
static size_t put(uint8_t *out, size_t cap, size_t at, const void *rec, uint32_t size) {
  size_t padded = ((size_t)size + 7) & ~(size_t)7;
  if (at + 8 + padded > cap) return 0;
  memcpy(out + at, rec, 4);
  memcpy(out + at + 4, &size, 4);
  memcpy(out + at + 8, rec, size);
  memset(out + at + 8 + size, 0, padded - size);
  return at + 8 + padded;
}

#define NUM(key, def, dst)                                       \
  do {                                                           \
    int64_t v_;                                                  \
    if ((rc = num(c, r, key, def, &v_)) != PROF_OK) return rc;  \
    dst = v_;                                                    \
  } while (0)
/* A device time: relative to time_base.device when the fixture has one (0 when absent) */
#define TIME(key, dst)                                           \
  do {                                                           \
    int64_t v_;                                                  \
    if ((rc = num(c, r, key, 0, &v_)) != PROF_OK) return rc;    \
    dst = cJSON_GetObjectItemCaseSensitive(r, key) != NULL ? (uint64_t)(v_ + c->dev_base) : 0; \
  } while (0)
/* Where a device record ran and the launch that made it, by the same keys and defaults in
   every record kind that has them (device 0, context 1, stream 7, correlation 0) */
#define PLACE_FIELDS(x)                                          \
  do {                                                           \
    NUM("device", 0, (x).deviceId);                              \
    NUM("context", 1, (x).contextId);                            \
    NUM("stream", 7, (x).streamId);                              \
    NUM("correlation", 0, (x).correlationId);                    \
  } while (0)

/* One record object -> its struct, appended at *at. */
static int record(const Ctx *c, const cJSON *r, uint8_t *out, size_t cap, size_t *at) {
  int rc;
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
  if (!cJSON_IsObject(r) || !cJSON_IsString(k)) return bad(c, "a record is an object with a \"kind\"");
  int kind = index_of(kind_names, k->valuestring);
  if (kind < 0)
    return bad(c, "unknown kind \"%s\" (kernel, memcpy, memset, runtime, driver, memory, external, "
               "overhead)", k->valuestring);
  for (const cJSON *f = r->child; f != NULL; f = f->next)
    if (strcmp(f->string, "kind") != 0 && index_of(keys_of[kind], f->string) < 0)
      return bad(c, "a %s record has no key \"%s\"", kind_names[kind], f->string);
  size_t next = 0;
  switch (kind) {
    case 0: {
      CUpti_ActivityKernel10 x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      TIME("start", x.start);
      TIME("end", x.end);
      PLACE_FIELDS(x);
      NUM("registers", 0, x.registersPerThread);
      NUM("static_shared", 0, x.staticSharedMemory);
      NUM("dynamic_shared", 0, x.dynamicSharedMemory);
      int32_t g[3], b[3];
      if ((rc = dims(c, r, "grid", g)) != PROF_OK || (rc = dims(c, r, "block", b)) != PROF_OK) return rc;
      x.gridX = g[0], x.gridY = g[1], x.gridZ = g[2];
      x.blockX = b[0], x.blockY = b[1], x.blockZ = b[2];
      const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "name");
      x.name = prof_intern(c->S, cJSON_IsString(n) ? n->valuestring : "unknown");
      if (x.name == NULL) return profI_error(c->S, PROF_ERRMEM, "%s: out of memory", c->origin);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
    case 1: {
      CUpti_ActivityMemcpy6 x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      int64_t ck, sk, dk;
      if ((rc = named(c, r, "copy_kind", prof_copy_kind_name, 11, PROF_COPY_HTOD, &ck)) != PROF_OK ||
          (rc = named(c, r, "src_kind", prof_mem_kind_name, 8, PROF_MEMKIND_PAGEABLE, &sk)) != PROF_OK ||
          (rc = named(c, r, "dst_kind", prof_mem_kind_name, 8, PROF_MEMKIND_DEVICE, &dk)) != PROF_OK)
        return rc;
      x.copyKind = (uint8_t)ck, x.srcKind = (uint8_t)sk, x.dstKind = (uint8_t)dk;
      NUM("bytes", 0, x.bytes);
      TIME("start", x.start);
      TIME("end", x.end);
      PLACE_FIELDS(x);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
    case 2: {
      CUpti_ActivityMemset4 x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      int64_t mk;
      if ((rc = named(c, r, "memory_kind", prof_mem_kind_name, 8, PROF_MEMKIND_DEVICE, &mk)) != PROF_OK)
        return rc;
      x.memoryKind = (uint16_t)mk;
      NUM("value", 0, x.value);
      NUM("bytes", 0, x.bytes);
      TIME("start", x.start);
      TIME("end", x.end);
      PLACE_FIELDS(x);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
    case 3:
    case 4: {
      CUpti_ActivityAPI x;
      memset(&x, 0, sizeof x);
      x.kind = kind == 3 ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
      NUM("cbid", kind == 3 ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
                            : CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, x.cbid);
      TIME("start", x.start);
      TIME("end", x.end);
      NUM("correlation", 0, x.correlationId);
      NUM("thread", 0, x.threadId);
      NUM("process", 0, x.processId);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
    case 5: {
      CUpti_ActivityMemory4 x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
      int64_t op, mk;
      if ((rc = named(c, r, "op", mem_op_name, 3, 0, &op)) != PROF_OK ||
          (rc = named(c, r, "memory_kind", prof_mem_kind_name, 8, PROF_MEMKIND_DEVICE, &mk)) != PROF_OK)
        return rc;
      if (op != 1 && op != 2) return bad(c, "a memory record needs \"op\": \"alloc\" or \"release\"");
      x.memoryOperationType = (CUpti_ActivityMemoryOperationType)op;
      x.memoryKind = (CUpti_ActivityMemoryKind)mk;
      NUM("address", 0, x.address);
      NUM("bytes", 0, x.bytes);
      TIME("timestamp", x.timestamp);
      PLACE_FIELDS(x);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
    case 6: {
      CUpti_ActivityExternalCorrelation x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      int64_t ek, id, module, phase;
      if ((rc = named(c, r, "external_kind", ext_name, 3, -1, &ek)) != PROF_OK) return rc;
      if (ek < 0) return bad(c, "an external record needs \"external_kind\": \"op\", \"range\" or \"module\"");
      x.externalKind = (CUpti_ExternalCorrelationKind)(PROFK_CUPTI_CUSTOM0 + ek);
      /* a module's id is written as the hooks make it, from "module" and "phase" */
      if ((rc = num(c, r, "module", -2, &module)) != PROF_OK ||
          (rc = named(c, r, "phase", phase_name, 3, 0, &phase)) != PROF_OK ||
          (rc = num(c, r, "external_id", 0, &id)) != PROF_OK)
        return rc;
      if (module != -2) {
        if (ek != PROFK_EXT_MODULE) return bad(c, "\"module\" belongs to an external_kind \"module\" record");
        id = (int64_t)profK_module_ext((int32_t)module, (int)phase);
      }
      x.externalId = (uint64_t)id;
      NUM("correlation", 0, x.correlationId);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
    default: {
      CUpti_ActivityOverhead3 x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
      int64_t ok;
      if ((rc = named(c, r, "overhead_kind", overhead_name, 7, 3, &ok)) != PROF_OK) return rc;
      x.overheadKind = ok >= 0 && ok < 7 ? (CUpti_ActivityOverheadKind)overhead_kinds[ok]
                                         : (CUpti_ActivityOverheadKind)ok;
      TIME("start", x.start);
      TIME("end", x.end);
      NUM("correlation", 0, x.correlationId);
      next = put(out, cap, *at, &x, sizeof x);
      break;
    }
  }
  if (next == 0) return bad(c, "the buffer's records do not fit one %zu-byte activity buffer", cap);
  *at = next;
  return PROF_OK;
}

static int pair(const Ctx *c, const cJSON *v, const char *what, int64_t *a, int64_t *b) {
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(v->child) ||
      !cJSON_IsNumber(v->child->next))
    return bad(c, "%s must be a pair of integers [device_ns, host_ns]", what);
  *a = (int64_t)v->child->valuedouble;
  *b = (int64_t)v->child->next->valuedouble;
  return PROF_OK;
}

static int replay_doc(prof_State *S, const cJSON *doc, const char *origin, uint8_t *out, size_t cap) {
  Ctx ctx = {.S = S, .origin = origin, .buffer = 0, .record = -1}, *c = &ctx;
  int rc;
  if (!cJSON_IsObject(doc)) return bad(c, "a fixture is a JSON object");
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
  if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "profrun.cupti/1") != 0)
    return bad(c, "\"schema\" must be \"profrun.cupti/1\"");
  for (const cJSON *f = doc->child; f != NULL; f = f->next)
    if (strcmp(f->string, "schema") != 0 && strcmp(f->string, "clock") != 0 &&
        strcmp(f->string, "window") != 0 && strcmp(f->string, "buffers") != 0 &&
        strcmp(f->string, "comment") != 0 && strcmp(f->string, "time_base") != 0)
      return bad(c, "unknown key \"%s\" (schema, comment, time_base, clock, window, buffers)",
                 f->string);
  /* exact 64-bit bases as strings (a double holds 53 bits; CUPTI's clock is epoch ns) */
  const cJSON *tb = cJSON_GetObjectItemCaseSensitive(doc, "time_base");
  if (tb != NULL) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(tb, "device");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(tb, "host");
    char *end1 = NULL, *end2 = NULL;
    if (!cJSON_IsObject(tb) || !cJSON_IsString(d) || !cJSON_IsString(h))
      return bad(c, "\"time_base\" must be {\"device\": \"<ns>\", \"host\": \"<ns>\"} (strings)");
    ctx.dev_base = strtoll(d->valuestring, &end1, 10);
    ctx.host_base = strtoll(h->valuestring, &end2, 10);
    if (*d->valuestring == '\0' || *end1 != '\0' || *h->valuestring == '\0' || *end2 != '\0')
      return bad(c, "\"time_base\" values must be decimal integers");
  }
  const cJSON *clock = cJSON_GetObjectItemCaseSensitive(doc, "clock");
  if (clock != NULL) {
    if (!cJSON_IsArray(clock)) return bad(c, "\"clock\" must be an array of [device_ns, host_ns]");
    for (const cJSON *p = clock->child; p != NULL; p = p->next) {
      int64_t d, h;
      if ((rc = pair(c, p, "a clock entry", &d, &h)) != PROF_OK) return rc;
      if (prof_capture_replay_clock(S, d + c->dev_base, h + c->host_base) != PROF_OK) return bad(c, "clock pairs must come in increasing device time");
    }
  }
  const cJSON *window = cJSON_GetObjectItemCaseSensitive(doc, "window");
  if (window != NULL) {
    int64_t b, e;
    if ((rc = pair(c, window, "\"window\"", &b, &e)) != PROF_OK) return rc;
    if (prof_capture_replay_window(S, b + c->host_base, e + c->host_base) != PROF_OK) return bad(c, "\"window\" ends before it begins");
  }
  const cJSON *buffers = cJSON_GetObjectItemCaseSensitive(doc, "buffers");
  if (!cJSON_IsArray(buffers)) return bad(c, "\"buffers\" must be an array of {records = [...]}");
  for (const cJSON *b = buffers->child; b != NULL; b = b->next, ctx.buffer++) {
    const cJSON *records = cJSON_GetObjectItemCaseSensitive(b, "records");
    if (!cJSON_IsObject(b) || !cJSON_IsArray(records))
      return bad(c, "buffers[%d] must be an object with \"records\"", ctx.buffer);
    int64_t dropped = 0;
    ctx.record = -1;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(b, "dropped");
    if (d != NULL) {
      if (!cJSON_IsNumber(d) || d->valuedouble < 0) return bad(c, "buffers[%d].dropped must be a count", ctx.buffer);
      dropped = (int64_t)d->valuedouble;
    }
    size_t at = 0;
    ctx.record = 0;
    for (const cJSON *r = records->child; r != NULL; r = r->next, ctx.record++)
      if ((rc = record(c, r, out, cap, &at)) != PROF_OK) return rc;
    ctx.record = -1;
    if ((rc = prof_capture_replay_buffer(S, out, at, dropped)) != PROF_OK) return rc;
  }
  return PROF_OK;
}

int prof_capture_replay_json(prof_State *S, const char *text, size_t len, const char *origin) {
  if (origin == NULL) origin = "fixture";
  profK_Capture *C = S->capture;
  if (C == NULL || C->src != &profK_replay_source)
    return profI_error(S, PROF_ERRSTATE, "prof_capture_replay_json: no replay capture is open");
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (doc == NULL) {
    size_t at = end != NULL && end >= text ? (size_t)(end - text) : 0;
    return profI_error(S, PROF_ERRARG, "%s: not valid JSON near byte %zu", origin, at);
  }
  size_t cap = C->pool.size;
  uint8_t *out = profI_alloc(S, cap);
  int rc = out == NULL ? profI_error(S, PROF_ERRMEM, "%s: out of memory", origin)
                       : replay_doc(S, doc, origin, out, cap);
  profI_free(S, out, cap);
  cJSON_Delete(doc);
  return rc;
}

#else

int prof_capture_replay_json(prof_State *S, const char *text, size_t len, const char *origin) {
  (void)text, (void)len, (void)origin;
  return profI_error(S, PROF_ERRDEVICE, "replay capture: built without the CUPTI headers");
}

#endif

int prof_capture_replay_file(prof_State *S, const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return profI_error(S, PROF_ERRIO, "%s: cannot open: %s", path, strerror(errno));
  char *text = NULL;
  size_t len = 0, cap = 0;
  int rc = PROF_OK;
  for (;;) {
    if (len + 4096 > cap) {
      size_t ncap = cap ? 2 * cap : 65536;
      char *t = profI_realloc(S, text, cap, ncap);
      if (t == NULL) {
        rc = profI_error(S, PROF_ERRMEM, "%s: out of memory reading it", path);
        break;
      }
      text = t;
      cap = ncap;
    }
    size_t n = fread(text + len, 1, cap - len, f);
    len += n;
    if (n == 0) {
      if (ferror(f)) rc = profI_error(S, PROF_ERRIO, "%s: read error", path);
      break;
    }
  }
  fclose(f);
  if (rc == PROF_OK) rc = prof_capture_replay_json(S, text, len, path);
  profI_free(S, text, cap);
  return rc;
}
