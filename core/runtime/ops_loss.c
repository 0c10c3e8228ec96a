/* ops_loss.c — cross_entropy, nll_loss and mse_loss: checks, records, values and nodes. */
#include "backward.h"

/* Values: cross_entropy and nll_loss compute through cpu_loss.c, mse_loss here; all attach their
   gradients (for the input, and for a probability or mse target). */

/* {====================== losses ======================} */

/* The result of a loss, allocated inside its open op: unreduced (shape of the elements) or 0-d. */
static pr_Tensor *loss_result(pr_Runtime *rt, prof_Op *op, int reduction, int ndim,
                              const int64_t *shape, const pr_Tensor *x) {
  if (reduction < PROF_REDUCE_MEAN || reduction > PROF_REDUCE_NONE)
    return pr_fail(rt, "%s: unknown reduction %d", prof_op_kind_name(op->kind), reduction);
  op->mode = reduction;
  int n = reduction == PROF_REDUCE_NONE ? ndim : 0;
  return pr_op_alloc(rt, op, n, shape, x->dtype, x->device);
}

/*
** The checks cross_entropy and nll_loss share. Class-index targets: int64, input's shape without
** the class dim (dim 1, or dim 0 for an unbatched [C] input). Probability targets (allowed when
** soft_ok): input's dtype and shape. Fills the unreduced shape.
*/
static int check_classes(pr_Runtime *rt, const char *name, const pr_Tensor *x,
                         const pr_Tensor *t, const pr_Tensor *w, int soft_ok, int *ndim,
                         int64_t *shape) {
  char sx[96], st[96], sw[96];
  if (pr_check_float(rt, name, "input", x) != 0) return PR_ERR;
  if (x->device != t->device || (w != NULL && w->device != x->device))
    return pr_error(rt, "%s: expected all tensors on the same device", name);
  if (x->ndim == 0)
    return pr_error(rt, "%s: input %s needs a class dimension", name,
                    pr_shape_str(x, sx, sizeof sx));
  int cdim = x->ndim == 1 ? 0 : 1;
  int64_t classes = x->shape[cdim];
  if (w != NULL) {
    if (pr_check_same(rt, name, x, w, NULL) != 0) return PR_ERR;
    if (w->ndim != 1 || w->shape[0] != classes)
      return pr_error(rt, "%s: weight %s does not match the %lld classes of input %s", name,
                      pr_shape_str(w, sw, sizeof sw), (long long)classes,
                      pr_shape_str(x, sx, sizeof sx));
  }
  int n = 0;
  for (int i = 0; i < x->ndim; i++)
    if (i != cdim) shape[n++] = x->shape[i];
  *ndim = n;
  if (pr_is_float(t->dtype)) {
    if (!soft_ok)
      return pr_error(rt, "%s: target must hold class indices (int64), got %s", name,
                      prof_dtype_name(t->dtype));
    if (pr_check_same(rt, name, x, t, NULL) != 0) return PR_ERR;
    int same = t->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = t->shape[i] == x->shape[i];
    if (!same)
      return pr_error(rt, "%s: probability target %s does not match input %s", name,
                      pr_shape_str(t, st, sizeof st), pr_shape_str(x, sx, sizeof sx));
    return 0;
  }
  if (t->dtype != PROF_I64)
    return pr_error(rt, "%s: target must be int64 class indices%s, got %s", name,
                    soft_ok ? " or float probabilities" : "", prof_dtype_name(t->dtype));
  int same = t->ndim == n;
  for (int i = 0; same && i < n; i++) same = t->shape[i] == shape[i];
  if (!same)
    return pr_error(rt, "%s: input %s does not match target %s (expected target %s)", name,
                    pr_shape_str(x, sx, sizeof sx), pr_shape_str(t, st, sizeof st),
                    pr_dims_str(n, shape, sw, sizeof sw));
  return 0;
}

/* {====================== cross_entropy, nll_loss ======================} */

/* input [C] | [N, C, d...] as a [N, C, S] plan. */
static pr_ClassLoss class_plan(const pr_Tensor *x, const pr_LossArgs *a, int soft, int nll) {
  pr_ClassLoss p = {1, x->shape[x->ndim == 1 ? 0 : 1], 1, a->reduction, a->ignore_index,
                    nll ? 0 : a->label_smoothing, soft, nll};
  if (x->ndim >= 2) p.N = x->shape[0];
  for (int i = 2; i < x->ndim; i++) p.S *= x->shape[i];
  return p;
}

