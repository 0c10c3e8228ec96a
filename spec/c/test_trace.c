/* test_trace.c — the Chrome / Perfetto trace: Kineto's format, nesting, escaping, gzip, failures. */
#define _POSIX_C_SOURCE 200809L
#include <cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "prof.h"
#include "t.h"

typedef struct Buf {
  char *data;
  size_t len, cap;
  long fail_after;             /* -1: never */
  int calls;
} Buf;

static int buf_write(void *ud, const char *s, size_t n) {
  Buf *b = ud;
  b->calls++;
  if (b->fail_after >= 0 && b->len + n > (size_t)b->fail_after) return -1;
  if (b->len + n + 1 > b->cap) {
    b->cap = 2 * (b->len + n + 1);
    b->data = realloc(b->data, b->cap);
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

/* Names with everything a JSON writer can get wrong; valid UTF-8 must come back byte for byte. */
#define NASTY "q\"b\\s/n\nt\tc\x01\x1f\x7f e\xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9"
/* Invalid bytes, each maximal ill-formed subpart one U+FFFD (Unicode 15, §3.9 table 3-8):
   FF; C3 before '('; ED A0 80 (a surrogate: three); E2 82 cut short by the end. */
#define INVALID "a\xff" "b\xc3(c\xed\xa0\x80" "d\xe2\x82"
#define FFFD "\xef\xbf\xbd"
#define INVALID_FIXED "a" FFFD "b" FFFD "(c" FFFD FFFD FFFD "d" FFFD

typedef struct Workload {
  prof_State *S;
  prof_ModuleId net, conv;
  int64_t t0;
  uint64_t conv_corr;
} Workload;

static void *worker(void *ud) {
  Workload *w = ud;
  prof_range_push(w->S, "worker");
  for (int i = 0; i < 3; i++) {
    prof_Op op = {.kind = PROF_OP_CUSTOM, .flops = 7, .name = "aten::add"};
    prof_op_begin(w->S, &op);
    prof_op_end(w->S, &op);
  }
  prof_range_push(w->S, INVALID);
  prof_range_pop(w->S);
  prof_range_pop(w->S);
  return NULL;
}

/*
** Main thread: Net { range "step" { features.0 (Conv2d) { conv op (allocates 4 KiB, frees 1 KiB) },
** counter, instant, range NASTY } }; a worker thread: range "worker" { 3 ops, range INVALID }.
*/
static void workload(Workload *w, prof_Alloc f, void *ud) {
  prof_State *S = w->S = prof_new(f, ud);
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &w->net);
  prof_module_add(S, w->net, "features.0", "Conv2d", 0, &w->conv);
  prof_set_event_capacity(S, 256);
  prof_set_memory_events(S, 1);
  w->t0 = prof_now_ns();
  prof_start(S);
  prof_module_enter(S, w->net);
  prof_range_push(S, "step");
  prof_module_enter(S, w->conv);
  prof_Op op = {.kind = PROF_OP_CUSTOM, .macs = 500, .flops = 1000, .bytes_read = 40,
                .bytes_written = 24, .name = "aten::conv2d"};
  static char out[4096], tmp[1024];
  prof_op_begin(S, &op);
  prof_mem_alloc(S, PROF_DEVICE_CPU, out, 4096);
  prof_mem_alloc(S, PROF_DEVICE_CPU, tmp, 1024);
  prof_mem_free(S, PROF_DEVICE_CPU, tmp, 1024);
  prof_op_end(S, &op);
  w->conv_corr = op.correlation;
  prof_module_exit(S, w->conv);
  prof_counter(S, "tokens", 128);
  prof_instant(S, "mark");
  prof_range_push(S, NASTY);
  prof_range_pop(S);
  prof_range_pop(S);
  prof_module_exit(S, w->net);
  pthread_t th;
  pthread_create(&th, NULL, worker, w);
  pthread_join(th, NULL);
  prof_stop(S);
}

static prof_TraceInfo fixed_info(void) {
  prof_TraceInfo in;
  prof_traceinfo_init(&in);
  in.rank = 2;
  in.world_size = 4;
  in.base_epoch_ns = 1700000000123456789LL;
  in.pid = 4242;
  in.process_name = "trainer \"A\"";
  in.trace_name = "run\\1";
  in.device_properties = "[{\"id\":0,\"name\":\"H200 \\\"SXM\\\"\",\"totalGlobalMem\":150000000000}]";
  return in;
}

static cJSON *parse(const Buf *b) {
  return cJSON_ParseWithLengthOpts(b->data, b->len + 1, NULL, 1);   /* + its NUL */
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}
static double num(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static int64_t ns(double us) { return llround(us * 1000.0); }

/* The first event with this name (and ph, when given). */
static const cJSON *find(const cJSON *doc, const char *name, const char *ph) {
  const cJSON *e;
  cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
    const char *n = str(e, "name"), *p = str(e, "ph");
    if (n && strcmp(n, name) == 0 && (ph == NULL || (p && strcmp(p, ph) == 0))) return e;
  }
  return NULL;
}

static void test_document_has_kineto_keys(void) {
  Workload w;
  workload(&w, NULL, NULL);
  prof_TraceInfo in = fixed_info();
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(w.S, &in, buf_write, &b), PROF_OK);
  cJSON *doc = parse(&b);
  T_CHECK(doc != NULL);
  T_EQ_INT(num(doc, "schemaVersion"), 1);
  T_EQ_INT(num(get(doc, "distributedInfo"), "rank"), 2);
  T_EQ_INT(num(get(doc, "distributedInfo"), "world_size"), 4);
  T_EQ_STR(str(doc, "displayTimeUnit"), "ms");
  T_EQ_STR(str(doc, "traceName"), "run\\1");
  T_EQ_INT(num(doc, "droppedEvents"), 0);
  T_EQ_INT(num(doc, "clippedSpans"), 0);
  /* the exact integer, not a rounded double: read it from the text */
  T_CONTAINS(b.data, "\"baseTimeNanoseconds\":1700000000123456789");
  const cJSON *dev = cJSON_GetArrayItem(get(doc, "deviceProperties"), 0);
  T_EQ_STR(str(dev, "name"), "H200 \"SXM\"");
  T_EQ_INT(num(dev, "totalGlobalMem"), 150000000000LL);
  const cJSON *pn = find(doc, "process_name", "M");
  T_EQ_STR(str(get(pn, "args"), "name"), "trainer \"A\"");
  T_EQ_INT(num(pn, "pid"), 4242);
  /* one thread_name row per recording thread: tid = index + PROF_TRACE_TID_BASE */
  int rows = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
    const char *n = str(e, "name");
    if (n && strcmp(n, "thread_name") == 0) {
      char want[64];
      int tid = (int)num(e, "tid");
      snprintf(want, sizeof want, "thread %d (recorder %d)", tid, tid - PROF_TRACE_TID_BASE);
      T_EQ_STR(str(get(e, "args"), "name"), want);
      rows++;
    }
    T_EQ_INT(num(e, "pid"), 4242);
  }
  T_EQ_INT(rows, 2);
  int n = cJSON_GetArraySize(get(doc, "traceEvents"));
  const cJSON *last = cJSON_GetArrayItem(get(doc, "traceEvents"), n - 1);
  T_EQ_STR(str(last, "name"), "Record Window End");
  T_EQ_STR(str(last, "ph"), "i");
  T_EQ_STR(str(last, "s"), "g");
  cJSON_Delete(doc);
  free(b.data);
  prof_close(w.S);
}

