/* ops_select.c — elementwise selection: masked_fill, where, triu and tril. */
#include <string.h>

#include "runtime.h"

/* Values: these only produce correctly shaped outputs (zero-filled on cpu); the cpu kernels that
   compute them come later. */

/* {====================== masked_fill, where, triu, tril ======================} */

static int64_t nbytes(const pr_Tensor *t) {
  return t != NULL ? pr_numel(t) * prof_dtype_size(t->dtype) : 0;
}

/* Selections move bytes but compute nothing: a custom op with zero flops. */
static pr_Tensor *select_result(pr_Runtime *rt, const char *name, const pr_Tensor *a,
                                const pr_Tensor *b, const pr_Tensor *c, pr_Tensor *out) {
  if (out == NULL) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CUSTOM, a, b, c);
  op.name = name;
  op.bytes_read = nbytes(a) + nbytes(b) + nbytes(c);
  op.bytes_written = nbytes(out);
  return pr_op_finish(rt, &op, out);
}

static int check_bool(pr_Runtime *rt, const char *name, const char *what, const pr_Tensor *t) {
  if (t->dtype == PROF_BOOL) return 0;
  return pr_error(rt, "%s: %s must be a bool tensor, got %s", name, what,
                  prof_dtype_name(t->dtype));
}

pr_Tensor *pr_masked_fill(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *mask,
                          double value) {
  (void)value;
  if (check_bool(rt, "masked_fill", "mask", mask) != 0) return NULL;
  if (mask->device != x->device)
    return pr_fail(rt, "masked_fill: mask is on %s, input on %s", pr_device_name(mask->device),
                   pr_device_name(x->device));
  int n;
  int64_t shape[PR_MAX_DIMS];
  if (pr_broadcast_shapes(rt, "masked_fill", x->ndim, x->shape, mask->ndim, mask->shape, &n,
                          shape) != 0)
    return NULL;
  return select_result(rt, "masked_fill", x, mask, NULL,
                       pr_tensor_new(rt, n, shape, x->dtype, x->device));
}

pr_Tensor *pr_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b,
                    double sa, double sb) {
  (void)sa, (void)sb;
  if (check_bool(rt, "where", "condition", cond) != 0) return NULL;
  const pr_Tensor *t[2] = {a, b};
  int n = cond->ndim, dtype = a != NULL ? a->dtype : b != NULL ? b->dtype : rt->default_dtype;
  int64_t shape[PR_MAX_DIMS];
  memcpy(shape, cond->shape, sizeof shape);
  for (int i = 0; i < 2; i++) {
    if (t[i] == NULL) continue;
    if (t[i]->device != cond->device)
      return pr_fail(rt, "where: expected all tensors on the same device, got %s and %s",
                     pr_device_name(cond->device), pr_device_name(t[i]->device));
    if (pr_broadcast_shapes(rt, "where", n, shape, t[i]->ndim, t[i]->shape, &n, shape) != 0)
      return NULL;
  }
  if (a != NULL && b != NULL && a->dtype != b->dtype)
    return pr_fail(rt, "where: expected both values of one dtype, got %s and %s",
                   prof_dtype_name(a->dtype), prof_dtype_name(b->dtype));
  return select_result(rt, "where", cond, a, b, pr_tensor_new(rt, n, shape, dtype, cond->device));
}

pr_Tensor *pr_triangle(pr_Runtime *rt, const pr_Tensor *x, int64_t diagonal, int upper) {
  char sx[96];
  const char *name = upper ? "triu" : "tril";
  (void)diagonal;
  if (x->ndim < 2)
    return pr_fail(rt, "%s: input %s needs at least 2 dims", name, pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  pr_op_begin(&op, PROF_OP_COPY, x, NULL, NULL);
  op.name = name;
  return pr_op_finish(rt, &op, pr_tensor_like(rt, x));
}
