/* cuda_gemm.cu — matrix products on the device: cuBLAS (loaded at first use) or an own tiled
   kernel, and the mm, batched_mm and linear kernels over strided views. */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_util.cuh"

/*
** cuBLAS is opened with dlopen when the first GEMM runs, never linked: libcublas.so.13 and its
** 540 MB libcublasLt stay off machines without them, and profrun still loads there (the GEMMs
** then run on the tiled kernel below). Like the CUDA context, the handle is per process: one
** static, set once under pthread_once; the mutex serialises the handle's stream and math-mode
** settings with the call they apply to.
*/
typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*stream_fn)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*math_fn)(cublasHandle_t, cublasMath_t);
typedef cublasStatus_t (*gemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void *, const void *, cudaDataType, int, long long,
                                  const void *, cudaDataType, int, long long, const void *, void *,
                                  cudaDataType, int, long long, int, cublasComputeType_t,
                                  cublasGemmAlgo_t);

typedef struct Blas {
  pthread_once_t once;
  pthread_mutex_t lock;
  cublasHandle_t h;
  stream_fn set_stream;
  math_fn set_math;
  gemm_fn gemm;
  char why[256];                 /* "" when loaded */
} Blas;

static Blas blas = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, NULL, ""};

/* The loader's own search first (LD_LIBRARY_PATH, the ld.so cache), then where the toolkit
   installs it, which the cache often lacks. */
static void *open_cublas(void) {
  char path[512];
  const char *home = getenv("CUDA_HOME");
  if (home != NULL && snprintf(path, sizeof path, "%s/lib64/libcublas.so.13", home) < (int)sizeof path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib != NULL) return lib;
  }
  const char *const names[] = {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13",
                               "/usr/local/cuda-13.0/lib64/libcublas.so.13", "libcublas.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib != NULL) return lib;
  }
  return NULL;
}

static void load_once(void) {
  void *lib = open_cublas();
  if (lib == NULL) {
    snprintf(blas.why, sizeof blas.why, "cannot load libcublas.so.13 (searched the loader's "
             "path, $CUDA_HOME/lib64 and /usr/local/cuda/lib64): %s", dlerror());
    return;
  }
  create_fn create = (create_fn)dlsym(lib, "cublasCreate_v2");
  blas.set_stream = (stream_fn)dlsym(lib, "cublasSetStream_v2");
  blas.set_math = (math_fn)dlsym(lib, "cublasSetMathMode");
  blas.gemm = (gemm_fn)dlsym(lib, "cublasGemmStridedBatchedEx");
  if (create == NULL || blas.set_stream == NULL || blas.set_math == NULL || blas.gemm == NULL) {
    snprintf(blas.why, sizeof blas.why, "libcublas lacks cublasGemmStridedBatchedEx and friends");
    return;
  }
  cublasStatus_t s = create(&blas.h);
  if (s != CUBLAS_STATUS_SUCCESS)
    snprintf(blas.why, sizeof blas.why, "cublasCreate failed (status %d)", (int)s);
}

extern "C" int pr_cuda_have_cublas(const char **why) {
  pthread_once(&blas.once, load_once);
  if (why != NULL) *why = blas.why;
  return blas.why[0] == '\0';
}

/* {====================== the own kernel (no cuBLAS) ======================} */

template <class T> __device__ __forceinline__ float to_f(T v) { return (float)v; }
template <> __device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T> __device__ __forceinline__ T from_f(float v) { return (T)v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

#define TILE 16

/* 16x16 tiles through shared memory, float accumulation; blockIdx.z walks the batch. */
template <class T, class C>
__global__ void tiled_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                           const T *A, int64_t lda, int64_t sa, const T *B, int64_t ldb,
                           int64_t sb, float beta, C *Cp, int64_t ldc, int64_t sc, int64_t z0) {
  __shared__ float as[TILE][TILE + 1], bs[TILE][TILE + 1];
  int64_t z = z0 + blockIdx.z;
  const T *a = A + z * sa;
  const T *b = B + z * sb;
  C *c = Cp + z * sc;
  int64_t row = (int64_t)blockIdx.y * TILE + threadIdx.y, col = (int64_t)blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int64_t p0 = 0; p0 < k; p0 += TILE) {
    int64_t pa = p0 + threadIdx.x, pb = p0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        row < m && pa < k ? to_f(ta ? a[pa * lda + row] : a[row * lda + pa]) : 0.0f;
    bs[threadIdx.y][threadIdx.x] =
        pb < k && col < n ? to_f(tb ? b[col * ldb + pb] : b[pb * ldb + col]) : 0.0f;
    __syncthreads();
    for (int q = 0; q < TILE; q++) acc += as[threadIdx.y][q] * bs[q][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) {
    float prev = beta != 0.0f ? to_f(c[row * ldc + col]) : 0.0f;
    c[row * ldc + col] = from_f<C>(alpha * acc + beta * prev);
  }
}

