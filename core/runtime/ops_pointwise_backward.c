/* ops_pointwise_backward.c — gradients of elementwise ops, prelu, softmax (autograd_table.c). */
#include "backward.h"

/* {====================== gradients computed by fused kernels ======================} */

/*
** A tensor shaped like g for a fused backward kernel to fill with a gradient, allocated inside
** op: the backward op name (PROF_OP_CUSTOM) with the given flops, reading nread tensors of g's
** size, left open for the kernel (the caller closes it with pr_work_end). NULL: nothing open.
*/
static pr_Tensor *grad_result(pr_Runtime *rt, prof_Op *op, const char *name, const pr_Tensor *g,
                              const pr_Tensor *x, int64_t flops, int nread) {
  int64_t bytes = pr_numel(g) * prof_dtype_size(g->dtype);
  if (pr_work_begin(rt, op, name, 0, flops, nread * bytes, bytes, g, x, NULL) != 0) return NULL;
  pr_Tensor *t = pr_tensor_like(rt, g);
  if (t == NULL) pr_op_close(rt, op, PR_ERR);
  return t;
}

/*
** Backward names and flops per element under the exact conventions (one per arithmetic op,
** comparison or transcendental), the final multiply by g included.
*/
static const struct {
  const char *name;
  int flops;
} unary_grad[PROF_OP_KIND_COUNT] = {
    [PROF_OP_RELU] = {"relu_backward", 1},             /* x > 0 selects g */
    [PROF_OP_RELU6] = {"relu6_backward", 2},           /* two comparisons */
    [PROF_OP_LEAKY_RELU] = {"leaky_relu_backward", 2}, /* compare, g·slope */
    [PROF_OP_ELU] = {"elu_backward", 4},               /* compare, exp, ·alpha, ·g */
    [PROF_OP_GELU] = {"gelu_backward", 11},            /* cdf 4, pdf 4, x·pdf, add, ·g */
    [PROF_OP_SILU] = {"silu_backward", 9},             /* sigmoid 4, 1 - s, x·, 1 +, s·, ·g */
    [PROF_OP_TANH] = {"tanh_backward", 3},             /* y², 1 -, ·g */
    [PROF_OP_SIGMOID] = {"sigmoid_backward", 3},       /* 1 - y, y·, ·g */
    [PROF_OP_SOFTPLUS] = {"softplus_backward", 6},     /* ·beta, compare, neg, exp, 1 +, g / */
    [PROF_OP_HARDSWISH] = {"hardswish_backward", 5},   /* two comparisons, x/3, + 0.5, ·g */
    /* mish: tanh(softplus) 4, sigmoid 4, 1 - t² 2, x·s·() 2, t +, ·g */
    [PROF_OP_MISH] = {"mish_backward", 14},
    [PROF_OP_NEG] = {"neg_backward", 1},
    [PROF_OP_EXP] = {"exp_backward", 1},               /* g·y */
    [PROF_OP_LOG] = {"log_backward", 1},               /* g / x */
    [PROF_OP_SQRT] = {"sqrt_backward", 2},             /* g / (2y) */
    [PROF_OP_RSQRT] = {"rsqrt_backward", 4},           /* -0.5·g·y³ */
    [PROF_OP_ABS] = {"abs_backward", 2},               /* sign, ·g */
    [PROF_OP_SIN] = {"sin_backward", 2},               /* cos, ·g */
    [PROF_OP_COS] = {"cos_backward", 3},               /* sin, neg, ·g */
    [PROF_OP_ERF] = {"erf_backward", 5},               /* x², neg, exp, ·2/sqrt(pi), ·g */
    [PROF_OP_RECIPROCAL] = {"reciprocal_backward", 3}, /* y², neg, ·g */
    [PROF_OP_CLAMP] = {"clamp_backward", 2},           /* two comparisons */
};

int pr_unary_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  prof_OpKind kind = (prof_OpKind)n->args.i[0];
  prof_Op op;
  pr_Tensor *gx = grad_result(rt, &op, unary_grad[kind].name, g, n->saved[0],
                              pr_numel(g) * unary_grad[kind].flops, n->saved[1] != NULL ? 3 : 2);
  if (gx != NULL)
    gx = pr_op_end(rt, &op, gx,
                   PR_K(gx)->unary_backward(rt, kind, n->saved[0], n->saved[1], g, n->args.f[0],
                                            n->args.f[1], gx));
  gin[0] = gx;
  return gx != NULL ? 0 : PR_ERR;
}

