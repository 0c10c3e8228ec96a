/* peaks.c — what this machine can do: achievable float32 GEMM FLOP/s (OpenBLAS) and copy bandwidth;
   on a GPU, cuBLAS GEMM FLOP/s per dtype and device copy bandwidth (cuda/cuda_gemm.cu). */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "peaks.h"
#ifdef PR_HAVE_CUDA
#include "cuda/cuda.h"
#endif

/* Through a volatile pointer the compiler cannot prove the copies dead and drop them. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

int pr_peak_gemm_flops(pr_Runtime *rt, int n, int runs, double *flops_per_s) {
  int rc = PR_ERR;
  float *a = NULL, *b = NULL, *c = NULL;
  if (n < 1 || n > 16384 || runs < 1) {
    pr_error(rt, "peak_gemm_flops: n must be in 1..16384 and runs >= 1 (got n=%d, runs=%d)", n, runs);
    goto end;
  }
  size_t count = (size_t)n * (size_t)n;
  a = malloc(count * sizeof *a);
  b = malloc(count * sizeof *b);
  c = malloc(count * sizeof *c);
  if (a == NULL || b == NULL || c == NULL) {
    pr_error(rt, "peak_gemm_flops: out of memory for three %dx%d float32 matrices", n, n);
    goto end;
  }
  /* Values of moderate size: zeros or denormals could take a different (faster or slower) path. */
  for (size_t i = 0; i < count; i++) {
    a[i] = 1.0f + (float)(i % 7) * 0.125f;
    b[i] = 1.0f - (float)(i % 5) * 0.0625f;
  }
  memset(c, 0, count * sizeof *c);
  double flops = 2.0 * (double)n * (double)n * (double)n;
  double best = 0.0;
  /* Run 0 is the warm-up: it starts OpenBLAS's threads and faults the pages in. */
  for (int r = 0; r <= runs; r++) {
    int64_t t0 = prof_now_ns();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    int64_t dt = prof_now_ns() - t0;
    if (r > 0 && dt > 0 && flops / ((double)dt * 1e-9) > best) best = flops / ((double)dt * 1e-9);
  }
  *flops_per_s = best;
  rc = 0;
end:
  free(a);
  free(b);
  free(c);
  return rc;
}

int pr_peak_copy_bandwidth(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s) {
  int rc = PR_ERR;
  unsigned char *src = NULL, *dst = NULL;
  if (bytes < 1 || runs < 1) {
    pr_error(rt, "peak_copy_bandwidth: bytes and runs must be >= 1");
    goto end;
  }
  src = malloc(bytes);
  dst = malloc(bytes);
  if (src == NULL || dst == NULL) {
    pr_error(rt, "peak_copy_bandwidth: out of memory for two buffers of %zu bytes", bytes);
    goto end;
  }
  /* Touch every page first: page faults are the kernel's cost, not the memory's. */
  memset(src, 1, bytes);
  memset(dst, 0, bytes);
  double moved = 2.0 * (double)bytes;
  double best = 0.0;
  for (int r = 0; r <= runs; r++) {
    int64_t t0 = prof_now_ns();
    copy_fn(dst, src, bytes);
    int64_t dt = prof_now_ns() - t0;
    if (r > 0 && dt > 0 && moved / ((double)dt * 1e-9) > best) best = moved / ((double)dt * 1e-9);
  }
  *bytes_per_s = best;
  rc = 0;
end:
  free(src);
  free(dst);
  return rc;
}

int pr_blas_threads(void) {
  return openblas_get_num_threads();
}

/* {====================== the GPU ======================} */

#ifdef PR_HAVE_CUDA
int pr_peak_gpu_gemm(pr_Runtime *rt, const char *dtype, int n, int runs, double *flops_per_s) {
  int tf32 = strcmp(dtype, "tf32") == 0;
  int dt = tf32 ? PROF_F32 : prof_dtype_parse(dtype);
  if (n < 1 || n > 32768 || runs < 1)
    return pr_error(rt, "peak_gpu_gemm: n must be in 1..32768 and runs >= 1 (got n=%d, runs=%d)",
                    n, runs);
  if (dt != PROF_F32 && dt != PROF_F16 && dt != PROF_BF16)
    return pr_error(rt, "peak_gpu_gemm: dtype must be float32, tf32, bfloat16 or float16, got '%s'",
                    dtype);
  return pr_cuda_peak_gemm(rt, dt, tf32, n, runs, flops_per_s);
}

int pr_peak_gpu_copy(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s) {
  if (bytes < 1 || runs < 1) return pr_error(rt, "peak_gpu_copy: bytes and runs must be >= 1");
  return pr_cuda_peak_copy(rt, bytes, runs, bytes_per_s);
}

const char *pr_gpu_status(char *name, size_t size, int *have_blas, const char **blas_why) {
  const char *why = pr_cuda_probe();
  pr_cuda_device_name(name, size);
  *have_blas = why == NULL && pr_cuda_have_cublas(blas_why);
  if (why != NULL) *blas_why = "no device";
  return why;
}

void pr_gpu_set_tf32(int on) { pr_cuda_set_tf32(on); }

int pr_gpu_synchronize(pr_Runtime *rt) {
  if (pr_cuda_probe() != NULL) return 0;
  return pr_cuda_sync(rt);
}
#else
static const char no_cuda[] = "device 'cuda' is not available in this build; use 'meta' or 'cpu'";

int pr_peak_gpu_gemm(pr_Runtime *rt, const char *dtype, int n, int runs, double *flops_per_s) {
  (void)dtype, (void)n, (void)runs, (void)flops_per_s;
  return pr_error(rt, "peak_gpu_gemm: %s", no_cuda);
}

int pr_peak_gpu_copy(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s) {
  (void)bytes, (void)runs, (void)bytes_per_s;
  return pr_error(rt, "peak_gpu_copy: %s", no_cuda);
}

const char *pr_gpu_status(char *name, size_t size, int *have_blas, const char **blas_why) {
  if (size > 0) name[0] = '\0';
  *have_blas = 0;
  *blas_why = "no cuda backend in this build";
  return no_cuda;
}

void pr_gpu_set_tf32(int on) { (void)on; }

int pr_gpu_synchronize(pr_Runtime *rt) {
  (void)rt;
  return 0;
}
#endif