template <class T, class C>
static void own_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const void *A,
                     int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb, float beta,
                     void *Cp, int64_t ldc, int64_t sc, int64_t batch) {
  dim3 threads(TILE, TILE);
  for (int64_t z0 = 0; z0 < batch; z0 += PR_GRID_YZ_MAX) {
    int64_t nz = batch - z0 < PR_GRID_YZ_MAX ? batch - z0 : PR_GRID_YZ_MAX;
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE), (unsigned)nz);
    tiled_gemm<T, C><<<grid, threads, 0, PR_STREAM>>>(ta, tb, m, n, k, alpha, (const T *)A, lda,
                                                      sa, (const T *)B, ldb, sb, beta, (C *)Cp,
                                                      ldc, sc, z0);
  }
}

/* {====================== the GEMM ======================} */

/* An empty inner dimension: C = beta·C, as the cpu's loop and BLAS define it. */
template <class T>
static void scale_elems(int64_t m, int64_t n, float beta, T *c, int64_t ldc, int64_t sc,
                        int64_t batch) {
  pr_launch(batch * m * n, [=] __device__(int64_t i) {
    int64_t z = i / (m * n), r = (i / n) % m, col = i % n;
    T *p = c + z * sc + r * ldc + col;
    *p = from_f<T>(beta != 0.0f ? beta * to_f(*p) : 0.0f);
  });
}

static int scale_c(pr_Runtime *rt, const char *op, int dtype, int64_t m, int64_t n, float beta,
                   void *C, int64_t ldc, int64_t sc, int64_t batch) {
  if (dtype == PROF_F32) scale_elems(m, n, beta, (float *)C, ldc, sc, batch);
  else if (dtype == PROF_F16) scale_elems(m, n, beta, (__half *)C, ldc, sc, batch);
  else scale_elems(m, n, beta, (__nv_bfloat16 *)C, ldc, sc, batch);
  return pr_cuda_check(rt, op);
}

