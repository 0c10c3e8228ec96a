/* ops_dense.c — linear: shapes, checks, the event around its kernel, and its node. */
#include <string.h>

#include "runtime.h"

/*
** aten::linear's children as torch 1.13 records them: aten::t of the weight, then with a bias
** aten::addmm (an N-D input viewed as a matrix and back: aten::view around it), without one
** aten::matmul over aten::mm. The GEMM part carries the op's counts: it is the work.
*/
typedef struct Gemm {
  prof_Op gemm, matmul;
  int has_matmul;
} Gemm;

static void gemm_begin(pr_Runtime *rt, Gemm *g, const prof_Op *op, const pr_Tensor *x,
                       const pr_Tensor *w, const pr_Tensor *b) {
  prof_Operand in[3];
  pr_operand(w, &in[0]);
  pr_part_mark(rt, "t", 1, in);
  g->has_matmul = b == NULL;
  if (b != NULL) {
    pr_operand(x, &in[1]);
    if (x->ndim != 2) pr_part_mark(rt, "view", 1, &in[1]);
    pr_operand(b, &in[0]);
    pr_operand_2d(x, &in[1]);
    pr_operand_t(w, &in[2]);
    pr_part_begin(rt, &g->gemm, "addmm", op, 3, in);
    return;
  }
  pr_operand(x, &in[0]);
  pr_operand_t(w, &in[1]);
  pr_part_begin(rt, &g->matmul, "matmul", NULL, 2, in);
  if (x->ndim != 2) pr_part_mark(rt, x->ndim == 1 ? "unsqueeze" : "reshape", 1, in);
  pr_operand_2d(x, &in[0]);
  pr_part_begin(rt, &g->gemm, "mm", op, 2, in);
}

static void gemm_end(pr_Runtime *rt, Gemm *g, const pr_Tensor *x, const pr_Tensor *out) {
  pr_part_end(rt, &g->gemm);
  prof_Operand o;
  if (out != NULL && x->ndim != 2) {
    pr_operand_2d(out, &o);
    pr_part_mark(rt, g->has_matmul ? (x->ndim == 1 ? "squeeze_" : "_unsafe_view") : "view", 1, &o);
  }
  if (g->has_matmul) pr_part_end(rt, &g->matmul);
}

pr_Tensor *pr_linear(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b) {
  char sx[96], sw[96], sb[96];
  if (pr_check_same(rt, "linear", x, w, b) != 0) return NULL;
  if (w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
    return pr_fail(rt, "linear: input %s does not match weight %s (expected input [..., %lld])",
                   pr_shape_str(x, sx, sizeof sx), pr_shape_str(w, sw, sizeof sw),
                   (long long)(w->ndim == 2 ? w->shape[1] : -1));
  if (b != NULL && (b->ndim != 1 || b->shape[0] != w->shape[0]))
    return pr_fail(rt, "linear: bias %s does not match weight %s", pr_shape_str(b, sb, sizeof sb),
                   pr_shape_str(w, sw, sizeof sw));
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
  shape[x->ndim - 1] = w->shape[0];
  prof_Op op;
  pr_op_begin(&op, PROF_OP_LINEAR, x, w, b);
  if (b != NULL) op.flags |= PROF_OPF_BIAS;
  if (pr_op_open(rt, &op, x->ndim, shape, x->dtype) != 0) return NULL;
  Gemm g;
  gemm_begin(rt, &g, &op, x, w, b);
  pr_Tensor *out = pr_tensor_new(rt, x->ndim, shape, x->dtype, x->device);
  int rc = out != NULL ? PR_K(out)->linear(rt, x, w, b, out) : PR_ERR;
  gemm_end(rt, &g, x, out);
  if (out == NULL) {
    pr_op_close(rt, &op, rc);
    return NULL;
  }
  if ((out = pr_op_end(rt, &op, out, rc)) == NULL) return NULL;
  if (pr_needs_grad(rt, x, w, b)) {
    const pr_Tensor *in[3] = {x, w, b};
    /* torch's node is its GEMM's (AddmmBackward0, MmBackward0) */
    pr_Node *n = pr_node_attach(rt, out, PR_BW_LINEAR, b != NULL ? "addmm" : "mm", 3, in);
    if (n == NULL) {
      pr_tensor_release(out);
      return NULL;
    }
    pr_node_save(n, 0, (pr_Tensor *)x);
    pr_node_save(n, 1, (pr_Tensor *)w);
  }
  return out;
}
