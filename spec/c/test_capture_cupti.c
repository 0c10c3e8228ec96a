/* test_capture_cupti.c — the CUPTI source on this machine: a clear refusal without a GPU; with one, real copies and memsets captured and attributed. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "t.h"

#if !defined(__SANITIZE_ADDRESS__)
/* The CUDA driver's entry points the GPU branch uses, through dlopen (no cuda.h types needed). */
typedef struct Driver {
  int (*init)(unsigned);
  int (*device_get)(int *, int);
  int (*retain)(void **, int);
  int (*release)(int);
  int (*set_current)(void *);
  int (*alloc)(unsigned long long *, size_t);
  int (*free_)(unsigned long long);
  int (*htod)(unsigned long long, const void *, size_t);
  int (*memset8)(unsigned long long, unsigned char, size_t);
  int (*sync)(void);
} Driver;

static int load_driver(Driver *d) {
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cu == NULL) return 0;
  *(void **)&d->init = dlsym(cu, "cuInit");
  *(void **)&d->device_get = dlsym(cu, "cuDeviceGet");
  *(void **)&d->retain = dlsym(cu, "cuDevicePrimaryCtxRetain");
  *(void **)&d->release = dlsym(cu, "cuDevicePrimaryCtxRelease_v2");
  *(void **)&d->set_current = dlsym(cu, "cuCtxSetCurrent");
  *(void **)&d->alloc = dlsym(cu, "cuMemAlloc_v2");
  *(void **)&d->free_ = dlsym(cu, "cuMemFree_v2");
  *(void **)&d->htod = dlsym(cu, "cuMemcpyHtoD_v2");
  *(void **)&d->memset8 = dlsym(cu, "cuMemsetD8_v2");
  *(void **)&d->sync = dlsym(cu, "cuCtxSynchronize");
  return d->init && d->device_get && d->retain && d->release && d->set_current && d->alloc &&
         d->free_ && d->htod && d->memset8 && d->sync;
}

static prof_Event event(prof_State *S, int64_t i) {
  prof_Event e = {.size = sizeof e};
  prof_event_at(S, i, &e);
  return e;
}

/* Inside op "upload" in module Net: 1 MiB allocated, copied from the host, set to 0, synchronized. */
static void on_the_gpu(prof_State *S) {
  Driver d;
  T_CHECK(load_driver(&d));
  if (!load_driver(&d)) return;
  prof_ModuleId net;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  int dev = 0;
  void *ctx = NULL;
  T_EQ_INT(d.init(0), 0);
  T_EQ_INT(d.device_get(&dev, 0), 0);
  T_EQ_INT(d.retain(&ctx, dev), 0);
  T_EQ_INT(d.set_current(ctx), 0);
  size_t n = 1 << 20;
  char *host = calloc(1, n);
  unsigned long long p = 0;
  T_EQ_INT(prof_start(S), PROF_OK);
  prof_module_enter(S, net);
  prof_Op op = {.kind = PROF_OP_CUSTOM, .name = "upload"};
  prof_op_begin(S, &op);
  T_EQ_INT(d.alloc(&p, n), 0);
  T_EQ_INT(d.htod(p, host, n), 0);
  T_EQ_INT(d.memset8(p, 0, n), 0);
  T_EQ_INT(d.sync(), 0);
  prof_op_end(S, &op);
  prof_module_exit(S, net);
  T_EQ_INT(prof_stop(S), PROF_OK);
  prof_CaptureStats st = {.size = sizeof st};
  prof_capture_stats(S, &st);
  printf("  cupti: %lld records, %lld copies, %lld memsets, %lld of %lld device ops attributed to "
         "the op, %lld bad times, %lld out of window, %lld dropped\n", (long long)st.records,
         (long long)st.memcpys, (long long)st.memsets, (long long)st.attributed_op,
         (long long)st.device_ops, (long long)st.bad_timestamps, (long long)st.out_of_window,
         (long long)st.dropped_cupti);
  T_EQ_INT(st.memcpys, 1);
  T_EQ_INT(st.memsets, 1);
  T_EQ_INT(st.attributed_op, st.device_ops);
  T_EQ_INT(st.attributed_module, st.device_ops);
  T_EQ_INT(st.bad_timestamps, 0);
  prof_Event op_ev = {0};
  for (int64_t i = 0; i < prof_event_count(S); i++)
    if (event(S, i).kind == PROF_EVENT_OP) op_ev = event(S, i);
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = event(S, i);
    if (e.kind != PROF_EVENT_MEMCPY && e.kind != PROF_EVENT_MEMSET) continue;
    T_EQ_INT(e.bytes, (int64_t)n);
    T_EQ_INT(e.correlation, op.correlation);
    T_EQ_INT(e.module, net);
    if (e.kind == PROF_EVENT_MEMCPY) T_EQ_INT(e.copy_kind, PROF_COPY_HTOD);
    /* the device work ran inside the op (synchronized before its end): the time map's error is
       what lies outside, printed, and held under 50 µs */
    int64_t early = op_ev.t_begin_ns - e.t_begin_ns, late = e.t_end_ns - op_ev.t_end_ns;
    printf("  %s: %lld ns, %lld ns before the op's begin, %lld ns after its end\n", e.name,
           (long long)(e.t_end_ns - e.t_begin_ns), (long long)early, (long long)late);
    T_CHECK(early < 50000 && late < 50000);
  }
  prof_capture_close(S);
  d.free_(p);
  d.release(dev);
  free(host);
}

#endif

static void test_cupti_capture_here(void) {
  char why[256];
  int ok = prof_capture_available(why, sizeof why);
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 256);
  int rc = prof_capture_open(S, PROF_CAPTURE_CUPTI, NULL);
  if (!ok) {
    /* no GPU: the one clear message, the state untouched and still usable */
    printf("  no CUPTI capture here: %s\n", why);
    T_EQ_INT(rc, PROF_ERRDEVICE);
    T_CONTAINS(prof_errmsg(S), "CUPTI capture: ");
    T_CONTAINS(prof_errmsg(S), why);
    T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_NONE);
    T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_NULL, NULL), PROF_OK);
    T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_NULL);
    prof_close(S);
    return;
  }
  T_EQ_INT(rc, PROF_OK);
  T_EQ_INT(prof_capture_kind(S), PROF_CAPTURE_CUPTI);
  /* one CUPTI capture per process */
  prof_State *other = prof_new(NULL, NULL);
  T_EQ_INT(prof_capture_open(other, PROF_CAPTURE_CUPTI, NULL), PROF_ERRSTATE);
  prof_close(other);
#if defined(__SANITIZE_ADDRESS__)
  /* the CUDA driver needs ASAN_OPTIONS=protect_shadow_gap=0: the device work runs in the plain build */
  prof_capture_close(S);
#else
  on_the_gpu(S);
#endif
  prof_close(S);
}

int main(void) {
  T_RUN(test_cupti_capture_here);
  return T_DONE();
}
