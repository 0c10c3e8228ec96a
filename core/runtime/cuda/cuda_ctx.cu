/* cuda_ctx.cu — the cuda backend's process context: the device probe, the caching allocator,
   copies, error checks and the TF32 switch. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_util.cuh"

/*
** The one static of the backend. The CUDA runtime keeps one primary context per device and
** process, so what depends on it (the probe's answer, device blocks waiting for reuse) is per
** process too; a static guarded by pthread_once and one mutex is its honest shape. Nothing
** here is touched before a cuda tensor or the probe asks.
*/
#define N_CLASSES 160            /* size classes: 4 per octave from 512 bytes up */

typedef struct FreeList {
  void **block;                  /* blocks of this class, the latest freed last */
  pthread_t *owner;              /* the thread that freed each (its stream last used it) */
  int n, cap;
} FreeList;

typedef struct Ctx {
  pthread_once_t once;
  char why[256];                 /* "" when a device is usable */
  char name[256];
  pthread_mutex_t lock;          /* guards the lists */
  FreeList list[N_CLASSES];
  int tf32;
} Ctx;

static Ctx ctx = {PTHREAD_ONCE_INIT, "", "", PTHREAD_MUTEX_INITIALIZER, {}, 0};

static int driver_installed(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib != NULL) dlclose(lib);
  return lib != NULL;
}

static void probe_once(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
    snprintf(ctx.why, sizeof ctx.why, "device 'cuda': no CUDA device found (cudaGetDeviceCount: %s)",
             e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
  } else if (e == cudaErrorInsufficientDriver && !driver_installed()) {
    /* cudart says "insufficient" whether the driver is old or absent: tell the two apart */
    snprintf(ctx.why, sizeof ctx.why, "device 'cuda': no CUDA driver found (cudaGetDeviceCount: %s; "
             "libcuda.so.1 is not installed)", cudaGetErrorString(e));
  } else if (e == cudaErrorInsufficientDriver) {
    snprintf(ctx.why, sizeof ctx.why, "device 'cuda': the CUDA driver is older than this build's "
             "CUDA %d.%d runtime (cudaGetDeviceCount: %s)", CUDART_VERSION / 1000,
             CUDART_VERSION % 1000 / 10, cudaGetErrorString(e));
  } else if (e != cudaSuccess) {
    snprintf(ctx.why, sizeof ctx.why, "device 'cuda': no usable CUDA driver (cudaGetDeviceCount: %s)",
             cudaGetErrorString(e));
  } else {
    cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
      snprintf(ctx.why, sizeof ctx.why, "device 'cuda': cannot read device 0 (%s)",
               cudaGetErrorString(e));
    else
      snprintf(ctx.name, sizeof ctx.name, "%s", p.name);
  }
  cudaGetLastError();            /* a failed probe must not look like a later launch's error */
}

extern "C" const char *pr_cuda_probe(void) {
  pthread_once(&ctx.once, probe_once);
  return ctx.why[0] != '\0' ? ctx.why : NULL;
}

extern "C" const char *pr_cuda_device_name(char *buf, size_t size) {
  snprintf(buf, size, "%s", pr_cuda_probe() == NULL ? ctx.name : "");
  return buf;
}

extern "C" void pr_cuda_set_tf32(int on) { __atomic_store_n(&ctx.tf32, on != 0, __ATOMIC_RELAXED); }
extern "C" int pr_cuda_tf32(void) { return __atomic_load_n(&ctx.tf32, __ATOMIC_RELAXED); }

/* {====================== the caching allocator ======================} */

/* The class of a request and the bytes a block of it holds: 512 bytes, then four steps per
   octave (at most 25% of a block unused). */
extern "C" int pr_cuda_size_class(size_t n, size_t *bytes) {
  if (n <= 512) {
    *bytes = 512;
    return 0;
  }
  int oct = 63 - __builtin_clzll((unsigned long long)(n - 1));   /* 2^oct < n <= 2^(oct+1) */
  size_t quarter = (size_t)1 << (oct - 2);
  size_t steps = (n - ((size_t)1 << oct) + quarter - 1) / quarter;   /* 1..4 */
  *bytes = ((size_t)1 << oct) + steps * quarter;
  int c = 1 + (oct - 9) * 4 + (int)steps - 1;
  return c < N_CLASSES ? c : -1;
}

static void *take_cached(int c) {
  void *p = NULL;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx.lock);
  FreeList *l = &ctx.list[c];
  for (int i = l->n - 1; i >= 0; i--)
    if (pthread_equal(l->owner[i], self)) {
      p = l->block[i];
      l->block[i] = l->block[l->n - 1];
      l->owner[i] = l->owner[l->n - 1];
      l->n--;
      break;
    }
  pthread_mutex_unlock(&ctx.lock);
  return p;
}

