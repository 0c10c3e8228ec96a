/* ops_linalg.c — matmul, mm, bmm, addmm and baddbmm: shapes, checks, records, values, nodes. */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

/* Values: the matrix products compute on the cpu through sgemm (einsum: ops_einsum.c). */

/* Same device and dtype for all, and a float dtype. */
static int check_operands(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b,
                          const pr_Tensor *c) {
  if (pr_check_same(rt, op, a, b, c) != 0) return PR_ERR;
  return pr_check_float(rt, op, "input", a);
}

static pr_Tensor *cannot_multiply(pr_Runtime *rt, const char *op, const pr_Tensor *a,
                                  const pr_Tensor *b, int64_t ka, int64_t kb) {
  char sa[96], sb[96];
  return pr_fail(rt, "%s: shapes %s and %s cannot be multiplied (%lld != %lld)", op,
                 pr_shape_str(a, sa, sizeof sa), pr_shape_str(b, sb, sizeof sb), (long long)ka,
                 (long long)kb);
}

/* Computes a product op's values (cpu) and attaches its gradient; out is the shaped result. */
static pr_Tensor *product_result(pr_Runtime *rt, prof_Op *op, prof_OpKind kind,
                                 const pr_Tensor *c, const pr_Tensor *a, const pr_Tensor *b,
                                 double beta, double alpha, pr_Tensor *out) {
  if (out == NULL) return NULL;
  int rc = 0;
  if (pr_holds_values(out) && out->dtype != PROF_F32)
    rc = pr_error(rt, "%s: %s kernels compute float32", prof_op_kind_name(kind), out->be->name);
  if (pr_holds_values(out) && rc == 0) {
    /* 1-D operands of matmul are promoted by views that never reach the profile */
    pr_Runtime quiet = *rt;
    quiet.rec = NULL;
    quiet.grad_enabled = 0;
    pr_Tensor *a2 = a->ndim == 1 ? pr_unsqueeze(&quiet, a, 0) : pr_tensor_retain((pr_Tensor *)a);
    pr_Tensor *b2 = b->ndim == 1 ? pr_unsqueeze(&quiet, b, 1) : pr_tensor_retain((pr_Tensor *)b);
    pr_Tensor *o2 = NULL;
    rc = PR_ERR;
    if (a2 != NULL && b2 != NULL) {
      int64_t shape[PR_MAX_DIMS + 2];
      int nb;
      pr_broadcast_shapes(&quiet, "matmul", a2->ndim - 2, a2->shape, b2->ndim - 2, b2->shape, &nb,
                          shape);
      shape[nb] = a2->shape[a2->ndim - 2];
      shape[nb + 1] = b2->shape[b2->ndim - 1];
      o2 = pr_reshape(&quiet, out, nb + 2, shape, 1);
      float fbeta = 0.0f;
      if (o2 != NULL && c != NULL) {
        /* the added term, broadcast into out, then accumulated onto by sgemm */
        pr_Tensor *ce = pr_expand(&quiet, c, o2->ndim, o2->shape);
        rc = ce ? PR_K(o2)->copy_into(&quiet, o2, ce) : PR_ERR;
        pr_tensor_release(ce);
        fbeta = (float)beta;
        if (rc != 0) goto done;
      }
      rc = o2 ? PR_K(o2)->batched_mm(rt, a2, b2, o2, (float)alpha, fbeta) : PR_ERR;
    }
  done:
    pr_tensor_release(a2);
    pr_tensor_release(b2);
    pr_tensor_release(o2);
    if (rc != 0 && quiet.err[0] != '\0' && rt->err[0] == '\0') pr_error(rt, "%s", quiet.err);
  }
  if ((out = pr_op_end(rt, op, out, rc)) == NULL) return NULL;
  if (!pr_needs_grad(rt, c, a, b)) return out;
  const pr_Tensor *in[3] = {c, a, b};
  pr_Node *n = c != NULL ? pr_node_attach(rt, out, PR_BW_ADDMM, prof_op_kind_name(kind), 3, in)
                         : pr_node_attach(rt, out, PR_BW_MATMUL, prof_op_kind_name(kind), 2, in + 1);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  if (c != NULL) {
    n->args.f[0] = beta;
    n->args.f[1] = alpha;
    pr_node_save_shape(rt, n, 0, c);
    pr_node_save(n, 1, (pr_Tensor *)a);
    pr_node_save(n, 2, (pr_Tensor *)b);
  } else {
    pr_node_save(n, 0, (pr_Tensor *)a);
    pr_node_save(n, 1, (pr_Tensor *)b);
  }
  return out;
}

/* {====================== matmul, mm, bmm ======================} */

