/* trace_writer.c — the buffered events as a Chrome / Perfetto trace in Kineto's JSON format. */
#define _POSIX_C_SOURCE 200809L
#include <cJSON.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace_internal.h"

#define OUT_SIZE (64 * 1024)
#define NEST_MAX 512             /* deeper spans are written unchecked (recorders nest far less) */
#define FRAG_SLOTS 256           /* modules whose "name" .. "Module Type" text is kept, by id */
#define FRAG_SIZE 244

/* A module call's name, path and type as written once: every later call of the module copies
   it (the path walk, the "path (Type)" formatting and three escapes cost a third of an event).
   Direct-mapped by module id, so its memory is fixed whatever the model's size. */
typedef struct Frag {
  int32_t module;                /* -1: empty */
  uint32_t len;
  char text[FRAG_SIZE];
} Frag;

/* The document goes out in OUT_SIZE pieces: one callback per piece, not per token. */
typedef struct Out {
  prof_State *S;
  prof_WriteFn fn;
  void *ud;
  int failed;
  size_t len;
  int64_t flushes;               /* how many times buf was handed on: a Frag is copied out of buf
                                    only when none happened while it was written */
  profW_Writer w;                /* at depth 0 it writes one value: escaped strings, devices */
  int64_t nest[NEST_MAX];        /* ends of the open spans of the thread being written */
  char path[4096];
  char name[4200];
  Frag frags[FRAG_SLOTS];
  char buf[OUT_SIZE];
} Out;

static void flush(Out *o) {
  if (o->len > 0 && !o->failed && o->fn(o->ud, o->buf, o->len) != 0) o->failed = 1;
  o->len = 0;
  o->flushes++;
}

static void put_slow(Out *o, const char *s, size_t n) {
  flush(o);
  if (n > OUT_SIZE) {
    if (!o->failed && o->fn(o->ud, s, n) != 0) o->failed = 1;
    return;
  }
  memcpy(o->buf, s, n);
  o->len = n;
}

