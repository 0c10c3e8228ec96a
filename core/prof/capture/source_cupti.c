/* source_cupti.c — the CUPTI capture source: libcupti.so.13 dlopen'ed, activity buffers from the pool, external ids pushed. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"

/* The library's name and the driver's, as the loader looks them up. */
#define CUPTI_LIB "libcupti.so.13"
#define CUDA_LIB "libcuda.so.1"

/* Writes why into buf (truncated) and returns 0: prof_capture_available's "no". */
__attribute__((format(printf, 3, 4))) static int no(char *buf, size_t size, const char *fmt, ...) {
  if (buf != NULL && size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
  }
  return 0;
}

/* The driver and a device, through libcuda's C entry points (no cuda.h types needed). */
static int driver_ok(char *why, size_t size) {
  void *cu = dlopen(CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
  if (cu == NULL) return no(why, size, "no CUDA driver (dlopen: %s)", dlerror());
  int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(cu, "cuInit");
  int (*cu_count)(int *) = (int (*)(int *))dlsym(cu, "cuDeviceGetCount");
  int ok = 0;
  if (cu_init == NULL || cu_count == NULL) {
    no(why, size, "no CUDA driver (%s lacks cuInit or cuDeviceGetCount)", CUDA_LIB);
  } else {
    int rc = cu_init(0), n = 0;
    if (rc != 0) no(why, size, "no usable CUDA driver or device (cuInit returned CUresult %d)", rc);
    else if ((rc = cu_count(&n)) != 0) no(why, size, "no CUDA device (cuDeviceGetCount returned CUresult %d)", rc);
    else if (n <= 0) no(why, size, "no CUDA device (cuDeviceGetCount: 0 devices)");
    else ok = 1;
  }
  /* the driver stays loaded when it works (CUDA keeps using it); a failed one is let go */
  if (!ok) dlclose(cu);
  return ok;
}

#if PROF_HAVE_CUPTI
#include <cupti.h>

/* The CUPTI entry points profrun calls, looked up in the dlopen'ed library. */
typedef struct Cupti {
  void *lib;
  CUptiResult (*get_result_string)(CUptiResult, const char **);
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*enable)(CUpti_ActivityKind);
  CUptiResult (*disable)(CUpti_ActivityKind);
  CUptiResult (*flush_all)(uint32_t);
  CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
  CUptiResult (*timestamp)(uint64_t *);
  CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
  CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
  CUptiResult (*finalize)(void);
  CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
  unsigned enabled;            /* PROF_CAPTURE_* switched on */
  const char *names[2][PROFK_API_CBIDS]; /* interned API names by (driver, cbid), suffix cut */
} Cupti;

/*
** CUPTI's buffer callbacks take no user pointer, so the capture they serve is found through this
** one static: the core's only global, there because a driver callback can reach nothing else. One
** CUPTI capture per process: CUPTI's activity API is process-wide anyway.
*/
static _Atomic(profK_Capture *) the_capture;

static void *sym(Cupti *c, const char *name, const char **missing) {
  void *p = dlsym(c->lib, name);
  if (p == NULL && *missing == NULL) *missing = name;
  return p;
}

static int load(prof_State *S, Cupti *c) {
  c->lib = dlopen(CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
  if (c->lib == NULL)
    return profI_error(S, PROF_ERRDEVICE, "CUPTI capture: %s not found (dlopen: %s)", CUPTI_LIB, dlerror());
  const char *missing = NULL;
  *(void **)&c->get_result_string = sym(c, "cuptiGetResultString", &missing);
  *(void **)&c->register_callbacks = sym(c, "cuptiActivityRegisterCallbacks", &missing);
  *(void **)&c->enable = sym(c, "cuptiActivityEnable", &missing);
  *(void **)&c->disable = sym(c, "cuptiActivityDisable", &missing);
  *(void **)&c->flush_all = sym(c, "cuptiActivityFlushAll", &missing);
  *(void **)&c->next_record = sym(c, "cuptiActivityGetNextRecord", &missing);
  *(void **)&c->dropped = sym(c, "cuptiActivityGetNumDroppedRecords", &missing);
  *(void **)&c->timestamp = sym(c, "cuptiGetTimestamp", &missing);
  *(void **)&c->push = sym(c, "cuptiActivityPushExternalCorrelationId", &missing);
  *(void **)&c->pop = sym(c, "cuptiActivityPopExternalCorrelationId", &missing);
  *(void **)&c->finalize = sym(c, "cuptiFinalize", &missing);
  *(void **)&c->callback_name = sym(c, "cuptiGetCallbackName", &missing);
  if (missing != NULL)
    return profI_error(S, PROF_ERRDEVICE, "CUPTI capture: %s lacks %s (not CUPTI 13?)", CUPTI_LIB, missing);
  return PROF_OK;
}

static int fail(profK_Capture *C, const char *call, CUptiResult r) {
  Cupti *c = C->cupti;
  const char *msg = NULL;
  if (c->get_result_string == NULL || c->get_result_string(r, &msg) != CUPTI_SUCCESS) msg = NULL;
  return profI_error(C->S, PROF_ERRDEVICE, "CUPTI capture: %s failed: %s (%d)", call,
                     msg != NULL ? msg : "unknown error", (int)r);
}

/* Called by CUPTI on the thread that filled a buffer: one from the pool, or none (counted). */
static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  profK_Capture *C = atomic_load(&the_capture);
  *max_records = 0;
  int32_t i = C != NULL ? profK_pool_take(&C->pool) : -1;
  *buffer = i >= 0 ? C->pool.buf[i].data : NULL;
  *size = i >= 0 ? C->pool.size : 0;
}

