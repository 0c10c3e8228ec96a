/* op_builder.h — shared helpers the flops C tests use to build ops and count them (after t.h). */
#ifndef OP_BUILDER_H
#define OP_BUILDER_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flops/flops_internal.h"
#include "prof.h"

#define EXACT PROF_CONV_EXACT
#define DS PROF_CONV_DEEPSPEED

static char err[PROF_ERRMSG_SIZE];

/* A float32 operand of nd dims. */
static prof_Operand sh(int nd, ...) {
  prof_Operand o;
  memset(&o, 0, sizeof o);
  o.ndim = nd;
  o.dtype = PROF_F32;
  va_list ap;
  va_start(ap, nd);
  for (int i = 0; i < nd; i++) o.dim[i] = va_arg(ap, int);
  va_end(ap);
  return o;
}

static prof_Op mk(prof_OpKind kind, int n, const prof_Operand *in, prof_Operand out) {
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.ninputs = n;
  for (int i = 0; i < n; i++) op.in[i] = in[i];
  op.out = out;
  return op;
}

/* profF_count into err, printing err when it fails so a failing check shows why. */
static int count(prof_Conventions conv, prof_Op *op) {
  int rc = profF_count(conv, op, err, sizeof err);
  if (rc != PROF_OK) fprintf(stderr, "  (%s)\n", err);
  return rc;
}

/* An expected count that check_counts leaves unchecked. */
#define ANY INT64_MIN

/* Counts op exact, then DeepSpeed, checking each succeeds with the given MACs and flops. */
static void check_counts(prof_Op *op, int64_t macs, int64_t flops, int64_t ds_macs,
                         int64_t ds_flops) {
  T_EQ_INT(count(EXACT, op), PROF_OK);
  if (macs != ANY) T_EQ_INT(op->macs, macs);
  if (flops != ANY) T_EQ_INT(op->flops, flops);
  T_EQ_INT(count(DS, op), PROF_OK);
  if (ds_macs != ANY) T_EQ_INT(op->macs, ds_macs);
  if (ds_flops != ANY) T_EQ_INT(op->flops, ds_flops);
}

#endif
