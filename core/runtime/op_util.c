/* op_util.c — the checks and bookkeeping every runtime op shares. */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

static int same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b) {
  if (b == NULL) return 0;
  if (a->device != b->device)
    return pr_error(rt, "%s: expected all tensors on the same device, got %s and %s", op,
                    a->be->name, b->be->name);
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
  if (rt->rec == NULL) return out;
  pr_operand(out, &op->out);
  if (prof_op_begin(rt->rec, op) != PROF_OK) {
    pr_error(rt, "%s", prof_errmsg(rt->rec));
    pr_tensor_release(out);
    return NULL;
  }
  prof_op_end(rt->rec, op);
  return out;
}

int pr_op_open(pr_Runtime *rt, prof_Op *op, int ndim, const int64_t *shape, int dtype) {
  if (rt->rec == NULL) return 0;
  op->out.ndim = ndim;
  op->out.dtype = dtype;
  for (int i = 0; i < ndim && i < PR_MAX_DIMS; i++) op->out.dim[i] = shape[i];
  if (prof_op_begin(rt->rec, op) != PROF_OK) return pr_error(rt, "%s", prof_errmsg(rt->rec));
  return 0;
}

pr_Tensor *pr_op_alloc(pr_Runtime *rt, prof_Op *op, int ndim, const int64_t *shape, int dtype,
                       int device) {
  if (pr_op_open(rt, op, ndim, shape, dtype) != 0) return NULL;
  pr_Tensor *out = pr_tensor_new(rt, ndim, shape, dtype, device);
  if (out == NULL && rt->rec != NULL) prof_op_end(rt->rec, op);
  return out;
}

pr_Tensor *pr_op_end(pr_Runtime *rt, prof_Op *op, pr_Tensor *out, int rc) {
  if (rt->rec != NULL) prof_op_end(rt->rec, op);
  if (rc == 0) return out;
  pr_tensor_release(out);
  return NULL;
}

const char *pr_backward_name(pr_Runtime *rt, const char *forward) {
  if (rt->rec == NULL) return "backward";
  char buf[64];
  snprintf(buf, sizeof buf, "%s_backward", forward);
  const char *name = prof_intern(rt->rec, buf);
  return name != NULL ? name : "backward";
}

int pr_work_begin(pr_Runtime *rt, prof_Op *op, const char *name, int64_t macs, int64_t flops,
                  int64_t bytes_read, int64_t bytes_written) {
  memset(op, 0, sizeof *op);
  if (rt->rec == NULL) return 0;
  op->kind = PROF_OP_CUSTOM;
  op->name = name;
  op->macs = macs;
  op->flops = flops;
  op->bytes_read = bytes_read;
  op->bytes_written = bytes_written;
  if (prof_op_begin(rt->rec, op) != PROF_OK) return pr_error(rt, "%s", prof_errmsg(rt->rec));
  return 0;
}

int pr_op_close(pr_Runtime *rt, prof_Op *op, int rc) {
  if (rt->rec != NULL) prof_op_end(rt->rec, op);
  return rc;
}

int pr_is_float(int dtype) {
  return dtype == PROF_F32 || dtype == PROF_F64 || dtype == PROF_F16 || dtype == PROF_BF16;
}

int pr_check_float(pr_Runtime *rt, const char *op, const char *what, const pr_Tensor *x) {
  if (pr_is_float(x->dtype)) return 0;
  return pr_error(rt, "%s: expected a floating-point %s, got %s", op, what,
                  prof_dtype_name(x->dtype));
}

const char *pr_dims_str(int n, const int64_t *dims, char *buf, size_t size) {
  pr_Tensor t;
  memset(&t, 0, sizeof t);
  t.ndim = n;
  if (n > 0) memcpy(t.shape, dims, sizeof *dims * (size_t)n);
  return pr_shape_str(&t, buf, size);
}

int pr_broadcast_shapes(pr_Runtime *rt, const char *op, int na, const int64_t *a, int nb,
                        const int64_t *b, int *n, int64_t *shape) {
  char sa[96], sb[96];
  int m = na > nb ? na : nb;
  int64_t out[PR_MAX_DIMS];
  for (int i = 0; i < m; i++) {
    int ia = na - m + i, ib = nb - m + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return pr_error(rt, "%s: shapes %s and %s cannot be broadcast together", op,
                      pr_dims_str(na, a, sa, sizeof sa), pr_dims_str(nb, b, sb, sizeof sb));
    out[i] = da == 1 ? db : da;
  }
  memcpy(shape, out, sizeof *out * (size_t)m);   /* shape may alias a or b */
  *n = m;
  return 0;
}

