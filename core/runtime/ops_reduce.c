/* ops_reduce.c — sum, mean, amax and var over any dims: shapes, cpu kernels and gradients. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* {====================== cpu kernels ======================} */

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
static int reduce_cpu(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const int *reduced,
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

/* {====================== gradients ======================} */

/* g shaped like x with the reduced dims as 1s (keepdim), then expanded to x's shape, copied. */
static pr_Tensor *spread(pr_Runtime *rt, const pr_Tensor *g, const pr_Tensor *x, const int *reduced) {
  int64_t kshape[PR_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) kshape[d] = reduced[d] ? 1 : x->shape[d];
  pr_Tensor *k = pr_reshape(rt, g, x->ndim, kshape, 0);
  pr_Tensor *e = k ? pr_expand(rt, k, x->ndim, x->shape) : NULL;
  pr_Tensor *c = e ? pr_contiguous(rt, e) : NULL;
  pr_tensor_release(k);
  pr_tensor_release(e);
  return c;
}

static int reduce_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *x = n->saved[0];
  prof_OpKind kind = (prof_OpKind)n->args.i[0];
  int reduced[PR_MAX_DIMS];
  int64_t count = 1;
  for (int d = 0; d < x->ndim; d++) {
    reduced[d] = (int)n->args.i[1 + d];
    if (reduced[d]) count *= x->shape[d];
  }
  pr_Tensor *e = spread(rt, g, x, reduced);
  if (e == NULL) return PR_ERR;
  if (kind == PROF_OP_SUM) {
    gin[0] = e;
    return 0;
  }
  if (kind == PROF_OP_MEAN) {
    gin[0] = pr_binary(rt, PROF_OP_DIV, e, NULL, (double)count, 0, 0);
    pr_tensor_release(e);
    return gin[0] ? 0 : PR_ERR;
  }
  if (x->device != PR_CPU) {     /* meta: the shapes are what matter */
    gin[0] = e;
    return 0;
  }
  /* amax: the gradient goes to the maxima, shared evenly when tied; var: 2 (x - mean) / dof */
  pr_Tensor *stat = n->saved[1];   /* the output (amax) or the mean (var), keepdim-shaped */
  int64_t ostride[PR_MAX_DIMS];
  cell_strides(x, reduced, ostride);
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  if (xc == NULL) {
    pr_tensor_release(e);
    return PR_ERR;
  }
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
    double dof = (double)count - n->args.f[0];
    int64_t i = 0;
    FOR_EACH_CELL(xc, ostride, v, cell, { ge[i] = (float)(ge[i] * 2.0 * (v - sv[cell]) / dof); i++; });
  }
  pr_tensor_release(xc);
  gin[0] = e;
  return 0;
}

pr_Tensor *pr_reduce(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int ndims,
                     const int *dims, int keepdim, double correction) {
  char sx[96];
  const char *name = prof_op_kind_name(kind);
  int reduced[PR_MAX_DIMS] = {0};
  if (ndims <= 0) {
    for (int i = 0; i < x->ndim; i++) reduced[i] = 1;
  } else {
    for (int k = 0; k < ndims; k++) {
      int d = pr_dim(dims[k], x->ndim);
      if (d < 0)
        return pr_fail(rt, "%s: dim %d is out of range for input %s", name, dims[k],
                       pr_shape_str(x, sx, sizeof sx));
      if (x->ndim > 0 && reduced[d])
        return pr_fail(rt, "%s: dim %d appears more than once in the list of dims", name, d);
      reduced[d] = 1;
    }
  }
  int dtype = x->dtype;
  if (kind == PROF_OP_MEAN || kind == PROF_OP_VAR) {
    if (pr_check_float(rt, name, "input", x) != 0) return NULL;
  } else if (kind == PROF_OP_SUM && !pr_is_float(dtype)) {
    dtype = PROF_I64;          /* PyTorch sums integers and bools as int64 */
  }
  int64_t shape[PR_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (!reduced[i]) shape[n++] = x->shape[i];
    else if (keepdim) shape[n++] = 1;
    /* a maximum of nothing does not exist */
    if (reduced[i] && kind == PROF_OP_AMAX && x->shape[i] == 0)
      return pr_fail(rt, "amax: dim %d of input %s is empty", i, pr_shape_str(x, sx, sizeof sx));
  }
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  pr_Tensor *out = pr_op_finish(rt, &op, pr_tensor_new(rt, n, shape, dtype, x->device));
  if (out == NULL) return NULL;
  if (out->device == PR_CPU && reduce_cpu(rt, kind, x, reduced, correction, out) != 0) {
    pr_tensor_release(out);
    return NULL;
  }
  if (!pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *node = pr_node_attach(rt, out, reduce_backward, name, 1, &x);
  if (node == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  node->args.i[0] = kind;
  for (int d = 0; d < x->ndim; d++) node->args.i[1 + d] = reduced[d];
  node->args.f[0] = correction;
  if (kind == PROF_OP_AMAX || kind == PROF_OP_VAR) {
    pr_node_save(node, 0, (pr_Tensor *)x);
    /* the statistic per cell: amax's output itself, var's mean (recomputed without a record) */
    pr_Tensor *stat = pr_tensor_new(rt, n, shape, dtype, x->device);
    if (stat != NULL && stat->device == PR_CPU)
      reduce_cpu(rt, kind == PROF_OP_AMAX ? PROF_OP_AMAX : PROF_OP_MEAN, x, reduced, 0, stat);
    pr_node_save(node, 1, stat);
    pr_tensor_release(stat);
  } else {
    pr_node_save_shape(rt, node, 0, x);
  }
  return out;
}

