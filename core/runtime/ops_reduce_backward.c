/* ops_reduce_backward.c — gradients of sum, mean, amax and var (autograd_table.c). */
#include "backward.h"

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

int pr_reduce_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
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
  if (!pr_holds_values(x)) {     /* shapes only: the shapes are what matter */
    gin[0] = e;
    return 0;
  }
  /* amax: the gradient goes to the maxima, shared evenly when tied; var: 2 (x - mean) / dof */
  pr_Tensor *stat = n->saved[1];   /* the output (amax) or the mean (var), keepdim-shaped */
  if (PR_K(x)->reduce_backward(rt, kind, x, stat, reduced, (double)count - n->args.f[0], e) != 0) {
    pr_tensor_release(e);
    return PR_ERR;
  }
  gin[0] = e;
  return 0;
}
