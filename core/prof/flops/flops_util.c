/* flops_util.c — what every flop formula shares: kind names, error messages, shape arithmetic. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flops_internal.h"

static const char *const kind_names[PROF_OP_KIND_COUNT] = {
  [PROF_OP_CUSTOM] = "custom",
  [PROF_OP_LINEAR] = "linear",
  [PROF_OP_MATMUL] = "matmul",
  [PROF_OP_MM] = "mm",
  [PROF_OP_BMM] = "bmm",
  [PROF_OP_ADDMM] = "addmm",
  [PROF_OP_BADDBMM] = "baddbmm",
  [PROF_OP_EINSUM] = "einsum",
  [PROF_OP_CONV] = "conv",
  [PROF_OP_CONV_TRANSPOSE] = "conv_transpose",
  [PROF_OP_MAX_POOL] = "max_pool",
  [PROF_OP_AVG_POOL] = "avg_pool",
  [PROF_OP_ADAPTIVE_AVG_POOL] = "adaptive_avg_pool",
  [PROF_OP_ADAPTIVE_MAX_POOL] = "adaptive_max_pool",
  [PROF_OP_RELU] = "relu",
  [PROF_OP_RELU6] = "relu6",
  [PROF_OP_LEAKY_RELU] = "leaky_relu",
  [PROF_OP_PRELU] = "prelu",
  [PROF_OP_ELU] = "elu",
  [PROF_OP_GELU] = "gelu",
  [PROF_OP_SILU] = "silu",
  [PROF_OP_TANH] = "tanh",
  [PROF_OP_SIGMOID] = "sigmoid",
  [PROF_OP_SOFTPLUS] = "softplus",
  [PROF_OP_HARDSWISH] = "hardswish",
  [PROF_OP_MISH] = "mish",
  [PROF_OP_SOFTMAX] = "softmax",
  [PROF_OP_LOG_SOFTMAX] = "log_softmax",
  [PROF_OP_BATCH_NORM] = "batch_norm",
  [PROF_OP_LAYER_NORM] = "layer_norm",
  [PROF_OP_GROUP_NORM] = "group_norm",
  [PROF_OP_INSTANCE_NORM] = "instance_norm",
  [PROF_OP_RMS_NORM] = "rms_norm",
  [PROF_OP_EMBEDDING] = "embedding",
  [PROF_OP_DROPOUT] = "dropout",
  [PROF_OP_ADD] = "add",
  [PROF_OP_SUB] = "sub",
  [PROF_OP_MUL] = "mul",
  [PROF_OP_DIV] = "div",
  [PROF_OP_POW] = "pow",
  [PROF_OP_MAXIMUM] = "maximum",
  [PROF_OP_MINIMUM] = "minimum",
  [PROF_OP_NEG] = "neg",
  [PROF_OP_EXP] = "exp",
  [PROF_OP_LOG] = "log",
  [PROF_OP_SQRT] = "sqrt",
  [PROF_OP_RSQRT] = "rsqrt",
  [PROF_OP_ABS] = "abs",
  [PROF_OP_SIN] = "sin",
  [PROF_OP_COS] = "cos",
  [PROF_OP_ERF] = "erf",
  [PROF_OP_RECIPROCAL] = "reciprocal",
  [PROF_OP_CLAMP] = "clamp",
  [PROF_OP_SUM] = "sum",
  [PROF_OP_MEAN] = "mean",
  [PROF_OP_AMAX] = "amax",
  [PROF_OP_VAR] = "var",
  [PROF_OP_INTERPOLATE] = "interpolate",
  [PROF_OP_SDPA] = "scaled_dot_product_attention",
  [PROF_OP_CROSS_ENTROPY] = "cross_entropy",
  [PROF_OP_NLL_LOSS] = "nll_loss",
  [PROF_OP_MSE_LOSS] = "mse_loss",
  [PROF_OP_RNN] = "rnn",
  [PROF_OP_GRU] = "gru",
  [PROF_OP_LSTM] = "lstm",
  [PROF_OP_RNN_CELL] = "rnn_cell",
  [PROF_OP_GRU_CELL] = "gru_cell",
  [PROF_OP_LSTM_CELL] = "lstm_cell",
  [PROF_OP_VIEW] = "view",
  [PROF_OP_COPY] = "copy",
};

const char *prof_op_kind_name(prof_OpKind kind) {
  if ((int)kind < 0 || kind >= PROF_OP_KIND_COUNT || kind_names[kind] == NULL) return "unknown";
  return kind_names[kind];
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