/* Device memory is full: every cached block goes back to the driver (after the device is idle,
   since another thread's stream may still read a block it freed). */
static void release_cache(void) {
  cudaDeviceSynchronize();
  pthread_mutex_lock(&ctx.lock);
  for (int c = 0; c < N_CLASSES; c++) {
    for (int i = 0; i < ctx.list[c].n; i++) cudaFree(ctx.list[c].block[i]);
    ctx.list[c].n = 0;
  }
  pthread_mutex_unlock(&ctx.lock);
}

extern "C" void *pr_cuda_alloc(size_t nbytes) {
  size_t bytes = nbytes;
  int c = pr_cuda_size_class(nbytes, &bytes);
  void *p = c >= 0 ? take_cached(c) : NULL;
  if (p == NULL && cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();
    release_cache();
    p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      return NULL;
    }
  }
  /* the backend contract: zero-filled blocks (ordered before any use on this thread's stream) */
  if (cudaMemsetAsync(p, 0, nbytes, PR_STREAM) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(p);
    return NULL;
  }
  return p;
}

/* A free with a full list grows it (rarely: the lists only grow with the cache); if even that
   fails the block goes back to the driver. */
extern "C" void pr_cuda_free(void *p, size_t nbytes) {
  if (p == NULL) return;
  size_t bytes;
  int c = pr_cuda_size_class(nbytes, &bytes);
  int kept = 0;
  if (c >= 0) {
    pthread_mutex_lock(&ctx.lock);
    FreeList *l = &ctx.list[c];
    if (l->n == l->cap) {
      int cap = l->cap ? 2 * l->cap : 16;
      void **b = (void **)realloc(l->block, sizeof *b * (size_t)cap);
      if (b != NULL) l->block = b;
      pthread_t *o = b ? (pthread_t *)realloc(l->owner, sizeof *o * (size_t)cap) : NULL;
      if (o != NULL) l->owner = o, l->cap = cap;
    }
    if (l->n < l->cap) {
      l->block[l->n] = p;
      l->owner[l->n++] = pthread_self();
      kept = 1;
    }
    pthread_mutex_unlock(&ctx.lock);
  }
  if (!kept) {
    cudaStreamSynchronize(PR_STREAM);
    cudaFree(p);
  }
}

/* {====================== copies ======================} */

/* e as rt's message under what; the error is read off CUDA's last-error slot, so the next launch
   check does not report it a second time. */
static int fail(pr_Runtime *rt, const char *what, cudaError_t e) {
  if (e == cudaSuccess) return 0;
  cudaGetLastError();
  return pr_error(rt, "%s on cuda: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" int pr_cuda_to_host(pr_Runtime *rt, void *host, const void *dev, size_t n) {
  if (n == 0) return 0;
  cudaError_t e = cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, PR_STREAM);
  if (e == cudaSuccess) e = cudaStreamSynchronize(PR_STREAM);
  return fail(rt, "a copy to the host", e);
}

extern "C" int pr_cuda_from_host(pr_Runtime *rt, void *dev, const void *host, size_t n) {
  if (n == 0) return 0;
  /* the caller may free or reuse host as soon as this returns */
  cudaError_t e = cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, PR_STREAM);
  if (e == cudaSuccess) e = cudaStreamSynchronize(PR_STREAM);
  return fail(rt, "a copy from the host", e);
}

extern "C" int pr_cuda_copy(pr_Runtime *rt, void *dst, const void *src, size_t n) {
  if (n == 0) return 0;
  return fail(rt, "a device copy", cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, PR_STREAM));
}

extern "C" int pr_cuda_zero(pr_Runtime *rt, void *dev, size_t n) {
  if (n == 0) return 0;
  return fail(rt, "a memset", cudaMemsetAsync(dev, 0, n, PR_STREAM));
}

/* {====================== errors ======================} */

extern "C" int pr_cuda_check(pr_Runtime *rt, const char *op) {
  return fail(rt, op, cudaGetLastError());
}

extern "C" int pr_cuda_sync(pr_Runtime *rt) {
  cudaError_t e = cudaStreamSynchronize(PR_STREAM);
  if (e != cudaSuccess) return pr_error(rt, "cuda: the stream failed: %s", cudaGetErrorString(e));
  return pr_cuda_check(rt, "synchronize");
}

extern "C" int pr_cuda_refuse(pr_Runtime *rt, const char *op, const char *why) {
  return pr_error(rt, "%s: not implemented on device 'cuda' (%s); run it on 'cpu'", op, why);
}
