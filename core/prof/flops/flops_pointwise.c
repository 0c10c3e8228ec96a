/* flops_pointwise.c — flop formulas of elementwise work, reductions, norms and losses. */
#include "flops_internal.h"

/*
** Exact costs follow one rule: each arithmetic operation, comparison or evaluation of a
** transcendental function (exp, log, tanh, erf, rsqrt) is one flop; integer index work is free.
*/

/* {====================== activations ======================} */

typedef struct ActCost {
  int exact;                   /* flops per element, exact */
  int ds;                      /* flops per element, deepspeed (only the patched F.* count) */
} ActCost;

static const ActCost act_cost[] = {
  [PROF_OP_RELU] = {1, 1},       /* max(x, 0) */
  [PROF_OP_RELU6] = {2, 1},      /* min(max(x, 0), 6) */
  [PROF_OP_LEAKY_RELU] = {2, 1}, /* compare, multiply by the slope */
  [PROF_OP_PRELU] = {2, 1},      /* compare, multiply by the learnt slope */
  [PROF_OP_ELU] = {4, 1},        /* compare, exp, -1, multiply by alpha */
  [PROF_OP_GELU] = {5, 1},       /* 0.5·x·(1 + erf(x/sqrt 2)): mul, erf, add, mul, mul */
  [PROF_OP_SILU] = {5, 1},       /* x·sigmoid(x): sigmoid 4 + mul */
  [PROF_OP_TANH] = {1, 0},       /* one transcendental */
  [PROF_OP_SIGMOID] = {4, 0},    /* 1/(1 + exp(-x)): neg, exp, add, divide */
  [PROF_OP_SOFTPLUS] = {3, 0},   /* log(1 + exp(x)): exp, add, log */
  [PROF_OP_HARDSWISH] = {5, 0},  /* x·min(max(x + 3, 0), 6)/6: add, max, min, mul, div */
  [PROF_OP_MISH] = {5, 0},       /* x·tanh(softplus(x)): softplus 3, tanh, mul */
};

int profF_activation(const profF_Ctx *c, prof_Op *op) {
  int nin = op->kind == PROF_OP_PRELU ? 2 : 1;
  int rc = profF_need_inputs(c, op, nin, nin);
  if (rc != PROF_OK) return rc;
  const ActCost *k = &act_cost[op->kind];
  op->macs = 0;
  op->flops = profF_mul(profF_numel(&op->in[0]), PROFF_DS(c) ? k->ds : k->exact);
  return PROF_OK;
}

/* {====================== softmax ======================} */

/* Normalises a Python-style dim against ndim (a 0-d tensor takes 0 and -1). -1: out of range. */
static int norm_dim(int64_t dim, int ndim) {
  int n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n) return -1;
  return (int)(dim < 0 ? dim + n : dim);
}

/*
** exact, per row of n elements: softmax = max (n-1 comparisons), subtract (n), exp (n),
** sum (n-1), divide (n) = 5n - 2; log_softmax = max, subtract, exp, sum, one log, subtract
** = 5n - 1. deepspeed: softmax numel, log_softmax 0 (not patched).
*/
int profF_softmax(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 1);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0];
  int d = norm_dim(op->dim, x->ndim);
  if (d < 0)
    return profF_fail(c, op, "dim %lld out of range for input %s", (long long)op->dim,
                      PROFF_SHAPE(x));
  op->macs = 0;
  if (PROFF_DS(c)) {
    op->flops = op->kind == PROF_OP_SOFTMAX ? profF_numel(x) : 0;
    return PROF_OK;
  }
  int64_t n = x->ndim > 0 ? x->dim[d] : 1;
  if (n == 0) return PROF_OK;
  int64_t rows = 1;
  for (int i = 0; i < x->ndim; i++)
    if (i != d) rows = profF_mul(rows, x->dim[i]);
  int64_t per_row = profF_sub(profF_mul(5, n), op->kind == PROF_OP_SOFTMAX ? 2 : 1);
  op->flops = profF_mul(rows, per_row);
  return PROF_OK;
}

