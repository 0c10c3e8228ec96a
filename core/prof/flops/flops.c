/* flops.c — profF_count: operand checks, default byte counts and dispatch to the flop formulas. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flops_internal.h"

/* {====================== kind table ======================} */

static int view_formula(const profF_Ctx *c, prof_Op *op);
static int copy_formula(const profF_Ctx *c, prof_Op *op);

/* Designated initialisers keep the table right if prof_OpKind is reordered; the kinds' names are
   in flops_util.c, which the formulas' error messages use. */
static const profF_Formula formulas[PROF_OP_KIND_COUNT] = {
  [PROF_OP_CUSTOM] = NULL,
  [PROF_OP_LINEAR] = profF_linear,
  [PROF_OP_MATMUL] = profF_matmul,
  [PROF_OP_MM] = profF_matmul,
  [PROF_OP_BMM] = profF_matmul,
  [PROF_OP_ADDMM] = profF_addmm,
  [PROF_OP_BADDBMM] = profF_addmm,
  [PROF_OP_EINSUM] = profF_einsum,
  [PROF_OP_CONV] = profF_conv,
  [PROF_OP_CONV_TRANSPOSE] = profF_conv_transpose,
  [PROF_OP_MAX_POOL] = profF_pool,
  [PROF_OP_AVG_POOL] = profF_pool,
  [PROF_OP_ADAPTIVE_AVG_POOL] = profF_adaptive_pool,
  [PROF_OP_ADAPTIVE_MAX_POOL] = profF_adaptive_pool,
  [PROF_OP_RELU] = profF_activation,
  [PROF_OP_RELU6] = profF_activation,
  [PROF_OP_LEAKY_RELU] = profF_activation,
  [PROF_OP_PRELU] = profF_activation,
  [PROF_OP_ELU] = profF_activation,
  [PROF_OP_GELU] = profF_activation,
  [PROF_OP_SILU] = profF_activation,
  [PROF_OP_TANH] = profF_activation,
  [PROF_OP_SIGMOID] = profF_activation,
  [PROF_OP_SOFTPLUS] = profF_activation,
  [PROF_OP_HARDSWISH] = profF_activation,
  [PROF_OP_MISH] = profF_activation,
  [PROF_OP_SOFTMAX] = profF_softmax,
  [PROF_OP_LOG_SOFTMAX] = profF_softmax,
  [PROF_OP_BATCH_NORM] = profF_norm,
  [PROF_OP_LAYER_NORM] = profF_norm,
  [PROF_OP_GROUP_NORM] = profF_norm,
  [PROF_OP_INSTANCE_NORM] = profF_norm,
  [PROF_OP_RMS_NORM] = profF_norm,
  [PROF_OP_EMBEDDING] = profF_embedding,
  [PROF_OP_DROPOUT] = profF_dropout,
  [PROF_OP_ADD] = profF_binary,
  [PROF_OP_SUB] = profF_binary,
  [PROF_OP_MUL] = profF_binary,
  [PROF_OP_DIV] = profF_binary,
  [PROF_OP_POW] = profF_binary,
  [PROF_OP_MAXIMUM] = profF_binary,
  [PROF_OP_MINIMUM] = profF_binary,
  [PROF_OP_NEG] = profF_unary,
  [PROF_OP_EXP] = profF_unary,
  [PROF_OP_LOG] = profF_unary,
  [PROF_OP_SQRT] = profF_unary,
  [PROF_OP_RSQRT] = profF_unary,
  [PROF_OP_ABS] = profF_unary,
  [PROF_OP_SIN] = profF_unary,
  [PROF_OP_COS] = profF_unary,
  [PROF_OP_ERF] = profF_unary,
  [PROF_OP_RECIPROCAL] = profF_unary,
  [PROF_OP_CLAMP] = profF_unary,
  [PROF_OP_SUM] = profF_reduce,
  [PROF_OP_MEAN] = profF_reduce,
  [PROF_OP_AMAX] = profF_reduce,
  [PROF_OP_VAR] = profF_reduce,
  [PROF_OP_INTERPOLATE] = profF_interpolate,
  [PROF_OP_SDPA] = profF_sdpa,
  [PROF_OP_CROSS_ENTROPY] = profF_loss,
  [PROF_OP_NLL_LOSS] = profF_loss,
  [PROF_OP_MSE_LOSS] = profF_loss,
  [PROF_OP_RNN] = profF_rnn,
  [PROF_OP_GRU] = profF_rnn,
  [PROF_OP_LSTM] = profF_rnn,
  [PROF_OP_RNN_CELL] = profF_rnn_cell,
  [PROF_OP_GRU_CELL] = profF_rnn_cell,
  [PROF_OP_LSTM_CELL] = profF_rnn_cell,
  [PROF_OP_VIEW] = view_formula,
  [PROF_OP_COPY] = copy_formula,
};



