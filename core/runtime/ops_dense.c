/* ops_dense.c — linear: shapes, checks, the event around its kernel, and its node. */
#include <string.h>

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
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  if ((out = pr_op_end(rt, &op, out, PR_K(out)->linear(rt, x, w, b, out))) == NULL) return NULL;
  if (pr_needs_grad(rt, x, w, b)) {
    const pr_Tensor *in[3] = {x, w, b};
    pr_Node *n = pr_node_attach(rt, out, PR_BW_LINEAR, "linear", 3, in);
    if (n == NULL) {
      pr_tensor_release(out);
      return NULL;
    }
    pr_node_save(n, 0, (pr_Tensor *)x);
    pr_node_save(n, 1, (pr_Tensor *)w);
  }
  return out;
}
