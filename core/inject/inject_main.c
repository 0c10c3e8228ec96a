/* inject_main.c — the injection's one process-wide context: made at the first NVTX or CUDA call, written out at exit. */
#define _GNU_SOURCE /* RTLD_NOLOAD: look at the driver only when the program loaded it */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_main.h"

/*
** The injection's context, a static because NVTX and the CUDA driver call the injection with no
** user pointer, so the context must be found from nothing. Made once, by a
** compare-exchange, and never freed: at exit other threads may still be inside NVTX calls.
*/
static _Atomic(injM_Ctx *) the_ctx;

#define DEFAULT_EVENTS 262144

/* argv[0]'s last part, from /proc/self/cmdline ("app" when unreadable). */
static void program_name(char *buf, size_t size) {
  snprintf(buf, size, "app");
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (f == NULL) return;
  char tmp[PROF_PATH_SIZE];
  size_t n = fread(tmp, 1, sizeof tmp - 1, f);
  fclose(f);
  tmp[n] = '\0';
  if (n == 0) return;
  const char *base = strrchr(tmp, '/');
  base = base != NULL ? base + 1 : tmp;
  size_t len = strlen(base) < size - 1 ? strlen(base) : size - 1;
  memcpy(buf, base, len);
  buf[len] = '\0';
}

static int64_t env_int(const char *name, int64_t dflt) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return dflt;
  char *end;
  long long x = strtoll(v, &end, 10);
  return *end == '\0' && x >= 0 ? (int64_t)x : dflt;
}

static void note_error(injM_Ctx *c, const char *what) {
  if (c->error[0] == '\0') snprintf(c->error, sizeof c->error, "%s", what);
}

/* PROFRUN_INJECT_CONFIG: a profrun config (its conventions apply); PROFRUN_INJECT_CONVENTIONS
   ("exact" or "deepspeed", what prof.launch passes from the running profrun's config) wins. */
static void apply_config(injM_Ctx *c) {
  const char *path = getenv("PROFRUN_INJECT_CONFIG");
  const char *conv = getenv("PROFRUN_INJECT_CONVENTIONS");
  c->record_shapes = 1;
  if (path != NULL && *path != '\0') {
    prof_Config *cfg = NULL;
    if (prof_config_load(c->S, path, NULL, 0, &cfg) != PROF_OK) {
      char msg[600];
      snprintf(msg, sizeof msg, "PROFRUN_INJECT_CONFIG: %s", prof_errmsg(c->S));
      note_error(c, msg);
    } else {
      prof_set_conventions(c->S, cfg->flops_profiler.conventions);
      prof_config_free(c->S, cfg);
    }
  }
  if (conv != NULL && *conv != '\0') {
    int k = prof_conventions_parse(conv);
    if (k < 0) {
      char msg[300];
      snprintf(msg, sizeof msg, "PROFRUN_INJECT_CONVENTIONS: '%.200s' is not exact or deepspeed", conv);
      note_error(c, msg);
    } else {
      prof_set_conventions(c->S, (prof_Conventions)k);
    }
  }
}

/*
** CUPTI, before prof_start (a capture delivers from the next start on), when the driver loads
** this library too (CUDA_INJECTION64_PATH; PROFRUN_INJECT_CUDA=0 turns it off). A machine
** without a driver or device says why in inject.<pid>.json's cuda_error; NVTX goes on alone.
*/
static void open_capture(injM_Ctx *c) {
  const char *cuda = getenv("CUDA_INJECTION64_PATH"), *off = getenv("PROFRUN_INJECT_CUDA");
  if (cuda == NULL || *cuda == '\0' || (off != NULL && strcmp(off, "0") == 0)) return;
  if (prof_capture_open(c->S, PROF_CAPTURE_CUPTI, NULL) == PROF_OK) {
    c->cuda_attached = 1;
  } else {
    snprintf(c->cuda_error, sizeof c->cuda_error, "%s", prof_errmsg(c->S));
  }
}

