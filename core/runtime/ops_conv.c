/* ops_conv.c — convolution, transposed convolution and pooling: output shapes, checks, records. */
#include <string.h>

#include "runtime.h"

/*
** PyTorch also takes unbatched input [C, *sp]: it runs as a batch of one, and the result drops
** the batch dim again. add_batch gives x's batched twin; drop_batch turns the result back.
*/
static const pr_Tensor *add_batch(const pr_Tensor *x, int nsp, pr_Tensor *tmp) {
  if (x->ndim != nsp + 1) return x;
  *tmp = *x;
  tmp->ndim = x->ndim + 1;
  tmp->shape[0] = 1;
  tmp->stride[0] = x->ndim > 0 ? x->shape[0] * x->stride[0] : 1;
  memcpy(tmp->shape + 1, x->shape, sizeof *x->shape * (size_t)x->ndim);
  memcpy(tmp->stride + 1, x->stride, sizeof *x->stride * (size_t)x->ndim);
  return tmp;
}

static pr_Tensor *drop_batch(pr_Runtime *rt, const pr_Tensor *x, pr_Tensor *out) {
  if (out == NULL || out->ndim == x->ndim) return out;
  pr_Tensor *v = pr_tensor_view(rt, out, out->ndim - 1, out->shape + 1, out->stride + 1, out->offset);
  pr_tensor_release(out);
  return v;
}

/* PyTorch's output length of a strided, padded, dilated window; -1 when the window never fits. */
static int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  if (span < 0) return -1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  /* ceil mode: the last window must start inside the input or its left padding */
  if (ceil_mode && (out - 1) * s >= in + p) out--;
  return out;
}

static void conv_op(prof_Op *op, const pr_ConvArgs *a, const int64_t *kernel) {
  for (int i = 0; i < a->nsp; i++) {
    op->kernel[i] = kernel[i];
    op->stride[i] = a->stride[i];
    op->padding[i] = a->padding[i];
    op->dilation[i] = a->dilation[i];
    op->output_padding[i] = a->output_padding[i];
  }
  op->groups = a->groups;
}

static pr_Tensor *conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                       const pr_ConvArgs *a) {
  char sx[96], sw[96];
  int nsp = a->nsp;
  if (pr_check_same(rt, "conv", x, w, b) != 0) return NULL;
  if (x->ndim != nsp + 2 || w->ndim != nsp + 2)
    return pr_fail(rt, "conv%dd: expected a %d-d input [N, C, ...] (or unbatched [C, ...]) and a %d-d weight, got input %s "
                   "and weight %s", nsp, nsp + 2, nsp + 2, pr_shape_str(x, sx, sizeof sx),
                   pr_shape_str(w, sw, sizeof sw));
  int64_t g = a->groups;
  if (g < 1 || w->shape[0] % g != 0 || x->shape[1] != w->shape[1] * g)
    return pr_fail(rt, "conv%dd: input %s has %lld channels but weight %s with groups=%lld expects "
                   "%lld", nsp, pr_shape_str(x, sx, sizeof sx), (long long)x->shape[1],
                   pr_shape_str(w, sw, sizeof sw), (long long)g, (long long)(w->shape[1] * g));
  if (b != NULL && (b->ndim != 1 || b->shape[0] != w->shape[0]))
    return pr_fail(rt, "conv%dd: bias does not match weight %s", nsp, pr_shape_str(w, sw, sizeof sw));
  int64_t shape[PR_MAX_DIMS] = {x->shape[0], w->shape[0]};
  pr_ConvArgs eff = *a;
  for (int i = 0; i < nsp; i++) {
    int64_t k = w->shape[2 + i], in = x->shape[2 + i];
    if (a->padding_same) {
      if (a->stride[i] != 1) return pr_fail(rt, "conv%dd: padding='same' needs stride 1", nsp);
      /* PyTorch pads d(k-1) in total, the extra one on the right; the op reports the left side */
      eff.padding[i] = a->dilation[i] * (k - 1) / 2;
      shape[2 + i] = in;
    } else {
      shape[2 + i] = window_out(in, k, a->stride[i], a->padding[i], a->dilation[i], 0);
      if (shape[2 + i] < 1)
        return pr_fail(rt, "conv%dd: input %s is smaller than the kernel %s after padding", nsp,
                       pr_shape_str(x, sx, sizeof sx), pr_shape_str(w, sw, sizeof sw));
    }
  }
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CONV, x, w, b);
  conv_op(&op, &eff, w->shape + 2);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  return pr_op_finish(rt, &op, pr_tensor_new(rt, nsp + 2, shape, x->dtype, x->device));
}