/* Called by CUPTI with a full (or flushed) buffer: queued for the decoder, no decoding here. */
static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid) {
  (void)size;
  profK_Capture *C = atomic_load(&the_capture);
  if (C == NULL || buffer == NULL) return;
  Cupti *c = C->cupti;
  size_t dropped = 0;
  /* outside the pool's lock: CUPTI takes its own inside this call (kineto#1347's deadlock) */
  if (c->dropped(ctx, stream, &dropped) != CUPTI_SUCCESS) dropped = 0;
  profK_pool_complete(&C->pool, buffer, valid, (int64_t)dropped);
}

static int next(uint64_t *cursor, const uint8_t *buf, size_t valid, const void **rec) {
  profK_Capture *C = atomic_load(&the_capture);
  *rec = NULL;
  if (C == NULL) return PROF_OK;
  CUpti_Activity *r = (CUpti_Activity *)(uintptr_t)*cursor;
  CUptiResult res = ((Cupti *)C->cupti)->next_record((uint8_t *)buf, valid, &r);
  if (res == CUPTI_ERROR_MAX_LIMIT_REACHED) return PROF_OK;
  if (res != CUPTI_SUCCESS) return PROF_ERRARG;
  *cursor = (uint64_t)(uintptr_t)r;
  *rec = r;
  return PROF_OK;
}

static void push(void *ud, int kind, uint64_t id) {
  Cupti *c = ((profK_Capture *)ud)->cupti;
  c->push((CUpti_ExternalCorrelationKind)(PROFK_CUPTI_CUSTOM0 + kind), id);
}

static void pop(void *ud, int kind) {
  Cupti *c = ((profK_Capture *)ud)->cupti;
  uint64_t last;
  c->pop((CUpti_ExternalCorrelationKind)(PROFK_CUPTI_CUSTOM0 + kind), &last);
}