static injM_Ctx *make_ctx(void) {
  injM_Ctx *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->pid = (int64_t)getpid();
  program_name(c->program, sizeof c->program);
  const char *dir = getenv("PROFRUN_INJECT_OUT");
  snprintf(c->outdir, sizeof c->outdir, "%s", dir != NULL && *dir != '\0' ? dir : ".");
  c->S = prof_new(NULL, NULL);
  if (c->S == NULL) goto fail;
  apply_config(c);
  prof_set_event_capacity(c->S, env_int("PROFRUN_INJECT_EVENTS", DEFAULT_EVENTS));
  prof_set_record_shapes(c->S, c->record_shapes);
  if (injT_new(c->S, c->program, &c->tree) != PROF_OK) goto fail;
  if (pthread_key_create(&c->cublas_key, free) != 0) goto fail;
  c->cublas_key_made = 1;
  open_capture(c);
  if (c->cuda_attached) injM_attach_cublas(c);
  if (prof_start(c->S) != PROF_OK) goto fail;
  return c;
fail:
  if (c->cublas_key_made) pthread_key_delete(c->cublas_key);
  injT_free(c->tree);
  if (c->S != NULL) prof_close(c->S);
  free(c);
  return NULL;
}

/* A forked child (a data-loader worker) inherits a copy of the parent's context: only the
   process that made it writes, so a child never overwrites the parent's files. */
static void at_exit(void) {
  injM_Ctx *c = injM_peek();
  if (c != NULL && c->pid == (int64_t)getpid()) injM_finish(c);
}

/* the_ctx while one thread makes it: other callers get NULL (their call is dropped) */
#define BUSY ((injM_Ctx *)(uintptr_t)1)

/* Makes the context after winning the_ctx (it holds BUSY) and publishes it. */
static injM_Ctx *publish(void) {
  injM_Ctx *c = make_ctx();
  atomic_store_explicit(&the_ctx, c, memory_order_release);
  if (c != NULL) atexit(at_exit);
  return c;
}

injM_Ctx *injM_get(void) {
  injM_Ctx *c = atomic_load_explicit(&the_ctx, memory_order_acquire);
  if (c == BUSY) return NULL;
  if (c != NULL) return c;
  injM_Ctx *expected = NULL;
  if (!atomic_compare_exchange_strong(&the_ctx, &expected, BUSY)) return expected == BUSY ? NULL : expected;
  return publish();
}

static void *publish_thread(void *arg) {
  (void)arg;
  publish();
  return NULL;
}

int injM_get_later(void) {
  injM_Ctx *expected = NULL;
  if (!atomic_compare_exchange_strong(&the_ctx, &expected, BUSY)) return 1; /* made or being made */
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &a, publish_thread, NULL);
  pthread_attr_destroy(&a);
  if (rc != 0) {
    atomic_store(&the_ctx, NULL);
    return 0;
  }
  return 1;
}

injM_Ctx *injM_peek(void) {
  injM_Ctx *c = atomic_load_explicit(&the_ctx, memory_order_acquire);
  return c == BUSY ? NULL : c;
}

/* {====================== outputs ======================} */

typedef struct Buf {
  char *data;
  size_t len, cap;
} Buf;

static int buf_write(void *ud, const char *data, size_t len) {
  Buf *b = ud;
  if (b->len + len + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + len + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) return 1;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, len);
  b->len += len;
  return 0;
}

static void write_profile(injM_Ctx *c, const char *path) {
  prof_RunInfo info;
  prof_runinfo_init(&info);
  info.device = c->cuda_attached ? "cuda" : "cpu";
  prof_ModuleInfo root = {.size = sizeof root};
  if (prof_module_info(c->S, 0, &root) == PROF_OK && root.phase[PROF_PHASE_FORWARD].time_ns > 0)
    info.fwd_latency_s = (double)root.phase[PROF_PHASE_FORWARD].time_ns / 1e9;
  /* the backward may run on a thread whose root was entered in the forward: the session's
     totals have all of it */
  prof_Counts bwd;
  prof_totals(c->S, PROF_PHASE_BACKWARD, &bwd);
  if (bwd.flops > 0) info.bwd_flops = bwd.flops;
  Buf b = {0};
  if (prof_write_profile_json(c->S, &info, buf_write, &b) != PROF_OK ||
      prof_write_file_atomic(c->S, path, b.data, b.len) != PROF_OK)
    note_error(c, prof_errmsg(c->S));
  free(b.data);
}

