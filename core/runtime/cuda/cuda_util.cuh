/* cuda_util.cuh — what the .cu kernels share: strided views passed by value, launches, dtypes. */
#ifndef PR_CUDA_UTIL_CUH
#define PR_CUDA_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda.h"

/* Every launch goes to the calling host thread's own default stream: one stream per recorder
   thread without any state of ours, ordered with that thread's copies and frees. */
#define PR_STREAM cudaStreamPerThread

/* A tensor's logical layout, passed to kernels by value (it is 136 bytes). */
struct View {
  int nd;
  int64_t shape[PR_MAX_DIMS];
  int64_t stride[PR_MAX_DIMS];
  int64_t offset;
};

/* t's own layout. */
static inline View view_of(const pr_Tensor *t) {
  View v;
  v.nd = t->ndim;
  v.offset = t->offset;
  for (int i = 0; i < PR_MAX_DIMS; i++) {
    v.shape[i] = i < t->ndim ? t->shape[i] : 1;
    v.stride[i] = i < t->ndim ? t->stride[i] : 0;
  }
  return v;
}

/* t read with an output's nd dims (right-aligned; stride 0 where t is broadcast or missing). */
static inline View view_bcast(const pr_Tensor *t, int nd, const int64_t *oshape) {
  View v;
  v.nd = nd;
  v.offset = t != NULL ? t->offset : 0;
  for (int i = 0; i < PR_MAX_DIMS; i++) {
    int j = t != NULL ? t->ndim - nd + i : -1;
    v.shape[i] = i < nd ? oshape[i] : 1;
    v.stride[i] = (i < nd && j >= 0 && t->shape[j] == oshape[i]) ? t->stride[j] : 0;
  }
  return v;
}

/* The element offset of logical (row-major) index i. */
__device__ __forceinline__ int64_t view_off(const View &v, int64_t i) {
  int64_t off = v.offset;
  for (int d = v.nd - 1; d >= 0; d--) {
    int64_t s = v.shape[d];
    off += (i % s) * v.stride[d];
    i /= s;
  }
  return off;
}

/* Grid-stride loops: any element count (int64) on a bounded grid. PR_GRID_MAX blocks keep every
   SM of a large GPU busy; past it a block takes several rows or elements. A grid's y and z may
   not pass PR_GRID_YZ_MAX (CUDA's limit), so work batched along them is launched in slices. */
#define PR_THREADS 256
#define PR_GRID_MAX 65536
#define PR_GRID_YZ_MAX 65535

/* Blocks for work items (rows, cells, blocks of elements) one block each, in [1, PR_GRID_MAX]. */
static inline unsigned pr_grid(int64_t items) {
  return (unsigned)(items < 1 ? 1 : items > PR_GRID_MAX ? PR_GRID_MAX : items);
}

static inline unsigned pr_blocks(int64_t n) { return pr_grid((n + PR_THREADS - 1) / PR_THREADS); }

template <class F> __global__ void pr_map_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    f(i);
}

/* f(i) for i in [0, n) on the thread's stream (nothing for n <= 0). */
template <class F> static inline void pr_launch(int64_t n, F f) {
  if (n > 0) pr_map_kernel<<<pr_blocks(n), PR_THREADS, 0, PR_STREAM>>>(n, f);
}

/* Typed storage pointers (element 0 of the storage; add a View's offsets). */
template <class T> static inline T *base_of(const pr_Tensor *t) {
  return (T *)t->storage->data;
}

/* One block reduces: every thread passes its partial; thread 0 gets the block's sum. */
template <class T> __device__ __forceinline__ T block_sum(T v, T *shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? shared[lane] : (T)0;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads();   /* shared may be reused by the caller's next reduction */
  return v;
}

/* The same for a maximum (NaN wins, as the cpu's comparisons let it). */
__device__ __forceinline__ float nan_max(float a, float b) {
  return (a != a || a > b) ? a : b;
}
__device__ __forceinline__ float block_max(float v, float *shared) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? shared[lane] : -INFINITY;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads();
  return v;
}

/* prof.h's dtype helpers for the int fields tensors keep (C++ does not convert to the enum). */
static inline const char *dname(int d) { return prof_dtype_name((prof_DType)d); }
static inline size_t dsize(int d) { return (size_t)prof_dtype_size((prof_DType)d); }

/* A block's maximum where NaN does not win: softmax's row maximum (exp of NaN stays NaN). */
__device__ __forceinline__ float block_max_plain(float v, float *shared) {
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_down_sync(0xffffffffu, v, o);
    v = u > v ? u : v;
  }
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? shared[lane] : -INFINITY;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) {
      float u = __shfl_down_sync(0xffffffffu, v, o);
      v = u > v ? u : v;
    }
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  v = shared[0];
  __syncthreads();
  return v;
}

/* "<op>: cuda kernels compute float32, got int64" unless every non-NULL tensor is float32. */
static inline int need_f32(pr_Runtime *rt, const char *op, const pr_Tensor *a,
                           const pr_Tensor *b = NULL, const pr_Tensor *c = NULL) {
  const pr_Tensor *ts[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (ts[i] != NULL && ts[i]->dtype != PROF_F32)
      return pr_error(rt, "%s: cuda kernels of this op compute float32, got %s", op,
                      dname(ts[i]->dtype));
  return 0;
}

/* {====================== half precision ======================}
** float16 and bfloat16 kernels load each element as float, compute in float and round once on the
** store (round-to-nearest-even, cuda_fp16.h's and cuda_bf16.h's conversions): the formulas stay
** the float32 ones, and a half result differs from float32's by that one rounding. */

template <class T> __device__ __forceinline__ float f_of(T v) { return (float)v; }
template <> __device__ __forceinline__ float f_of<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float f_of<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T> __device__ __forceinline__ T of_f(float v) { return (T)v; }
template <> __device__ __forceinline__ __half of_f<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 of_f<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

/* "<op>: cuda kernels of this op compute float32, float16 and bfloat16, got int64" unless every
   non-NULL tensor has a's dtype and that is one of the three. */
static inline int need_float(pr_Runtime *rt, const char *op, const pr_Tensor *a,
                             const pr_Tensor *b = NULL, const pr_Tensor *c = NULL) {
  const pr_Tensor *ts[3] = {a, b, c};
  int d = a->dtype;
  if (d != PROF_F32 && d != PROF_F16 && d != PROF_BF16)
    return pr_error(rt, "%s: cuda kernels of this op compute float32, float16 and bfloat16, got %s",
                    op, dname(d));
  for (int i = 1; i < 3; i++)
    if (ts[i] != NULL && ts[i]->dtype != d)
      return pr_error(rt, "%s: cuda kernels of this op take one dtype, got %s and %s", op,
                      dname(d), dname(ts[i]->dtype));
  return 0;
}

/* The statement after d (it names the type T) with T the storage type of float dtype d, which
   need_float has checked. Variadic: the statement may hold commas. */
#define PR_FLOAT_SWITCH(d, ...)                                                                \
  do {                                                                                          \
    if ((d) == PROF_F16) {                                                                      \
      typedef __half T;                                                                         \
      __VA_ARGS__;                                                                              \
    } else if ((d) == PROF_BF16) {                                                              \
      typedef __nv_bfloat16 T;                                                                  \
      __VA_ARGS__;                                                                              \
    } else {                                                                                    \
      typedef float T;                                                                          \
      __VA_ARGS__;                                                                              \
    }                                                                                           \
  } while (0)

#endif
