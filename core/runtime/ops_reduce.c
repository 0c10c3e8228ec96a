/* ops_reduce.c — sum, mean, amax and var over any dims: shapes, records, nodes; sum_to. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

pr_Tensor *pr_reduce(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int ndims,
                     const int *dims, int keepdim, double correction) {
  char sx[96];
  const char *name = prof_op_kind_name(kind);
  int reduced[PR_MAX_DIMS] = {0};
  if (ndims <= 0) {
    for (int i = 0; i < x->ndim; i++) reduced[i] = 1;
  } else {
    for (int k = 0; k < ndims; k++) {
      int d = pr_dim(dims[k], x->ndim);
      if (d < 0)
        return pr_fail(rt, "%s: dim %d is out of range for input %s", name, dims[k],
                       pr_shape_str(x, sx, sizeof sx));
      if (x->ndim > 0 && reduced[d])
        return pr_fail(rt, "%s: dim %d appears more than once in the list of dims", name, d);
      reduced[d] = 1;
    }
  }
  int dtype = x->dtype;
  if (kind == PROF_OP_MEAN || kind == PROF_OP_VAR) {
    if (pr_check_float(rt, name, "input", x) != 0) return NULL;
  } else if (kind == PROF_OP_SUM && !pr_is_float(dtype)) {
    dtype = PROF_I64;          /* PyTorch sums integers and bools as int64 */
  }
  int64_t shape[PR_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (!reduced[i]) shape[n++] = x->shape[i];
    else if (keepdim) shape[n++] = 1;
    /* a maximum of nothing does not exist */
    if (reduced[i] && kind == PROF_OP_AMAX && x->shape[i] == 0)
      return pr_fail(rt, "amax: dim %d of input %s is empty", i, pr_shape_str(x, sx, sizeof sx));
  }
  prof_Op op;
  pr_op_begin(&op, kind, x, NULL, NULL);
  pr_Tensor *out = pr_op_alloc(rt, &op, n, shape, dtype, x->device);
  if (out == NULL) return NULL;
  out = pr_op_end(rt, &op, out, PR_K(out)->reduce(rt, kind, x, reduced, correction, out));
  if (out == NULL) return NULL;
  if (!pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *node = pr_node_attach(rt, out, PR_BW_REDUCE, name, 1, &x);
  if (node == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  node->args.i[0] = kind;
  for (int d = 0; d < x->ndim; d++) node->args.i[1 + d] = reduced[d];
  node->args.f[0] = correction;
  if (kind == PROF_OP_AMAX || kind == PROF_OP_VAR) {
    pr_node_save(node, 0, (pr_Tensor *)x);
    /* the statistic per cell: amax's output itself, var's mean (recomputed without a record) */
    pr_Tensor *stat = pr_tensor_new(rt, n, shape, dtype, x->device);
    if (stat != NULL)
      PR_K(stat)->reduce(rt, kind == PROF_OP_AMAX ? PROF_OP_AMAX : PROF_OP_MEAN, x, reduced, 0, stat);
    pr_node_save(node, 1, stat);
    pr_tensor_release(stat);
  } else {
    pr_node_save_shape(rt, node, 0, x);
  }
  return out;
}

/* Sums the leading and broadcast dims with reduce, then reshapes: both recorded as the ops they are. */
pr_Tensor *pr_sum_to(pr_Runtime *rt, const pr_Tensor *t, const pr_Tensor *like) {
  int dims[PR_MAX_DIMS], n = 0;
  int lead = t->ndim - like->ndim;
  for (int d = 0; d < t->ndim; d++)
    if (d < lead || (like->shape[d - lead] == 1 && t->shape[d] != 1)) dims[n++] = d;
  if (n == 0 && lead == 0) return pr_tensor_retain((pr_Tensor *)t);
  pr_Tensor *s = pr_reduce(rt, PROF_OP_SUM, t, n, dims, 1, 0);
  if (s == NULL) return NULL;
  pr_Tensor *v = pr_reshape(rt, s, like->ndim, like->shape, 0);
  pr_tensor_release(s);
  return v;
}