/* The values of a class loss on the cpu and its gradient (input; probability targets too). */
static pr_Tensor *class_result(pr_Runtime *rt, prof_Op *op, pr_Tensor *out, const char *name,
                               const pr_Tensor *x, const pr_Tensor *t, const pr_Tensor *w,
                               const pr_ClassLoss *p) {
  if (out == NULL) return NULL;
  int open = 1;              /* op stays open until the values are in out */
  pr_Tensor *xc = NULL, *tc = NULL, *wc = NULL, *logp = NULL;
  double divisor = 0;
  int cpu = pr_holds_values(out);
  if (cpu || pr_needs_grad(rt, x, p->soft ? t : NULL, NULL)) {
    xc = pr_contiguous_data(rt, x);
    tc = xc ? pr_contiguous_data(rt, t) : NULL;
    wc = tc && w ? pr_contiguous_data(rt, w) : NULL;
    if (tc == NULL || (w != NULL && wc == NULL)) goto fail;
  }
  if (cpu) {
    int64_t numel = pr_numel(x);
    if (!p->nll && (logp = pr_tensor_new(rt, 1, &numel, PROF_F32, out->device)) == NULL) goto fail;
    if (PR_K(out)->class_loss(rt, p, xc, tc, wc, logp, out, &divisor) != 0) goto fail;
  }
  open = 0;
  if ((out = pr_op_end(rt, op, out, 0)) == NULL) goto fail;
  if (pr_needs_grad(rt, x, p->soft ? t : NULL, NULL)) {
    const pr_Tensor *in[2] = {x, p->soft ? t : NULL};
    pr_Node *n = pr_node_attach(rt, out, PR_BW_CLASS_LOSS, name, 2, in);
    if (n == NULL) goto fail;
    n->args.i[0] = p->N, n->args.i[1] = p->C, n->args.i[2] = p->S, n->args.i[3] = p->reduction;
    n->args.i[4] = p->ignore_index, n->args.i[5] = p->soft, n->args.i[6] = p->nll;
    n->args.f[0] = p->smoothing, n->args.f[1] = divisor;
    pr_node_save(n, 0, logp);
    pr_node_save(n, 1, tc);
    pr_node_save(n, 2, wc);
  }
  pr_tensor_release(xc);
  pr_tensor_release(tc);
  pr_tensor_release(wc);
  pr_tensor_release(logp);
  return out;
fail:
  pr_tensor_release(xc);
  pr_tensor_release(tc);
  pr_tensor_release(wc);
  pr_tensor_release(logp);
  if (open) pr_op_end(rt, op, out, PR_ERR);
  else pr_tensor_release(out);
  return NULL;
}

/* The cpu's dtype, and class indices in range, before anything is recorded. */
static int check_cpu_classes(pr_Runtime *rt, const char *name, const pr_Tensor *x,
                             const pr_Tensor *t, const pr_LossArgs *a) {
  if (!pr_holds_values(x)) return 0;
  /* the host's kernels are float32 only; cuda's take the half dtypes too */
  if (x->dtype != PROF_F32 && x->device == rt->host_device)
    return pr_error(rt, "%s: cpu kernels compute float32, got %s", name, prof_dtype_name(x->dtype));
  if (pr_is_float(t->dtype)) return 0;
  return PR_K(t)->class_targets_check(rt, name, t, x->shape[x->ndim == 1 ? 0 : 1], a->ignore_index);
}

pr_Tensor *pr_cross_entropy(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                            const pr_Tensor *weight, const pr_LossArgs *a) {
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  if (!(a->label_smoothing >= 0.0 && a->label_smoothing <= 1.0))
    return pr_fail(rt, "cross_entropy: label_smoothing must be between 0 and 1, got %g",
                   a->label_smoothing);
  if (check_classes(rt, "cross_entropy", input, target, weight, 1, &ndim, shape) != 0)
    return NULL;
  if (check_cpu_classes(rt, "cross_entropy", input, target, a) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CROSS_ENTROPY, input, target, weight);
  pr_ClassLoss p = class_plan(input, a, pr_is_float(target->dtype), 0);
  return class_result(rt, &op, loss_result(rt, &op, a->reduction, ndim, shape, input),
                      "cross_entropy",
                      input, target, weight, &p);
}

pr_Tensor *pr_nll_loss(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                       const pr_Tensor *weight, const pr_LossArgs *a) {
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  if (check_classes(rt, "nll_loss", input, target, weight, 0, &ndim, shape) != 0) return NULL;
  if (check_cpu_classes(rt, "nll_loss", input, target, a) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_NLL_LOSS, input, target, weight);
  pr_ClassLoss p = class_plan(input, a, 0, 1);
  return class_result(rt, &op, loss_result(rt, &op, a->reduction, ndim, shape, input), "nll_loss",
                      input, target, weight, &p);
}

/* {====================== mse_loss ======================} */

pr_Tensor *pr_mse_loss(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                       int reduction) {
  if (pr_check_float(rt, "mse_loss", "input", input) != 0) return NULL;
  if (pr_check_same(rt, "mse_loss", input, target, NULL) != 0) return NULL;
  /* the host's kernels are float32 only; cuda's check their dtypes themselves */
  if (pr_holds_values(input) && input->dtype != PROF_F32 && input->device == rt->host_device)
    return pr_fail(rt, "mse_loss: cpu kernels compute float32, got %s",
                   prof_dtype_name(input->dtype));
  /* PyTorch broadcasts input and target (with a warning when they differ) */
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  if (pr_broadcast_shapes(rt, "mse_loss", input->ndim, input->shape, target->ndim, target->shape,
                          &ndim, shape) != 0)
    return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_MSE_LOSS, input, target, NULL);
  pr_Tensor *out = loss_result(rt, &op, reduction, ndim, shape, input);
  if (out == NULL) return NULL;
  pr_Tensor *d = NULL;
  int grad = pr_needs_grad(rt, input, target, NULL);
  int rc = 0;
  if (pr_holds_values(out) || grad) {
    d = pr_tensor_new(rt, ndim, shape, pr_grad_dtype(input), input->device);
    if (d == NULL || PR_K(out)->mse(rt, input, target, reduction, d, out) != 0) rc = PR_ERR;
  }
  if ((out = pr_op_end(rt, &op, out, rc)) == NULL) goto fail;
  if (grad) {
    const pr_Tensor *in[2] = {input, target};
    pr_Node *n = pr_node_attach(rt, out, PR_BW_MSE_LOSS, "mse_loss", 2, in);
    if (n == NULL) goto fail;
    n->args.i[0] = reduction;
    pr_node_save(n, 0, d);
    pr_node_save_shape(rt, n, 1, input);
    pr_node_save_shape(rt, n, 2, target);
  }
  pr_tensor_release(d);
  return out;
fail:
  pr_tensor_release(d);
  pr_tensor_release(out);
  return NULL;
}