static void test_categories_args_and_ns_times(void) {
  Workload w;
  workload(&w, NULL, NULL);
  prof_TraceInfo in = fixed_info();
  in.base_ns = w.t0;
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(w.S, &in, buf_write, &b), PROF_OK);
  cJSON *doc = parse(&b);
  T_CHECK(doc != NULL);
  /* the op's times to the ns, from the buffered event */
  prof_Event ev = {.size = sizeof ev};
  for (int64_t i = 0; i < prof_event_count(w.S); i++) {
    prof_event_at(w.S, i, &ev);
    if (ev.kind == PROF_EVENT_OP && strcmp(ev.name, "aten::conv2d") == 0) break;
  }
  const cJSON *op = find(doc, "aten::conv2d", "X");
  T_EQ_STR(str(op, "cat"), "cpu_op");
  T_EQ_INT(ns(num(op, "ts")), ev.t_begin_ns - w.t0);
  T_EQ_INT(ns(num(op, "dur")), ev.t_end_ns - ev.t_begin_ns);
  T_EQ_INT(num(get(op, "args"), "External id"), (double)w.conv_corr);
  T_EQ_INT(num(get(op, "args"), "FLOPs"), 1000);
  T_EQ_INT(num(get(op, "args"), "Bytes"), 64);
  const cJSON *m = find(doc, "features.0 (Conv2d)", "X");
  T_EQ_STR(str(m, "cat"), "module");
  const cJSON *ma = get(m, "args");
  T_EQ_STR(str(ma, "Module Path"), "features.0");
  T_EQ_STR(str(ma, "Module Type"), "Conv2d");
  T_EQ_STR(str(ma, "Phase"), "forward");
  T_EQ_INT(num(ma, "MACs"), 500);
  T_EQ_INT(num(ma, "FLOPs"), 1000);
  T_EQ_INT(num(ma, "Bytes"), 64);
  /* achieved FLOP/s = FLOPs / the module's duration in seconds */
  T_NEAR(num(ma, "FLOP/s"), 1000.0 / (ns(num(m, "dur")) * 1e-9), 1e-6 * num(ma, "FLOP/s"));
  T_EQ_STR(str(find(doc, "Net", "X"), "cat"), "module");
  T_EQ_STR(str(find(doc, "step", "X"), "cat"), "user_annotation");
  T_EQ_STR(str(find(doc, "worker", "X"), "cat"), "user_annotation");
  T_EQ_STR(str(find(doc, "mark", "i"), "cat"), "cpu_instant_event");
  const cJSON *c = find(doc, "tokens", "C");
  T_EQ_INT(num(get(c, "args"), "value"), 128);
  /* memory: +4096, +1024, -1024 in that order with the live total, attributed to the op */
  const int64_t bytes[3] = {4096, 1024, -1024}, total[3] = {4096, 5120, 4096};
  int k = 0;
  double addr[3] = {0, 0, 0};
  const cJSON *e;
  cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
    const char *n = str(e, "name");
    if (!n || strcmp(n, "[memory]") != 0) continue;
    const cJSON *a = get(e, "args");
    T_EQ_STR(str(e, "ph"), "i");
    T_EQ_STR(str(e, "cat"), "cpu_instant_event");
    if (k < 3) {
      T_EQ_INT(num(a, "Bytes"), bytes[k]);
      T_EQ_INT(num(a, "Total Allocated"), total[k]);
      addr[k] = num(a, "Addr");
    }
    T_EQ_INT(num(a, "Device Type"), 0);
    T_EQ_INT(num(a, "Device Id"), -1);
    T_EQ_INT(num(a, "External id"), (double)w.conv_corr);
    k++;
  }
  T_EQ_INT(k, 3);
  /* torch's Addr: the free names the block the second allocation made, not the first's */
  T_CHECK(addr[0] != 0 && addr[1] == addr[2] && addr[0] != addr[1]);
  /* every ts and dur in the text: µs with exactly three decimals */
  int times = 0;
  for (const char *p = b.data; (p = strstr(p, "\"")) != NULL; p++) {
    if (strncmp(p, "\"ts\":", 5) != 0 && strncmp(p, "\"dur\":", 6) != 0) continue;
    const char *q = strchr(p, ':') + 1;
    if (*q == '-') q++;
    while (*q >= '0' && *q <= '9') q++;
    T_CHECK(q[0] == '.' && q[1] >= '0' && q[1] <= '9' && q[2] >= '0' && q[2] <= '9' &&
            q[3] >= '0' && q[3] <= '9' && (q[4] == ',' || q[4] == '}'));
    times++;
  }
  T_CHECK(times > 20);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(w.S);
}

