/* ops_dense.c — linear: shapes, checks, the event around its kernel, and its gradient. */
#include <string.h>

#include "runtime.h"

/* x viewed as rows [prod(leading), in] (no copy when its layout allows). */
static pr_Tensor *rows_of(pr_Runtime *rt, const pr_Tensor *x) {
  int64_t shape[2] = {-1, x->shape[x->ndim - 1]};
  return pr_reshape(rt, x, 2, shape, 0);
}

/* dx = g W, dW = g^T x (over all rows), db = g summed over rows: real work, recorded as ops. */
static int linear_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *x = n->saved[0], *w = n->saved[1];
  if (n->inputs[0] != NULL && (gin[0] = pr_matmul(rt, g, w)) == NULL) return PR_ERR;
  if (n->inputs[1] != NULL || n->inputs[2] != NULL) {
    pr_Tensor *g2 = rows_of(rt, g), *gt = g2 ? pr_transpose(rt, g2, 0, 1) : NULL;
    pr_Tensor *x2 = gt ? rows_of(rt, x) : NULL;
    if (n->inputs[1] != NULL && x2 != NULL) gin[1] = pr_mm(rt, gt, x2);
    if (n->inputs[2] != NULL && g2 != NULL) {
      int d0 = 0;
      gin[2] = pr_reduce(rt, PROF_OP_SUM, g2, 1, &d0, 0, 0);
    }
    pr_tensor_release(g2);
    pr_tensor_release(gt);
    pr_tensor_release(x2);
    if ((n->inputs[1] != NULL && gin[1] == NULL) || (n->inputs[2] != NULL && gin[2] == NULL))
      return PR_ERR;
  }
  return 0;
}

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
    pr_Node *n = pr_node_attach(rt, out, linear_backward, "linear", 3, in);
    if (n == NULL) {
      pr_tensor_release(out);
      return NULL;
    }
    pr_node_save(n, 0, (pr_Tensor *)x);
    pr_node_save(n, 1, (pr_Tensor *)w);
  }
  return out;
}
