/* ops_linalg_backward.c — gradients of matmul, mm, bmm, addmm and baddbmm (autograd_table.c). */
#include "backward.h"

/* x with its last two dims swapped (a view). */
static pr_Tensor *mT(pr_Runtime *rt, const pr_Tensor *x) {
  return pr_transpose(rt, x, -2, -1);
}

/*
** matmul's gradients through the 2-D-or-more form: 1-D operands are promoted (a to [1, k], b to
** [k, 1]), the product's gradient reshaped to match, then ga = g b^T and gb = a^T g, summed over
** broadcast batch dims and reshaped back to the operands.
*/
int pr_matmul_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *a = n->saved[0], *b = n->saved[1];
  pr_Tensor *a2 = a->ndim == 1 ? pr_unsqueeze(rt, a, 0) : pr_tensor_retain((pr_Tensor *)a);
  pr_Tensor *b2 = b->ndim == 1 ? pr_unsqueeze(rt, b, 1) : pr_tensor_retain((pr_Tensor *)b);
  pr_Tensor *g2 = NULL;
  int rc = PR_ERR;
  if (a2 == NULL || b2 == NULL) goto end;
  {
    /* the promoted product's shape: broadcast batch, then [m, p] */
    int64_t shape[PR_MAX_DIMS + 2];
    int nb;
    if (pr_broadcast_shapes(rt, "matmul", a2->ndim - 2, a2->shape, b2->ndim - 2, b2->shape, &nb,
                            shape) != 0)
      goto end;
    shape[nb] = a2->shape[a2->ndim - 2];
    shape[nb + 1] = b2->shape[b2->ndim - 1];
    g2 = pr_reshape(rt, g, nb + 2, shape, 0);
    if (g2 == NULL) goto end;
  }
  for (int i = 0; i < 2; i++) {
    if (n->inputs[i] == NULL) continue;
    pr_Tensor *t = i == 0 ? mT(rt, b2) : mT(rt, a2);
    pr_Tensor *p = t == NULL ? NULL : i == 0 ? pr_matmul(rt, g2, t) : pr_matmul(rt, t, g2);
    pr_Tensor *s = p ? pr_sum_to(rt, p, i == 0 ? a2 : b2) : NULL;
    const pr_Tensor *orig = i == 0 ? a : b;
    gin[i] = s ? pr_reshape(rt, s, orig->ndim, orig->shape, 0) : NULL;
    pr_tensor_release(t);
    pr_tensor_release(p);
    pr_tensor_release(s);
    if (gin[i] == NULL) goto end;
  }
  rc = 0;
end:
  pr_tensor_release(a2);
  pr_tensor_release(b2);
  pr_tensor_release(g2);
  return rc;
}

/* out = beta c + alpha (a b): the added term's gradient is beta g reduced to c's shape. */
int pr_addmm_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  double beta = n->args.f[0], alpha = n->args.f[1];
  const pr_Tensor *c = n->saved[0], *a = n->saved[1], *b = n->saved[2];
  if (n->inputs[0] != NULL) {
    pr_Tensor *t = beta == 1 ? pr_tensor_retain((pr_Tensor *)g)
                             : pr_binary(rt, PROF_OP_MUL, g, NULL, beta, 0, 0);
    gin[0] = t ? pr_sum_to(rt, t, c) : NULL;
    pr_tensor_release(t);
    if (gin[0] == NULL) return PR_ERR;
  }
  pr_Tensor *ga = alpha == 1 ? pr_tensor_retain((pr_Tensor *)g)
                             : pr_binary(rt, PROF_OP_MUL, g, NULL, alpha, 0, 0);
  if (ga == NULL) return PR_ERR;
  for (int i = 1; i < 3; i++) {
    if (n->inputs[i] == NULL) continue;
    pr_Tensor *t = mT(rt, i == 1 ? b : a);
    gin[i] = t == NULL ? NULL : i == 1 ? pr_matmul(rt, ga, t) : pr_matmul(rt, t, ga);
    pr_tensor_release(t);
    if (gin[i] == NULL) {
      pr_tensor_release(ga);
      return PR_ERR;
    }
  }
  pr_tensor_release(ga);
  return 0;
}