typedef struct Span {
  int64_t b, e;
} Span;

static int span_cmp(const void *x, const void *y) {
  const Span *a = x, *c = y;
  if (a->b != c->b) return a->b < c->b ? -1 : 1;
  return a->e > c->e ? -1 : a->e < c->e;
}

/* Every X span of every tid nests in the ones it overlaps: no partial overlap anywhere. */
static int spans_nest(const cJSON *doc, int *n_spans) {
  Span sp[512];
  int tids[8], nt = 0, ok = 1;
  *n_spans = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
    int tid = (int)num(e, "tid"), seen = 0;
    for (int i = 0; i < nt; i++) seen |= tids[i] == tid;
    if (!seen && nt < 8) tids[nt++] = tid;
  }
  for (int t = 0; t < nt; t++) {
    int n = 0;
    cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
      const char *ph = str(e, "ph");
      if (!ph || strcmp(ph, "X") != 0 || (int)num(e, "tid") != tids[t] || n == 512) continue;
      sp[n].b = ns(num(e, "ts"));
      sp[n].e = sp[n].b + ns(num(e, "dur"));
      n++;
    }
    qsort(sp, (size_t)n, sizeof *sp, span_cmp);
    int64_t stack[512];
    int d = 0;
    for (int i = 0; i < n; i++) {
      while (d > 0 && stack[d - 1] <= sp[i].b) d--;
      if (d > 0 && sp[i].e > stack[d - 1]) ok = 0;
      stack[d++] = sp[i].e;
    }
    *n_spans += n;
  }
  return ok;
}

