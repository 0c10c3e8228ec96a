/* ops_einsum_backward.c — einsum's gradients: einsums of the output's gradient (autograd_table.c). */
#include "backward.h"

/*
** The gradient of operand k: the einsum of the output's gradient with the other operand into k's
** distinct letters that either has (a recorded einsum); letters only k had come back by
** broadcasting, size-1 letters by summing, and a repeated letter by writing the diagonal.
*/
static pr_Tensor *ein_grad(pr_Runtime *rt, int nops, const pr_EinTerm *in, const pr_EinTerm *out,
                           int k, const pr_Tensor *g, const pr_Tensor *x, const pr_Tensor *other) {
  pr_EinTerm u, r = {0, {0}}, tin[2] = {*out, nops == 2 ? in[1 - k] : *out};
  pr_Tensor *xv = pr_ein_distinct(rt, x, &in[k], &u);
  if (xv == NULL) return NULL;
  for (int i = 0; i < u.n; i++)
    if (pr_ein_term_has(out, u.id[i]) || (nops == 2 && pr_ein_term_has(&in[1 - k], u.id[i])))
      r.id[r.n++] = u.id[i];
  char eq[3 * PR_MAX_DIMS + 8];
  pr_ein_render(nops, tin, &r, eq);
  pr_Tensor *t = pr_einsum(rt, eq, g, nops == 2 ? other : NULL);
  /* [r...] to [u...] with 1s where u has letters r lacks, expanded, then summed to x's sizes
     (where x broadcast a size-1 letter) */
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0, j = 0; i < u.n; i++) shape[i] = t && pr_ein_term_has(&r, u.id[i]) ? t->shape[j++] : 1;
  pr_Tensor *v = t ? pr_reshape(rt, t, u.n, shape, 0) : NULL;
  for (int i = 0; i < u.n; i++)
    if (shape[i] == 1) shape[i] = xv->shape[i];   /* letters k alone had, or broadcast to it */
  pr_Tensor *e = v ? pr_expand(rt, v, u.n, shape) : NULL;
  pr_Tensor *s = e ? pr_sum_to(rt, e, xv) : NULL;
  pr_Tensor *gx = s ? pr_tensor_new(rt, x->ndim, x->shape, pr_grad_dtype(x), x->device) : NULL;
  pr_Tensor *d = gx ? pr_ein_distinct(rt, gx, &in[k], &u) : NULL;
  if (d != NULL && PR_K(d)->copy_into(rt, d, s) != 0) pr_tensor_release(gx), gx = NULL;
  pr_tensor_release(xv);
  pr_tensor_release(t);
  pr_tensor_release(v);
  pr_tensor_release(e);
  pr_tensor_release(s);
  pr_tensor_release(d);
  return d != NULL ? gx : NULL;
}

int pr_einsum_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  int nops = (int)n->args.i[0];
  pr_EinTerm in[2] = {pr_ein_term_unpack(n->args.i[1]), pr_ein_term_unpack(n->args.i[2])};
  pr_EinTerm out = pr_ein_term_unpack(n->args.i[3]);
  for (int k = 0; k < nops; k++) {
    if (n->inputs[k] == NULL) continue;
    gin[k] = ein_grad(rt, nops, in, &out, k, g, n->saved[k], nops == 2 ? n->saved[1 - k] : NULL);
    if (gin[k] == NULL) return PR_ERR;
  }
  return 0;
}
