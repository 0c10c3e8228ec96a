/* ops_loss_backward.c — gradients of cross_entropy, nll_loss and mse_loss (autograd_table.c). */
#include <stdio.h>

#include "backward.h"

/*
** Backward work per input element: class indices p = exp(logp), a·w_t·(p − δ) (3), label
** smoothing + b·(p·Σw − w_j) (4); probabilities exp, p·Σw·t', w·t', subtract, scale (5) and the
** target's −s·(1 − ε)·w·logp (3); nll_loss one multiply per row.
*/
int pr_class_loss_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *logp = n->saved[0], *t = n->saved[1], *w = n->saved[2];
  pr_ClassLoss p = {n->args.i[0], n->args.i[1], n->args.i[2], (int32_t)n->args.i[3],
                    n->args.i[4], n->args.f[0], (int)n->args.i[5], (int)n->args.i[6]};
  for (int i = 0; i < 2; i++) {
    const pr_Tensor *like = n->inputs[i];
    if (like != NULL &&
        (gin[i] = pr_tensor_new(rt, like->ndim, like->shape, pr_grad_dtype(like),
                                like->device)) == NULL)
      return PR_ERR;
  }
  int64_t numel = p.N * p.C * p.S, rows = p.N * p.S, flops;
  /* the element size of g, the log-probabilities and the input gradients (pr_grad_dtype) */
  int64_t gsize = (int64_t)prof_dtype_size(g->dtype);
  int64_t esize = (int64_t)prof_dtype_size(pr_grad_dtype(n->inputs[0] ? n->inputs[0] : t));
  if (p.nll) flops = rows;
  else if (p.soft) flops = numel * (5 + (gin[1] ? 3 : 0));
  else flops = numel * (p.smoothing > 0 ? 7 : 3);
  prof_Op work;
  if (pr_work_begin(rt, &work, pr_backward_name(rt, n->name), 0, flops,
                    gsize * pr_numel(g) + (p.nll ? 0 : esize * numel) +
                        (int64_t)prof_dtype_size(t->dtype) * pr_numel(t) +
                        (w ? (int64_t)prof_dtype_size(w->dtype) * p.C : 0),
                    esize * (numel + (gin[1] ? numel : 0)), g,
                    n->inputs[0] != NULL ? n->inputs[0] : logp, t) != 0)
    return PR_ERR;
  if (!pr_holds_values(t)) return pr_op_close(rt, &work, 0);
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return pr_op_close(rt, &work, PR_ERR);
  /* without an input gradient the kernel still needs somewhere to write it (in the target's
     gradient dtype: the kernels take one float dtype) */
  pr_Tensor *gx = gin[0] ? pr_tensor_retain(gin[0])
                         : pr_tensor_new(rt, 1, &numel, gin[1] ? gin[1]->dtype : PROF_F32,
                                         t->device);
  int rc = gx == NULL ? PR_ERR
                      : PR_K(t)->class_loss_backward(rt, &p, p.nll ? NULL : logp, t, w, gc,
                                                     n->args.f[1], gx, gin[1]);
  pr_tensor_release(gc);
  pr_tensor_release(gx);
  return pr_op_close(rt, &work, rc);
}

/* d (x − t, broadcast) · 2·g (·1/n for mean), then each operand's share summed to its shape. */
int pr_mse_loss_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *d = n->saved[0];
  int reduction = (int)n->args.i[0];
  int64_t numel = pr_numel(d);
  pr_Tensor *gd = pr_tensor_new(rt, d->ndim, d->shape, pr_grad_dtype(d), d->device);
  pr_Tensor *neg = gd && n->inputs[1]
                       ? pr_tensor_new(rt, d->ndim, d->shape, pr_grad_dtype(d), d->device)
                       : NULL;
  int rc = PR_ERR;
  if (gd == NULL || (n->inputs[1] && neg == NULL)) goto end;
  /* 2·d·s per element, and a negation for the target */
  prof_Op work;
  int64_t esize = (int64_t)prof_dtype_size(gd->dtype), gsize = (int64_t)prof_dtype_size(g->dtype);
  if (pr_work_begin(rt, &work, "mse_loss_backward", 0, numel * (2 + (neg != NULL)),
                     esize * numel + gsize * pr_numel(g), esize * numel * (1 + (neg != NULL)), g, d,
                     NULL) != 0)
    goto end;
  if (pr_op_close(rt, &work, PR_K(d)->mse_backward(rt, d, g, reduction, gd, neg)) != 0) goto end;
  rc = 0;
  if (n->inputs[0] != NULL && (gin[0] = pr_sum_to(rt, gd, n->saved[1])) == NULL) rc = PR_ERR;
  if (rc == 0 && neg != NULL && (gin[1] = pr_sum_to(rt, neg, n->saved[2])) == NULL) rc = PR_ERR;
end:
  pr_tensor_release(gd);
  pr_tensor_release(neg);
  return rc;
}