static cudaDataType cuda_type(int dtype) {
  return dtype == PROF_F16 ? CUDA_R_16F : dtype == PROF_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

extern "C" int pr_cuda_gemm(pr_Runtime *rt, const char *op, int dtype, int ta, int tb, int64_t m,
                            int64_t n, int64_t k, float alpha, const void *A, int64_t lda,
                            int64_t sa, const void *B, int64_t ldb, int64_t sb, float beta,
                            void *C, int64_t ldc, int64_t sc, int64_t batch) {
  if (dtype != PROF_F32 && dtype != PROF_F16 && dtype != PROF_BF16)
    return pr_error(rt, "%s: cuda matrix products take float32, float16 or bfloat16, got %s", op,
                    dname(dtype));
  if (m <= 0 || n <= 0 || batch <= 0) return 0;
  if (k <= 0) return scale_c(rt, op, dtype, m, n, beta, C, ldc, sc, batch);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
      ldc > INT_MAX || batch > INT_MAX)
    return pr_error(rt, "%s: a %lld x %lld x %lld product passes cuBLAS's 32-bit sizes", op,
                    (long long)m, (long long)n, (long long)k);
  if (pr_cuda_have_cublas(NULL)) {
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands */
    cudaDataType t = cuda_type(dtype);
    int tf32 = dtype == PROF_F32 && pr_cuda_tf32();
    cublasComputeType_t ct = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    pthread_mutex_lock(&blas.lock);
    cublasStatus_t s = blas.set_stream(blas.h, PR_STREAM);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = blas.set_math(blas.h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = blas.gemm(blas.h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n,
                    (int)m, (int)k, &alpha, B, t, (int)(ldb > 0 ? ldb : 1), sb, A, t,
                    (int)(lda > 0 ? lda : 1), sa, &beta, C, t, (int)(ldc > 0 ? ldc : 1), sc,
                    (int)batch, ct, CUBLAS_GEMM_DEFAULT);
    pthread_mutex_unlock(&blas.lock);
    if (s != CUBLAS_STATUS_SUCCESS)
      return pr_error(rt, "%s on cuda: cublasGemmStridedBatchedEx failed (status %d) for %lld x "
                      "%lld x %lld", op, (int)s, (long long)m, (long long)n, (long long)k);
    return pr_cuda_check(rt, op);
  }
  if (dtype == PROF_F32)
    own_gemm<float, float>(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
  else if (dtype == PROF_F16)
    own_gemm<__half, __half>(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                             batch);
  else
    own_gemm<__nv_bfloat16, __nv_bfloat16>(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta,
                                           C, ldc, sc, batch);
  return pr_cuda_check(rt, op);
}

/* {====================== strided views as GEMM operands ======================} */

/*
** A 2-D view [r, c] at strides (s0, s1) is a GEMM operand as it lies when it is row-major
** (s1 == 1: not transposed, leading dim s0) or column-major (s0 == 1: transposed, leading dim
** s1), the same test as cpu_gemm.c's; -1 when neither holds (the caller copies it first).
*/
static int mat_form(int64_t r, int64_t c, int64_t s0, int64_t s1, int *trans, int64_t *ld) {
  if ((s1 == 1 || c == 1) && (s0 >= c || r == 1) && s0 >= 1) {
    *trans = 0;
    *ld = r == 1 ? (c > 1 ? c : 1) : s0;
    return 0;
  }
  if ((s0 == 1 || r == 1) && (s1 >= r || c == 1) && s1 >= 1) {
    *trans = 1;
    *ld = c == 1 ? (r > 1 ? r : 1) : s1;
    return 0;
  }
  return -1;
}

/* t as it is, or a contiguous copy when its last two dims fit neither form (*copy owns it). */
static const pr_Tensor *operand(pr_Runtime *rt, const pr_Tensor *t, pr_Tensor **copy, int *trans,
                                int64_t *ld) {
  int nd = t->ndim;
  *copy = NULL;
  if (mat_form(t->shape[nd - 2], t->shape[nd - 1], t->stride[nd - 2], t->stride[nd - 1], trans,
               ld) == 0)
    return t;
  if ((*copy = pr_contiguous_data(rt, t)) == NULL) return NULL;
  /* a contiguous copy is row-major; only an empty one (stride 0) fails the test, and an empty
     operand is never read (pr_cuda_gemm's k = 0 path) */
  if (mat_form(t->shape[nd - 2], t->shape[nd - 1], (*copy)->stride[nd - 2],
               (*copy)->stride[nd - 1], trans, ld) != 0) {
    *trans = 0;
    *ld = t->shape[nd - 1] > 1 ? t->shape[nd - 1] : 1;
  }
  return *copy;
}

static const char *elem(const pr_Tensor *t, int64_t off) {
  return (const char *)t->storage->data + dsize(t->dtype) * (size_t)off;
}

static int same_dtype(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b,
                      const pr_Tensor *out) {
  if (a->dtype == b->dtype && a->dtype == out->dtype) return 0;
  return pr_error(rt, "%s: cuda matrix products need one dtype, got %s, %s into %s", op,
                  dname(a->dtype), dname(b->dtype), dname(out->dtype));
}

extern "C" int pr_cuda_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,
                          float alpha, float beta) {
  if (same_dtype(rt, "mm", a, b, out) != 0) return PR_ERR;
  pr_Tensor *ac, *bc;
  int ta, tb;
  int64_t lda, ldb;
  const pr_Tensor *A = operand(rt, a, &ac, &ta, &lda);
  const pr_Tensor *B = A ? operand(rt, b, &bc, &tb, &ldb) : NULL;
  int rc = PR_ERR;
  if (B != NULL) {
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    rc = pr_cuda_gemm(rt, "mm", out->dtype, ta, tb, m, n, k, alpha, elem(A, A->offset), lda, 0,
                      elem(B, B->offset), ldb, 0, beta, (void *)elem(out, out->offset),
                      out->shape[1], 0, 1);
    pr_tensor_release(bc);
  }
  pr_tensor_release(ac);
  return rc;
}

/*
** The batch dims of t (right-aligned against out's nb) as one stride between consecutive
** products when they have one (0: broadcast over the whole batch); -1 when not.
*/
static int64_t batch_stride(const pr_Tensor *t, const pr_Tensor *out, int nb) {
  int64_t st[PR_MAX_DIMS], unit = -1;
  int zero = 1;
  for (int i = 0; i < nb; i++) {
    int j = t->ndim - 2 - nb + i;
    st[i] = j >= 0 && t->shape[j] != 1 ? t->stride[j] : 0;
    if (out->shape[i] != 1 && st[i] != 0) zero = 0;
  }
  if (zero) return 0;
  int64_t span = 1;
  for (int i = nb - 1; i >= 0; i--) {
    if (out->shape[i] != 1) {
      if (st[i] == 0 || st[i] % span != 0) return -1;
      int64_t u = st[i] / span;
      if (unit >= 0 && u != unit) return -1;
      unit = u;
    }
    span *= out->shape[i];
  }
  return unit;
}

extern "C" int pr_cuda_batched_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b,
                                  pr_Tensor *out, float alpha, float beta) {
  if (same_dtype(rt, "matmul", a, b, out) != 0) return PR_ERR;
  int nb = out->ndim - 2;
  int64_t m = out->shape[nb], n = out->shape[nb + 1], k = a->shape[a->ndim - 1], batch = 1;
  for (int i = 0; i < nb; i++) batch *= out->shape[i];
  pr_Tensor *ac = NULL, *bc = NULL;
  int ta, tb, rc = PR_ERR;
  int64_t lda, ldb;
  const pr_Tensor *A = operand(rt, a, &ac, &ta, &lda);
  const pr_Tensor *B = A ? operand(rt, b, &bc, &tb, &ldb) : NULL;
  if (B == NULL) goto end;
  {
    int64_t sa = batch_stride(A, out, nb), sb = batch_stride(B, out, nb);
    if (sa >= 0 && sb >= 0) {
      rc = pr_cuda_gemm(rt, "matmul", out->dtype, ta, tb, m, n, k, alpha, elem(A, A->offset), lda,
                        sa, elem(B, B->offset), ldb, sb, beta, (void *)elem(out, out->offset), n,
                        m * n, batch);
      goto end;
    }
    /* batch dims no single stride describes: one product per batch index */
    int64_t idx[PR_MAX_DIMS] = {0};
    rc = 0;
    for (int64_t t = 0; t < batch && rc == 0; t++) {
      int64_t aoff = A->offset, boff = B->offset;
      for (int i = 0; i < nb; i++) {
        int ia = A->ndim - 2 - nb + i, ib = B->ndim - 2 - nb + i;
        if (ia >= 0 && A->shape[ia] != 1) aoff += idx[i] * A->stride[ia];
        if (ib >= 0 && B->shape[ib] != 1) boff += idx[i] * B->stride[ib];
      }
      rc = pr_cuda_gemm(rt, "matmul", out->dtype, ta, tb, m, n, k, alpha, elem(A, aoff), lda, 0,
                        elem(B, boff), ldb, 0, beta, (void *)elem(out, out->offset + t * m * n), n,
                        0, 1);
      for (int i = nb - 1; i >= 0; i--) {
        if (++idx[i] < out->shape[i]) break;
        idx[i] = 0;
      }
    }
  }
end:
  pr_tensor_release(ac);
  pr_tensor_release(bc);
  return rc;
}

