/* flops.c — profF_count: operand checks, default byte counts and dispatch to the flop formulas. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flops_internal.h"

/* {====================== kind table ======================} */

typedef struct KindInfo {
  const char *name;            /* as PyTorch's functional spells it */
  profF_Formula fn;
} KindInfo;

static int view_formula(const profF_Ctx *c, prof_Op *op);
static int copy_formula(const profF_Ctx *c, prof_Op *op);

/* Designated initialisers keep the table right if prof_OpKind is reordered. */
static const KindInfo kinds[PROF_OP_KIND_COUNT] = {
  [PROF_OP_CUSTOM] = {"custom", NULL},
  [PROF_OP_LINEAR] = {"linear", profF_linear},
  [PROF_OP_MATMUL] = {"matmul", profF_matmul},
  [PROF_OP_MM] = {"mm", profF_matmul},
  [PROF_OP_BMM] = {"bmm", profF_matmul},
  [PROF_OP_ADDMM] = {"addmm", profF_addmm},
  [PROF_OP_BADDBMM] = {"baddbmm", profF_addmm},
  [PROF_OP_EINSUM] = {"einsum", profF_einsum},
  [PROF_OP_CONV] = {"conv", profF_conv},
  [PROF_OP_CONV_TRANSPOSE] = {"conv_transpose", profF_conv_transpose},
  [PROF_OP_MAX_POOL] = {"max_pool", profF_pool},
  [PROF_OP_AVG_POOL] = {"avg_pool", profF_pool},
  [PROF_OP_ADAPTIVE_AVG_POOL] = {"adaptive_avg_pool", profF_adaptive_pool},
  [PROF_OP_ADAPTIVE_MAX_POOL] = {"adaptive_max_pool", profF_adaptive_pool},
  [PROF_OP_RELU] = {"relu", profF_activation},
  [PROF_OP_RELU6] = {"relu6", profF_activation},
  [PROF_OP_LEAKY_RELU] = {"leaky_relu", profF_activation},
  [PROF_OP_PRELU] = {"prelu", profF_activation},
  [PROF_OP_ELU] = {"elu", profF_activation},
  [PROF_OP_GELU] = {"gelu", profF_activation},
  [PROF_OP_SILU] = {"silu", profF_activation},
  [PROF_OP_TANH] = {"tanh", profF_activation},
  [PROF_OP_SIGMOID] = {"sigmoid", profF_activation},
  [PROF_OP_SOFTPLUS] = {"softplus", profF_activation},
  [PROF_OP_HARDSWISH] = {"hardswish", profF_activation},
  [PROF_OP_MISH] = {"mish", profF_activation},
  [PROF_OP_SOFTMAX] = {"softmax", profF_softmax},
  [PROF_OP_LOG_SOFTMAX] = {"log_softmax", profF_softmax},
  [PROF_OP_BATCH_NORM] = {"batch_norm", profF_norm},
  [PROF_OP_LAYER_NORM] = {"layer_norm", profF_norm},
  [PROF_OP_GROUP_NORM] = {"group_norm", profF_norm},
  [PROF_OP_INSTANCE_NORM] = {"instance_norm", profF_norm},
  [PROF_OP_RMS_NORM] = {"rms_norm", profF_norm},
  [PROF_OP_EMBEDDING] = {"embedding", profF_embedding},
  [PROF_OP_DROPOUT] = {"dropout", profF_dropout},
  [PROF_OP_ADD] = {"add", profF_binary},
  [PROF_OP_SUB] = {"sub", profF_binary},
  [PROF_OP_MUL] = {"mul", profF_binary},
  [PROF_OP_DIV] = {"div", profF_binary},
  [PROF_OP_POW] = {"pow", profF_binary},
  [PROF_OP_MAXIMUM] = {"maximum", profF_binary},
  [PROF_OP_MINIMUM] = {"minimum", profF_binary},
  [PROF_OP_NEG] = {"neg", profF_unary},
  [PROF_OP_EXP] = {"exp", profF_unary},
  [PROF_OP_LOG] = {"log", profF_unary},
  [PROF_OP_SQRT] = {"sqrt", profF_unary},
  [PROF_OP_RSQRT] = {"rsqrt", profF_unary},
  [PROF_OP_ABS] = {"abs", profF_unary},
  [PROF_OP_SIN] = {"sin", profF_unary},
  [PROF_OP_COS] = {"cos", profF_unary},
  [PROF_OP_ERF] = {"erf", profF_unary},
  [PROF_OP_RECIPROCAL] = {"reciprocal", profF_unary},
  [PROF_OP_CLAMP] = {"clamp", profF_unary},
  [PROF_OP_SUM] = {"sum", profF_reduce},
  [PROF_OP_MEAN] = {"mean", profF_reduce},
  [PROF_OP_AMAX] = {"amax", profF_reduce},
  [PROF_OP_VAR] = {"var", profF_reduce},
  [PROF_OP_INTERPOLATE] = {"interpolate", profF_interpolate},
  [PROF_OP_SDPA] = {"scaled_dot_product_attention", profF_sdpa},
  [PROF_OP_CROSS_ENTROPY] = {"cross_entropy", profF_loss},
  [PROF_OP_NLL_LOSS] = {"nll_loss", profF_loss},
  [PROF_OP_MSE_LOSS] = {"mse_loss", profF_loss},
  [PROF_OP_RNN] = {"rnn", profF_rnn},
  [PROF_OP_GRU] = {"gru", profF_rnn},
  [PROF_OP_LSTM] = {"lstm", profF_rnn},
  [PROF_OP_RNN_CELL] = {"rnn_cell", profF_rnn_cell},
  [PROF_OP_GRU_CELL] = {"gru_cell", profF_rnn_cell},
  [PROF_OP_LSTM_CELL] = {"lstm_cell", profF_rnn_cell},
  [PROF_OP_VIEW] = {"view", view_formula},
  [PROF_OP_COPY] = {"copy", copy_formula},
};

