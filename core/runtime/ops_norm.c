/* ops_norm.c — batch, instance, layer, group and RMS norm, embedding, dropout: checks, records. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "runtime.h"

/*
** Values: the norms, embedding and dropout run their device's kernels inside the op, then attach
** their gradients. Dropout in eval returns a view of x, which is already right.
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

/* {====================== values and nodes ======================} */

/* Running statistics a norm reads (eval) or updates (training), with its momentum. */
typedef struct Running {
  pr_Tensor *mean, *var;       /* NULL: none */
  double momentum;
} Running;

/*
** Computes a norm's values on the cpu and attaches its gradient; out is the recorded result.
** input_stats: statistics from x (else from run, which then holds both buffers).
*/
static pr_Tensor *norm_result(pr_Runtime *rt, prof_Op *op, pr_Tensor *out, const char *name,
                              const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                              const pr_NormPlan *p, int input_stats, const Running *run) {
  if (out == NULL) return NULL;
  pr_Tensor *xc = NULL, *mean = NULL, *rstd = NULL;
  int cpu = pr_holds_values(out), rc = 0;
  /* the host's kernels are float32 only; a device's kernels check their dtypes themselves */
  if (cpu && x->dtype != PROF_F32 && out->device == rt->host_device) {
    rc = pr_error(rt, "%s: %s kernels compute float32, got %s", name, out->be->name,
                  prof_dtype_name(x->dtype));
  } else if (cpu) {
    int64_t cells = pr_norm_cells(p);
    xc = pr_contiguous_data(rt, x);
    mean = xc ? pr_tensor_new(rt, 1, &cells, PROF_F32, out->device) : NULL;
    rstd = mean ? pr_tensor_new(rt, 1, &cells, PROF_F32, out->device) : NULL;
    if (rstd == NULL || PR_K(out)->norm(rt, p, input_stats, run->mean, run->var, run->momentum,
                                         xc, w, b, mean, rstd, out) != 0)
      rc = PR_ERR;
  }
  if ((out = pr_op_end(rt, op, out, rc)) == NULL) goto fail;
  if (pr_needs_grad(rt, x, w, b)) {
    const pr_Tensor *in[3] = {x, w, b};
    pr_Node *n = pr_node_attach(rt, out, PR_BW_NORM, name, 3, in);
    if (n == NULL) goto fail;
    n->args.i[1] = p->N, n->args.i[2] = p->C, n->args.i[3] = p->S, n->args.i[4] = p->groups;
    n->args.i[5] = p->rms, n->args.i[6] = input_stats;
    if (cpu) {
      pr_node_save(n, 0, xc);
      pr_Tensor *wc = w ? pr_contiguous_data(rt, w) : NULL;
      if (w != NULL && wc == NULL) goto fail;
      pr_node_save(n, 1, wc);
      pr_tensor_release(wc);
      pr_node_save(n, 2, mean);
      pr_node_save(n, 3, rstd);
    } else {
      pr_node_save_shape(rt, n, 0, x);
      if (w != NULL) pr_node_save_shape(rt, n, 1, w);
    }
  }
  pr_tensor_release(xc);
  pr_tensor_release(mean);
  pr_tensor_release(rstd);
  return out;
fail:
  pr_tensor_release(xc);
  pr_tensor_release(mean);
  pr_tensor_release(rstd);
  pr_tensor_release(out);
  return NULL;
}

/* x [N, C, *] as a plan: N, C and the product of the rest. */
static pr_NormPlan channel_plan(const pr_Tensor *x, int64_t groups, double eps) {
  pr_NormPlan p = {x->shape[0], x->shape[1], 1, groups, 0, eps};
  for (int i = 2; i < x->ndim; i++) p.S *= x->shape[i];
  return p;
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
  /* the buffers are updated in place, as torch's are */
  Running run = {(pr_Tensor *)running_mean, (pr_Tensor *)running_var, a->momentum};
  pr_NormPlan p = channel_plan(x, 0, a->eps);
  return norm_result(rt, &op, pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device),
                     name, x, w, b, &p,
                     a->training, &run);
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
  Running run = {(pr_Tensor *)running_mean, (pr_Tensor *)running_var, a->momentum};
  pr_NormPlan p = channel_plan(x, x->shape[1], a->eps);
  return norm_result(rt, &op, pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device),
                     name, x, w, b, &p,
                     a->training, &run);
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
                                const int64_t *shape, const pr_Tensor *w, const pr_Tensor *b,
                                double eps) {
  const char *name = prof_op_kind_name(kind);
  if (check_all(rt, name, x, w, b, NULL, NULL) != 0) return NULL;
  if (check_trailing(rt, name, x, nshape, shape) != 0) return NULL;
  if (check_param(rt, name, "weight", w, nshape, shape) != 0 ||
      check_param(rt, name, "bias", b, nshape, shape) != 0)
    return NULL;
  prof_Op op;
  norm_op(&op, kind, x, w, b);
  op.dim = nshape;
  /* rows of the normalised elements: one group of C "channels" per row */
  pr_NormPlan p = {0, 1, 1, 1, kind == PROF_OP_RMS_NORM, eps};
  for (int i = 0; i < nshape; i++) p.C *= shape[i];
  p.N = p.C > 0 ? pr_numel(x) / p.C : 0;
  Running none = {NULL, NULL, 0};
  return norm_result(rt, &op, pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device),
                     name, x, w, b, &p, 1,
                     &none);
}

