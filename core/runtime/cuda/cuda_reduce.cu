/* cuda_reduce.cu — sum, mean, amax and var over any dims on the device, and their gradients
   (cpu_reduce.c's definitions: sums in double, two passes for the variance; float32, float16 and
   bfloat16 elements, each read as float and the result rounded once). */
#include <math.h>

#include "cuda_util.cuh"

/* x split into the kept dims (one output cell each, row-major) and the reduced ones. */
typedef struct Split {
  View kept, red;                /* offsets: kept carries x's, red 0 */
  int64_t cells, count;
} Split;

static Split split(const pr_Tensor *x, const int *reduced) {
  Split s;
  s.kept.nd = s.red.nd = 0;
  s.kept.offset = x->offset;
  s.red.offset = 0;
  s.cells = s.count = 1;
  for (int d = 0; d < PR_MAX_DIMS; d++) {
    s.kept.shape[d] = s.red.shape[d] = 1;
    s.kept.stride[d] = s.red.stride[d] = 0;
  }
  for (int d = 0; d < x->ndim; d++) {
    View *v = reduced[d] ? &s.red : &s.kept;
    v->shape[v->nd] = x->shape[d];
    v->stride[v->nd++] = x->stride[d];
    if (reduced[d]) s.count *= x->shape[d];
    else s.cells *= x->shape[d];
  }
  return s;
}

/* One block per cell (grid-strided over cells). */
template <class T>
__global__ void reduce_cells(int kind, const T *x, Split s, double correction, T *o) {
  __shared__ double sd[32];
  __shared__ float sf[32];
  __shared__ double mean;
  for (int64_t c = blockIdx.x; c < s.cells; c += gridDim.x) {
    int64_t base = view_off(s.kept, c);
    if (kind == PROF_OP_AMAX) {
      float m = -INFINITY;
      for (int64_t j = threadIdx.x; j < s.count; j += blockDim.x)
        m = nan_max(m, f_of(x[base + view_off(s.red, j)]));
      m = block_max(m, sf);
      if (threadIdx.x == 0) o[c] = of_f<T>(m);
      continue;
    }
    double acc = 0;
    for (int64_t j = threadIdx.x; j < s.count; j += blockDim.x) acc += f_of(x[base + view_off(s.red, j)]);
    acc = block_sum(acc, sd);
    if (threadIdx.x == 0) mean = kind == PROF_OP_SUM ? acc : acc / (double)s.count;
    __syncthreads();
    double mu = mean;
    if (kind == PROF_OP_VAR) {
      double sq = 0;
      for (int64_t j = threadIdx.x; j < s.count; j += blockDim.x) {
        double v = f_of(x[base + view_off(s.red, j)]) - mu;
        sq += v * v;
      }
      sq = block_sum(sq, sd);
      double dof = (double)s.count - correction;
      if (threadIdx.x == 0) o[c] = of_f<T>(dof > 0 ? (float)(sq / dof) : NAN);
    } else if (threadIdx.x == 0) {
      o[c] = of_f<T>((float)mu);
    }
    __syncthreads();
  }
}

extern "C" int pr_cuda_reduce(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                              const int *reduced, double correction, pr_Tensor *out) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, x, out) != 0) return PR_ERR;
  if (kind != PROF_OP_SUM && kind != PROF_OP_MEAN && kind != PROF_OP_AMAX && kind != PROF_OP_VAR)
    return pr_cuda_refuse(rt, name, "not a reduction kind");
  Split s = split(x, reduced);
  if (s.cells > 0) {
    unsigned blocks = pr_grid(s.cells);
    PR_FLOAT_SWITCH(x->dtype, reduce_cells<T><<<blocks, PR_THREADS, 0, PR_STREAM>>>(
                                  (int)kind, base_of<T>(x), s, correction,
                                  base_of<T>(out) + out->offset));
  }
  return pr_cuda_check(rt, name);
}

/* The output cell of x's logical element i (out contiguous over the kept dims). */
__device__ __forceinline__ int64_t cell_of(const View &xs, const int64_t *ostride, int64_t i) {
  int64_t cell = 0;
  for (int d = xs.nd - 1; d >= 0; d--) {
    cell += (i % xs.shape[d]) * ostride[d];
    i /= xs.shape[d];
  }
  return cell;
}

typedef struct OStride {
  int64_t s[PR_MAX_DIMS];
} OStride;

/* e holds the gradient broadcast over x; scaled in place by amax's tie share or var's factor. */
template <class T>
static int reduce_grad_of(pr_Runtime *rt, const char *name, int is_amax, const T *xp, View xv,
                          OStride os, const T *sv, int64_t cells, double dof, T *ge, int64_t n) {
  if (is_amax) {
    /* ties share the gradient evenly: count them per cell first */
    float *ties = (float *)pr_cuda_alloc(sizeof(float) * (size_t)(cells > 0 ? cells : 1));
    if (ties == NULL) return pr_error(rt, "%s backward: out of device memory", name);
    pr_launch(n, [=] __device__(int64_t i) {
      int64_t c = cell_of(xv, os.s, i);
      if (f_of(xp[view_off(xv, i)]) == f_of(sv[c])) atomicAdd(&ties[c], 1.0f);
    });
    pr_launch(n, [=] __device__(int64_t i) {
      int64_t c = cell_of(xv, os.s, i);
      ge[i] = of_f<T>(f_of(xp[view_off(xv, i)]) == f_of(sv[c]) ? f_of(ge[i]) / ties[c] : 0.0f);
    });
    int rc = pr_cuda_check(rt, name);
    pr_cuda_free(ties, sizeof(float) * (size_t)(cells > 0 ? cells : 1));
    return rc;
  }
  pr_launch(n, [=] __device__(int64_t i) {
    int64_t c = cell_of(xv, os.s, i);
    ge[i] = of_f<T>((float)(f_of(ge[i]) * 2.0 * (f_of(xp[view_off(xv, i)]) - f_of(sv[c])) / dof));
  });
  return pr_cuda_check(rt, name);
}

extern "C" int pr_cuda_reduce_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                                       const pr_Tensor *stat, const int *reduced, double dof,
                                       pr_Tensor *e) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, x, stat, e) != 0) return PR_ERR;
  OStride os;
  int64_t st = 1;
  for (int d = x->ndim - 1; d >= 0; d--) {
    os.s[d] = reduced[d] ? 0 : st;
    if (!reduced[d]) st *= x->shape[d];
  }
  int rc = PR_ERR;
  PR_FLOAT_SWITCH(x->dtype, rc = reduce_grad_of<T>(rt, name, kind == PROF_OP_AMAX, base_of<T>(x),
                                                   view_of(x), os, base_of<T>(stat) + stat->offset,
                                                   pr_numel(stat), dof,
                                                   base_of<T>(e) + e->offset, pr_numel(x)));
  return rc;
}
