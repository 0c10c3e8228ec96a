/* op_util.c — the checks and bookkeeping every runtime op shares. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

pr_Tensor *pr_fail(pr_Runtime *rt, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->err, sizeof rt->err, fmt, ap);
  va_end(ap);
  return NULL;
}

static int same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b) {
  if (b == NULL) return 0;
  if (a->device != b->device)
    return pr_error(rt, "%s: expected all tensors on the same device, got %s and %s", op,
                    pr_device_name(a->device), pr_device_name(b->device));
  if (a->dtype != b->dtype)
    return pr_error(rt, "%s: expected all tensors of the same dtype, got %s and %s", op,
                    prof_dtype_name(a->dtype), prof_dtype_name(b->dtype));
  return 0;
}

int pr_check_same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b,
                  const pr_Tensor *c) {
  if (same(rt, op, a, b) != 0) return PR_ERR;
  return same(rt, op, a, c);
}

void pr_op_begin(prof_Op *op, prof_OpKind kind, const pr_Tensor *in0, const pr_Tensor *in1,
                 const pr_Tensor *in2) {
  memset(op, 0, sizeof *op);
  op->kind = kind;
  const pr_Tensor *in[3] = {in0, in1, in2};
  for (int i = 0; i < 3; i++)
    if (in[i] != NULL) pr_operand(in[i], &op->in[op->ninputs++]);
}

pr_Tensor *pr_op_finish(pr_Runtime *rt, prof_Op *op, pr_Tensor *out) {
  if (out == NULL) return NULL;
  if (pr_record(rt, op, out) != 0) {
    pr_tensor_release(out);
    return NULL;
  }
  return out;
}