const char *prof_op_kind_name(prof_OpKind kind) {
  if ((int)kind < 0 || kind >= PROF_OP_KIND_COUNT || kinds[kind].name == NULL) return "unknown";
  return kinds[kind].name;
}

/* {====================== errors ======================} */

int profF_fail(const profF_Ctx *c, const prof_Op *op, const char *fmt, ...) {
  if (c->err != NULL && c->errlen > 0) {
    int n = snprintf(c->err, c->errlen, "%s: ", prof_op_kind_name(op->kind));
    if (n >= 0 && (size_t)n < c->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return PROF_ERRARG;
}

int profF_need_inputs(const profF_Ctx *c, const prof_Op *op, int lo, int hi) {
  if (op->ninputs >= lo && op->ninputs <= hi) return PROF_OK;
  if (lo == hi) return profF_fail(c, op, "needs %d operands, got %d", lo, (int)op->ninputs);
  return profF_fail(c, op, "needs %d to %d operands, got %d", lo, hi, (int)op->ninputs);
}

int profF_need_ndim(const profF_Ctx *c, const prof_Op *op, const prof_Operand *o,
                    const char *what, int lo, int hi) {
  if (o->ndim >= lo && o->ndim <= hi) return PROF_OK;
  if (lo == hi)
    return profF_fail(c, op, "%s %s must be %d-D", what, PROFF_SHAPE(o), lo);
  if (hi >= PROF_MAX_DIMS)
    return profF_fail(c, op, "%s %s must have at least %d dims", what, PROFF_SHAPE(o), lo);
  return profF_fail(c, op, "%s %s must have %d to %d dims", what, PROFF_SHAPE(o), lo, hi);
}

/* {====================== shapes ======================} */

const char *profF_shape_str(const prof_Operand *o, char *buf, size_t size) {
  if (buf == NULL || size == 0) return buf;
  buf[0] = '\0';
  if (o == NULL) {
    snprintf(buf, size, "(null)");
    return buf;
  }
  if (o->ndim < 0) {
    snprintf(buf, size, "scalar");
    return buf;
  }
  if (o->ndim > PROF_MAX_DIMS) {
    snprintf(buf, size, "[ndim=%d?]", (int)o->ndim);
    return buf;
  }
  size_t used = 0;
  for (int i = -1; i <= o->ndim; i++) {
    int n;
    if (i < 0)
      n = snprintf(buf + used, size - used, "[");
    else if (i == o->ndim)
      n = snprintf(buf + used, size - used, "]");
    else
      n = snprintf(buf + used, size - used, "%s%lld", i == 0 ? "" : ", ", (long long)o->dim[i]);
    if (n < 0 || (size_t)n >= size - used) break;  /* truncated: snprintf ended the string */
    used += (size_t)n;
  }
  return buf;
}

int64_t profF_prod(const int64_t *dim, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p = profF_mul(p, dim[i]);
  return p;
}

int64_t profF_numel(const prof_Operand *o) {
  return o->ndim <= 0 ? 1 : profF_prod(o->dim, o->ndim);
}

int64_t profF_dim_r(const prof_Operand *o, int i) {
  return (i >= 1 && i <= o->ndim) ? o->dim[o->ndim - i] : 1;
}

int profF_broadcast(const prof_Operand *a, const prof_Operand *b, prof_Operand *res) {
  int an = a->ndim > 0 ? a->ndim : 0, bn = b->ndim > 0 ? b->ndim : 0;
  int n = an > bn ? an : bn;
  prof_Operand r;
  memset(&r, 0, sizeof r);
  r.ndim = n;
  r.dtype = a->dtype;
  for (int i = 1; i <= n; i++) {
    int64_t x = profF_dim_r(a, i), y = profF_dim_r(b, i);
    if (x != y && x != 1 && y != 1) return -1;
    r.dim[n - i] = (x == 1) ? y : x;
  }
  if (res != NULL) *res = r;
  return 0;
}

int profF_same_shape(const prof_Operand *a, const prof_Operand *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->dim[i] != b->dim[i]) return 0;
  return 1;
}

int64_t profF_bytes(const prof_Operand *o) {
  if (o->ndim < 0) return 0;
  return profF_mul(profF_numel(o), prof_dtype_size((prof_DType)o->dtype));
}

/* {====================== number conversions ======================} */

int64_t profF_sig4(int64_t v) {
  if (v < 10000 && v > -10000) return v;  /* at most 4 digits: printed exactly */
  int neg = v < 0;
  /* Python formats the int as a float: round to the nearest double first. */
  double d = (double)v;
  if (neg) d = -d;
  if (d >= 18446744073709551616.0) return neg ? INT64_MIN : INT64_MAX;
  uint64_t u = (uint64_t)d, p = 1;
  while (u / p >= 10000) p *= 10;
  uint64_t q = u / p, r = u % p;
  /* "%.3e" rounds the exact binary value half to even */
  if (r > p - r || (r == p - r && (q & 1))) q++;
  /* float(str) is the double nearest to q * 10^k, which is what this conversion gives too */
  double back = (double)(q * p);
  if (back >= 9223372036854775808.0) return neg ? INT64_MIN : INT64_MAX;
  int64_t out = (int64_t)back;
  return neg ? -out : out;
}

int64_t profF_trunc(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

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

  rc = kinds[op->kind].fn(c, op);
  if (rc != PROF_OK) op->macs = op->flops = op->bytes_read = op->bytes_written = 0;
  return rc;
}
