/* ops_conv_backward.c — gradients of conv, conv_transpose and the pools (autograd_table.c). */
#include <string.h>

#include "backward.h"

/* The arguments ops_conv.c saved on the node; returns whether the input was unbatched. */
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
  const pr_Tensor *b = pr_conv_add_batch(t, t->ndim - 1, &tmp);
  return pr_tensor_view(rt, t, b->ndim, b->shape, b->stride, b->offset);
}

/* Drops the batch dim added by batched(); takes t's reference. */
static pr_Tensor *unbatch(pr_Runtime *rt, pr_Tensor *t, int unbatched) {
  if (t == NULL || !unbatched) return t;
  pr_Tensor *v = pr_tensor_view(rt, t, t->ndim - 1, t->shape + 1, t->stride + 1, t->offset);
  pr_tensor_release(t);
  return v;
}

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
  pr_conv_op(&op, a, w->shape + 2);
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
  int64_t rows = geo->c / G * pr_conv_prod(3, geo->k), cols = geo->n * pr_conv_prod(3, geo->out);
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
  pr_conv_geom(&geo, a.nsp, x->shape[0], cin->shape[1], cout->shape[1], cin->shape + 2,
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

int pr_conv_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  return conv_grads(rt, n, g, gin, 0);
}

int pr_conv_transpose_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g,
                               pr_Tensor **gin) {
  return conv_grads(rt, n, g, gin, 1);
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
int pr_pool_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const int64_t *args = n->args.i;
  prof_OpKind kind = (prof_OpKind)args[13];
  int nsp = (int)args[14];
  const pr_Tensor *x = n->saved[0];
  prof_Op op;
  pr_op_begin(&op, PROF_OP_COPY, g, NULL, NULL);
  if (pr_is_max_pool(kind)) {
    operand(&op.in[op.ninputs++], g->ndim, g->shape, PROF_I64);
  } else if (rt->rec != NULL) {
    prof_Op fwd;
    pr_op_begin(&fwd, kind, x, NULL, NULL);
    pr_pool_fields(&fwd, nsp, args);
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
  pr_pool_geom(&geo, x, g, nsp, args);
  gx = pr_op_end(rt, &op, gx, PR_K(gx)->pool_backward(rt, kind, g, n->saved[1], &geo, gx));
  gin[0] = gx;
  return gx != NULL ? 0 : PR_ERR;
}