static void test_spans_nest_per_thread(void) {
  Workload w;
  workload(&w, NULL, NULL);
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(w.S, NULL, buf_write, &b), PROF_OK);
  cJSON *doc = parse(&b);
  int n;
  T_CHECK(spans_nest(doc, &n));
  T_EQ_INT(n, 10);   /* main: Net, step, Conv2d, conv op, NASTY; worker: worker, 3 ops, INVALID */
  /* each thread's spans are listed outermost first: Net before step before features.0 */
  const char *net = strstr(b.data, "\"name\":\"Net\""), *step = strstr(b.data, "\"name\":\"step\"");
  const char *conv = strstr(b.data, "\"name\":\"features.0 (Conv2d)\"");
  T_CHECK(net && step && conv && net < step && step < conv);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(w.S);
}

/* A range popped after the module it was pushed in exited overlaps it: clipped to nest. */
static void test_crossing_span_is_clipped(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_set_event_capacity(S, 16);
  prof_start(S);
  prof_module_enter(S, net);
  prof_range_push(S, "crossing");
  prof_Op op = {.kind = PROF_OP_CUSTOM, .name = "inside"};
  prof_op_record(S, &op);
  prof_module_exit(S, net);
  prof_Op later = {.kind = PROF_OP_CUSTOM, .name = "after"};
  prof_op_begin(S, &later);
  prof_op_end(S, &later);
  prof_range_pop(S);
  prof_stop(S);
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(S, NULL, buf_write, &b), PROF_OK);
  cJSON *doc = parse(&b);
  int n;
  T_CHECK(spans_nest(doc, &n));
  T_EQ_INT(n, 4);   /* Net, crossing, inside (recorded: no duration), after */
  T_EQ_INT(num(doc, "clippedSpans"), 1);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(S);
}

static void test_strings_escaped_and_utf8_repaired(void) {
  Workload w;
  workload(&w, NULL, NULL);
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(w.S, NULL, buf_write, &b), PROF_OK);
  /* nothing raw: no control byte but the newlines between events, no invalid UTF-8 byte */
  int raw = 0;
  for (size_t i = 0; i < b.len; i++) {
    unsigned char c = (unsigned char)b.data[i];
    if ((c < 0x20 && c != '\n') || c == 0x7f || c == 0xff || c == 0xc0 || c == 0xc1) raw++;
  }
  T_EQ_INT(raw, 0);
  T_CONTAINS(b.data, "\\u0001\\u001f\\u007f");
  cJSON *doc = parse(&b);
  T_CHECK(doc != NULL);
  T_CHECK(find(doc, NASTY, "X") != NULL);
  T_CHECK(find(doc, INVALID_FIXED, "X") != NULL);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(w.S);
}

