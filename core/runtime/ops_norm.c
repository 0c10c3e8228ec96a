/* ops_norm.c — batch, instance, layer, group and RMS norm, embedding, dropout: checks, records. */
#include "runtime.h"

/*
** Values: the norms and embedding only produce correctly shaped outputs (zero-filled on cpu);
** the cpu kernels that compute them come later. Dropout in eval returns a view of x, which is
** already right.
*/

/* A per-channel (or normalized_shape) parameter: NULL, or exactly the expected shape. */
static int check_param(pr_Runtime *rt, const char *op, const char *what, const pr_Tensor *p,
                       int n, const int64_t *shape) {
  char sp[96], sw[96];
  if (p == NULL) return 0;
  int ok = p->ndim == n;
  for (int i = 0; ok && i < n; i++) ok = p->shape[i] == shape[i];
  if (ok) return 0;
  return pr_error(rt, "%s: %s %s does not match the expected shape %s", op, what,
                  pr_shape_str(p, sp, sizeof sp), pr_dims_str(n, shape, sw, sizeof sw));
}

/* Float input, and every other tensor on its device and of its dtype. */
static int check_all(pr_Runtime *rt, const char *op, const pr_Tensor *x, const pr_Tensor *a,
                     const pr_Tensor *b, const pr_Tensor *c, const pr_Tensor *d) {
  if (pr_check_float(rt, op, "input", x) != 0) return PR_ERR;
  if (pr_check_same(rt, op, x, a, b) != 0) return PR_ERR;
  return pr_check_same(rt, op, x, c, d);
}

/* x [N, C, *]: at least two dims. */
static int check_channels(pr_Runtime *rt, const char *op, const pr_Tensor *x) {
  char sx[96];
  if (x->ndim >= 2) return 0;
  return pr_error(rt, "%s: expected an input [N, C, ...] of at least 2 dims, got %s", op,
                  pr_shape_str(x, sx, sizeof sx));
}

/* Starts a norm op: x, then the parameters that exist (the formula reads x and the flags). */
static void norm_op(prof_Op *op, prof_OpKind kind, const pr_Tensor *x, const pr_Tensor *w,
                    const pr_Tensor *b) {
  pr_op_begin(op, kind, x, w, b);
  if (w != NULL) op->flags |= PROF_OPF_AFFINE;
  if (b != NULL) op->flags |= PROF_OPF_BIAS;
}

/* {====================== batch and instance norm ======================} */

