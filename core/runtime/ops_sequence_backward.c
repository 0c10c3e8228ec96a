/* ops_sequence_backward.c — scaled dot-product attention's gradients (autograd_table.c). */
#include <string.h>

#include "backward.h"

/* a·b as a recorded matmul, ta / tb: that operand with its last two dims swapped (a view). */
static pr_Tensor *mm_t(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, int ta, int tb) {
  pr_Tensor *at = ta ? pr_transpose(rt, a, -2, -1) : pr_tensor_retain((pr_Tensor *)a);
  pr_Tensor *bt = at && tb ? pr_transpose(rt, b, -2, -1) : at ? pr_tensor_retain((pr_Tensor *)b)
                                                            : NULL;
  pr_Tensor *p = bt ? pr_matmul(rt, at, bt) : NULL;
  pr_tensor_release(at);
  pr_tensor_release(bt);
  return p;
}

/* t summed over the dims it broadcast from like (a view's shape), then shaped as orig. */
static pr_Tensor *reduce_to(pr_Runtime *rt, pr_Tensor *t, const pr_Tensor *like,
                            const pr_Tensor *orig) {
  pr_Tensor *s = t ? pr_sum_to(rt, t, like) : NULL;
  pr_Tensor *r = s ? pr_reshape(rt, s, orig->ndim, orig->shape, 0) : NULL;
  pr_tensor_release(t);
  pr_tensor_release(s);
  return r;
}

/*
** O = A·V with A the (dropped) softmax of S = scale·Q·Kᵀ: gA = gO·Vᵀ, gV = Aᵀ·gO, gS from the
** softmax (cpu_attn.c), gQ = gS·K, gK = gSᵀ·Q; the four products are recorded matmuls, each
** summed back over the dims its operand broadcast over (batch dims, grouped heads).
*/
int pr_sdpa_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *q = n->saved[0], *k = n->saved[1], *v = n->saved[2], *pa = n->saved[3];
  int64_t group = n->args.i[0], sshape[PR_MAX_DIMS], split[PR_MAX_DIMS + 1];
  int nb = (int)n->args.i[1], drop = (int)n->args.i[2], nd = nb + 2;
  for (int i = 0; i < nd; i++) sshape[i] = n->args.i[3 + i];
  double scale = n->args.f[0], p = n->args.f[1];
  pr_Tensor *qv = NULL, *kv = NULL, *vv = NULL, *gs = NULL, *P = NULL, *A = NULL, *gA = NULL;
  pr_Tensor *gS = NULL;
  int rc = PR_ERR;
  if (group > 1) nd = pr_split_heads(nb, sshape, group, split);
  else memcpy(split, sshape, sizeof sshape);
  int64_t numel = pr_numel(pa) / (drop ? 2 : 1), S = sshape[nb + 1];
  P = pr_contig_view(rt, pa, nd, split, 0);
  A = P && drop ? pr_contig_view(rt, pa, nd, split, numel) : P ? pr_tensor_retain(P) : NULL;
  if (A == NULL || pr_attn_views(rt, q, k, v, group, &qv, &kv, &vv) != 0) goto end;
  if (group > 1) {
    int64_t gshape[PR_MAX_DIMS + 1];
    pr_split_heads(nb, g->shape, group, gshape);
    gs = pr_reshape(rt, g, nd, gshape, 0);
  } else {
    gs = pr_tensor_retain((pr_Tensor *)g);
  }
  if (gs == NULL || (gA = mm_t(rt, gs, vv, 0, 1)) == NULL) goto end;
  if ((gS = pr_tensor_new(rt, gA->ndim, gA->shape, pr_grad_dtype(gA), gA->device)) == NULL) goto end;
  /* per score: the dropout mask (1), gP·P and its row sum (2), the difference, ·P and ·scale (3) */
  prof_Op work;
  int64_t esize = (int64_t)prof_dtype_size(gS->dtype);   /* P, A, gA and gS share it */
  if (pr_work_begin(rt, &work, "scaled_dot_product_attention_backward", 0, numel * (5 + drop),
                     esize * numel * (2 + drop), esize * numel, g, q, NULL) != 0)
    goto end;
  int krc = 0;
  if (pr_holds_values(gS))
    krc = PR_K(gS)->attn_softmax_backward(rt, P, drop ? A : NULL, gA, S > 0 ? numel / S : 0, S, p,
                                          scale, gS);
  if (pr_op_close(rt, &work, krc) != 0) goto end;
  if (n->inputs[0] != NULL) {
    /* the query's gradient back to [batch..., L, E] (heads joined), then to q's own dims */
    int64_t qshape[PR_MAX_DIMS];
    memcpy(qshape, sshape, sizeof qshape);
    qshape[nb + 1] = q->shape[q->ndim - 1];
    pr_Tensor *t = mm_t(rt, gS, kv, 0, 0), *j = t ? pr_reshape(rt, t, nb + 2, qshape, 0) : NULL;
    pr_tensor_release(t);
    if ((gin[0] = reduce_to(rt, j, q, q)) == NULL) goto end;
  }
  if (n->inputs[1] != NULL && (gin[1] = reduce_to(rt, mm_t(rt, gS, qv, 1, 0), kv, k)) == NULL)
    goto end;
  if (n->inputs[2] != NULL && (gin[2] = reduce_to(rt, mm_t(rt, A, gs, 1, 0), vv, v)) == NULL)
    goto end;
  rc = 0;
end:
  pr_release3(qv, kv, vv);
  pr_release3(gs, P, A);
  pr_release3(gA, gS, NULL);
  return rc;
}