/* Inline, so that literals (LIT) become a few moves rather than a memcpy call. */
static inline void put(Out *o, const char *s, size_t n) {
  if (__builtin_expect(o->len + n > OUT_SIZE, 0)) {
    put_slow(o, s, n);
    return;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

#define LIT(o, s) put((o), "" s, sizeof(s) - 1)

static int sink(void *ud, const char *s, size_t n) {
  put(ud, s, n);
  return 0;
}

/* Decimal digits by hand, two at a time (a division per pair): snprintf would cost more than the
   rest of an event, and the 13-digit correlation ids a digit at a time a fifth of the writer. */
static char *fmt_u64(char *end, uint64_t v) {
  static const char pairs[] =
      "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
      "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
  while (v >= 100) {
    uint64_t r = v % 100;
    v /= 100;
    end -= 2;
    memcpy(end, pairs + 2 * r, 2);
  }
  if (v >= 10) {
    end -= 2;
    memcpy(end, pairs + 2 * v, 2);
  } else {
    *--end = (char)('0' + v);
  }
  return end;
}

static void put_int(Out *o, int64_t v) {
  char b[24], *e = b + sizeof b, *p = fmt_u64(e, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
  if (v < 0) *--p = '-';
  put(o, p, (size_t)(e - p));
}

/* ns as µs with exactly three decimals, Kineto's "{us}.{ns:03}": ns precision in a double. */
static void put_us(Out *o, int64_t ns) {
  char b[32], *e = b + sizeof b, *p;
  uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
  p = e - 3;
  uint64_t frac = a % 1000;
  p[0] = (char)('0' + frac / 100);
  p[1] = (char)('0' + frac / 10 % 10);
  p[2] = (char)('0' + frac % 10);
  *--p = '.';
  p = fmt_u64(p, a / 1000);
  if (ns < 0) *--p = '-';
  put(o, p, (size_t)(e - p));
}

/* Names are nearly always plain ASCII: copied as they are when nothing in them needs the JSON
   writer's escaping (which handles every other string). */
static void put_str(Out *o, const char *s) {
  if (s == NULL) s = "";
  const unsigned char *p = (const unsigned char *)s;
  while (*p >= 0x20 && *p < 0x7F && *p != '"' && *p != '\\') p++;
  if (*p != '\0') {
    profW_string(&o->w, s);
    return;
  }
  size_t n = (size_t)(p - (const unsigned char *)s);
  if (o->len + n + 2 > OUT_SIZE) {
    profW_string(&o->w, s);
    return;
  }
  o->buf[o->len++] = '"';
  memcpy(o->buf + o->len, s, n);
  o->len += n;
  o->buf[o->len++] = '"';
}

/* A key of the event's "args", opening them at the first: an event without args has none. Keys
   are plain literals, written with their quotes and colon as one literal, never scanned. */
#define KEY(o, key, first)                       \
  do {                                           \
    if (*(first)) LIT((o), ",\"args\":{\"" key "\":"); \
    else LIT((o), ",\"" key "\":");              \
    *(first) = 0;                                \
  } while (0)

/* The C++ type names torch's traces give in "Input type" (c10's scalar types). */
static const char *torch_type(int32_t dtype) {
  static const char *const names[PROF_DTYPE_COUNT] = {
      "float", "double", "c10::Half", "c10::BFloat16", "long int", "int", "signed char",
      "unsigned char", "bool"};
  return dtype >= 0 && dtype < PROF_DTYPE_COUNT ? names[dtype] : "";
}

/* record_shapes: "Input Dims" [[8, 64], [64, 64]] and "Input type" ["float", "float"], as torch. */
static void put_inputs(Out *o, const prof_Event *e, int *first) {
  KEY(o, "Input Dims", first);
  LIT(o, "[");
  for (int32_t i = 0; i < e->ninputs; i++) {
    if (i > 0) LIT(o, ",");
    LIT(o, "[");
    for (int32_t d = 0; d < e->input[i].ndim; d++) {
      if (d > 0) LIT(o, ",");
      put_int(o, e->input[i].dim[d]);
    }
    LIT(o, "]");
  }
  LIT(o, "]");
  KEY(o, "Input type", first);
  LIT(o, "[");
  for (int32_t i = 0; i < e->ninputs; i++) {
    if (i > 0) LIT(o, ",");
    put_str(o, torch_type(e->input[i].dtype));
  }
  LIT(o, "]");
}

static void end_event(Out *o, int first) {
  if (first) LIT(o, "}");
  else LIT(o, "}}");
}

#define ARG_INT(o, key, v, first) \
  do {                            \
    KEY((o), key, (first));       \
    put_int((o), (v));            \
  } while (0)

/* {====================== deviceProperties ======================} */

/* A caller's JSON re-emitted through the writer, so that its strings are escaped like ours. */
static void emit_json(profW_Writer *w, const cJSON *v) {
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    int obj = cJSON_IsObject(v);
    obj ? profW_begin_object(w) : profW_begin_array(w);
    for (const cJSON *c = v->child; c != NULL; c = c->next) {
      if (obj) profW_key(w, c->string != NULL ? c->string : "");
      emit_json(w, c);
    }
    obj ? profW_end_object(w) : profW_end_array(w);
  } else if (cJSON_IsString(v)) {
    profW_string(w, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d == (double)(int64_t)d && d > -9.0e15 && d < 9.0e15) profW_int(w, (int64_t)d);
    else profW_double(w, d);
  } else if (cJSON_IsBool(v)) {
    profW_bool(w, cJSON_IsTrue(v));
  } else {
    profW_null(w);
  }
}

/* The caller's deviceProperties, checked before anything is written. NULL doc: none given. */
static int parse_devices(prof_State *S, const char *text, cJSON **doc) {
  *doc = NULL;
  if (text == NULL) return PROF_OK;
  /* the length counts the NUL: cJSON checks it is there */
  *doc = cJSON_ParseWithLengthOpts(text, strlen(text) + 1, NULL, 1);
  if (*doc == NULL || !(cJSON_IsArray(*doc) || cJSON_IsObject(*doc))) {
    cJSON_Delete(*doc);
    *doc = NULL;
    return profI_error(S, PROF_ERRARG, "trace: device_properties is not a JSON array or object");
  }
  return PROF_OK;
}

static void put_devices(Out *o, const cJSON *doc) {
  if (doc == NULL) {
    LIT(o, "[]");
    return;
  }
  profW_Writer w;
  profW_init(&w, sink, o, 0);
  if (cJSON_IsObject(doc)) LIT(o, "[");
  emit_json(&w, doc);
  if (cJSON_IsObject(doc)) LIT(o, "]");
  if (w.failed) o->failed = 1;   /* nested deeper than the writer's 64 levels */
}

/* {====================== events ======================} */

typedef struct Ctx {
  Out *o;
  int64_t base, pid;
  int first_event;
  int64_t clipped;
  int sp;                        /* open spans in o->nest */
  const char *(*op_name)(void *ud, const char *name);
  void *op_name_ud;
  int32_t frames_row;            /* the pseudo-thread whose tid shows the Lua frames' slices */
  int32_t head_thread;           /* whose ","pid":P,"tid":T,"ts":" head holds */
  size_t head_len;
  char head[64];
} Ctx;

/* ","pid":P,"tid":T,"ts":" is the same for every event of a thread: formatted once per thread. */
static void make_head(Ctx *c, int32_t thread) {
  char *h = c->head;
  int64_t tid = thread < 0 ? 0 : (int64_t)thread + PROF_TRACE_TID_BASE;
  int n = snprintf(h, sizeof c->head, "\",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)c->pid,
                   (long long)tid);
  c->head_len = n > 0 && (size_t)n < sizeof c->head ? (size_t)n : 0;
  c->head_thread = thread;
}

/* The start of an event object: ph, pid, tid, ts (and the comma before it). */
static void event_head(Ctx *c, char ph, int32_t thread, int64_t ts_ns) {
  Out *o = c->o;
  if (!c->first_event) LIT(o, ",\n");
  c->first_event = 0;
  if (thread != c->head_thread || c->head_len == 0) make_head(c, thread);
  LIT(o, "{\"ph\":\"");
  put(o, &ph, 1);
  put(o, c->head, c->head_len);
  put_us(o, ts_ns - c->base);
}

static void metadata(Ctx *c, const char *what, int32_t thread, const char *key, const char *str,
                     int64_t num) {
  Out *o = c->o;
  event_head(c, 'M', thread, c->base);
  LIT(o, ",\"name\":");
  put_str(o, what);
  LIT(o, ",\"args\":{");
  put_str(o, key);
  LIT(o, ":");
  if (str != NULL) put_str(o, str);
  else put_int(o, num);
  LIT(o, "}}");
}

static void thread_rows(Ctx *c, int32_t thread) {
  char name[64];
  int64_t tid = (int64_t)thread + PROF_TRACE_TID_BASE;
  snprintf(name, sizeof name, "thread %lld (recorder %d)", (long long)tid, (int)thread);
  metadata(c, "thread_name", thread, "name", name, 0);
  metadata(c, "thread_sort_index", thread, "sort_index", NULL, tid);
}

/* Clips a span to the innermost open one it overlaps without nesting: Perfetto would drop it. */
static int64_t nest(Ctx *c, int64_t begin, int64_t end) {
  int64_t *st = c->o->nest;
  while (c->sp > 0 && st[c->sp - 1] <= begin && st[c->sp - 1] < end) c->sp--;
  if (c->sp > 0 && end > st[c->sp - 1]) {
    end = st[c->sp - 1];
    c->clipped++;
  }
  if (c->sp < NEST_MAX) st[c->sp++] = end;
  return end;
}

/* ,"cat":"module","name":"features.0 (Conv2d)","args":{"Module Path":"features.0","Module Type":
   "Conv2d" (the name is what Perfetto shows on the slice; the root's is its type alone), from the
   module's Frag when it holds it. The args are open afterwards. */
static void module_names(Out *o, prof_State *S, const prof_Event *e) {
  Frag *f = &o->frags[(uint32_t)e->module % FRAG_SLOTS];
  if (e->module >= 0 && f->module == e->module) {
    put(o, f->text, f->len);
    return;
  }
  size_t start = o->len;
  int64_t flushes = o->flushes;
  int n = prof_module_path(S, e->module, o->path, sizeof o->path);
  if (n < 0) o->path[0] = '\0';
  LIT(o, ",\"cat\":\"module\",\"name\":");
  if (o->path[0] != '\0') {
    snprintf(o->name, sizeof o->name, "%s (%s)", o->path, e->name != NULL ? e->name : "");
    put_str(o, o->name);
  } else {
    put_str(o, e->name);
  }
  int first = 1;
  KEY(o, "Module Path", &first);
  put_str(o, o->path);
  KEY(o, "Module Type", &first);
  put_str(o, e->name);
  if (e->module >= 0 && o->flushes == flushes && o->len - start <= FRAG_SIZE) {
    f->module = e->module;
    f->len = (uint32_t)(o->len - start);
    memcpy(f->text, o->buf + start, f->len);
  }
}

static void span(Ctx *c, prof_State *S, const prof_Event *e) {
  Out *o = c->o;
  int64_t end = nest(c, e->t_begin_ns, e->t_end_ns), dur = end - e->t_begin_ns;
  event_head(c, 'X', e->thread, e->t_begin_ns);
  LIT(o, ",\"dur\":");
  put_us(o, dur);
  int first = 1;
  if (e->kind == PROF_EVENT_MODULE) {
    module_names(o, S, e);
    first = 0;
    switch (e->phase) {
      case PROF_PHASE_FORWARD: LIT(o, ",\"Phase\":\"forward\""); break;
      case PROF_PHASE_BACKWARD: LIT(o, ",\"Phase\":\"backward\""); break;
      case PROF_PHASE_STEP: LIT(o, ",\"Phase\":\"step\""); break;
      default: LIT(o, ",\"Phase\":\"unknown\""); break;
    }
    ARG_INT(o, "MACs", e->macs, &first);
    ARG_INT(o, "FLOPs", e->flops, &first);
    ARG_INT(o, "Bytes", e->bytes_read + e->bytes_written, &first);
    /* whole FLOP/s: no reader needs a fraction of one, and %.17g costs more than the event */
    ARG_INT(o, "FLOP/s", dur > 0 ? llround((double)e->flops * 1e9 / (double)dur) : 0, &first);
  } else {
    if (e->kind == PROF_EVENT_OP) LIT(o, ",\"cat\":\"cpu_op\",\"name\":");
    else LIT(o, ",\"cat\":\"user_annotation\",\"name\":");
    if (e->kind == PROF_EVENT_RANGE && e->value >= 0) {
      /* a numbered range: ProfilerStep#12 */
      snprintf(o->name, sizeof o->name, "%s#%lld", e->name != NULL ? e->name : "", (long long)e->value);
      put_str(o, o->name);
    } else {
      const char *name = e->name != NULL ? e->name : prof_op_kind_name((prof_OpKind)e->op_kind);
      const char *mapped = e->kind == PROF_EVENT_OP && c->op_name ? c->op_name(c->op_name_ud, name) : NULL;
      put_str(o, mapped != NULL ? mapped : name);
    }
    if (e->kind == PROF_EVENT_OP) {
      if (e->ninputs > 0) put_inputs(o, e, &first);
      if (e->flops != 0) ARG_INT(o, "FLOPs", e->flops, &first);
      if (e->macs != 0) ARG_INT(o, "MACs", e->macs, &first);
      if (e->bytes_read + e->bytes_written != 0)
        ARG_INT(o, "Bytes", e->bytes_read + e->bytes_written, &first);
    }
  }
  if (e->stack != NULL) {
    KEY(o, "Call stack", &first);
    put_str(o, e->stack);
  }
  if (e->correlation != 0) ARG_INT(o, "External id", (int64_t)e->correlation, &first);
  end_event(o, first);
}

static void point(Ctx *c, const prof_Event *e) {
  Out *o = c->o;
  int first = 1;
  if (e->kind == PROF_EVENT_COUNTER) {
    event_head(c, 'C', e->thread, e->t_begin_ns);
    LIT(o, ",\"name\":");
    put_str(o, e->name);
    ARG_INT(o, "value", e->value, &first);
    end_event(o, first);
    return;
  }
  event_head(c, 'i', e->thread, e->t_begin_ns);
  LIT(o, ",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":");
  if (e->kind == PROF_EVENT_MEMORY) LIT(o, "\"[memory]\"");
  else put_str(o, e->name);
  if (e->kind == PROF_EVENT_MEMORY) {
    /* torch's keys: c10's DeviceType (0 cpu, 1 cuda), device id -1 for the host */
    int cuda = e->device == PROF_DEVICE_CUDA;
    ARG_INT(o, "Total Allocated", e->total, &first);
    ARG_INT(o, "Bytes", e->value, &first);
    ARG_INT(o, "Device Id", cuda ? 0 : -1, &first);
    ARG_INT(o, "Device Type", cuda ? 1 : 0, &first);
    ARG_INT(o, "Addr", (int64_t)e->address, &first);   /* torch's: pairs a free with its alloc */
    if (e->correlation != 0) ARG_INT(o, "External id", (int64_t)e->correlation, &first);
  }
  end_event(o, first);
}

/* A Lua frame's slice, on the frames row of the thread being written. */
static void frame_span(void *ud, const char *name, size_t len, int64_t begin, int64_t end) {
  Ctx *c = ud;
  Out *o = c->o;
  event_head(c, 'X', c->frames_row, begin);
  LIT(o, ",\"dur\":");
  put_us(o, end - begin);
  LIT(o, ",\"cat\":\"lua_function\",\"name\":");
  if (len >= sizeof o->name) len = sizeof o->name - 1;
  memcpy(o->name, name, len);
  o->name[len] = '\0';
  put_str(o, o->name);
  LIT(o, "}");
}

static void events(Ctx *c, prof_State *S, const profX_Order *ord) {
  for (int32_t r = 0; r < ord->n_runs && !c->o->failed; r++) {
    const profX_Run *run = &ord->runs[r];
    thread_rows(c, run->thread);
    c->sp = 0;
    profX_Frames frames = {0};
    int frames_named = 0;
    c->frames_row = run->thread + PROF_TRACE_FRAMES_ROW;
    for (int64_t k = run->start; k < run->end; k++) {
      prof_Event e;   /* not zeroed: prof_event_at sets every field but the unused operands */
      e.size = sizeof e;
      if (prof_event_at(S, ord->keys[k].index, &e) != PROF_OK) continue;
      e.t_end_ns = ord->keys[k].end;
      switch (e.kind) {
        case PROF_EVENT_MODULE:
        case PROF_EVENT_OP:
        case PROF_EVENT_RANGE: span(c, S, &e); break;
        case PROF_EVENT_MEMORY_TAG: break;   /* the memory timeline's, not the trace's */
        default: point(c, &e); break;
      }
      if (e.stack != NULL && (e.kind == PROF_EVENT_OP || e.kind == PROF_EVENT_RANGE)) {
        if (!frames_named) {
          char name[64];
          snprintf(name, sizeof name, "thread %lld Lua frames",
                   (long long)run->thread + PROF_TRACE_TID_BASE);
          metadata(c, "thread_name", c->frames_row, "name", name, 0);
          frames_named = 1;
        }
        profX_frames_feed(&frames, e.stack, e.t_begin_ns, e.t_end_ns, frame_span, c);
      }
    }
    profX_frames_flush(&frames, frame_span, c);
  }
}

/* The device capture's events (trace_gpu.c) go through the same buffer. */
static void sink_raw(void *ud, const char *s, size_t n) { put(((Ctx *)ud)->o, s, n); }
static void sink_str(void *ud, const char *s) { put_str(((Ctx *)ud)->o, s); }

static profX_Sink gpu_sink(Ctx *c, const prof_TraceInfo *in) {
  return (profX_Sink){.ud = c, .raw = sink_raw, .str = sink_str, .first_event = &c->first_event,
                      .base = c->base, .pid = c->pid,
                      .process_name = in->process_name ? in->process_name : "profrun"};
}

/* {====================== the document ======================} */

void prof_traceinfo_init(prof_TraceInfo *info) {
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  info->world_size = 1;
}

static int64_t epoch_of(int64_t mono_ns) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t now_real = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  return now_real - (prof_now_ns() - mono_ns);
}

static void document(Out *o, Ctx *c, prof_State *S, const prof_TraceInfo *in,
                     const cJSON *devices, const profX_Order *ord, int64_t epoch, int *rc) {
  LIT(o, "{\n\"schemaVersion\":1,\n\"deviceProperties\":");
  put_devices(o, devices);
  LIT(o, ",\n\"distributedInfo\":{\"rank\":");
  put_int(o, in->rank);
  LIT(o, ",\"world_size\":");
  put_int(o, in->world_size);
  LIT(o, "},\n\"profrunVersion\":");
  put_str(o, PROF_VERSION);
  LIT(o, ",\n\"displayTimeUnit\":\"ms\",\n\"baseTimeNanoseconds\":");
  put_int(o, epoch);
  LIT(o, ",\n\"traceEvents\":[\n");
  metadata(c, "process_name", -1, "name", in->process_name ? in->process_name : "profrun", 0);
  metadata(c, "process_labels", -1, "labels", "CPU", 0);
  events(c, S, ord);
  profX_Sink k = gpu_sink(c, in);
  *rc = profX_gpu_events(S, &k);
  int64_t lo = INT64_MAX, hi = ord->n > 0 ? ord->max_end : c->base;
  profX_gpu_bounds(S, &lo, &hi);
  event_head(c, 'i', -1, hi);
  LIT(o, ",\"s\":\"g\",\"name\":\"Record Window End\"}");
  LIT(o, "\n],\n\"traceName\":");
  put_str(o, in->trace_name);
  LIT(o, ",\n\"droppedEvents\":");
  put_int(o, prof_events_dropped(S));
  LIT(o, ",\n\"clippedSpans\":");
  put_int(o, c->clipped);
  profX_gpu_summary(S, &k);
  LIT(o, "\n}\n");
}

int prof_write_chrome_trace(prof_State *S, const prof_TraceInfo *info, prof_WriteFn fn, void *ud) {
  prof_TraceInfo in;
  prof_traceinfo_init(&in);
  if (info != NULL) {
    size_t n = info->size != 0 && info->size < sizeof in ? info->size : sizeof in;
    memcpy(&in, info, n);
  }
  if (fn == NULL) return profI_error(S, PROF_ERRARG, "trace: no write function");
  cJSON *devices;
  int rc = parse_devices(S, in.device_properties, &devices);
  if (rc != PROF_OK) return rc;
  profX_Order ord;
  Out *o = NULL;
  if ((rc = profX_order(S, &ord)) != PROF_OK) goto end;
  o = profI_alloc(S, sizeof *o);
  if (o == NULL) {
    rc = profI_error(S, PROF_ERRMEM, "trace: out of memory for the output buffer");
    goto end;
  }
  o->S = S;
  o->fn = fn;
  o->ud = ud;
  o->failed = 0;
  o->len = 0;
  o->flushes = 0;
  for (int i = 0; i < FRAG_SLOTS; i++) o->frags[i].module = -1;
  profW_init(&o->w, sink, o, 0);
  int64_t lo = ord.n > 0 ? ord.min_begin : INT64_MAX, hi = INT64_MIN;
  profX_gpu_bounds(S, &lo, &hi);   /* device work may start the trace (a replayed capture) */
  int64_t base = in.base_ns != 0 ? in.base_ns : lo != INT64_MAX ? lo : prof_now_ns();
  Ctx c = {.o = o, .base = base, .pid = in.pid != 0 ? in.pid : (int64_t)getpid(), .first_event = 1,
           .head_len = 0, .op_name = in.op_name, .op_name_ud = in.op_name_ud};
  document(o, &c, S, &in, devices, &ord,
           in.base_epoch_ns != 0 ? in.base_epoch_ns : epoch_of(base), &rc);
  flush(o);
  if (rc == PROF_OK && o->failed) rc = profI_error(S, PROF_ERRIO, "trace: the write callback failed");
end:
  profI_free(S, o, sizeof *o);
  profX_order_free(S, &ord);
  cJSON_Delete(devices);
  return rc;
}