pr_Tensor *pr_matmul(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b) {
  char sa[96], sb[96];
  if (check_operands(rt, "matmul", a, b, NULL) != 0) return NULL;
  if (a->ndim == 0 || b->ndim == 0)
    return pr_fail(rt, "matmul: both arguments need at least 1 dimension, got %s and %s",
                   pr_shape_str(a, sa, sizeof sa), pr_shape_str(b, sb, sizeof sb));
  int64_t ka = a->shape[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->shape[b->ndim - 2] : b->shape[0];
  if (ka != kb) return cannot_multiply(rt, "matmul", a, b, ka, kb);
  int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0, n;
  int64_t shape[PR_MAX_DIMS + 2];
  if (pr_broadcast_shapes(rt, "matmul", na, a->shape, nb, b->shape, &n, shape) != 0) {
    /* say which dims failed: the batch dims, not the matrices */
    return pr_fail(rt, "matmul: batch dimensions of %s and %s cannot be broadcast together",
                   pr_shape_str(a, sa, sizeof sa), pr_shape_str(b, sb, sizeof sb));
  }
  /* a 1-D operand's promoted dim is removed from the result */
  if (a->ndim >= 2) shape[n++] = a->shape[a->ndim - 2];
  if (b->ndim >= 2) shape[n++] = b->shape[b->ndim - 1];
  prof_Op op;
  pr_op_begin(&op, PROF_OP_MATMUL, a, b, NULL);
  return product_result(rt, &op, PROF_OP_MATMUL, NULL, a, b, 0, 1,
                        pr_op_alloc(rt, &op, n, shape, a->dtype, a->device));
}

pr_Tensor *pr_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b) {
  char sa[96], sb[96];
  if (check_operands(rt, "mm", a, b, NULL) != 0) return NULL;
  if (a->ndim != 2 || b->ndim != 2)
    return pr_fail(rt, "mm: expected 2-D tensors, got %s and %s", pr_shape_str(a, sa, sizeof sa),
                   pr_shape_str(b, sb, sizeof sb));
  if (a->shape[1] != b->shape[0]) return cannot_multiply(rt, "mm", a, b, a->shape[1], b->shape[0]);
  int64_t shape[2] = {a->shape[0], b->shape[1]};
  prof_Op op;
  pr_op_begin(&op, PROF_OP_MM, a, b, NULL);
  return product_result(rt, &op, PROF_OP_MM, NULL, a, b, 0, 1,
                        pr_op_alloc(rt, &op, 2, shape, a->dtype, a->device));
}

/* The checks bmm and baddbmm share; fills the product's shape [B, n, p]. */
static int check_batched(pr_Runtime *rt, const char *name, const pr_Tensor *a, const pr_Tensor *b,
                         int64_t *shape) {
  char sa[96], sb[96];
  if (a->ndim != 3 || b->ndim != 3)
    return pr_error(rt, "%s: expected 3-D tensors, got %s and %s", name,
                    pr_shape_str(a, sa, sizeof sa), pr_shape_str(b, sb, sizeof sb));
  if (a->shape[0] != b->shape[0])
    return pr_error(rt, "%s: batch sizes of %s and %s differ (%lld != %lld)", name,
                    pr_shape_str(a, sa, sizeof sa), pr_shape_str(b, sb, sizeof sb),
                    (long long)a->shape[0], (long long)b->shape[0]);
  if (a->shape[2] != b->shape[1]) {
    cannot_multiply(rt, name, a, b, a->shape[2], b->shape[1]);
    return PR_ERR;
  }
  shape[0] = a->shape[0];
  shape[1] = a->shape[1];
  shape[2] = b->shape[2];
  return 0;
}

pr_Tensor *pr_bmm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b) {
  int64_t shape[3];
  if (check_operands(rt, "bmm", a, b, NULL) != 0) return NULL;
  if (check_batched(rt, "bmm", a, b, shape) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_BMM, a, b, NULL);
  return product_result(rt, &op, PROF_OP_BMM, NULL, a, b, 0, 1,
                        pr_op_alloc(rt, &op, 3, shape, a->dtype, a->device));
}

/* {====================== addmm, baddbmm ======================} */

/* c must broadcast to the product's shape without growing it (PyTorch expands c). */
static int check_added(pr_Runtime *rt, const char *name, const pr_Tensor *c, int nd,
                       const int64_t *shape) {
  char sc[96], sp[96];
  int ok = c->ndim <= nd;
  for (int i = 0; ok && i < c->ndim; i++) {
    int64_t d = c->shape[c->ndim - 1 - i], want = shape[nd - 1 - i];
    ok = d == want || d == 1;
  }
  if (ok) return 0;
  return pr_error(rt, "%s: input %s does not broadcast to the product's shape %s", name,
                  pr_shape_str(c, sc, sizeof sc), pr_dims_str(nd, shape, sp, sizeof sp));
}

pr_Tensor *pr_addmm(pr_Runtime *rt, const pr_Tensor *c, const pr_Tensor *a, const pr_Tensor *b,
                    double beta, double alpha) {
  char sa[96], sb[96];
  if (check_operands(rt, "addmm", a, b, c) != 0) return NULL;
  if (a->ndim != 2 || b->ndim != 2)
    return pr_fail(rt, "addmm: expected 2-D matrices, got %s and %s",
                   pr_shape_str(a, sa, sizeof sa), pr_shape_str(b, sb, sizeof sb));
  if (a->shape[1] != b->shape[0])
    return cannot_multiply(rt, "addmm", a, b, a->shape[1], b->shape[0]);
  int64_t shape[2] = {a->shape[0], b->shape[1]};
  if (check_added(rt, "addmm", c, 2, shape) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_ADDMM, c, a, b);
  return product_result(rt, &op, PROF_OP_ADDMM, c, a, b, beta, alpha,
                        pr_op_alloc(rt, &op, 2, shape, a->dtype, a->device));
}

pr_Tensor *pr_baddbmm(pr_Runtime *rt, const pr_Tensor *c, const pr_Tensor *a,
                      const pr_Tensor *b, double beta, double alpha) {
  int64_t shape[3];
  if (check_operands(rt, "baddbmm", a, b, c) != 0) return NULL;
  if (check_batched(rt, "baddbmm", a, b, shape) != 0) return NULL;
  if (check_added(rt, "baddbmm", c, 3, shape) != 0) return NULL;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_BADDBMM, c, a, b);
  return product_result(rt, &op, PROF_OP_BADDBMM, c, a, b, beta, alpha,
                        pr_op_alloc(rt, &op, 3, shape, a->dtype, a->device));
}