/* text as the inside of a JSON string (quotes, backslashes escaped; control characters as spaces). */
static void escape(const char *text, char *out, size_t size) {
  size_t k = 0;
  for (const char *p = text; *p != '\0' && k + 2 < size; p++) {
    if (*p == '"' || *p == '\\') out[k++] = '\\';
    out[k++] = (*p >= 0 && *p < 0x20) ? ' ' : *p;
  }
  out[k] = '\0';
}

/* inject.<pid>.json: what the mapping and the capture counted and missed, for prof.launch. */
static void write_notes(injM_Ctx *c, const char *path, const prof_CaptureStats *cs) {
  injT_Stats st;
  injT_stats(c->tree, &st);
  char text[4096], err[1100], cerr[600];
  escape(c->error, err, sizeof err);
  escape(c->cuda_error, cerr, sizeof cerr);
  int n = snprintf(text, sizeof text,
                   "{\"schema\": \"profrun.inject/1\", \"pid\": %lld, \"cuda\": %s, \"cublas\": %s, "
                   "\"ranges\": %lld, "
                   "\"ops\": %lld, \"counted_ops\": %lld, \"unmatched_pops\": %lld, "
                   "\"foreign_ends\": %lld, \"not_opened\": %lld, \"op_errors\": %lld, "
                   "\"events\": %lld, \"events_dropped\": %lld, \"kernels\": %lld, "
                   "\"device_ops\": %lld, \"attributed_module\": %lld, \"attributed_op\": %lld, "
                   "\"device_dropped\": %lld, \"cuda_error\": \"%s\", \"error\": \"%s\"}\n",
                   (long long)c->pid, c->cuda_attached ? "true" : "false",
                   c->cublas_attached ? "true" : "false", (long long)st.ranges,
                   (long long)st.ops, (long long)st.counted_ops, (long long)st.unmatched_pops,
                   (long long)st.foreign_ends, (long long)st.too_deep, (long long)st.op_errors,
                   (long long)prof_event_count(c->S), (long long)prof_events_dropped(c->S),
                   (long long)cs->kernels, (long long)cs->device_ops,
                   (long long)cs->attributed_module, (long long)cs->attributed_op,
                   (long long)(cs->dropped_cupti + cs->dropped_pool + cs->dropped_events), cerr, err);
  if (n > 0)
    prof_write_file_atomic(c->S, path, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

/* Work still in flight on the device lands in the window (the core asks for it before
   prof_stop): cuCtxSynchronize of the exiting thread's context, when the driver is loaded. */
static void synchronize_device(void) {
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cu == NULL) return;
  int (*sync)(void) = (int (*)(void))dlsym(cu, "cuCtxSynchronize");
  if (sync != NULL) (void)sync();
  dlclose(cu);
}

void injM_finish(injM_Ctx *c) {
  if (atomic_exchange(&c->finished, 1)) return;
  injT_close_all(c->tree);
  if (c->cuda_attached) synchronize_device();
  prof_stop(c->S);
  prof_CaptureStats cs = {.size = sizeof cs};
  prof_capture_stats(c->S, &cs);
  prof_capture_close(c->S);
  char path[PROF_PATH_SIZE];
  snprintf(path, sizeof path, "%s/trace.%lld.json", c->outdir, (long long)c->pid);
  prof_TraceInfo ti;
  prof_traceinfo_init(&ti);
  ti.process_name = c->program;
  if (prof_write_chrome_trace_file(c->S, &ti, path) != PROF_OK) note_error(c, prof_errmsg(c->S));
  snprintf(path, sizeof path, "%s/profile.%lld.json", c->outdir, (long long)c->pid);
  write_profile(c, path);
  snprintf(path, sizeof path, "%s/inject.%lld.json", c->outdir, (long long)c->pid);
  write_notes(c, path, &cs);
}