/*
** Module spans name their module from a per-write cache of 256 slots by id: 700 modules (ids
** that share slots), a path over the slot's size (a 300-byte part), a part and a type that need
** escaping, called round-robin 20 times each (14,000 spans, so the 64 KB output buffer is
** handed on in the middle of some names). Every span must give its own module's path, type and
** "path (Type)" name, as prof_module_path and the registration say.
*/
static void test_module_spans_name_their_own_module(void) {
  enum { MODS = 700, CALLS = 20 };
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, ids[MODS];
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  char long_part[301];
  memset(long_part, 'x', 300);
  long_part[300] = '\0';
  for (int i = 0; i < MODS; i++) {
    char name[400];
    if (i == 5) snprintf(name, sizeof name, "%s", long_part);
    else if (i == 6) snprintf(name, sizeof name, "q\"uote\\d.%d", i);
    else snprintf(name, sizeof name, "layers.%d", i);
    prof_module_add(S, root, name, i == 6 ? "Odd\ttype" : i % 2 ? "Linear" : "ReLU", 0, &ids[i]);
  }
  prof_set_event_capacity(S, MODS * CALLS + 16);
  prof_start(S);
  for (int c = 0; c < CALLS; c++)
    for (int i = 0; i < MODS; i++) {
      prof_module_enter(S, ids[i]);
      prof_module_exit(S, ids[i]);
    }
  prof_stop(S);
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(S, NULL, buf_write, &b), PROF_OK);
  T_CHECK(b.calls > 2);   /* the buffer went out in several pieces */
  cJSON *doc = parse(&b);
  T_CHECK(doc != NULL);
  int spans = 0, wrong = 0, k = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
    const char *cat = str(e, "cat");
    if (cat == NULL || strcmp(cat, "module") != 0) continue;
    /* one thread, spans in the order they began: round-robin over the modules */
    prof_ModuleId id = ids[k++ % MODS];
    char path[512], name[600];
    prof_ModuleInfo mi = {.size = sizeof mi};
    prof_module_path(S, id, path, sizeof path);
    prof_module_info(S, id, &mi);
    snprintf(name, sizeof name, "%s (%s)", path, mi.type);
    const cJSON *args = get(e, "args");
    spans++;
    if (strcmp(str(e, "name"), name) != 0 || strcmp(str(args, "Module Path"), path) != 0 ||
        strcmp(str(args, "Module Type"), mi.type) != 0 || strcmp(str(args, "Phase"), "forward") != 0)
      wrong++;
  }
  T_EQ_INT(spans, MODS * CALLS);
  T_EQ_INT(wrong, 0);
  T_CHECK(find(doc, "q\"uote\\d.6 (Odd\ttype)", "X") != NULL);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(S);
}

static void test_dropped_events_counted(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 2);
  prof_start(S);
  for (int i = 0; i < 5; i++) prof_instant(S, "tick");
  prof_stop(S);
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(S, NULL, buf_write, &b), PROF_OK);
  cJSON *doc = parse(&b);
  T_EQ_INT(num(doc, "droppedEvents"), 3);
  cJSON_Delete(doc);
  free(b.data);
  prof_close(S);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0, r;
  char *d = malloc(cap);
  while ((r = fread(d + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) d = realloc(d, cap *= 2);
  }
  fclose(f);
  d[n < cap ? n : cap - 1] = '\0';
  *len = n;
  return d;
}

