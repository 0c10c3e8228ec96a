/* ops_dense.c — linear and the matmul family: shapes, checks and records. */
#include "runtime.h"

pr_Tensor *pr_linear(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b) {
  char sx[96], sw[96], sb[96];
  if (pr_check_same(rt, "linear", x, w, b) != 0) return NULL;
  if (w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
    return pr_fail(rt, "linear: input %s does not match weight %s (expected input [..., %lld])",
                   pr_shape_str(x, sx, sizeof sx), pr_shape_str(w, sw, sizeof sw),
                   (long long)(w->ndim == 2 ? w->shape[1] : -1));
  if (b != NULL && (b->ndim != 1 || b->shape[0] != w->shape[0]))
    return pr_fail(rt, "linear: bias %s does not match weight %s", pr_shape_str(b, sb, sizeof sb),
                   pr_shape_str(w, sw, sizeof sw));
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
  shape[x->ndim - 1] = w->shape[0];
  prof_Op op;
  pr_op_begin(&op, PROF_OP_LINEAR, x, w, b);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  return pr_op_finish(rt, &op, pr_tensor_new(rt, x->ndim, shape, x->dtype, x->device));
}
