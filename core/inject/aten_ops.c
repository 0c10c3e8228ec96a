/* aten_ops.c — an emit_nvtx op range ("aten::addmm" and its sizes) as a prof_Op the core's formulas count. */
#include <string.h>

#include "inject.h"

/*
** aten name -> kind and which sizes entries are the core's operands, in its order. Ops whose
** FLOPs need arguments emit_nvtx does not print (convolution's stride and padding, pooling's
** kernel) are absent: they are timed with zero counts rather than counted wrongly.
*/
typedef struct AtenOp {
  const char *name;
  prof_OpKind kind;
  int8_t nin;
  int8_t arg[3];  /* sizes index of in[0], in[1], in[2] */
} AtenOp;

static const AtenOp ops[] = {
  {"addmm", PROF_OP_ADDMM, 3, {0, 1, 2}},
  {"mm", PROF_OP_MM, 2, {0, 1, 0}},
  {"bmm", PROF_OP_BMM, 2, {0, 1, 0}},
  {"baddbmm", PROF_OP_BADDBMM, 3, {0, 1, 2}},
  {"matmul", PROF_OP_MATMUL, 2, {0, 1, 0}},
  {"linear", PROF_OP_LINEAR, 2, {0, 1, 2}},  /* with a bias when sizes[2] is a tensor */
  {"embedding", PROF_OP_EMBEDDING, 2, {1, 0, 0}},
  {"add", PROF_OP_ADD, 2, {0, 1, 0}}, {"add_", PROF_OP_ADD, 2, {0, 1, 0}},
  {"sub", PROF_OP_SUB, 2, {0, 1, 0}}, {"mul", PROF_OP_MUL, 2, {0, 1, 0}},
  {"mul_", PROF_OP_MUL, 2, {0, 1, 0}}, {"div", PROF_OP_DIV, 2, {0, 1, 0}},
  {"relu", PROF_OP_RELU, 1, {0, 0, 0}}, {"relu_", PROF_OP_RELU, 1, {0, 0, 0}},
  {"gelu", PROF_OP_GELU, 1, {0, 0, 0}}, {"silu", PROF_OP_SILU, 1, {0, 0, 0}},
  {"tanh", PROF_OP_TANH, 1, {0, 0, 0}}, {"sigmoid", PROF_OP_SIGMOID, 1, {0, 0, 0}},
  {"softmax", PROF_OP_SOFTMAX, 1, {0, 0, 0}}, {"_softmax", PROF_OP_SOFTMAX, 1, {0, 0, 0}},
  {"log_softmax", PROF_OP_LOG_SOFTMAX, 1, {0, 0, 0}},
  {"exp", PROF_OP_EXP, 1, {0, 0, 0}}, {"sqrt", PROF_OP_SQRT, 1, {0, 0, 0}},
  {"rsqrt", PROF_OP_RSQRT, 1, {0, 0, 0}},
};

static const AtenOp *lookup(const char *name) {
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i].name, name) == 0) return &ops[i];
  return NULL;
}

/* The output of the dense kinds, from their inputs (the formulas read it for bytes written). */
static int dense_out(const prof_Op *op, prof_Operand *out) {
  const prof_Operand *a = &op->in[0], *b = &op->in[1];
  *out = (prof_Operand){.ndim = 0, .dtype = a->dtype};
  switch (op->kind) {
  case PROF_OP_MM:
    if (a->ndim != 2 || b->ndim != 2) return 0;
    *out = (prof_Operand){.ndim = 2, .dtype = a->dtype, .dim = {a->dim[0], b->dim[1]}};
    return 1;
  case PROF_OP_BMM:
    if (a->ndim != 3 || b->ndim != 3) return 0;
    *out = (prof_Operand){.ndim = 3, .dtype = a->dtype, .dim = {a->dim[0], a->dim[1], b->dim[2]}};
    return 1;
  case PROF_OP_ADDMM:
    a = &op->in[1], b = &op->in[2];
    if (a->ndim != 2 || b->ndim != 2) return 0;
    *out = (prof_Operand){.ndim = 2, .dtype = a->dtype, .dim = {a->dim[0], b->dim[1]}};
    return 1;
  case PROF_OP_BADDBMM:
    a = &op->in[1], b = &op->in[2];
    if (a->ndim != 3 || b->ndim != 3) return 0;
    *out = (prof_Operand){.ndim = 3, .dtype = a->dtype, .dim = {a->dim[0], a->dim[1], b->dim[2]}};
    return 1;
  case PROF_OP_LINEAR:
    if (a->ndim < 1 || b->ndim != 2) return 0;
    *out = *a;
    out->dim[a->ndim - 1] = b->dim[0];
    return 1;
  case PROF_OP_EMBEDDING: /* indices [...] -> [..., D] */
    if (a->ndim >= PROF_MAX_DIMS || b->ndim != 2) return 0;
    *out = *a;
    out->dtype = b->dtype;
    out->dim[out->ndim++] = b->dim[1];
    return 1;
  default: /* elementwise: the first input's shape (broadcasting is the formula's business) */
    *out = *a;
    return 1;
  }
}

int injA_fill(const injN_Range *r, prof_Op *op) {
  memset(op, 0, sizeof *op);
  op->size = sizeof *op;
  op->kind = PROF_OP_CUSTOM;
  op->device = PROF_DEVICE_CUDA;
  const char *name = strncmp(r->name, "aten::", 6) == 0 ? r->name + 6 : NULL;
  const AtenOp *a = name != NULL ? lookup(name) : NULL;
  if (a == NULL || r->nsizes < a->nin) return 0;
  for (int i = 0; i < a->nin; i++) {
    const prof_Operand *s = &r->sizes[a->arg[i]];
    if (s->ndim < 0) return 0;
    op->in[i] = *s;
  }
  op->ninputs = a->nin;
  /* a 0-d entry of a binary op is a Python scalar for emit_nvtx: it prints no shape for it */
  if (a->nin == 2 && (a->kind == PROF_OP_ADD || a->kind == PROF_OP_SUB || a->kind == PROF_OP_MUL ||
                      a->kind == PROF_OP_DIV) && op->in[1].ndim == 0)
    op->in[1].ndim = -1;
  if (a->kind == PROF_OP_LINEAR && r->nsizes > 2 && r->sizes[2].ndim == 1) {
    op->in[2] = r->sizes[2];
    op->ninputs = 3;
    op->flags |= PROF_OPF_BIAS;
  }
  if (a->kind == PROF_OP_SOFTMAX || a->kind == PROF_OP_LOG_SOFTMAX) op->dim = -1;
  op->kind = a->kind;
  if (!dense_out(op, &op->out)) {
    op->kind = PROF_OP_CUSTOM;
    op->ninputs = 0;
    return 0;
  }
  return 1;
}
