/* ops_pointwise.c — elementwise unary and binary ops, softmax: shapes, checks and records. */
#include "runtime.h"

pr_Tensor *pr_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double alpha) {
  (void)alpha;   /* only the cpu kernels read it */
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_clamp(pr_Runtime *rt, const pr_Tensor *x, double lo, double hi) {
  if (lo > hi) return pr_fail(rt, "clamp: min %g is larger than max %g", lo, hi);
  return pr_unary(rt, PROF_OP_CLAMP, x, 0);
}

pr_Tensor *pr_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w) {
  char sx[96], sw[96];
  if (pr_check_same(rt, "prelu", x, w, NULL) != 0) return NULL;
  int64_t c = x->ndim >= 2 ? x->shape[1] : 1;
  if (w->ndim != 1 || (w->shape[0] != 1 && w->shape[0] != c))
    return pr_fail(rt, "prelu: weight %s must have 1 or %lld (channels of input %s) elements",
                   pr_shape_str(w, sw, sizeof sw), (long long)c, pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  pr_op_begin(&op, PROF_OP_PRELU, x, w, NULL);
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int dim) {
  char sx[96];
  int d = pr_dim(dim, x->ndim);
  if (d < 0)
    return pr_fail(rt, "%s: dim %d is out of range for input %s", prof_op_kind_name(kind), dim,
                   pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  op.dim = d;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                     double s, int scalar_first, uint32_t flags) {
  (void)s;
  const char *name = prof_op_kind_name(kind);
  int ndim = a->ndim;
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) shape[i] = a->shape[i];
  if (b != NULL) {
    if (a->device != b->device)
      return pr_fail(rt, "%s: expected both tensors on the same device, got %s and %s", name,
                     pr_device_name(a->device), pr_device_name(b->device));
    if (pr_broadcast_shapes(rt, name, a->ndim, a->shape, b->ndim, b->shape, &ndim, shape) != 0)
      return NULL;
  }
  prof_Op op;
  pr_op_begin(&op, kind, a, b, NULL);
  if (b == NULL) {
    op.ninputs = 2;
    op.in[1].ndim = -1;        /* a Python-style scalar operand */
    if (scalar_first) {
      op.in[1] = op.in[0];
      op.in[0].ndim = -1;
    }
  }
  op.flags |= flags;
  /* integer tensors combined with floats promote to the float dtype */
  int dtype = a->dtype;
  if (b != NULL && prof_dtype_size(b->dtype) > 0 && (a->dtype >= PROF_I64 && b->dtype < PROF_I64))
    dtype = b->dtype;
  return pr_op_finish(rt, &op, pr_tensor_new(rt, ndim, shape, dtype, a->device));
}