/* dx = x > 0 ? g : w·g; dw = the sum of x·g where x <= 0, per channel (or over everything). */
int pr_prelu_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *x = n->saved[0], *w = n->saved[1];
  int cpu = pr_holds_values(g);
  int64_t flops = 2 * pr_numel(g);   /* per element: compare, multiply */
  if (n->inputs[0] != NULL) {
    prof_Op op;
    gin[0] = grad_result(rt, &op, "prelu_backward", g, x, flops, 2);
    if (gin[0] == NULL) return PR_ERR;
    if (pr_op_close(rt, &op, cpu ? PR_K(g)->prelu_backward(rt, x, w, g, gin[0], NULL) : 0) != 0)
      return PR_ERR;   /* the caller releases what gin holds */
  }
  if (n->inputs[1] != NULL) {
    prof_Op op;
    pr_Tensor *t = grad_result(rt, &op, "prelu_backward", g, x, flops, 2), *s = NULL;
    if (t != NULL &&
        pr_op_close(rt, &op, cpu ? PR_K(g)->prelu_backward(rt, x, w, g, NULL, t) : 0) == 0) {
      int dims[PR_MAX_DIMS], nd = 0;
      for (int d = 0; pr_numel(w) > 1 && d < x->ndim; d++)
        if (d != 1) dims[nd++] = d;
      s = pr_reduce(rt, PROF_OP_SUM, t, pr_numel(w) > 1 ? nd : 0, dims, 0, 0);
    }
    gin[1] = s ? pr_reshape(rt, s, w->ndim, w->shape, 0) : NULL;
    pr_tensor_release(t);
    pr_tensor_release(s);
    if (gin[1] == NULL) return PR_ERR;
  }
  return 0;
}

/*
** From the saved output y, per row of n: softmax g·y, sum, g - s, y·(): 4n - 1 flops;
** log_softmax sum, exp(y), ·s, g - : 4n - 1 as well.
*/
int pr_softmax_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  prof_OpKind kind = (prof_OpKind)n->args.i[0];
  int d = (int)n->args.i[1];
  int64_t len = g->ndim > 0 ? g->shape[d] : 1, numel = pr_numel(g);
  int64_t flops = len > 0 ? 4 * numel - numel / len : 0;
  prof_Op op;
  pr_Tensor *gx = grad_result(rt, &op, kind == PROF_OP_SOFTMAX ? "softmax_backward"
                                                               : "log_softmax_backward",
                              g, n->saved[0], flops, 2);
  if (gx != NULL)
    gx = pr_op_end(rt, &op, gx, PR_K(gx)->softmax_backward(rt, kind, n->saved[0], g, d, gx));
  gin[0] = gx;
  return gx != NULL ? 0 : PR_ERR;
}

/* g * x as a new tensor (x NULL: g * s). */
static pr_Tensor *mul(pr_Runtime *rt, const pr_Tensor *g, const pr_Tensor *x, double s) {
  return pr_binary(rt, PROF_OP_MUL, g, x, s, 0, 0);
}

static const char *name_backward(prof_OpKind kind) {
  return kind == PROF_OP_MAXIMUM ? "maximum_backward" : "minimum_backward";
}

/* Gradients of a op b: each reduced back to its operand's shape (broadcasting summed away). */
int pr_binary_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
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
    case PROF_OP_MINIMUM:              /* in the broadcast shape; summed back below */
      /* per element and gradient: compare for the tie, compare for the loser, halve */
    {
      /* one fused kernel writes both gradients: the two ops are open (nested) around it */
      prof_Op opa, opb;
      if (want_a) ga = grad_result(rt, &opa, name_backward(kind), g, a, 3 * pr_numel(g), 3);
      if (want_b && (!want_a || ga != NULL))
        gb = grad_result(rt, &opb, name_backward(kind), g, b, 3 * pr_numel(g), 3);
      int rc = (want_a && ga == NULL) || (want_b && gb == NULL)
                   ? PR_ERR
                   : PR_K(g)->extremum_backward(rt, kind, a, b, s, g, ga, gb);
      if (gb != NULL) pr_op_close(rt, &opb, 0);
      if (ga != NULL) pr_op_close(rt, &opa, 0);
      if (rc != 0) {
        pr_tensor_release(ga);
        pr_tensor_release(gb);
        ga = gb = NULL;
      }
    }
      break;
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