/* The row stride of x viewed as [rows, last dim] without a copy; -1 when its layout forbids
   (cpu_gemm.c's rule). */
static int64_t row_stride(const pr_Tensor *x) {
  int64_t rs = -1, expect = 0;
  for (int d = x->ndim - 2; d >= 0; d--) {
    if (x->shape[d] == 1) continue;
    if (rs < 0) rs = x->stride[d];
    else if (x->stride[d] != expect) return -1;
    expect = x->stride[d] * x->shape[d];
  }
  return rs < 0 ? x->shape[x->ndim - 1] : rs;
}

template <class T> static void fill_rows(T *y, const T *bias, int64_t rows, int64_t nout) {
  pr_launch(rows * nout, [=] __device__(int64_t i) { y[i] = bias[i % nout]; });
}

/* y = x W^T + b: the bias copied into every row, then one GEMM accumulating onto it. */
extern "C" int pr_cuda_linear(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                              const pr_Tensor *b, pr_Tensor *out) {
  if (same_dtype(rt, "linear", x, w, out) != 0 || (b != NULL && same_dtype(rt, "linear", b, w, out)))
    return PR_ERR;
  int64_t in = x->shape[x->ndim - 1], nout = w->shape[0], rows = 1;
  for (int d = 0; d < x->ndim - 1; d++) rows *= x->shape[d];
  pr_Tensor *xc = NULL, *bc = NULL;
  int64_t rs = row_stride(x), cs = x->stride[x->ndim - 1];
  if (rs < 0 || (cs != 1 && in > 1)) {
    if ((xc = pr_contiguous_data(rt, x)) == NULL) return PR_ERR;
    rs = in;
  }
  const pr_Tensor *xs = xc != NULL ? xc : x;
  int tw = 0;
  int64_t ldw = nout > 1 ? nout : 1;   /* kept when w is empty (in = 0: never read) */
  /* W^T [in, nout] is w [nout, in] with its strides swapped */
  pr_Tensor *wc = NULL;
  const pr_Tensor *W = w;
  if (mat_form(in, nout, w->stride[1], w->stride[0], &tw, &ldw) != 0) {
    if ((wc = pr_contiguous_data(rt, w)) == NULL) {
      pr_tensor_release(xc);
      return PR_ERR;
    }
    W = wc;
    mat_form(in, nout, wc->stride[1], wc->stride[0], &tw, &ldw);
  }
  float beta = 0.0f;
  int rc = 0;
  if (b != NULL) {
    if ((bc = pr_contiguous_data(rt, b)) == NULL) rc = PR_ERR;
    else {
      if (out->dtype == PROF_F32)
        fill_rows(pr_f32(out), pr_f32(bc), rows, nout);
      else
        fill_rows((uint16_t *)elem(out, out->offset), (const uint16_t *)elem(bc, bc->offset), rows,
                  nout);
      beta = 1.0f;
      rc = pr_cuda_check(rt, "linear");
    }
  }
  if (rc == 0)
    rc = pr_cuda_gemm(rt, "linear", out->dtype, 0, tw, rows, nout, in, 1.0f, elem(xs, xs->offset),
                      rows == 1 ? (in > 1 ? in : 1) : rs, 0, elem(W, W->offset), ldw, 0, beta,
                      (void *)elem(out, out->offset), nout, 0, 1);
  pr_tensor_release(xc);
  pr_tensor_release(wc);
  pr_tensor_release(bc);
  return rc;
}