pr_Tensor *pr_batch_norm(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *running_mean,
                         const pr_Tensor *running_var, const pr_Tensor *w, const pr_Tensor *b,
                         const pr_NormArgs *a) {
  char sx[96];
  const char *name = "batch_norm";
  if (check_all(rt, name, x, running_mean, running_var, w, b) != 0) return NULL;
  if (check_channels(rt, name, x) != 0) return NULL;
  if (!a->training && (running_mean == NULL || running_var == NULL))
    return pr_fail(rt, "batch_norm: running_mean and running_var are needed in evaluation mode");
  const int64_t *c = &x->shape[1];
  if (check_param(rt, name, "running_mean", running_mean, 1, c) != 0 ||
      check_param(rt, name, "running_var", running_var, 1, c) != 0 ||
      check_param(rt, name, "weight", w, 1, c) != 0 || check_param(rt, name, "bias", b, 1, c) != 0)
    return NULL;
  /* batch statistics of one value per channel are undefined (PyTorch refuses too) */
  if (a->training && pr_numel(x) / (x->shape[1] ? x->shape[1] : 1) == 1)
    return pr_fail(rt, "batch_norm: expected more than 1 value per channel when training, got "
                   "input %s", pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  norm_op(&op, PROF_OP_BATCH_NORM, x, w, b);
  if (a->training) op.flags |= PROF_OPF_TRAINING;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_instance_norm(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *running_mean,
                            const pr_Tensor *running_var, const pr_Tensor *w,
                            const pr_Tensor *b, const pr_NormArgs *a) {
  char sx[96];
  const char *name = "instance_norm";
  if (check_all(rt, name, x, running_mean, running_var, w, b) != 0) return NULL;
  if (check_channels(rt, name, x) != 0) return NULL;
  if (!a->training && (running_mean == NULL || running_var == NULL))
    return pr_fail(rt, "instance_norm: running_mean and running_var are needed when "
                   "use_input_stats is false");
  const int64_t *c = &x->shape[1];
  if (check_param(rt, name, "running_mean", running_mean, 1, c) != 0 ||
      check_param(rt, name, "running_var", running_var, 1, c) != 0 ||
      check_param(rt, name, "weight", w, 1, c) != 0 || check_param(rt, name, "bias", b, 1, c) != 0)
    return NULL;
  int64_t spatial = 1;
  for (int i = 2; i < x->ndim; i++) spatial *= x->shape[i];
  if (a->training && spatial == 1)
    return pr_fail(rt, "instance_norm: expected more than 1 spatial element when using input "
                   "statistics, got input %s", pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  norm_op(&op, PROF_OP_INSTANCE_NORM, x, w, b);
  /* statistics from the input, as batch_norm's training mode */
  if (a->training) op.flags |= PROF_OPF_TRAINING;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

/* {====================== layer, RMS and group norm ======================} */

/* x must end with normalized_shape; fails naming both. */
static int check_trailing(pr_Runtime *rt, const char *op, const pr_Tensor *x, int n,
                          const int64_t *shape) {
  char sx[96], ss[96];
  int ok = n >= 1 && n <= x->ndim;
  for (int i = 0; ok && i < n; i++) ok = x->shape[x->ndim - n + i] == shape[i];
  if (ok) return 0;
  return pr_error(rt, "%s: input %s does not end with normalized_shape %s", op,
                  pr_shape_str(x, sx, sizeof sx), pr_dims_str(n, shape, ss, sizeof ss));
}

static pr_Tensor *trailing_norm(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int nshape,
                                const int64_t *shape, const pr_Tensor *w, const pr_Tensor *b) {
  const char *name = prof_op_kind_name(kind);
  if (check_all(rt, name, x, w, b, NULL, NULL) != 0) return NULL;
  if (check_trailing(rt, name, x, nshape, shape) != 0) return NULL;
  if (check_param(rt, name, "weight", w, nshape, shape) != 0 ||
      check_param(rt, name, "bias", b, nshape, shape) != 0)
    return NULL;
  prof_Op op;
  norm_op(&op, kind, x, w, b);
  op.dim = nshape;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_layer_norm(pr_Runtime *rt, const pr_Tensor *x, int nshape, const int64_t *shape,
                         const pr_Tensor *w, const pr_Tensor *b, double eps) {
  (void)eps;
  return trailing_norm(rt, PROF_OP_LAYER_NORM, x, nshape, shape, w, b);
}

pr_Tensor *pr_rms_norm(pr_Runtime *rt, const pr_Tensor *x, int nshape, const int64_t *shape,
                       const pr_Tensor *w, double eps) {
  (void)eps;
  return trailing_norm(rt, PROF_OP_RMS_NORM, x, nshape, shape, w, NULL);
}

pr_Tensor *pr_group_norm(pr_Runtime *rt, const pr_Tensor *x, int64_t groups, const pr_Tensor *w,
                         const pr_Tensor *b, double eps) {
  char sx[96];
  (void)eps;
  const char *name = "group_norm";
  if (check_all(rt, name, x, w, b, NULL, NULL) != 0) return NULL;
  if (check_channels(rt, name, x) != 0) return NULL;
  if (groups < 1 || x->shape[1] % groups != 0)
    return pr_fail(rt, "group_norm: input %s has %lld channels, not divisible by num_groups %lld",
                   pr_shape_str(x, sx, sizeof sx), (long long)x->shape[1], (long long)groups);
  const int64_t *c = &x->shape[1];
  if (check_param(rt, name, "weight", w, 1, c) != 0 || check_param(rt, name, "bias", b, 1, c) != 0)
    return NULL;
  prof_Op op;
  norm_op(&op, PROF_OP_GROUP_NORM, x, w, b);
  op.groups = groups;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

/* {====================== embedding, dropout ======================} */

pr_Tensor *pr_embedding(pr_Runtime *rt, const pr_Tensor *indices, const pr_Tensor *w,
                        const int64_t *padding_idx) {
  char si[96], sw[96];
  if (indices->dtype != PROF_I64 && indices->dtype != PROF_I32)
    return pr_fail(rt, "embedding: indices must be int64 or int32, got %s",
                   prof_dtype_name(indices->dtype));
  if (pr_check_float(rt, "embedding", "weight", w) != 0) return NULL;
  if (indices->device != w->device)
    return pr_fail(rt, "embedding: expected all tensors on the same device, got %s and %s",
                   pr_device_name(indices->device), pr_device_name(w->device));
  if (w->ndim != 2)
    return pr_fail(rt, "embedding: weight %s must be 2-D [num_embeddings, embedding_dim]",
                   pr_shape_str(w, sw, sizeof sw));
  if (indices->ndim + 1 > PR_MAX_DIMS)
    return pr_fail(rt, "embedding: indices %s leave no room for the embedding dim",
                   pr_shape_str(indices, si, sizeof si));
  int64_t v = w->shape[0];
  if (padding_idx != NULL && (*padding_idx >= v || *padding_idx < -v))
    return pr_fail(rt, "embedding: padding_idx %lld is out of range for %lld embeddings",
                   (long long)*padding_idx, (long long)v);
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < indices->ndim; i++) shape[i] = indices->shape[i];
  shape[indices->ndim] = w->shape[1];
  prof_Op op;
  pr_op_begin(&op, PROF_OP_EMBEDDING, indices, w, NULL);
  return pr_op_finish(rt, &op, pr_tensor_new(rt, indices->ndim + 1, shape, w->dtype, w->device));
}

pr_Tensor *pr_dropout(pr_Runtime *rt, const pr_Tensor *x, double p, int training) {
  if (!(p >= 0.0 && p <= 1.0))
    return pr_fail(rt, "dropout: probability has to be between 0 and 1, got %g", p);
  prof_Op op;
  pr_op_begin(&op, PROF_OP_DROPOUT, x, NULL, NULL);
  if (training && p > 0.0) {
    if (pr_check_float(rt, "dropout", "input", x) != 0) return NULL;
    op.flags |= PROF_OPF_TRAINING;
    return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
  }
  /* the identity: PyTorch hands back x itself; a view keeps x's values on cpu */
  return pr_op_finish(rt, &op, pr_tensor_view(rt, x, x->ndim, x->shape, x->stride, x->offset));
}
