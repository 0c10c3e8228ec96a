/* cpu_reduce.c — sum, mean, amax and var kernels over any dims, and their value-dependent gradients. */
#include <math.h>
#include <stdlib.h>

#include "runtime.h"
#include "cpu.h"

/*
** Walks x in row-major order keeping, for each element, the offset of its output cell (ostride:
** out's contiguous strides aligned to x's dims, 0 on reduced dims). fn sees (x value, cell).
*/
#define FOR_EACH_CELL(x, ostride, xv, cell, body)                                          \
  do {                                                                                     \
    int64_t idx_[PR_MAX_DIMS] = {0}, xo_ = (x)->offset, cell = 0;                          \
    const float *xp_ = (const float *)(x)->storage->data;                                  \
    for (int64_t k_ = 0, n_ = pr_numel(x); k_ < n_; k_++) {                                \
      float xv = xp_[xo_];                                                                 \
      body;                                                                                \
      for (int d_ = (x)->ndim - 1; d_ >= 0; d_--) {                                        \
        xo_ += (x)->stride[d_];                                                            \
        cell += (ostride)[d_];                                                             \
        if (++idx_[d_] < (x)->shape[d_]) break;                                            \
        xo_ -= (x)->stride[d_] * (x)->shape[d_];                                           \
        cell -= (ostride)[d_] * (x)->shape[d_];                                            \
        idx_[d_] = 0;                                                                      \
      }                                                                                    \
    }                                                                                      \
  } while (0)

/* Output strides aligned to x's dims: contiguous over the kept dims, 0 over reduced ones. */
static int64_t cell_strides(const pr_Tensor *x, const int *reduced, int64_t *ostride) {
  int64_t s = 1;
  for (int d = x->ndim - 1; d >= 0; d--) {
    ostride[d] = reduced[d] ? 0 : s;
    if (!reduced[d]) s *= x->shape[d];
  }
  int64_t count = 1;
  for (int d = 0; d < x->ndim; d++)
    if (reduced[d]) count *= x->shape[d];
  return count;
}

/* Sums in double: float32 sums of millions of terms lose digits PyTorch's pairwise sums keep. */
int pr_cpu_reduce(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const int *reduced,
                      double correction, pr_Tensor *out) {
  if (x->dtype != PROF_F32 || out->dtype != PROF_F32)
    return pr_error(rt, "%s: cpu kernels reduce float32, got %s", prof_op_kind_name(kind),
                    prof_dtype_name(x->dtype));
  int64_t ostride[PR_MAX_DIMS];
  int64_t count = cell_strides(x, reduced, ostride), cells = pr_numel(out);
  double *acc = calloc((size_t)(cells > 0 ? cells : 1), sizeof *acc);
  if (acc == NULL) return pr_error(rt, "%s: out of memory", prof_op_kind_name(kind));
  float *o = pr_f32(out);
  if (kind == PROF_OP_AMAX) {
    for (int64_t c = 0; c < cells; c++) acc[c] = -INFINITY;
    FOR_EACH_CELL(x, ostride, v, cell, if (v > acc[cell] || v != v) acc[cell] = v);
  } else {
    FOR_EACH_CELL(x, ostride, v, cell, acc[cell] += v);
    if (kind != PROF_OP_SUM)
      for (int64_t c = 0; c < cells; c++) acc[c] /= (double)count;
    if (kind == PROF_OP_VAR) {
      /* two passes: squares of deviations from the mean, for accuracy */
      double *sq = calloc((size_t)(cells > 0 ? cells : 1), sizeof *sq);
      if (sq == NULL) {
        free(acc);
        return pr_error(rt, "var: out of memory");
      }
      FOR_EACH_CELL(x, ostride, v, cell, sq[cell] += (v - acc[cell]) * (v - acc[cell]));
      double dof = (double)count - correction;
      for (int64_t c = 0; c < cells; c++) acc[c] = dof > 0 ? sq[c] / dof : NAN;
      free(sq);
    }
  }
  for (int64_t c = 0; c < cells; c++) o[c] = (float)acc[c];
  free(acc);
  return 0;
}


/* e (contiguous, x's shape, holding the spread gradient) scaled in place: amax's share of each
   maximum (ties split evenly), var's 2 (x − mean) / dof. stat: the output (amax) or the mean. */
int pr_cpu_reduce_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                           const pr_Tensor *stat, const int *reduced, double dof, pr_Tensor *e) {
  int64_t ostride[PR_MAX_DIMS];
  cell_strides(x, reduced, ostride);
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  if (xc == NULL) return PR_ERR;
  const float *sv = pr_f32(stat);
  float *ge = pr_f32(e);
  int64_t cells = pr_numel(stat);
  if (kind == PROF_OP_AMAX) {
    double *ties = calloc((size_t)(cells > 0 ? cells : 1), sizeof *ties);
    FOR_EACH_CELL(xc, ostride, v, cell, if (ties && v == sv[cell]) ties[cell] += 1);
    int64_t i = 0;
    FOR_EACH_CELL(xc, ostride, v, cell,
                  { ge[i] = (ties && v == sv[cell]) ? (float)(ge[i] / ties[cell]) : 0.0f; i++; });
    free(ties);
  } else {
    int64_t i = 0;
    FOR_EACH_CELL(xc, ostride, v, cell, { ge[i] = (float)(ge[i] * 2.0 * (v - sv[cell]) / dof); i++; });
  }
  pr_tensor_release(xc);
  return 0;
}
