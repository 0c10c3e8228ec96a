/* ops_select_backward.c — gradients of masked_fill, where, triu and tril (autograd_table.c). */
#include "backward.h"

/* The gradient that passes a selection: g masked like the forward, summed back to x's shape. */
int pr_select_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *cond = n->saved[0];
  int rc = 0;
  for (int i = 0; i < 2; i++) {
    if (n->inputs[i] == NULL) continue;
    /* masked_fill: where the mask is set x got nothing; where: a takes cond, b the rest */
    pr_Tensor *m = n->args.i[0] ? pr_masked_fill(rt, g, cond, 0)
                                : pr_where(rt, cond, i == 0 ? g : NULL, i == 1 ? g : NULL, 0, 0);
    gin[i] = m ? pr_sum_to(rt, m, n->saved[1 + i]) : NULL;
    pr_tensor_release(m);
    if (gin[i] == NULL) rc = PR_ERR;
  }
  return rc;
}

int pr_triangle_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  gin[0] = pr_triangle(rt, g, n->args.i[0], (int)n->args.i[1]);
  return gin[0] != NULL ? 0 : PR_ERR;
}
