/* ops_select.c — elementwise selection: masked_fill, where, triu and tril: values and nodes. */
#include <string.h>

#include "runtime.h"

/* {====================== masked_fill, where, triu, tril ======================} */

static int64_t nbytes(const pr_Tensor *t) {
  return t != NULL ? pr_numel(t) * prof_dtype_size(t->dtype) : 0;
}

/*
** Selections move bytes but compute nothing: a custom op with zero flops around the where
** kernel, out [n, shape] of dtype allocated inside it. a or b NULL: the numbers sa or sb.
*/
static pr_Tensor *select_values(pr_Runtime *rt, const char *name, const pr_Tensor *cond,
                                const pr_Tensor *a, const pr_Tensor *b, double sa, double sb,
                                int n, const int64_t *shape, int dtype, int device,
                                const pr_Tensor *in0, const pr_Tensor *in1, const pr_Tensor *in2) {
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CUSTOM, in0, in1, in2);
  op.name = name;
  op.bytes_read = nbytes(in0) + nbytes(in1) + nbytes(in2);
  int64_t numel = 1;
  for (int i = 0; i < n; i++) numel *= shape[i];
  op.bytes_written = numel * prof_dtype_size(dtype);
  pr_Tensor *out = pr_op_alloc(rt, &op, n, shape, dtype, device);
  if (out == NULL) return NULL;
  return pr_op_end(rt, &op, out, PR_K(out)->where(rt, cond, a, b, sa, sb, out));
}

static int check_bool(pr_Runtime *rt, const char *name, const char *what, const pr_Tensor *t) {
  if (t->dtype == PROF_BOOL) return 0;
  return pr_error(rt, "%s: %s must be a bool tensor, got %s", name, what,
                  prof_dtype_name(t->dtype));
}

/* Attaches a selection node (PR_BW_SELECT) to out for the value inputs a, b (either NULL) chosen by cond. */
static pr_Tensor *select_grad(pr_Runtime *rt, pr_Tensor *out, const char *name, int masked,
                              const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b) {
  if (out == NULL || !pr_needs_grad(rt, a, b, NULL)) return out;
  const pr_Tensor *in[2] = {a, b};
  pr_Node *n = pr_node_attach(rt, out, PR_BW_SELECT, name, 2, in);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  n->args.i[0] = masked;
  pr_node_save(n, 0, (pr_Tensor *)cond);
  pr_node_save_shape(rt, n, 1, a);
  pr_node_save_shape(rt, n, 2, b);
  return out;
}

pr_Tensor *pr_masked_fill(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *mask,
                          double value) {
  if (check_bool(rt, "masked_fill", "mask", mask) != 0) return NULL;
  if (mask->device != x->device)
    return pr_fail(rt, "masked_fill: mask is on %s, input on %s", mask->be->name,
                   x->be->name);
  int n;
  int64_t shape[PR_MAX_DIMS];
  if (pr_broadcast_shapes(rt, "masked_fill", x->ndim, x->shape, mask->ndim, mask->shape, &n,
                          shape) != 0)
    return NULL;
  pr_Tensor *out = select_values(rt, "masked_fill", mask, NULL, x, value, 0, n, shape, x->dtype,
                                 x->device, x, mask, NULL);
  return select_grad(rt, out, "masked_fill", 1, mask, x, NULL);
}

pr_Tensor *pr_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b,
                    double sa, double sb) {
  if (check_bool(rt, "where", "condition", cond) != 0) return NULL;
  const pr_Tensor *t[2] = {a, b};
  int n = cond->ndim, dtype = a != NULL ? a->dtype : b != NULL ? b->dtype : rt->default_dtype;
  int64_t shape[PR_MAX_DIMS];
  memcpy(shape, cond->shape, sizeof shape);
  for (int i = 0; i < 2; i++) {
    if (t[i] == NULL) continue;
    if (t[i]->device != cond->device)
      return pr_fail(rt, "where: expected all tensors on the same device, got %s and %s",
                     cond->be->name, t[i]->be->name);
    if (pr_broadcast_shapes(rt, "where", n, shape, t[i]->ndim, t[i]->shape, &n, shape) != 0)
      return NULL;
  }
  if (a != NULL && b != NULL && a->dtype != b->dtype)
    return pr_fail(rt, "where: expected both values of one dtype, got %s and %s",
                   prof_dtype_name(a->dtype), prof_dtype_name(b->dtype));
  pr_Tensor *out = select_values(rt, "where", cond, a, b, sa, sb, n, shape, dtype, cond->device,
                                 cond, a, b);
  return select_grad(rt, out, "where", 0, cond, a, b);
}

pr_Tensor *pr_triangle(pr_Runtime *rt, const pr_Tensor *x, int64_t diagonal, int upper) {
  char sx[96];
  const char *name = upper ? "triu" : "tril";
  if (x->ndim < 2)
    return pr_fail(rt, "%s: input %s needs at least 2 dims", name, pr_shape_str(x, sx, sizeof sx));
  prof_Op op;
  pr_op_begin(&op, PROF_OP_COPY, x, NULL, NULL);
  op.name = name;
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, x->shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  int rc = 0;
  if ((rc = PR_K(out)->copy_into(rt, out, x)) == 0) rc = PR_K(out)->triangle(rt, out, diagonal, upper);
  if ((out = pr_op_end(rt, &op, out, rc)) == NULL) return NULL;
  if (!pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *n = pr_node_attach(rt, out, PR_BW_TRIANGLE, name, 1, &x);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  n->args.i[0] = diagonal;
  n->args.i[1] = upper;
  return out;
}
