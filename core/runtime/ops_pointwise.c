/* ops_pointwise.c — elementwise unary and binary ops, prelu, softmax: checks, records, nodes. */
#include "runtime.h"

/* Kinds whose derivative is cheaper from the output than from the input. */
static int grad_reads_output(prof_OpKind kind) {
  return kind == PROF_OP_EXP || kind == PROF_OP_TANH || kind == PROF_OP_SIGMOID ||
         kind == PROF_OP_SQRT || kind == PROF_OP_RSQRT || kind == PROF_OP_RECIPROCAL;
}

/* {====================== unary ops, prelu, softmax ======================} */

pr_Tensor *pr_unary_ex(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,
                       uint32_t flags) {
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  op.flags |= flags;
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  out = pr_op_end(rt, &op, out, PR_K(out)->unary(rt, kind, x, a, b, out));
  if (out == NULL) return NULL;
  if (!pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *n = pr_node_attach(rt, out, PR_BW_UNARY, prof_op_kind_name(kind), 1, &x);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  n->args.i[0] = kind;
  n->args.f[0] = a;
  n->args.f[1] = b;
  pr_node_save(n, 0, (pr_Tensor *)x);
  if (grad_reads_output(kind)) pr_node_save(n, 1, out);
  return out;
}

pr_Tensor *pr_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double alpha) {
  return pr_unary_ex(rt, kind, x, alpha, kind == PROF_OP_SOFTPLUS ? 20.0 : 0.0, 0);
}

pr_Tensor *pr_clamp(pr_Runtime *rt, const pr_Tensor *x, double lo, double hi) {
  if (lo > hi) return pr_fail(rt, "clamp: min %g is larger than max %g", lo, hi);
  return pr_unary_ex(rt, PROF_OP_CLAMP, x, lo, hi, 0);
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
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  out = pr_op_end(rt, &op, out, PR_K(out)->prelu(rt, x, w, out));
  if (out == NULL) return NULL;
  if (!pr_needs_grad(rt, x, w, NULL)) return out;
  const pr_Tensor *in[2] = {x, w};
  pr_Node *n = pr_node_attach(rt, out, PR_BW_PRELU, "prelu", 2, in);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  pr_node_save(n, 0, (pr_Tensor *)x);
  pr_node_save(n, 1, (pr_Tensor *)w);
  return out;
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
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  out = pr_op_end(rt, &op, out, PR_K(out)->softmax(rt, kind, x, d, out));
  if (out == NULL) return NULL;
  if (!pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *n = pr_node_attach(rt, out, PR_BW_SOFTMAX, prof_op_kind_name(kind), 1, &x);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  n->args.i[0] = kind;
  n->args.i[1] = d;
  pr_node_save(n, 0, out);
  return out;
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

pr_Tensor *pr_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                     double s, int scalar_first, uint32_t flags) {
  const char *name = prof_op_kind_name(kind);
  int ndim = a->ndim;
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) shape[i] = a->shape[i];
  if (b != NULL) {
    if (a->device != b->device)
      return pr_fail(rt, "%s: expected both tensors on the same device, got %s and %s", name,
                     a->be->name, b->be->name);
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
  pr_Tensor *out = pr_op_alloc(rt, &op, ndim, shape, dtype, a->device);
  if (out == NULL) return NULL;
  if (pr_holds_values(out)) {
    pr_Tensor *ca = as_dtype(rt, a, dtype), *cb = as_dtype(rt, b, dtype);
    int rc = (ca == NULL || (b != NULL && cb == NULL))
                 ? PR_ERR
                 : PR_K(out)->binary(rt, kind, ca, cb, s, scalar_first, out);
    pr_tensor_release(ca);
    pr_tensor_release(cb);
    if ((out = pr_op_end(rt, &op, out, rc)) == NULL) return NULL;
  } else {
    out = pr_op_end(rt, &op, out, 0);
  }
  if (pr_needs_grad(rt, a, b, NULL)) {
    const pr_Tensor *in[2] = {a, b};
    pr_Node *n = pr_node_attach(rt, out, PR_BW_BINARY, name, 2, in);
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
