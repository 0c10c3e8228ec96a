/* backend_cuda.c — the cuda device: the cuda/ kernels' allocator, copies and kernels when the build had
   nvcc (PR_HAVE_CUDA), else a placeholder that refuses tensors with a clear message. */
#include <pthread.h>

#include "runtime.h"

#ifdef PR_HAVE_CUDA
#include "cuda.h"

/* the memory functions keep their state in cuda_ctx.cu's process context, not in be */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static void *cuda_alloc(const pr_Backend *be, size_t nbytes) { return pr_cuda_alloc(nbytes); }
static void cuda_free(const pr_Backend *be, void *p, size_t nbytes) { pr_cuda_free(p, nbytes); }
static int cuda_to_host(const pr_Backend *be, pr_Runtime *rt, void *host, const void *dev, size_t n) {
  return pr_cuda_to_host(rt, host, dev, n);
}
static int cuda_from_host(const pr_Backend *be, pr_Runtime *rt, void *dev, const void *host,
                          size_t n) {
  return pr_cuda_from_host(rt, dev, host, n);
}
static int cuda_copy(const pr_Backend *be, pr_Runtime *rt, void *dst, const void *src, size_t n) {
  return pr_cuda_copy(rt, dst, src, n);
}
static int cuda_zero(const pr_Backend *be, pr_Runtime *rt, void *dev, size_t n) {
  return pr_cuda_zero(rt, dev, n);
}

#define ENTRY(name, params, args) .name = pr_cuda_##name,
static const pr_Kernels kernels = {PR_KERNEL_LIST(ENTRY)};
#undef ENTRY

static const pr_Backend ready = {
    .name = "cuda", .prof_device = PROF_DEVICE_CUDA, .holds_values = 1, .alloc = cuda_alloc,
    .free = cuda_free, .to_host = cuda_to_host, .from_host = cuda_from_host, .copy = cuda_copy,
    .zero = cuda_zero, .k = &kernels};

/*
** Without a driver or a device the backend is registered unavailable, carrying the probe's
** reason, so `--device cuda` is refused before the script runs. The reason is known only at run
** time, hence this one static, written once under pthread_once (the probe is per process, as
** the CUDA context it asks about).
*/
typedef struct Missing {
  pthread_once_t once;
  pr_Backend be;
} Missing;

static Missing missing = {PTHREAD_ONCE_INIT,
                          {.name = "cuda", .prof_device = PROF_DEVICE_CUDA, .holds_values = 1}};

static void set_missing(void) { missing.be.unavailable = pr_cuda_probe(); }

const pr_Backend *pr_backend_cuda(void) {
  if (pr_cuda_probe() == NULL) return &ready;
  pthread_once(&missing.once, set_missing);
  return &missing.be;
}

#else

/* No tensor is ever made on an unavailable device, so it needs no allocator and no kernels. */
static const pr_Backend cuda = {
    .name = "cuda", .prof_device = PROF_DEVICE_CUDA, .holds_values = 1,
    .unavailable = "device 'cuda' is not available in this build; use 'meta' or 'cpu'"};

const pr_Backend *pr_backend_cuda(void) { return &cuda; }

#endif
