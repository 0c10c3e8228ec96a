/* ops_loss.c — the losses: cross_entropy, nll_loss and mse_loss (shapes, checks, records). */
#include "runtime.h"

/*
** Values: these ops only produce correctly shaped outputs (zero-filled on cpu); the cpu kernels
** that compute them come later.
*/

/* {====================== losses ======================} */

/* The result of a loss: unreduced (shape of the elements) or a 0-d tensor. */
static pr_Tensor *loss_result(pr_Runtime *rt, prof_Op *op, int reduction, int ndim,
                              const int64_t *shape, const pr_Tensor *x) {
  if (reduction < PROF_REDUCE_MEAN || reduction > PROF_REDUCE_NONE)
    return pr_fail(rt, "%s: unknown reduction %d", prof_op_kind_name(op->kind), reduction);
  op->mode = reduction;
  int n = reduction == PROF_REDUCE_NONE ? ndim : 0;
  return pr_op_finish(rt, op, pr_tensor_new(rt, n, shape, x->dtype, x->device));
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

pr_Tensor *pr_cross_entropy(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                            const pr_Tensor *weight, const pr_LossArgs *a) {
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  if (!(a->label_smoothing >= 0.0 && a->label_smoothing <= 1.0))
    return pr_fail(rt, "cross_entropy: label_smoothing must be between 0 and 1, got %g",
                   a->label_smoothing);
  if (check_classes(rt, "cross_entropy", input, target, weight, 1, &ndim, shape) != 0)
    return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CROSS_ENTROPY, input, target, weight);
  return loss_result(rt, &op, a->reduction, ndim, shape, input);
}

pr_Tensor *pr_nll_loss(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                       const pr_Tensor *weight, const pr_LossArgs *a) {
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  if (check_classes(rt, "nll_loss", input, target, weight, 0, &ndim, shape) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_NLL_LOSS, input, target, weight);
  return loss_result(rt, &op, a->reduction, ndim, shape, input);
}

pr_Tensor *pr_mse_loss(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                       int reduction) {
  if (pr_check_float(rt, "mse_loss", "input", input) != 0) return NULL;
  if (pr_check_same(rt, "mse_loss", input, target, NULL) != 0) return NULL;
  /* PyTorch broadcasts input and target (with a warning when they differ) */
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  if (pr_broadcast_shapes(rt, "mse_loss", input->ndim, input->shape, target->ndim, target->shape,
                          &ndim, shape) != 0)
    return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_MSE_LOSS, input, target, NULL);
  return loss_result(rt, &op, reduction, ndim, shape, input);
}