static char *gunzip(const char *path, size_t *len) {
  gzFile g = gzopen(path, "rb");
  if (g == NULL) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *d = malloc(cap);
  int r;
  while ((r = gzread(g, d + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)r;
    if (n == cap) d = realloc(d, cap *= 2);
  }
  gzclose(g);
  d[n < cap ? n : cap - 1] = '\0';
  *len = n;
  return d;
}

static void tmpdir(char *dir, size_t size) {
  snprintf(dir, size, "/tmp/test_trace.XXXXXX");
  T_CHECK(mkdtemp(dir) != NULL);
}

static int entries(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p != NULL && fscanf(p, "%d", &n) != 1) n = -1;
  if (p != NULL) pclose(p);
  return n;
}

static void rm_rf(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  T_EQ_INT(system(cmd), 0);
}

static void test_files_plain_and_gzip_hold_the_same_document(void) {
  Workload w;
  workload(&w, NULL, NULL);
  char dir[256], plain[320], gz[320];
  tmpdir(dir, sizeof dir);
  snprintf(plain, sizeof plain, "%s/sub/t.pt.trace.json", dir);
  snprintf(gz, sizeof gz, "%s/sub/t.pt.trace.json.gz", dir);
  prof_TraceInfo in = fixed_info();
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, plain), PROF_OK);
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, gz), PROF_OK);
  size_t n1 = 0, n2 = 0, nz = 0;
  char *a = slurp(plain, &n1), *b = gunzip(gz, &n2), *z = slurp(gz, &nz);
  T_CHECK(a != NULL && b != NULL && z != NULL);
  T_CHECK(n1 > 1000 && n1 == n2 && memcmp(a, b, n1) == 0);
  T_CHECK(nz > 18 && (unsigned char)z[0] == 0x1f && (unsigned char)z[1] == 0x8b && nz < n1);
  cJSON *doc = cJSON_ParseWithLengthOpts(b, n2 + 1, NULL, 1);
  T_CHECK(doc != NULL);
  cJSON_Delete(doc);
  /* traceName defaults to the path */
  in.trace_name = NULL;
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, plain), PROF_OK);
  free(a);
  a = slurp(plain, &n1);
  doc = cJSON_ParseWithLengthOpts(a, n1 + 1, NULL, 1);
  T_EQ_STR(str(doc, "traceName"), plain);
  cJSON_Delete(doc);
  T_EQ_INT(entries(dir), 1);   /* sub/ only */
  free(a);
  free(b);
  free(z);
  rm_rf(dir);
  prof_close(w.S);
}

/* A trace of many pieces: from the second 64 KB piece on, a thread compresses while the writer
   goes on. The stream must still be the plain document byte for byte, and a write failing on that
   thread (a full device) must come back as the export's error, naming why. */
static prof_State *many_events(int calls) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, fc;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_module_add(S, net, "fc", "Linear", 0, &fc);
  prof_set_event_capacity(S, 2 * calls + 8);
  prof_start(S);
  prof_module_enter(S, net);
  for (int i = 0; i < calls; i++) {
    prof_module_enter(S, fc);
    prof_Op op = {.kind = PROF_OP_CUSTOM, .flops = i, .name = "aten::addmm"};
    prof_op_begin(S, &op);
    prof_op_end(S, &op);
    prof_module_exit(S, fc);
  }
  prof_module_exit(S, net);
  prof_stop(S);
  return S;
}

static void test_gzip_of_many_pieces_is_the_plain_document(void) {
  prof_State *S = many_events(40000);
  char dir[256], plain[320], gz[320], full[320];
  tmpdir(dir, sizeof dir);
  snprintf(plain, sizeof plain, "%s/t.json", dir);
  snprintf(gz, sizeof gz, "%s/t.json.gz", dir);
  prof_TraceInfo in = fixed_info();
  T_EQ_INT(prof_write_chrome_trace_file(S, &in, plain), PROF_OK);
  T_EQ_INT(prof_write_chrome_trace_file(S, &in, gz), PROF_OK);
  size_t n1 = 0, n2 = 0;
  char *a = slurp(plain, &n1), *b = gunzip(gz, &n2);
  T_CHECK(a != NULL && b != NULL);
  T_CHECK(n1 > 20 * 64 * 1024);   /* many pieces: the thread ran */
  T_CHECK(n1 == n2 && memcmp(a, b, n1) == 0);
  free(a);
  free(b);
  snprintf(full, sizeof full, "%s/full.json.gz", dir);
  T_EQ_INT(symlink("/dev/full", full), 0);
  T_EQ_INT(prof_write_chrome_trace_file(S, &in, full), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), "No space left on device");
  T_EQ_INT(entries(dir), 3);   /* the two traces and the link, no temporary */
  rm_rf(dir);
  prof_close(S);
}

