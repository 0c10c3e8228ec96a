/* ops_norm_backward.c — gradients of the norms, embedding and dropout (autograd_table.c). */
#include <stdio.h>

#include "backward.h"

/* A new tensor of t's shape on its device, for t's gradient (pr_grad_dtype). */
static pr_Tensor *grad_like(pr_Runtime *rt, const pr_Tensor *t) {
  return pr_tensor_new(rt, t->ndim, t->shape, pr_grad_dtype(t), t->device);
}

/*
** Backward work, per element: x̂ = (x − μ)·r (2; RMS 1); gx with statistics from the input
** ĝ = g·w (1 with a weight), Σĝ and Σĝ·x̂ (3; RMS 2), r·(ĝ − m₁ − x̂·m₂) (4; RMS 3), with fixed
** statistics g·r (1) and ·w; gw Σ g·x̂ (2); gb Σ g (1).
*/
static int64_t norm_backward_flops(const pr_NormPlan *p, int input_stats, int gx, int affine,
                                   int gw, int gb) {
  int64_t per = 0, numel = p->N * p->C * p->S;
  if (gx || gw) per += p->rms ? 1 : 2;
  if (gx) per += (input_stats ? (p->rms ? 5 : 7) : 1) + affine;
  if (gw) per += 2;
  if (gb) per += 1;
  return per * numel;
}

int pr_norm_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *x = n->saved[0], *w = n->saved[1], *mean = n->saved[2], *rstd = n->saved[3];
  pr_NormPlan p = {n->args.i[1], n->args.i[2], n->args.i[3], n->args.i[4], (int)n->args.i[5], 0};
  int input_stats = (int)n->args.i[6];
  for (int i = 0; i < 3; i++)
    if (n->inputs[i] != NULL && (gin[i] = grad_like(rt, n->inputs[i])) == NULL) return PR_ERR;
  int64_t numel = p.N * p.C * p.S, es = 4, cells = pr_norm_cells(&p);
  int64_t flops = norm_backward_flops(&p, input_stats, gin[0] != NULL, w != NULL, gin[1] != NULL,
                                      gin[2] != NULL);
  int64_t wrote = (gin[0] ? numel : 0) + (gin[1] ? p.C : 0) + (gin[2] ? p.C : 0);
  prof_Op work;
  if (pr_work_begin(rt, &work, pr_backward_name(rt, n->name), 0, flops, es * (2 * numel + 2 * cells + (w ? p.C : 0)),
                    es * wrote, g, x, w) != 0)
    return PR_ERR;
  return pr_op_close(rt, &work, PR_K(x)->norm_backward(rt, &p, x, g, w, mean, rstd, input_stats,
                                                        gin[0], gin[1], gin[2]));
}

/* The rows' gradients scatter-added into a dense [V, D] gradient; padding_idx's row gets none. */
int pr_embedding_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *idx = n->saved[0], *w = n->inputs[1];
  if ((gin[1] = grad_like(rt, w)) == NULL) return PR_ERR;
  /* one add per gathered element; reads g and the indices, writes the table */
  int64_t rows = pr_numel(idx), d = w->shape[1];
  prof_Op work;
  int64_t gsize = (int64_t)prof_dtype_size(g->dtype), wsize = (int64_t)prof_dtype_size(gin[1]->dtype);
  if (pr_work_begin(rt, &work, "embedding_backward", 0, rows * d,
                    gsize * rows * d + rows * prof_dtype_size(idx->dtype),
                    wsize * pr_numel(w), g, idx, NULL) != 0)
    return PR_ERR;
  return pr_op_close(rt, &work,
                     PR_K(w)->embedding_backward(rt, idx, g, n->args.i[0], gin[1]));
}

/* The gradient goes where the values went: g times the saved mask (0 or 1/(1-p)). */
int pr_dropout_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  gin[0] = pr_binary(rt, PROF_OP_MUL, g, n->saved[0], 0, 0, 0);
  return gin[0] != NULL ? 0 : PR_ERR;
}
