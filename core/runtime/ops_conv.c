/* ops_conv.c — conv, conv_transpose and pooling: shapes, checks, records, cpu values, gradients. */
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

/* {====================== geometry and saved arguments ======================} */

static int64_t prod(int n, const int64_t *v) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* The geometry of a conv from input [n, c, *in] to output [n, cout, *out], axes padded to three
   from the front so the kernels index 3-D volumes only. */
static void conv_geom(pr_ConvGeom *g, int nsp, int64_t n, int64_t c, int64_t cout,
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

static int load_args(const pr_Node *n, pr_ConvArgs *a) {
  const int64_t *v = n->args.i;
  memset(a, 0, sizeof *a);
  a->nsp = (int)v[0];
  a->groups = v[1];
  for (int i = 0; i < 3; i++) {
    a->stride[i] = v[2 + i];
    a->padding[i] = v[5 + i];
    a->dilation[i] = v[8 + i];
    a->output_padding[i] = v[11 + i];
  }
  return (int)v[14];
}

/* t with a leading batch dim of 1 when the forward ran unbatched (a view, not a recorded op). */
static pr_Tensor *batched(pr_Runtime *rt, const pr_Tensor *t, int unbatched) {
  if (!unbatched) return pr_tensor_retain((pr_Tensor *)t);
  pr_Tensor tmp;
  const pr_Tensor *b = add_batch(t, t->ndim - 1, &tmp);
  return pr_tensor_view(rt, t, b->ndim, b->shape, b->stride, b->offset);
}

/* Drops the batch dim added by batched(); takes t's reference. */
static pr_Tensor *unbatch(pr_Runtime *rt, pr_Tensor *t, int unbatched) {
  if (t == NULL || !unbatched) return t;
  pr_Tensor *v = pr_tensor_view(rt, t, t->ndim - 1, t->shape + 1, t->stride + 1, t->offset);
  pr_tensor_release(t);
  return v;
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
  conv_op(&op, eff, w->shape + 2);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  pr_Tensor *out = pr_op_alloc(rt, &op, nsp + 2, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  pr_ConvGeom geo;
  conv_geom(&geo, nsp, x->shape[0], x->shape[1], w->shape[0], x->shape + 2, shape + 2,
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
  conv_op(&op, a, w->shape + 2);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  pr_Tensor *out = pr_op_alloc(rt, &op, nsp + 2, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  /* the adjoint of the conv from out's shape to x's, whose weight layout w already is */
  pr_ConvGeom geo;
  conv_geom(&geo, nsp, x->shape[0], cout, x->shape[1], shape + 2, x->shape + 2, w->shape + 2, a);
  return pr_op_end(rt, &op, out, PR_K(out)->conv_input_grad(rt, x, w, b, &geo, out));
}

/* {====================== gradients ======================} */

/*
** How backward work is recorded, so that its counts equal the GEMMs the kernels run (2·M·K·N):
** - a conv's input gradient is a CONV_TRANSPOSE op (gy as input, the same weight, out shaped like
**   x), and a conv_transpose's input gradient a CONV op: exact counts N·C·in·(Cout/groups)·K MACs
**   are the Wᵀ·gy (or W·cols) sgemms summed over samples and groups;
** - the weight gradient is an MM [Cout, N·out] x [N·out, C·K] (a BMM over groups when groups > 1):
**   gy times the unfolded input, the GEMM the kernel runs per sample, summed over the batch;
** - the bias gradient is a SUM of gy over every dim but the channels.
*/
static pr_Tensor *apply_op(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *in,
                           const pr_Tensor *w, const pr_ConvGeom *geo, const pr_ConvArgs *a,
                           const pr_Tensor *like) {
  prof_Op op;
  pr_op_begin(&op, kind, in, w, NULL);
  conv_op(&op, a, w->shape + 2);
  for (int i = 0; i < a->nsp; i++) {
    /* what conv_transpose would need to produce like's size (0 when like is smaller, 'same') */
    int64_t full = (in->shape[2 + i] - 1) * a->stride[i] - 2 * a->padding[i] +
                   a->dilation[i] * (w->shape[2 + i] - 1) + 1;
    int64_t extra = like->shape[2 + i] - full;
    op.output_padding[i] = kind == PROF_OP_CONV_TRANSPOSE && extra > 0 ? extra : 0;
  }
  pr_Tensor *out = pr_op_alloc(rt, &op, like->ndim, like->shape, in->dtype, in->device);
  if (out == NULL) return NULL;
  int rc = kind == PROF_OP_CONV ? PR_K(out)->conv(rt, in, w, NULL, geo, out)
                                : PR_K(out)->conv_input_grad(rt, in, w, NULL, geo, out);
  return pr_op_end(rt, &op, out, rc);
}

static void operand(prof_Operand *o, int ndim, const int64_t *dims, int dtype) {
  o->ndim = ndim;
  o->dtype = dtype;
  for (int i = 0; i < ndim; i++) o->dim[i] = dims[i];
}

/* The weight gradient of the conv from xin to gout (see above), shaped like w. */
static pr_Tensor *weight_grad_op(pr_Runtime *rt, const pr_Tensor *xin, const pr_Tensor *gout,
                                 const pr_Tensor *w, const pr_ConvGeom *geo) {
  int64_t G = geo->groups, cog = geo->cout / G;
  int64_t rows = geo->c / G * prod(3, geo->k), cols = geo->n * prod(3, geo->out);
  int grouped = G > 1, nd = 2 + grouped;
  const int64_t da[3] = {G, cog, cols}, db[3] = {G, cols, rows}, dout[3] = {G, cog, rows};
  prof_Op op;
  pr_op_begin(&op, grouped ? PROF_OP_BMM : PROF_OP_MM, NULL, NULL, NULL);
  op.ninputs = 2;
  operand(&op.in[0], nd, da + !grouped, gout->dtype);
  operand(&op.in[1], nd, db + !grouped, xin->dtype);
  pr_Tensor *r = pr_op_alloc(rt, &op, nd, dout + !grouped, gout->dtype,
                                                     gout->device);
  if (r == NULL) return NULL;
  r = pr_op_end(rt, &op, r, PR_K(r)->conv_weight_grad(rt, xin, gout, geo, r));
  if (r == NULL) return NULL;
  int64_t st[PR_MAX_DIMS], s = 1;
  for (int i = w->ndim - 1; i >= 0; s *= w->shape[i--]) st[i] = s;
  pr_Tensor *v = pr_tensor_view(rt, r, w->ndim, w->shape, st, 0);
  pr_tensor_release(r);
  return v;
}

/* Sum of gy over the batch and spatial dims: [Cout]. */
static pr_Tensor *bias_grad(pr_Runtime *rt, const pr_Tensor *gy) {
  int dims[PR_MAX_DIMS], n = 0;
  for (int d = 0; d < gy->ndim; d++)
    if (d != 1) dims[n++] = d;
  return pr_reduce(rt, PROF_OP_SUM, gy, n, dims, 0, 0);
}

/*
** Gradients of conv (transpose 0) or conv_transpose (1): saved[0] x (or its shape), saved[1] w
** (or its shape). conv_transpose is the adjoint of the conv from its output to its input, so its
** input gradient is that conv applied to gy and its weight gradient that conv's, with the roles
** of input and output swapped: both backwards work on the conv from cin to cout.
*/
static int conv_grads(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin,
                      int transpose) {
  pr_ConvArgs a;
  int unb = load_args(n, &a), rc = PR_ERR;
  const pr_Tensor *w = n->saved[1];
  pr_Tensor *x = batched(rt, n->saved[0], unb), *gy = x ? batched(rt, g, unb) : NULL;
  if (gy == NULL) goto end;
  const pr_Tensor *cin = transpose ? gy : x, *cout = transpose ? x : gy;
  prof_OpKind input_grad = transpose ? PROF_OP_CONV : PROF_OP_CONV_TRANSPOSE;
  pr_ConvGeom geo;
  conv_geom(&geo, a.nsp, x->shape[0], cin->shape[1], cout->shape[1], cin->shape + 2,
            cout->shape + 2, w->shape + 2, &a);
  if (n->inputs[0] != NULL &&
      (gin[0] = unbatch(rt, apply_op(rt, input_grad, gy, w, &geo, &a, x), unb)) == NULL)
    goto end;
  if (n->inputs[1] != NULL && (gin[1] = weight_grad_op(rt, cin, cout, w, &geo)) == NULL) goto end;
  if (n->inputs[2] != NULL && (gin[2] = bias_grad(rt, gy)) == NULL) goto end;
  rc = 0;
end:
  pr_tensor_release(x);
  pr_tensor_release(gy);
  return rc;
}

static int conv_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  return conv_grads(rt, n, g, gin, 0);
}

static int conv_transpose_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g,
                                   pr_Tensor **gin) {
  return conv_grads(rt, n, g, gin, 1);
}

/* Attaches fn to out; each backward needs x only for the weight gradient and w only for the
   input gradient, so the other is kept as a shape. */
static pr_Tensor *attach_conv(pr_Runtime *rt, pr_Tensor *out, pr_BackwardFn fn, const char *name,
                              const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                              const pr_ConvArgs *a, int unbatched) {
  const pr_Tensor *in[3] = {x, w, b};
  pr_Node *n = pr_node_attach(rt, out, fn, name, 3, in);
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
  const pr_Tensor *bx = add_batch(x, a->nsp, &tmp);
  pr_Tensor *out = drop_batch(rt, x, conv(rt, bx, w, b, a, &eff));
  if (out == NULL || !pr_needs_grad(rt, x, w, b)) return out;
  return attach_conv(rt, out, conv_backward, "conv", x, w, b, &eff, bx != x);
}

pr_Tensor *pr_conv_transpose(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                             const pr_Tensor *b, const pr_ConvArgs *a) {
  pr_Tensor tmp;
  const pr_Tensor *bx = add_batch(x, a->nsp, &tmp);
  pr_Tensor *out = drop_batch(rt, x, conv_transpose(rt, bx, w, b, a));
  if (out == NULL || !pr_needs_grad(rt, x, w, b)) return out;
  return attach_conv(rt, out, conv_transpose_backward, "conv_transpose", x, w, b, a, bx != x);
}

/* {====================== pooling ======================} */

static int is_max_pool(prof_OpKind kind) {
  return kind == PROF_OP_MAX_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL;
}

/* Pool geometry of x (leading dims folded into planes) to out, axes padded to three. */
static void pool_geom(pr_PoolGeom *g, const pr_Tensor *x, const pr_Tensor *out, int nsp,
                      const int64_t *args) {
  int lead = x->ndim - nsp;
  g->planes = prod(lead, x->shape);
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

static void pool_fields(prof_Op *op, int nsp, const int64_t *args) {
  for (int i = 0; i < nsp; i++) {
    op->kernel[i] = args[0 + i];
    op->stride[i] = args[3 + i];
    op->padding[i] = args[6 + i];
    op->dilation[i] = args[9 + i];
  }
}

static int64_t nbytes(const prof_Operand *o) {
  int64_t n = prof_dtype_size(o->dtype);
  for (int i = 0; i < o->ndim; i++) n *= o->dim[i];
  return n;
}

/*
** A pool's backward records one op: a COPY for the max pools (the gradient is only moved to the
** saved argmax, read alongside it), and for the average pools a custom op carrying the forward's
** count (every add of a window has its add back) and the bytes of gy read and gx written.
*/
static int pool_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const int64_t *args = n->args.i;
  prof_OpKind kind = (prof_OpKind)args[13];
  int nsp = (int)args[14];
  const pr_Tensor *x = n->saved[0];
  prof_Op op;
  pr_op_begin(&op, PROF_OP_COPY, g, NULL, NULL);
  if (is_max_pool(kind)) {
    operand(&op.in[op.ninputs++], g->ndim, g->shape, PROF_I64);
  } else if (rt->rec != NULL) {
    prof_Op fwd;
    pr_op_begin(&fwd, kind, x, NULL, NULL);
    pool_fields(&fwd, nsp, args);
    pr_operand(g, &fwd.out);
    if (prof_op_count(rt->rec, &fwd) != PROF_OK)
      return pr_error(rt, "%s backward: %s", prof_op_kind_name(kind), prof_errmsg(rt->rec));
    op.kind = PROF_OP_CUSTOM;
    op.flops = fwd.flops;
    op.bytes_read = nbytes(&fwd.out);
    op.bytes_written = nbytes(&fwd.in[0]);
  }
  pr_Tensor *gx = pr_op_alloc(rt, &op, x->ndim, x->shape, g->dtype, g->device);
  if (gx == NULL) return PR_ERR;
  pr_PoolGeom geo;
  pool_geom(&geo, x, g, nsp, args);
  gx = pr_op_end(rt, &op, gx, PR_K(gx)->pool_backward(rt, kind, g, n->saved[1], &geo, gx));
  gin[0] = gx;
  return gx != NULL ? 0 : PR_ERR;
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
  pool_fields(&op, nsp, args);
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  int grad = pr_needs_grad(rt, x, NULL, NULL);
  pr_Tensor *idx = NULL;
  int rc = 0;
  if (pr_holds_values(out)) {
    pr_PoolGeom geo;
    pool_geom(&geo, x, out, nsp, args);
    /* the argmax of every window, kept for the backward (an internal tensor, not an op) */
    if (grad && is_max_pool(kind))
      idx = pr_tensor_new(rt, out->ndim, out->shape, PROF_I64, out->device);
    rc = grad && is_max_pool(kind) && idx == NULL ? PR_ERR
                                                  : PR_K(out)->pool(rt, kind, x, &geo, out, idx);
  }
  if ((out = pr_op_end(rt, &op, out, rc)) == NULL) {
    pr_tensor_release(idx);
    return NULL;
  }
  if (!grad) return out;
  pr_Node *n = pr_node_attach(rt, out, pool_backward, name, 1, &x);
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
