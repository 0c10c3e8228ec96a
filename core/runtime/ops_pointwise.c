/* ops_pointwise.c — elementwise unary and binary ops, softmax: shapes, checks and records. */
#include "runtime.h"

pr_Tensor *pr_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double alpha) {
  (void)alpha;   /* only the cpu kernels read it */
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_clamp(pr_Runtime *rt, const pr_Tensor *x, double lo, double hi) {
  if (lo > hi) return pr_fail(rt, "clamp: min %g is larger than max %g", lo, hi);
  return pr_unary(rt, PROF_OP_CLAMP, x, 0);
}

pr_Tensor *pr_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w) {
  char sx[96], sw[96];
  if (pr_check_same(rt, "prelu", x, w, NULL) != 0) return NULL;
  int64_t c = x->ndim >= 2 ? x->shape[1] : 1;
  if (w->ndim != 1 || (w->shape[0] != 1 && w->shape[0] != c))
    return pr_fail(rt, "prelu: weight %s must have 1 or %lld (channels of input %s) elements",
                   pr_shape_str(w, sw, sizeof sw), (long long)c, pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  pr_op_begin(&op, PROF_OP_PRELU, x, w, NULL);
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

pr_Tensor *pr_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int dim) {
  char sx[96];
  int d = pr_dim(dim, x->ndim);
  if (d < 0)
    return pr_fail(rt, "%s: dim %d is out of range for input %s", prof_op_kind_name(kind), dim,
                   pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  op.dim = d;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}

/* {====================== binary ops ======================} */

/* The result dtype: integers meeting a float (tensor or fractional scalar) become that float;
   true division and powers of integers give float32, as in PyTorch. */
static int result_dtype(prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b, double s) {
  int dt = a->dtype;
  if (b != NULL && a->dtype >= PROF_I64 && b->dtype < PROF_I64) dt = b->dtype;
  if (b == NULL && dt >= PROF_I64 && s != (double)(int64_t)s) dt = PROF_F32;
  if ((kind == PROF_OP_DIV || kind == PROF_OP_POW) && dt >= PROF_I64) dt = PROF_F32;
  return dt;
}

/* The operand as dtype dt for a cpu kernel: itself, or a converted copy. */
static pr_Tensor *as_dtype(pr_Runtime *rt, const pr_Tensor *t, int dt) {
  if (t == NULL || t->dtype == dt) return t ? pr_tensor_retain((pr_Tensor *)t) : NULL;
  return pr_to(rt, t, dt, -1);
}

/* g * x as a new tensor (x NULL: g * s). */
static pr_Tensor *mul(pr_Runtime *rt, const pr_Tensor *g, const pr_Tensor *x, double s) {
  return pr_binary(rt, PROF_OP_MUL, g, x, s, 0, 0);
}

/* Gradients of a op b: each reduced back to its operand's shape (broadcasting summed away). */
static int binary_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  prof_OpKind kind = (prof_OpKind)n->args.i[0];
  int scalar_first = (int)n->args.i[1];
  double s = n->args.f[1];
  const pr_Tensor *a = n->saved[0], *b = n->saved[1];
  pr_Tensor *ga = NULL, *gb = NULL, *t = NULL, *u = NULL;
  int want_a = n->inputs[0] != NULL, want_b = n->inputs[1] != NULL;
  switch (kind) {
    case PROF_OP_ADD:
      if (want_a) ga = pr_tensor_retain((pr_Tensor *)g);
      if (want_b) gb = pr_tensor_retain((pr_Tensor *)g);
      break;
    case PROF_OP_SUB:
      if (want_a) ga = b == NULL && scalar_first ? mul(rt, g, NULL, -1) : pr_tensor_retain((pr_Tensor *)g);
      if (want_b) gb = mul(rt, g, NULL, -1);
      break;
    case PROF_OP_MUL:
      if (want_a) ga = mul(rt, g, b, s);
      if (want_b) gb = mul(rt, g, a, 0);
      break;
    case PROF_OP_DIV:
      if (b == NULL && scalar_first) {          /* s / a: -s / a^2 */
        t = pr_binary(rt, PROF_OP_MUL, a, a, 0, 0, 0);
        u = t ? pr_binary(rt, PROF_OP_DIV, t, NULL, -s, 1, 0) : NULL;
        if (want_a) ga = u ? mul(rt, g, u, 0) : NULL;
      } else {
        if (want_a) ga = pr_binary(rt, PROF_OP_DIV, g, b, s, 0, 0);
        if (want_b) {                             /* -g a / b^2 */
          t = pr_binary(rt, PROF_OP_MUL, b, b, 0, 0, 0);
          u = t ? pr_binary(rt, PROF_OP_DIV, a, t, 0, 0, 0) : NULL;
          pr_Tensor *v = u ? mul(rt, g, u, 0) : NULL;
          gb = v ? mul(rt, v, NULL, -1) : NULL;
          pr_tensor_release(v);
        }
      }
      break;
    case PROF_OP_POW:
      if (b == NULL && !scalar_first) {          /* a^s: s a^(s-1) */
        t = pr_binary(rt, PROF_OP_POW, a, NULL, s - 1, 0, 0);
        u = t ? mul(rt, t, NULL, s) : NULL;
        if (want_a) ga = u ? mul(rt, g, u, 0) : NULL;
      } else {
        return pr_error(rt, "pow backward: only tensor ** number is differentiable here");
      }
      break;
    case PROF_OP_MAXIMUM:
    case PROF_OP_MINIMUM:
      return pr_error(rt, "%s backward: not differentiable here", prof_op_kind_name(kind));
    default:
      return pr_error(rt, "%s backward: unsupported", prof_op_kind_name(kind));
  }
  pr_tensor_release(t);
  pr_tensor_release(u);
  int rc = 0;
  if (want_a) {
    gin[0] = ga ? pr_sum_to(rt, ga, a) : NULL;
    rc |= gin[0] == NULL;
  }
  if (want_b) {
    gin[1] = gb ? pr_sum_to(rt, gb, b) : NULL;
    rc |= gin[1] == NULL;
  }
  pr_tensor_release(ga);
  pr_tensor_release(gb);
  return rc ? PR_ERR : 0;
}

pr_Tensor *pr_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                     double s, int scalar_first, uint32_t flags) {
  const char *name = prof_op_kind_name(kind);
  int ndim = a->ndim;
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) shape[i] = a->shape[i];
  if (b != NULL) {
    if (a->device != b->device)
      return pr_fail(rt, "%s: expected both tensors on the same device, got %s and %s", name,
                     pr_device_name(a->device), pr_device_name(b->device));
    if (pr_broadcast_shapes(rt, name, a->ndim, a->shape, b->ndim, b->shape, &ndim, shape) != 0)
      return NULL;
  }
  prof_Op op;
  pr_op_begin(&op, kind, a, b, NULL);
  if (b == NULL) {
    op.ninputs = 2;
    op.in[1].ndim = -1;        /* a Python-style scalar operand */
    if (scalar_first) {
      op.in[1] = op.in[0];
      op.in[0].ndim = -1;
    }
  }
  op.flags |= flags;
  int dtype = result_dtype(kind, a, b, s);
  pr_Tensor *out = pr_op_finish(rt, &op, pr_tensor_new(rt, ndim, shape, dtype, a->device));
  if (out == NULL) return NULL;
  if (out->device == PR_CPU) {
    pr_Tensor *ca = as_dtype(rt, a, dtype), *cb = as_dtype(rt, b, dtype);
    int rc = (ca == NULL || (b != NULL && cb == NULL))
                 ? PR_ERR
                 : pr_cpu_binary(rt, kind, ca, cb, s, scalar_first, out);
    pr_tensor_release(ca);
    pr_tensor_release(cb);
    if (rc != 0) {
      pr_tensor_release(out);
      return NULL;
    }
  }
  if (pr_needs_grad(rt, a, b, NULL)) {
    const pr_Tensor *in[2] = {a, b};
    pr_Node *n = pr_node_attach(rt, out, binary_backward, name, 2, in);
    if (n == NULL) {
      pr_tensor_release(out);
      return NULL;
    }
    n->args.i[0] = kind;
    n->args.i[1] = scalar_first;
    n->args.f[1] = s;
    /* sums and differences need only the shapes back; products and quotients the values */
    if (kind == PROF_OP_ADD || kind == PROF_OP_SUB) {
      pr_node_save_shape(rt, n, 0, a);
      pr_node_save_shape(rt, n, 1, b);
    } else {
      pr_node_save(n, 0, (pr_Tensor *)a);
      pr_node_save(n, 1, (pr_Tensor *)b);
    }
  }
  return out;
}