/* {====================== normalisation ======================} */

/*
** exact, per group of n elements (a row, a channel, a group), two-pass as written in the
** definition: mean (n-1 adds, 1 divide), variance (n subtracts, n squares, n-1 adds, 1 divide),
** eps add and rsqrt: 4n + 2; normalise (x - mean)·rstd: 2n; weight multiply n; bias add n.
** batch_norm in eval uses the running statistics: eps add and rsqrt per channel, 2 per element.
** rms_norm: squares n, n-1 adds, divide, eps add, rsqrt (2n + 2); scale n; weight n.
** deepspeed: batch_norm training numel·(5 affine | 4), eval numel·(2 | 1); layer, group and
** instance norm numel·(5 | 4); rms_norm 0 (F.rms_norm is not patched).
*/
int profF_norm(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, PROF_MAX_OPERANDS);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0];
  int affine = (op->flags & PROF_OPF_AFFINE) != 0, bias = (op->flags & PROF_OPF_BIAS) != 0;
  int training = (op->flags & PROF_OPF_TRAINING) != 0;
  int64_t numel = profF_numel(x), groups;  /* statistics groups */
  switch (op->kind) {
    case PROF_OP_LAYER_NORM:
    case PROF_OP_RMS_NORM: {
      int64_t nd = op->dim > 0 ? op->dim : 1;
      if (nd > x->ndim)
        return profF_fail(c, op, "%lld normalised dims for input %s", (long long)nd,
                          PROFF_SHAPE(x));
      groups = profF_prod(x->dim, x->ndim - (int)nd);
      break;
    }
    case PROF_OP_GROUP_NORM: {
      if ((rc = profF_need_ndim(c, op, x, "input", 2, PROF_MAX_DIMS)) != PROF_OK) return rc;
      int64_t g = op->groups > 0 ? op->groups : 1;
      if (op->groups < 0 || x->dim[1] % g != 0)
        return profF_fail(c, op, "input %s has channels not divisible by groups=%lld",
                          PROFF_SHAPE(x), (long long)op->groups);
      groups = profF_mul(x->dim[0], g);
      break;
    }
    case PROF_OP_BATCH_NORM:
      if ((rc = profF_need_ndim(c, op, x, "input", 2, PROF_MAX_DIMS)) != PROF_OK) return rc;
      groups = x->dim[1];
      break;
    default:  /* instance norm: per sample and channel */
      if ((rc = profF_need_ndim(c, op, x, "input", 2, PROF_MAX_DIMS)) != PROF_OK) return rc;
      groups = profF_mul(x->dim[0], x->dim[1]);
      break;
  }
  op->macs = 0;
  if (PROFF_DS(c)) {
    int64_t per;
    if (op->kind == PROF_OP_RMS_NORM) per = 0;
    else if (op->kind == PROF_OP_BATCH_NORM && !training) per = affine ? 2 : 1;
    else per = affine ? 5 : 4;
    op->flops = profF_mul(numel, per);
    return PROF_OK;
  }
  int64_t f;
  if (op->kind == PROF_OP_RMS_NORM) {
    f = profF_add(profF_mul(3, numel), profF_mul(2, groups));
  } else if (op->kind == PROF_OP_BATCH_NORM && !training) {
    f = profF_add(profF_mul(2, numel), profF_mul(2, groups));
  } else {
    f = profF_add(profF_mul(6, numel), profF_mul(2, groups));
  }
  f = profF_add(f, profF_mul(numel, affine + bias));
  op->flops = f;
  return PROF_OK;
}

/* {====================== embedding, dropout ======================} */

