/* ops_conv.c — conv, conv_transpose and pooling: shapes, checks, records, cpu values, nodes. */
#include <string.h>

#include "backward.h"

/*
** PyTorch also takes unbatched input [C, *sp]: it runs as a batch of one, and the result drops
** the batch dim again. pr_conv_add_batch gives x's batched twin; drop_batch turns the result back.
*/
const pr_Tensor *pr_conv_add_batch(const pr_Tensor *x, int nsp, pr_Tensor *tmp) {
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

void pr_conv_op(prof_Op *op, const pr_ConvArgs *a, const int64_t *kernel) {
  for (int i = 0; i < a->nsp; i++) {
    op->kernel[i] = kernel[i];
    op->stride[i] = a->stride[i];
    op->padding[i] = a->padding[i];
    op->dilation[i] = a->dilation[i];
    op->output_padding[i] = a->output_padding[i];
  }
  op->groups = a->groups;
}

/* {====================== geometry and saved arguments ======================} */

int64_t pr_conv_prod(int n, const int64_t *v) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* The geometry of a conv from input [n, c, *in] to output [n, cout, *out], axes padded to three
   from the front so the kernels index 3-D volumes only. */
void pr_conv_geom(pr_ConvGeom *g, int nsp, int64_t n, int64_t c, int64_t cout,
                  const int64_t *in, const int64_t *out, const int64_t *k,
                  const pr_ConvArgs *a) {
  g->n = n;
  g->c = c;
  g->cout = cout;
  g->groups = a->groups;
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - nsp), real = j >= 0;
    g->in[i] = real ? in[j] : 1;
    g->out[i] = real ? out[j] : 1;
    g->k[i] = real ? k[j] : 1;
    g->stride[i] = real ? a->stride[j] : 1;
    g->pad[i] = real ? a->padding[j] : 0;
    g->dil[i] = real ? a->dilation[j] : 1;
  }
}

/* Node args of both convs: nsp, groups, stride, padding (resolved), dilation, output_padding,
   and whether the input was unbatched. */
static void save_args(pr_Node *n, const pr_ConvArgs *a, int unbatched) {
  int64_t *v = n->args.i;
  v[0] = a->nsp;
  v[1] = a->groups;
  for (int i = 0; i < 3; i++) {
    v[2 + i] = a->stride[i];
    v[5 + i] = a->padding[i];
    v[8 + i] = a->dilation[i];
    v[11 + i] = a->output_padding[i];
  }
  v[14] = unbatched;
}