static void test_failed_writes_leave_nothing(void) {
  Workload w;
  workload(&w, NULL, NULL);
  /* a callback that fails part-way: PROF_ERRIO with a message */
  Buf b = {.fail_after = 200};
  T_EQ_INT(prof_write_chrome_trace(w.S, NULL, buf_write, &b), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(w.S), "write");
  free(b.data);
  /* device properties that are not JSON: refused before a byte is written */
  prof_TraceInfo in = fixed_info();
  in.device_properties = "[{\"id\":0,";
  Buf c = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(w.S, &in, buf_write, &c), PROF_ERRARG);
  T_EQ_INT(c.calls, 0);
  T_CONTAINS(prof_errmsg(w.S), "device_properties");
  free(c.data);
  char dir[256], path[320], gz[320], blocked[320];
  tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/t.json", dir);
  snprintf(gz, sizeof gz, "%s/t.json.gz", dir);
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, path), PROF_ERRARG);
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, gz), PROF_ERRARG);
  T_EQ_INT(entries(dir), 0);   /* neither the file nor its temporary */
  /* a parent that is a file: no directory, no file */
  in = fixed_info();
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, path), PROF_OK);
  snprintf(blocked, sizeof blocked, "%s/t.json/x/trace.json", dir);
  T_EQ_INT(prof_write_chrome_trace_file(w.S, &in, blocked), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(w.S), "t.json/x");
  T_EQ_INT(entries(dir), 1);
  rm_rf(dir);
  prof_close(w.S);
}

/* An allocator that fails on demand: the trace's index and buffers are the session's memory. */
typedef struct Alloc {
  int fail;
  long live;
} Alloc;

static void *fail_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Alloc *a = ud;
  if (nsize == 0) {
    if (ptr != NULL) a->live -= (long)osize;
    free(ptr);
    return NULL;
  }
  if (a->fail) return NULL;
  void *p = realloc(ptr, nsize);
  if (p != NULL) a->live += (long)nsize - (ptr ? (long)osize : 0);
  return p;
}

static void test_out_of_memory_is_reported(void) {
  Alloc a = {0, 0};
  Workload w;
  workload(&w, fail_alloc, &a);
  long before = a.live;
  a.fail = 1;
  Buf b = {.fail_after = -1};
  T_EQ_INT(prof_write_chrome_trace(w.S, NULL, buf_write, &b), PROF_ERRMEM);
  T_CONTAINS(prof_errmsg(w.S), "out of memory");
  a.fail = 0;
  T_EQ_INT(a.live, before);
  T_EQ_INT(prof_write_chrome_trace(w.S, NULL, buf_write, &b), PROF_OK);
  T_EQ_INT(a.live, before);   /* the index and the output buffer are given back */
  free(b.data);
  prof_close(w.S);
}

int main(void) {
  T_RUN(test_document_has_kineto_keys);
  T_RUN(test_categories_args_and_ns_times);
  T_RUN(test_spans_nest_per_thread);
  T_RUN(test_crossing_span_is_clipped);
  T_RUN(test_strings_escaped_and_utf8_repaired);
  T_RUN(test_module_spans_name_their_own_module);
  T_RUN(test_dropped_events_counted);
  T_RUN(test_files_plain_and_gzip_hold_the_same_document);
  T_RUN(test_gzip_of_many_pieces_is_the_plain_document);
  T_RUN(test_failed_writes_leave_nothing);
  T_RUN(test_out_of_memory_is_reported);
  return T_DONE();
}