/* 0 flops in both; bytes: the indices plus only the gathered rows, not the whole table. */
int profF_embedding(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 2, 2);
  if (rc != PROF_OK) return rc;
  const prof_Operand *w = &op->in[1];
  if ((rc = profF_need_ndim(c, op, w, "weight", 2, 2)) != PROF_OK) return rc;
  op->macs = op->flops = 0;
  op->bytes_read = profF_add(profF_bytes(&op->in[0]),
                             profF_mul(profF_numel(&op->out), prof_dtype_size(w->dtype)));
  return PROF_OK;
}

/*
** exact: training draws a mask: compare with p and scale by 1/(1-p), 2 per element; eval is
** the identity (no kernel runs, no bytes move). deepspeed: 0 (dropout is not patched).
*/
int profF_dropout(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 1);
  if (rc != PROF_OK) return rc;
  int training = (op->flags & PROF_OPF_TRAINING) != 0;
  op->macs = 0;
  op->flops = (training && !PROFF_DS(c)) ? profF_mul(2, profF_numel(&op->in[0])) : 0;
  if (!training) op->bytes_read = op->bytes_written = 0;
  return PROF_OK;
}

/* {====================== elementwise arithmetic ======================} */

/* DeepSpeed's "broadcast": the per-index max of the shapes aligned from the LEFT. */
static int64_t ds_left_max_numel(const prof_Operand *a, const prof_Operand *b) {
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  int64_t p = 1;
  for (int i = 0; i < n; i++) {
    int64_t x = i < a->ndim ? a->dim[i] : 1, y = i < b->ndim ? b->dim[i] : 1;
    p = profF_mul(p, x > y ? x : y);
  }
  return p;
}

/*
** exact: one flop per element of the (right-aligned) broadcast output, operators included.
** deepspeed: only the function forms of add and mul count, numel of the left-aligned max shape
** (a scalar operand: numel of the tensor; two scalars: 1); operators (a + b) are not patched.
*/
int profF_binary(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 2, 2);
  if (rc != PROF_OK) return rc;
  const prof_Operand *a = &op->in[0], *b = &op->in[1];
  prof_Operand bc;
  if (profF_broadcast(a, b, &bc) != 0)
    return profF_fail(c, op, "input %s and other %s do not broadcast", PROFF_SHAPE(a),
                      PROFF_SHAPE(b));
  op->macs = 0;
  if (!PROFF_DS(c)) {
    op->flops = profF_numel(&bc);
    return PROF_OK;
  }
  if ((op->kind != PROF_OP_ADD && op->kind != PROF_OP_MUL) || (op->flags & PROF_OPF_OPERATOR)) {
    op->flops = 0;
  } else if (a->ndim < 0 || b->ndim < 0) {
    op->flops = a->ndim < 0 ? (b->ndim < 0 ? 1 : profF_numel(b)) : profF_numel(a);
  } else {
    op->flops = ds_left_max_numel(a, b);
  }
  return PROF_OK;
}

/* exact: one evaluation per element; deepspeed: 0 (none is patched). Extra operands (clamp's
   tensor bounds) are read. */
int profF_unary(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 3);
  if (rc != PROF_OK) return rc;
  op->macs = 0;
  op->flops = PROFF_DS(c) ? 0 : profF_numel(&op->in[0]);
  return PROF_OK;
}

/* {====================== reductions ======================} */

/*
** exact, with n = numel(in), m = numel(out): sum n - m adds; amax n - m comparisons; mean adds
** + m divides; var: mean pass (n - m adds, m divides) + n subtracts, n squares, n - m adds and
** m divides = 4n. deepspeed: 0 (not patched).
*/
int profF_reduce(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 1);
  if (rc != PROF_OK) return rc;
  int64_t n = profF_numel(&op->in[0]), m = profF_numel(&op->out);
  if (n > 0 && m > n)
    return profF_fail(c, op, "out %s is larger than input %s", PROFF_SHAPE(&op->out),
                      PROFF_SHAPE(&op->in[0]));
  op->macs = 0;
  if (PROFF_DS(c)) {
    op->flops = 0;
    return PROF_OK;
  }
  int64_t adds = n > m ? n - m : 0;
  switch (op->kind) {
    case PROF_OP_MEAN: op->flops = profF_add(adds, m); break;
    case PROF_OP_VAR: op->flops = n > 0 ? profF_mul(4, n) : 0; break;
    default: op->flops = adds; break;
  }
  return PROF_OK;
}