/* {====================== peaks (peaks.c's device half) ======================} */

__global__ void fill_pattern(void *p, int dtype, int64_t n, int which) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    /* values of moderate size, as peaks.c's: zeros or denormals could take another path */
    float v = which ? 1.0f - (float)(i % 5) * 0.0625f : 1.0f + (float)(i % 7) * 0.125f;
    if (dtype == PROF_F16) ((__half *)p)[i] = __float2half(v);
    else if (dtype == PROF_BF16) ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
    else ((float *)p)[i] = v;
  }
}

/* Best of `runs` timings (CUDA events around the work) after one warm-up run. */
typedef int (*work_fn)(void *ud);

static int best_time(pr_Runtime *rt, const char *what, int runs, work_fn fn, void *ud,
                     double *best_s) {
  cudaEvent_t a, b;
  if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
    return pr_cuda_check(rt, what) != 0 ? PR_ERR : pr_error(rt, "%s: cudaEventCreate failed", what);
  int rc = 0;
  *best_s = 0;
  for (int r = 0; r <= runs && rc == 0; r++) {
    cudaEventRecord(a, PR_STREAM);
    rc = fn(ud);
    cudaEventRecord(b, PR_STREAM);
    float ms = 0;
    if (rc == 0 && cudaEventSynchronize(b) == cudaSuccess && cudaEventElapsedTime(&ms, a, b) ==
        cudaSuccess) {
      double s = ms * 1e-3;
      if (r > 0 && s > 0 && (*best_s == 0 || s < *best_s)) *best_s = s;
    } else if (rc == 0) {
      rc = pr_cuda_check(rt, what) != 0 ? PR_ERR : pr_error(rt, "%s: timing failed", what);
    }
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return rc;
}

typedef struct GemmRun {
  pr_Runtime *rt;
  int dtype, tf32;
  int64_t n;
  void *a, *b, *c;
} GemmRun;

static int gemm_once(void *ud) {
  GemmRun *g = (GemmRun *)ud;
  int was = pr_cuda_tf32();
  pr_cuda_set_tf32(g->tf32);
  int rc = pr_cuda_gemm(g->rt, "peak_gpu_gemm", g->dtype, 0, 0, g->n, g->n, g->n, 1.0f, g->a,
                        g->n, 0, g->b, g->n, 0, 0.0f, g->c, g->n, 0, 1);
  pr_cuda_set_tf32(was);
  return rc;
}

extern "C" int pr_cuda_peak_gemm(pr_Runtime *rt, int dtype, int tf32, int n, int runs,
                                 double *flops_per_s) {
  const char *why = pr_cuda_probe();
  if (why != NULL) return pr_error(rt, "peak_gpu_gemm: %s", why);
  if (!pr_cuda_have_cublas(&why)) return pr_error(rt, "peak_gpu_gemm: the peak is cuBLAS's: %s", why);
  size_t count = (size_t)n * (size_t)n, bytes = count * dsize(dtype);
  GemmRun g = {rt, dtype, tf32, n, NULL, NULL, NULL};
  g.a = pr_cuda_alloc(bytes);
  g.b = g.a ? pr_cuda_alloc(bytes) : NULL;
  g.c = g.b ? pr_cuda_alloc(dtype == PROF_F32 ? count * 4 : bytes) : NULL;
  int rc = PR_ERR;
  double s = 0;
  if (g.c == NULL) {
    pr_error(rt, "peak_gpu_gemm: out of device memory for three %dx%d %s matrices", n, n,
             dname(dtype));
  } else {
    fill_pattern<<<pr_blocks((int64_t)count), PR_THREADS, 0, PR_STREAM>>>(g.a, dtype, (int64_t)count, 0);
    fill_pattern<<<pr_blocks((int64_t)count), PR_THREADS, 0, PR_STREAM>>>(g.b, dtype, (int64_t)count, 1);
    rc = pr_cuda_check(rt, "peak_gpu_gemm");
    if (rc == 0) rc = best_time(rt, "peak_gpu_gemm", runs, gemm_once, &g, &s);
  }
  if (rc == 0) *flops_per_s = s > 0 ? 2.0 * (double)n * (double)n * (double)n / s : 0;
  pr_cuda_free(g.a, bytes);
  pr_cuda_free(g.b, bytes);
  pr_cuda_free(g.c, dtype == PROF_F32 ? count * 4 : bytes);
  return rc;
}

typedef struct CopyRun {
  pr_Runtime *rt;
  void *src, *dst;
  size_t bytes;
} CopyRun;

static int copy_once(void *ud) {
  CopyRun *c = (CopyRun *)ud;
  return pr_cuda_copy(c->rt, c->dst, c->src, c->bytes);
}

extern "C" int pr_cuda_peak_copy(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s) {
  const char *why = pr_cuda_probe();
  if (why != NULL) return pr_error(rt, "peak_gpu_copy: %s", why);
  CopyRun c = {rt, pr_cuda_alloc(bytes), NULL, bytes};
  c.dst = c.src ? pr_cuda_alloc(bytes) : NULL;
  int rc = PR_ERR;
  double s = 0;
  if (c.dst == NULL) pr_error(rt, "peak_gpu_copy: out of device memory for two %zu-byte buffers", bytes);
  else rc = best_time(rt, "peak_gpu_copy", runs, copy_once, &c, &s);
  /* read + written, as the host's copy peak counts it */
  if (rc == 0) *bytes_per_s = s > 0 ? 2.0 * (double)bytes / s : 0;
  pr_cuda_free(c.src, bytes);
  pr_cuda_free(c.dst, bytes);
  return rc;
}
