/* ops_dense_backward.c — linear's gradients: matrix products and a sum, recorded as ops. */
#include "backward.h"

/* x viewed as rows [prod(leading), in] (no copy when its layout allows). */
static pr_Tensor *rows_of(pr_Runtime *rt, const pr_Tensor *x) {
  int64_t shape[2] = {-1, x->shape[x->ndim - 1]};
  return pr_reshape(rt, x, 2, shape, 0);
}

/* dx = g W, dW = g^T x (over all rows), db = g summed over rows: real work, recorded as ops. */
int pr_linear_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
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
