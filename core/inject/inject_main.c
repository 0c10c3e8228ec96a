/* inject_main.c — the injection's one process-wide context: made at the first NVTX or CUDA call, written out at exit. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_main.h"

/*
** The one static of libprof_inject.so (HELPER_RULES: NVTX and the CUDA driver call the
** injection with no user pointer, so the context must be found from nothing). Made once, by a
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

/* PROFRUN_INJECT_CONFIG: a profrun config (its conventions and record_shapes apply). */
static void apply_config(injM_Ctx *c) {
  const char *path = getenv("PROFRUN_INJECT_CONFIG");
  c->record_shapes = 1;
  if (path == NULL || *path == '\0') return;
  prof_Config *cfg = NULL;
  if (prof_config_load(c->S, path, NULL, 0, &cfg) != PROF_OK) {
    char msg[600];
    snprintf(msg, sizeof msg, "PROFRUN_INJECT_CONFIG: %s", prof_errmsg(c->S));
    note_error(c, msg);
    return;
  }
  prof_set_conventions(c->S, cfg->flops_profiler.conventions);
  prof_config_free(c->S, cfg);
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
  if (injT_new(c->S, c->program, NULL, &c->tree) != PROF_OK) goto fail;
  if (prof_start(c->S) != PROF_OK) goto fail;
  return c;
fail:
  if (c->S != NULL) prof_close(c->S);
  free(c);
  return NULL;
}

static void at_exit(void) {
  injM_Ctx *c = atomic_load(&the_ctx);
  if (c != NULL) injM_finish(c);
}

injM_Ctx *injM_get(void) {
  injM_Ctx *c = atomic_load_explicit(&the_ctx, memory_order_acquire);
  if (c != NULL) return c;
  injM_Ctx *mine = make_ctx();
  if (mine == NULL) return NULL;
  injM_Ctx *expected = NULL;
  if (!atomic_compare_exchange_strong(&the_ctx, &expected, mine)) {
    injT_free(mine->tree);
    prof_close(mine->S);
    free(mine);
    return expected;
  }
  atexit(at_exit);
  return mine;
}

injM_Ctx *injM_peek(void) { return atomic_load_explicit(&the_ctx, memory_order_acquire); }

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

/* inject.<pid>.json: what the mapping could not do, so prof.launch can say it. */
static void write_notes(injM_Ctx *c, const char *path) {
  injT_Stats st;
  injT_stats(c->tree, &st);
  char text[2048];
  /* the error is a core message or a path: quotes and backslashes are escaped below */
  char err[1024];
  size_t k = 0;
  for (const char *p = c->error; *p != '\0' && k + 2 < sizeof err; p++) {
    if (*p == '"' || *p == '\\') err[k++] = '\\';
    err[k++] = (*p >= 0 && *p < 0x20) ? ' ' : *p;
  }
  err[k] = '\0';
  int n = snprintf(text, sizeof text,
                   "{\"schema\": \"profrun.inject/1\", \"pid\": %lld, \"cuda\": %s, \"ranges\": %lld, "
                   "\"ops\": %lld, \"counted_ops\": %lld, \"unmatched_pops\": %lld, "
                   "\"foreign_ends\": %lld, \"not_opened\": %lld, \"op_errors\": %lld, "
                   "\"events\": %lld, \"events_dropped\": %lld, \"kernels\": %lld, "
                   "\"error\": \"%s\"}\n",
                   (long long)c->pid, c->cuda_attached ? "true" : "false", (long long)st.ranges,
                   (long long)st.ops, (long long)st.counted_ops, (long long)st.unmatched_pops,
                   (long long)st.foreign_ends, (long long)st.too_deep, (long long)st.op_errors,
                   (long long)prof_event_count(c->S), (long long)prof_events_dropped(c->S),
                   (long long)c->kernels, err);
  if (n > 0) prof_write_file_atomic(c->S, path, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

void injM_finish(injM_Ctx *c) {
  if (atomic_exchange(&c->finished, 1)) return;
  if (c->before_finish != NULL) c->before_finish(c);
  injT_close_all(c->tree);
  prof_stop(c->S);
  char path[PROF_PATH_SIZE];
  snprintf(path, sizeof path, "%s/trace.%lld.json", c->outdir, (long long)c->pid);
  prof_TraceInfo ti;
  prof_traceinfo_init(&ti);
  ti.process_name = c->program;
  if (prof_write_chrome_trace_file(c->S, &ti, path) != PROF_OK) note_error(c, prof_errmsg(c->S));
  snprintf(path, sizeof path, "%s/profile.%lld.json", c->outdir, (long long)c->pid);
  write_profile(c, path);
  snprintf(path, sizeof path, "%s/inject.%lld.json", c->outdir, (long long)c->pid);
  write_notes(c, path);
}