static const struct {
  unsigned bit;
  CUpti_ActivityKind kind;
  const char *name;
} kinds[] = {
    {PROF_CAPTURE_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {PROF_CAPTURE_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {PROF_CAPTURE_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {PROF_CAPTURE_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {PROF_CAPTURE_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {PROF_CAPTURE_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {PROF_CAPTURE_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"},
    {PROF_CAPTURE_OVERHEAD, CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
};

static void disable_all(profK_Capture *C) {
  Cupti *c = C->cupti;
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (c->enabled & kinds[i].bit) c->disable(kinds[i].kind);
  c->disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  c->enabled = 0;
}

static int cupti_enable(profK_Capture *C) {
  prof_State *S = C->S;
  profK_Capture *none = NULL;
  if (!atomic_compare_exchange_strong(&the_capture, &none, C))
    return profI_error(S, PROF_ERRSTATE, "CUPTI capture: another profrun session in this process "
                       "holds CUPTI (one CUPTI capture per process)");
  Cupti *c = profI_alloc(S, sizeof *c);
  if (c == NULL) {
    atomic_store(&the_capture, NULL);
    return profI_error(S, PROF_ERRMEM, "CUPTI capture: out of memory");
  }
  memset(c, 0, sizeof *c);
  C->cupti = c;
  int rc = load(S, c);
  if (rc != PROF_OK) goto fail;
  /* CUPTI's default clock stays: a timestamp callback zeroes kernel times on CUDA 13.0 */
  CUptiResult r = c->register_callbacks(on_request, on_complete);
  if (r != CUPTI_SUCCESS) {
    rc = fail(C, "cuptiActivityRegisterCallbacks", r);
    goto fail;
  }
  if ((r = c->enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) != CUPTI_SUCCESS) {
    rc = fail(C, "cuptiActivityEnable(EXTERNAL_CORRELATION)", r);
    goto fail;
  }
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    if (!(C->opt.activities & kinds[i].bit)) continue;
    if ((r = c->enable(kinds[i].kind)) != CUPTI_SUCCESS) {
      char call[64];
      snprintf(call, sizeof call, "cuptiActivityEnable(%s)", kinds[i].name);
      rc = fail(C, call, r);
      goto fail;
    }
    c->enabled |= kinds[i].bit;
  }
  return PROF_OK;
fail:
  if (c->enable != NULL && c->disable != NULL) disable_all(C);
  profI_free(S, c, sizeof *c);
  C->cupti = NULL;
  atomic_store(&the_capture, NULL);
  return rc;
}

static int cupti_flush(profK_Capture *C, int forced) {
  Cupti *c = C->cupti;
  CUptiResult r = c->flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  return r == CUPTI_SUCCESS ? PROF_OK : fail(C, "cuptiActivityFlushAll", r);
}

static int cupti_sample(profK_Capture *C, int64_t *dev) {
  uint64_t t;
  if (((Cupti *)C->cupti)->timestamp(&t) != CUPTI_SUCCESS) return PROF_ERRDEVICE;
  *dev = (int64_t)t;
  return PROF_OK;
}

/* Off, flushed, and CUPTI released (cuptiFinalize), so nothing keeps instrumenting the app. */
static void cupti_disable(profK_Capture *C) {
  Cupti *c = C->cupti;
  disable_all(C);
  c->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  (void)profK_decode_ready(C);
  c->finalize();
  atomic_store(&the_capture, NULL);
  /* the library stays loaded: CUPTI's strings (kernel and API names) may still be referenced */
  profI_free(C->S, c, sizeof *c);
  C->cupti = NULL;
}

/* "cudaLaunchKernel" for "cudaLaunchKernel_v7000", as Kineto shows it; interned once per id. */
static const char *cupti_api_name(profK_Capture *C, int driver, int32_t cbid) {
  Cupti *c = C->cupti;
  if (c == NULL || cbid < 0) return NULL;
  if (cbid < PROFK_API_CBIDS && c->names[driver != 0][cbid] != NULL) return c->names[driver != 0][cbid];
  const char *name = NULL;
  if (c->callback_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
                       (uint32_t)cbid, &name) != CUPTI_SUCCESS || name == NULL)
    return NULL;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", name);
  char *v = strstr(buf, "_v");
  if (v != NULL && v[2] >= '0' && v[2] <= '9') *v = '\0';
  const char *s = prof_intern(C->S, buf);
  if (s != NULL && cbid < PROFK_API_CBIDS) c->names[driver != 0][cbid] = s;
  return s;
}

const profK_Source profK_cupti_source = {.name = "cupti",
                                         .enable = cupti_enable,
                                         .flush = cupti_flush,
                                         .sample = cupti_sample,
                                         .disable = cupti_disable,
                                         .api_name = cupti_api_name,
                                         .next = next,
                                         .push = push,
                                         .pop = pop};

int prof_capture_available(char *why, size_t size) {
  if (!driver_ok(why, size)) return 0;
  void *lib = dlopen(CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return no(why, size, "%s not found (dlopen: %s)", CUPTI_LIB, dlerror());
  int ok = dlsym(lib, "cuptiActivityRegisterCallbacks") != NULL;
  dlclose(lib);
  if (!ok) return no(why, size, "%s lacks cuptiActivityRegisterCallbacks (not CUPTI 13?)", CUPTI_LIB);
  if (why != NULL && size > 0) why[0] = '\0';
  return 1;
}

#else /* built without the CUPTI headers */

static int cupti_enable(profK_Capture *C) {
  return profI_error(C->S, PROF_ERRDEVICE, "CUPTI capture: built without the CUPTI headers");
}

const profK_Source profK_cupti_source = {.name = "cupti", .enable = cupti_enable};

int prof_capture_available(char *why, size_t size) {
  (void)driver_ok;
  return no(why, size, "built without the CUPTI headers");
}

#endif