pr_Tensor *pr_layer_norm(pr_Runtime *rt, const pr_Tensor *x, int nshape, const int64_t *shape,
                         const pr_Tensor *w, const pr_Tensor *b, double eps) {
  return trailing_norm(rt, PROF_OP_LAYER_NORM, x, nshape, shape, w, b, eps);
}

pr_Tensor *pr_rms_norm(pr_Runtime *rt, const pr_Tensor *x, int nshape, const int64_t *shape,
                       const pr_Tensor *w, double eps) {
  /* eps NaN (None): the machine epsilon of the dtype, as torch's rms_norm */
  if (eps != eps) eps = x->dtype == PROF_F64 ? DBL_EPSILON : FLT_EPSILON;
  return trailing_norm(rt, PROF_OP_RMS_NORM, x, nshape, shape, w, NULL, eps);
}

pr_Tensor *pr_group_norm(pr_Runtime *rt, const pr_Tensor *x, int64_t groups, const pr_Tensor *w,
                         const pr_Tensor *b, double eps) {
  char sx[96];
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
  pr_NormPlan p = channel_plan(x, groups, eps);
  Running none = {NULL, NULL, 0};
  return norm_result(rt, &op, pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device),
                     name, x, w, b, &p, 1,
                     &none);
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
                   indices->be->name, w->be->name);
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
  /* a bad index fails before anything is recorded */
  if (pr_holds_values(w)) {
    if (w->dtype != PROF_F32 && w->device == rt->host_device)
      return pr_fail(rt, "embedding: cpu kernels compute float32, got %s",
                     prof_dtype_name(w->dtype));
    if (PR_K(indices)->embedding_check(rt, indices, v) != 0) return NULL;
  }
  prof_Op op;
  pr_op_begin(&op, PROF_OP_EMBEDDING, indices, w, NULL);
  pr_Tensor *out = pr_op_alloc(rt, &op, indices->ndim + 1, shape, w->dtype,
                                                        w->device);
  if (out == NULL) return NULL;
  out = pr_op_end(rt, &op, out, PR_K(out)->embedding(rt, indices, w, out));
  if (out == NULL) return NULL;
  if (!pr_needs_grad(rt, w, NULL, NULL)) return out;
  const pr_Tensor *in[2] = {NULL, w};
  pr_Node *n = pr_node_attach(rt, out, PR_BW_EMBEDDING, "embedding", 2, in);
  pr_Tensor *ic = n != NULL ? pr_contiguous_data(rt, indices) : NULL;
  if (ic == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  n->args.i[0] = padding_idx == NULL ? -1 : *padding_idx < 0 ? *padding_idx + v : *padding_idx;
  pr_node_save(n, 0, ic);
  pr_tensor_release(ic);
  return out;
}

pr_Tensor *pr_dropout(pr_Runtime *rt, const pr_Tensor *x, double p, int training) {
  if (!(p >= 0.0 && p <= 1.0))
    return pr_fail(rt, "dropout: probability has to be between 0 and 1, got %g", p);
  prof_Op op;
  pr_op_begin(&op, PROF_OP_DROPOUT, x, NULL, NULL);
  /* the identity: PyTorch hands back x itself, values and gradient path included */
  if (!training || p == 0.0) return pr_op_finish(rt, &op, pr_tensor_retain((pr_Tensor *)x));
  if (pr_check_float(rt, "dropout", "input", x) != 0) return NULL;
  op.flags |= PROF_OPF_TRAINING;
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device), *mask = NULL;
  if (out == NULL) return NULL;
  int rc = 0;
  /* the mask is the op's too: drawn by the kernel, kept for the backward */
  if (pr_holds_values(out) && (mask = pr_tensor_like(rt, x)) == NULL) rc = PR_ERR;
  if (rc == 0) rc = PR_K(out)->dropout(rt, x, p, mask, out);
  if ((out = pr_op_end(rt, &op, out, rc)) == NULL) return NULL;
  if (pr_needs_grad(rt, x, NULL, NULL)) {
    pr_Node *n = pr_node_attach(rt, out, PR_BW_DROPOUT, "dropout", 1, &x);
    if (n == NULL) {
      pr_tensor_release(out);
      out = NULL;
    } else if (mask != NULL) {
      pr_node_save(n, 0, mask);
    } else {
      pr_node_save_shape(rt, n, 0, x);   /* meta: the product's shape is all the backward needs */
    }
  }
  pr_tensor_release(mask);
  return out;
}