/* {====================== data movement ======================} */

/* A view moves nothing: no kernel runs. */
static int view_formula(const profF_Ctx *c, prof_Op *op) {
  (void)c;
  op->bytes_read = op->bytes_written = 0;
  return PROF_OK;
}

/* A copy reads its inputs and writes out (the defaults); it does no arithmetic. */
static int copy_formula(const profF_Ctx *c, prof_Op *op) {
  return profF_need_inputs(c, op, 1, PROF_MAX_OPERANDS);
}

/* {====================== entry point ======================} */

static int is_binary(prof_OpKind k) {
  return k >= PROF_OP_ADD && k <= PROF_OP_MINIMUM;
}

/* Shape sanity for every operand the kind may read, before any formula trusts it. */
static int check_operand(const profF_Ctx *c, const prof_Op *op, const prof_Operand *o,
                         const char *what, int idx, int scalar_ok) {
  if (o->ndim < 0 && scalar_ok) return PROF_OK;
  if (o->ndim < 0 || o->ndim > PROF_MAX_DIMS) {
    if (idx >= 0)
      return profF_fail(c, op, "in[%d] has ndim %d (0..%d allowed)", idx, (int)o->ndim,
                        PROF_MAX_DIMS);
    return profF_fail(c, op, "%s has ndim %d (0..%d allowed)", what, (int)o->ndim, PROF_MAX_DIMS);
  }
  for (int i = 0; i < o->ndim; i++) {
    if (o->dim[i] < 0) {
      if (idx >= 0)
        return profF_fail(c, op, "in[%d] %s has a negative dim", idx, PROFF_SHAPE(o));
      return profF_fail(c, op, "%s %s has a negative dim", what, PROFF_SHAPE(o));
    }
  }
  if (o->dtype < 0 || o->dtype >= PROF_DTYPE_COUNT) {
    if (idx >= 0) return profF_fail(c, op, "in[%d] has unknown dtype %d", idx, (int)o->dtype);
    return profF_fail(c, op, "%s has unknown dtype %d", what, (int)o->dtype);
  }
  return PROF_OK;
}

int profF_count(prof_Conventions conv, prof_Op *op, char *err, size_t errlen) {
  profF_Ctx ctx = {conv, err, errlen};
  const profF_Ctx *c = &ctx;  /* err is written on failure only: it may hold an older message */
  if (op == NULL) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "op is NULL");
    return PROF_ERRARG;
  }
  if ((int)op->kind < 0 || op->kind >= PROF_OP_KIND_COUNT) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "unknown op kind %d", (int)op->kind);
    return PROF_ERRARG;
  }
  if (op->kind == PROF_OP_CUSTOM) return PROF_OK;  /* the caller's counts stand */
  op->macs = op->flops = op->bytes_read = op->bytes_written = 0;
  if (conv != PROF_CONV_EXACT && conv != PROF_CONV_DEEPSPEED)
    return profF_fail(c, op, "unknown conventions %d", (int)conv);
  if (op->ninputs < 0 || op->ninputs > PROF_MAX_OPERANDS)
    return profF_fail(c, op, "ninputs %d (0..%d allowed)", (int)op->ninputs, PROF_MAX_OPERANDS);
  int rc;
  for (int i = 0; i < op->ninputs; i++) {
    rc = check_operand(c, op, &op->in[i], NULL, i, is_binary(op->kind) && i < 2);
    if (rc != PROF_OK) return rc;
  }
  rc = check_operand(c, op, &op->out, "out", -1, 0);
  if (rc != PROF_OK) return rc;

  int64_t br = 0;
  for (int i = 0; i < op->ninputs; i++) br = profF_add(br, profF_bytes(&op->in[i]));
  op->bytes_read = br;
  op->bytes_written = profF_bytes(&op->out);

  rc = formulas[op->kind](c, op);
  if (rc != PROF_OK) op->macs = op->flops = op->bytes_read = op->bytes_written = 0;
  return rc;
}