/* {====================== losses ======================} */

static int is_float(int32_t dt) {
  return dt == PROF_F32 || dt == PROF_F64 || dt == PROF_F16 || dt == PROF_BF16;
}

/*
** exact, with R rows (samples and positions) of C classes:
**   nll_loss: R negated picks summed (R: R - 1 adds and one negation; none: R negations),
**   + 1 divide for mean; class weights in[2]: R multiplies, and for mean R - 1 adds of the
**   picked weights (the divisor).
**   cross_entropy: log_softmax over C (R·(5C - 1)) + nll_loss; probability targets (a float
**   target shaped like the input): 2 per element (multiply, accumulate), then R - 1 adds
**   (+ 1 divide for mean) unless the reduction is none.
**   mse_loss over n broadcast elements: none 2n (subtract, square), sum 3n - 1, mean 3n.
** deepspeed: 0 (no loss is patched).
*/
int profF_loss(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 2, 3);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0], *t = &op->in[1];
  if (op->mode < PROF_REDUCE_MEAN || op->mode > PROF_REDUCE_NONE)
    return profF_fail(c, op, "unknown reduction %d", (int)op->mode);
  int mean = op->mode == PROF_REDUCE_MEAN;
  op->macs = 0;
  if (op->kind == PROF_OP_MSE_LOSS) {
    prof_Operand bc;
    if (op->ninputs != 2 || profF_broadcast(x, t, &bc) != 0)
      return profF_fail(c, op, "input %s and target %s do not broadcast", PROFF_SHAPE(x),
                        PROFF_SHAPE(t));
    int64_t n = profF_numel(&bc);
    if (PROFF_DS(c) || n == 0) op->flops = 0;
    else if (op->mode == PROF_REDUCE_NONE) op->flops = profF_mul(2, n);
    else op->flops = profF_sub(profF_mul(3, n), mean ? 0 : 1);
    return PROF_OK;
  }
  if ((rc = profF_need_ndim(c, op, x, "input", 1, PROF_MAX_DIMS)) != PROF_OK) return rc;
  int64_t classes = x->ndim >= 2 ? x->dim[1] : x->dim[0];
  int64_t rows = classes > 0 ? profF_numel(x) / classes : 0;
  int soft = op->kind == PROF_OP_CROSS_ENTROPY && is_float(t->dtype) && profF_same_shape(x, t);
  if (!soft && profF_numel(t) != rows)
    return profF_fail(c, op, "input %s does not match target %s", PROFF_SHAPE(x), PROFF_SHAPE(t));
  if (op->ninputs == 3 && profF_numel(&op->in[2]) != classes)
    return profF_fail(c, op, "weight %s does not match input %s", PROFF_SHAPE(&op->in[2]),
                      PROFF_SHAPE(x));
  if (PROFF_DS(c) || rows == 0) {
    op->flops = 0;
    return PROF_OK;
  }
  int64_t f = 0;
  if (op->kind == PROF_OP_CROSS_ENTROPY)
    f = profF_mul(rows, profF_sub(profF_mul(5, classes), 1));
  if (soft) {
    f = profF_add(f, profF_mul(2, profF_numel(x)));
    if (op->mode != PROF_REDUCE_NONE) f = profF_add(f, rows - 1 + mean);
  } else {
    f = profF_add(f, rows + mean);
    if (op->ninputs == 3) f = profF_add(f, mean ? profF_sub(profF_mul(2, rows), 1) : rows);
  }
  op->flops = f;
  return PROF_OK;
}
