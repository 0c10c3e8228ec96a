/* flops_internal.h — private helpers shared by the flop-formula files; never installed. */
#ifndef FLOPS_INTERNAL_H
#define FLOPS_INTERNAL_H

#include <stdint.h>

#include "prof_internal.h"
#include "saturate.h"

/*
** Every formula gets the convention and the caller's error buffer through one context, so the
** signatures stay short and a failure can be reported from any depth with profF_fail.
*/
typedef struct profF_Ctx {
  prof_Conventions conv;
  char *err;
  size_t errlen;
} profF_Ctx;

/*
** A formula fills op->macs and op->flops; it may also overwrite the default bytes (operands read,
** out written) that profF_count set before calling it. Returns PROF_OK or profF_fail's code.
*/
typedef int (*profF_Formula)(const profF_Ctx *c, prof_Op *op);

#define PROFF_DS(c) ((c)->conv == PROF_CONV_DEEPSPEED)

/* Big enough for "[d0, ..., d7]" with 20-digit dims. */
#define PROFF_SHAPE_BUF 200

/* The operand's shape as a string, in a buffer that lives until the end of the enclosing block:
   meant for the arguments of profF_fail only. */
#define PROFF_SHAPE(o) profF_shape_str((o), (char[PROFF_SHAPE_BUF]){0}, PROFF_SHAPE_BUF)

/* Writes "<kind name>: <message>" into c->err and returns PROF_ERRARG. */
PROF_INTERNAL int profF_fail(const profF_Ctx *c, const prof_Op *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks lo <= op->ninputs <= hi. */
PROF_INTERNAL int profF_need_inputs(const profF_Ctx *c, const prof_Op *op, int lo, int hi);

/* Checks lo <= o->ndim <= hi; what names the operand in the message ("input", "weight"). */
PROF_INTERNAL int profF_need_ndim(const profF_Ctx *c, const prof_Op *op, const prof_Operand *o,
                                  const char *what, int lo, int hi);

/* {====================== saturating int64 arithmetic ======================} */

/* Counts of garbage shapes may exceed int64; they saturate (saturate.h) instead of overflowing,
   so a wrong caller sees an absurd number, never a crash, and the snapshot flags it. */
static inline int64_t profF_mul(int64_t a, int64_t b) { return prof_sat_mul(a, b); }
static inline int64_t profF_add(int64_t a, int64_t b) { return prof_sat_add(a, b); }
static inline int64_t profF_sub(int64_t a, int64_t b) { return prof_sat_sub(a, b); }

/* {====================== shapes ======================} */

/* Product of n dims (1 for n <= 0). */
PROF_INTERNAL int64_t profF_prod(const int64_t *dim, int n);

/* Element count; a 0-d tensor has one element, a scalar operand (ndim < 0) too. */
PROF_INTERNAL int64_t profF_numel(const prof_Operand *o);

/* Dim i counted from the end (1 = last), or 1 when the operand has fewer dims (broadcasting). */
PROF_INTERNAL int64_t profF_dim_r(const prof_Operand *o, int i);

/*
** Broadcasts a and b right-aligned as PyTorch does into *res (dtype of a). Returns 0, or -1 when
** a dim pair differs and neither is 1.
*/
PROF_INTERNAL int profF_broadcast(const prof_Operand *a, const prof_Operand *b, prof_Operand *res);

/* 1 when the two shapes are equal. */
PROF_INTERNAL int profF_same_shape(const prof_Operand *a, const prof_Operand *b);

/* Bytes of an operand (0 for a scalar operand). */
PROF_INTERNAL int64_t profF_bytes(const prof_Operand *o);

/*
** DeepSpeed's einsum rounding: the value printed with "%.3e" and read back with int(float(s)),
** i.e. rounded half-even to 4 significant digits (after Python's int -> float conversion).
*/
PROF_INTERNAL int64_t profF_sig4(int64_t v);

/* double -> int64 truncating toward zero like Python's int(), saturating; NaN gives 0. */
PROF_INTERNAL int64_t profF_trunc(double v);

/* {====================== formulas, one per family ======================} */

/* flops_dense.c */
PROF_INTERNAL int profF_linear(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_matmul(const profF_Ctx *c, prof_Op *op);      /* matmul, mm, bmm */
PROF_INTERNAL int profF_addmm(const profF_Ctx *c, prof_Op *op);       /* addmm, baddbmm */
PROF_INTERNAL int profF_einsum(const profF_Ctx *c, prof_Op *op);

/* flops_conv.c */
PROF_INTERNAL int profF_conv(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_conv_transpose(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_pool(const profF_Ctx *c, prof_Op *op);        /* max_pool, avg_pool */
PROF_INTERNAL int profF_adaptive_pool(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_interpolate(const profF_Ctx *c, prof_Op *op);

/* flops_pointwise.c */
PROF_INTERNAL int profF_activation(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_softmax(const profF_Ctx *c, prof_Op *op);     /* softmax, log_softmax */
PROF_INTERNAL int profF_norm(const profF_Ctx *c, prof_Op *op);        /* the five norms */
PROF_INTERNAL int profF_embedding(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_dropout(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_binary(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_unary(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_reduce(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_loss(const profF_Ctx *c, prof_Op *op);

/* flops_sequence.c */
PROF_INTERNAL int profF_sdpa(const profF_Ctx *c, prof_Op *op);
PROF_INTERNAL int profF_rnn(const profF_Ctx *c, prof_Op *op);         /* rnn, gru, lstm */
PROF_INTERNAL int profF_rnn_cell(const profF_Ctx *c, prof_Op *op);    /* the three cells */

#endif