static pr_Tensor *conv_transpose(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                                 const pr_Tensor *b, const pr_ConvArgs *a) {
  char sx[96], sw[96];
  int nsp = a->nsp;
  if (pr_check_same(rt, "conv_transpose", x, w, b) != 0) return NULL;
  if (x->ndim != nsp + 2 || w->ndim != nsp + 2)
    return pr_fail(rt, "conv_transpose%dd: expected a %d-d input and weight, got input %s and "
                   "weight %s", nsp, nsp + 2, pr_shape_str(x, sx, sizeof sx),
                   pr_shape_str(w, sw, sizeof sw));
  int64_t g = a->groups;
  if (g < 1 || x->shape[1] != w->shape[0] || w->shape[0] % g != 0)
    return pr_fail(rt, "conv_transpose%dd: input %s has %lld channels but weight %s expects %lld",
                   nsp, pr_shape_str(x, sx, sizeof sx), (long long)x->shape[1],
                   pr_shape_str(w, sw, sizeof sw), (long long)w->shape[0]);
  int64_t cout = w->shape[1] * g;
  if (b != NULL && (b->ndim != 1 || b->shape[0] != cout))
    return pr_fail(rt, "conv_transpose%dd: bias does not match %lld output channels", nsp,
                   (long long)cout);
  int64_t shape[PR_MAX_DIMS] = {x->shape[0], cout};
  for (int i = 0; i < nsp; i++) {
    int64_t s = a->stride[i], d = a->dilation[i], op_ = a->output_padding[i];
    if (op_ >= s && op_ >= d)
      return pr_fail(rt, "conv_transpose%dd: output_padding %lld must be smaller than stride or "
                     "dilation", nsp, (long long)op_);
    shape[2 + i] = (x->shape[2 + i] - 1) * s - 2 * a->padding[i] + d * (w->shape[2 + i] - 1) + op_ + 1;
    if (shape[2 + i] < 1)
      return pr_fail(rt, "conv_transpose%dd: output size %lld is not positive", nsp,
                     (long long)shape[2 + i]);
  }
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CONV_TRANSPOSE, x, w, b);
  conv_op(&op, a, w->shape + 2);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  return pr_op_finish(rt, &op, pr_tensor_new(rt, nsp + 2, shape, x->dtype, x->device));
}

pr_Tensor *pr_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                   const pr_ConvArgs *a) {
  pr_Tensor tmp;
  return drop_batch(rt, x, conv(rt, add_batch(x, a->nsp, &tmp), w, b, a));
}

pr_Tensor *pr_conv_transpose(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                             const pr_Tensor *b, const pr_ConvArgs *a) {
  pr_Tensor tmp;
  return drop_batch(rt, x, conv_transpose(rt, add_batch(x, a->nsp, &tmp), w, b, a));
}

pr_Tensor *pr_pool(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolArgs *a) {
  char sx[96];
  int nsp = a->nsp;
  const char *name = prof_op_kind_name(kind);
  /* PyTorch accepts unbatched [C, *sp] input as well as [N, C, *sp]. */
  if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
    return pr_fail(rt, "%s%dd: expected a %d-d or %d-d input, got %s", name, nsp, nsp + 1, nsp + 2,
                   pr_shape_str(x, sx, sizeof sx));
  int lead = x->ndim - nsp;
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < lead; i++) shape[i] = x->shape[i];
  int adaptive = kind == PROF_OP_ADAPTIVE_AVG_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL;
  for (int i = 0; i < nsp; i++) {
    int64_t in = x->shape[lead + i];
    if (adaptive) {
      shape[lead + i] = a->output_size[i] > 0 ? a->output_size[i] : in;
      continue;
    }
    if (2 * a->padding[i] > a->kernel[i])
      return pr_fail(rt, "%s%dd: padding %lld must be at most half the kernel size %lld", name,
                     nsp, (long long)a->padding[i], (long long)a->kernel[i]);
    shape[lead + i] = window_out(in, a->kernel[i], a->stride[i], a->padding[i], a->dilation[i],
                                 a->ceil_mode);
    if (shape[lead + i] < 1)
      return pr_fail(rt, "%s%dd: input %s is too small for kernel %lld", name, nsp,
                     pr_shape_str(x, sx, sizeof sx), (long long)a->kernel[i]);
  }
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  for (int i = 0; i < nsp; i++) {
    op.kernel[i] = a->kernel[i];
    op.stride[i] = a->stride[i];
    op.padding[i] = a->padding[i];
    op.dilation[i] = a->dilation[i];
  }
  return pr_op_finish(rt, &op, pr_tensor_new(rt, x->ndim, shape, x->dtype, x->device));
}