/* The functional's name by kind and spatial dims ("conv2d", "max_pool3d"): its op's and node's. */
static const char *spatial_name(prof_OpKind kind, int nsp) {
  static const char *const names[][3] = {
      {"conv1d", "conv2d", "conv3d"},
      {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"},
      {"max_pool1d", "max_pool2d", "max_pool3d"},
      {"avg_pool1d", "avg_pool2d", "avg_pool3d"},
      {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"},
      {"adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}};
  int row = kind == PROF_OP_CONV ? 0 : kind == PROF_OP_CONV_TRANSPOSE ? 1
            : kind == PROF_OP_MAX_POOL ? 2 : kind == PROF_OP_AVG_POOL ? 3
            : kind == PROF_OP_ADAPTIVE_AVG_POOL ? 4 : kind == PROF_OP_ADAPTIVE_MAX_POOL ? 5 : -1;
  if (row < 0 || nsp < 1 || nsp > 3) return prof_op_kind_name(kind);
  return names[row][nsp - 1];
}

/* {====================== forward ======================} */

static pr_Tensor *conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                       const pr_ConvArgs *a, pr_ConvArgs *eff) {
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
  *eff = *a;
  for (int i = 0; i < nsp; i++) {
    int64_t k = w->shape[2 + i], in = x->shape[2 + i];
    if (a->padding_same) {
      if (a->stride[i] != 1) return pr_fail(rt, "conv%dd: padding='same' needs stride 1", nsp);
      /* PyTorch pads d(k-1) in total, the extra one on the right; the op reports the left side
         and the kernels clip the right side by the output size */
      eff->padding[i] = a->dilation[i] * (k - 1) / 2;
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
  op.name = spatial_name(PROF_OP_CONV, nsp);
  pr_conv_op(&op, eff, w->shape + 2);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  pr_Tensor *out = pr_op_alloc(rt, &op, nsp + 2, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  pr_ConvGeom geo;
  pr_conv_geom(&geo, nsp, x->shape[0], x->shape[1], w->shape[0], x->shape + 2, shape + 2,
            w->shape + 2, eff);
  return pr_op_end(rt, &op, out, PR_K(out)->conv(rt, x, w, b, &geo, out));
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
    shape[2 + i] =
        (x->shape[2 + i] - 1) * s - 2 * a->padding[i] + d * (w->shape[2 + i] - 1) + op_ + 1;
    if (shape[2 + i] < 1)
      return pr_fail(rt, "conv_transpose%dd: output size %lld is not positive", nsp,
                     (long long)shape[2 + i]);
  }
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CONV_TRANSPOSE, x, w, b);
  op.name = spatial_name(PROF_OP_CONV_TRANSPOSE, nsp);
  pr_conv_op(&op, a, w->shape + 2);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  pr_Tensor *out = pr_op_alloc(rt, &op, nsp + 2, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  /* the adjoint of the conv from out's shape to x's, whose weight layout w already is */
  pr_ConvGeom geo;
  pr_conv_geom(&geo, nsp, x->shape[0], cout, x->shape[1], shape + 2, x->shape + 2, w->shape + 2, a);
  return pr_op_end(rt, &op, out, PR_K(out)->conv_input_grad(rt, x, w, b, &geo, out));
}

/* Attaches the backward id to out; each backward needs x only for the weight gradient and w only for the
   input gradient, so the other is kept as a shape. */
static pr_Tensor *attach_conv(pr_Runtime *rt, pr_Tensor *out, int backward, const char *name,
                              const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                              const pr_ConvArgs *a, int unbatched) {
  const pr_Tensor *in[3] = {x, w, b};
  pr_Node *n = pr_node_attach(rt, out, backward, name, 3, in);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  if (n->inputs[1] != NULL) pr_node_save(n, 0, (pr_Tensor *)x);
  else pr_node_save_shape(rt, n, 0, x);
  if (n->inputs[0] != NULL) pr_node_save(n, 1, (pr_Tensor *)w);
  else pr_node_save_shape(rt, n, 1, w);
  save_args(n, a, unbatched);
  return out;
}

pr_Tensor *pr_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                   const pr_ConvArgs *a) {
  pr_Tensor tmp;
  pr_ConvArgs eff;
  const pr_Tensor *bx = pr_conv_add_batch(x, a->nsp, &tmp);
  pr_Tensor *out = drop_batch(rt, x, conv(rt, bx, w, b, a, &eff));
  if (out == NULL || !pr_needs_grad(rt, x, w, b)) return out;
  return attach_conv(rt, out, PR_BW_CONV, spatial_name(PROF_OP_CONV, a->nsp), x, w, b, &eff,
                     bx != x);
}

pr_Tensor *pr_conv_transpose(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                             const pr_Tensor *b, const pr_ConvArgs *a) {
  pr_Tensor tmp;
  const pr_Tensor *bx = pr_conv_add_batch(x, a->nsp, &tmp);
  pr_Tensor *out = drop_batch(rt, x, conv_transpose(rt, bx, w, b, a));
  if (out == NULL || !pr_needs_grad(rt, x, w, b)) return out;
  return attach_conv(rt, out, PR_BW_CONV_TRANSPOSE, spatial_name(PROF_OP_CONV_TRANSPOSE, a->nsp),
                     x, w, b, a, bx != x);
}

/* {====================== pooling ======================} */

int pr_is_max_pool(prof_OpKind kind) {
  return kind == PROF_OP_MAX_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL;
}

/* Pool geometry of x (leading dims folded into planes) to out, axes padded to three. */
void pr_pool_geom(pr_PoolGeom *g, const pr_Tensor *x, const pr_Tensor *out, int nsp,
                  const int64_t *args) {
  int lead = x->ndim - nsp;
  g->planes = pr_conv_prod(lead, x->shape);
  g->count_include_pad = (int)args[12];
  g->divisor_override = args[15];
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - nsp), real = j >= 0;
    g->in[i] = real ? x->shape[lead + j] : 1;
    g->out[i] = real ? out->shape[lead + j] : 1;
    g->k[i] = real ? args[0 + j] : 1;
    g->stride[i] = real ? args[3 + j] : 1;
    g->pad[i] = real ? args[6 + j] : 0;
    g->dil[i] = real ? args[9 + j] : 1;
  }
}

/* Node args: kernel, stride, padding, dilation (3 each), count_include_pad, kind, nsp,
   divisor_override. */
static void pool_args(int64_t *v, prof_OpKind kind, const pr_PoolArgs *a) {
  for (int i = 0; i < 3; i++) {
    v[0 + i] = a->kernel[i];
    v[3 + i] = a->stride[i];
    v[6 + i] = a->padding[i];
    v[9 + i] = a->dilation[i];
  }
  v[12] = a->count_include_pad;
  v[13] = kind;
  v[14] = a->nsp;
  v[15] = kind == PROF_OP_AVG_POOL ? a->divisor_override : 0;
}

void pr_pool_fields(prof_Op *op, int nsp, const int64_t *args) {
  for (int i = 0; i < nsp; i++) {
    op->kernel[i] = args[0 + i];
    op->stride[i] = args[3 + i];
    op->padding[i] = args[6 + i];
    op->dilation[i] = args[9 + i];
  }
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
  int64_t args[16];
  pool_args(args, kind, a);
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  op.name = spatial_name(kind, nsp);
  pr_pool_fields(&op, nsp, args);
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  int grad = pr_needs_grad(rt, x, NULL, NULL);
  pr_Tensor *idx = NULL;
  int rc = 0;
  if (pr_holds_values(out)) {
    pr_PoolGeom geo;
    pr_pool_geom(&geo, x, out, nsp, args);
    /* the argmax of every window, kept for the backward (an internal tensor, not an op) */
    if (grad && pr_is_max_pool(kind))
      idx = pr_tensor_new(rt, out->ndim, out->shape, PROF_I64, out->device);
    rc = grad && pr_is_max_pool(kind) && idx == NULL ? PR_ERR
                                                  : PR_K(out)->pool(rt, kind, x, &geo, out, idx);
  }
  if ((out = pr_op_end(rt, &op, out, rc)) == NULL) {
    pr_tensor_release(idx);
    return NULL;
  }
  if (!grad) return out;
  pr_Node *n = pr_node_attach(rt, out, PR_BW_POOL, op.name, 1, &x);
  if (n == NULL) {
    pr_tensor_release(idx);
    pr_tensor_release(out);
    return NULL;
  }
  pr_node_save_shape(rt, n, 0, x);
  pr_node_save(n, 1, idx);
  pr_tensor_release(idx);
  memcpy(n->args.i, args, sizeof args);
  return out;
}
