/* ops_rnn.c — the recurrent ops' values and nodes around the rnn kernels: packed results, flat
   weights (their gradients: ops_rnn_backward.c). */
#include <stdlib.h>
#include <string.h>

#include "backward.h"

/* {====================== the recurrent ops' values and nodes ======================} */

/*
** A recurrent op has several results (output, h_n, c_n) and many weights, while a node has one
** result and four inputs. So the results are views of one packed tensor R = [out | h_n | c_n]
** whose node runs BPTT, each view's node hands its gradient to its part of R; and the weights are
** copied into one flat tensor W whose node is the first of a chain that splits W's gradient into
** up to three weights and the rest of the chain.
*/

/*
** W with the values of the nw weights (meta: shape only) and, with grad, the chain's nodes; on
** R's device, in what it saves for a backward (pr_grad_dtype: float32 where the cpu computes,
** the weights' and R's own on meta, so that a float16 model's BPTT counts 2-byte elements).
*/
static pr_Tensor *flat_weights(pr_Runtime *rt, int nw, const pr_Tensor *const *w, int64_t total,
                               const pr_Tensor *R, int grad) {
  pr_Tensor *W = pr_tensor_new(rt, 1, &total, pr_grad_dtype(R), R->device);
  int64_t off[256 + 1] = {0};
  if (W == NULL) return NULL;
  for (int k = 0; k < nw; k++) {
    off[k + 1] = off[k] + pr_numel(w[k]);
    if (!pr_holds_values(W)) continue;
    pr_Tensor *c = pr_contiguous_data(rt, w[k]);
    if (c == NULL) goto fail;
    int rc = W->be->copy(W->be, rt, pr_f32(W) + off[k], pr_f32(c), sizeof(float) * (size_t)pr_numel(c));
    pr_tensor_release(c);
    if (rc != 0) goto fail;
  }
  if (!grad) return W;
  pr_Tensor *next = NULL;
  for (int j = (nw + 2) / 3 - 1; j >= 0; j--) {
    int64_t rest = total - off[3 * j], one = 1;
    pr_Tensor *carrier = j == 0 ? pr_tensor_retain(W)
                                : pr_tensor_view(rt, W, 1, &rest, &one, W->offset + off[3 * j]);
    const pr_Tensor *in[4] = {NULL, NULL, NULL, next};
    for (int i = 0; i < 3 && 3 * j + i < nw; i++) in[i] = w[3 * j + i];
    pr_Node *node = carrier ? pr_node_attach(rt, carrier, PR_BW_RNN_PACK, "rnn_weights", 4, in)
                            : NULL;
    pr_tensor_release(next);
    next = carrier;
    if (node == NULL) goto fail_chain;
    for (int i = 0; i < 4; i++)
      node->args.i[i] = off[3 * j + i < nw ? 3 * j + i : nw] - off[3 * j];
  }
  pr_tensor_release(next);
  return W;
fail_chain:
  pr_tensor_release(next);
fail:
  pr_tensor_release(W);
  return NULL;
}

int pr_rnn_values(pr_Runtime *rt, const pr_RnnPlan *p, const char *name, int batch_first,
                  const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0, int nw,
                  const pr_Tensor *const *w, pr_Tensor *R, pr_Tensor *const *views) {
  int wgrad = 0;
  for (int k = 0; k < nw; k++) wgrad |= pr_needs_grad(rt, w[k], NULL, NULL);
  int grad = wgrad || pr_needs_grad(rt, x, h0, c0), cpu = pr_holds_values(R);
  if (!cpu && !grad) return 0;
  if (nw > 256) return pr_error(rt, "%s: at most 256 weights", name);
  pr_Tensor *W = flat_weights(rt, nw, w, pr_rnn_weights_size(p), R, wgrad);
  int64_t wsize = cpu ? pr_rnn_workspace_size(p) : 1;
  pr_Tensor *ws = W ? pr_tensor_new(rt, 1, &wsize, pr_grad_dtype(R), R->device) : NULL;
  int rc = PR_ERR;
  if (ws == NULL) goto end;
  if (PR_K(R)->rnn_forward(rt, p, batch_first, x, h0, c0, W, ws, R) != 0) goto end;
  if (grad) {
    const pr_Tensor *in[4] = {x, h0, c0, wgrad ? W : NULL};
    pr_Node *n = pr_node_attach(rt, R, PR_BW_RNN, name, 4, in);
    if (n == NULL) goto end;
    int64_t args[10] = {p->cell, p->relu, p->bias, p->T, p->N, p->In, p->H, p->L, p->D,
                        batch_first};
    memcpy(n->args.i, args, sizeof args);
    n->args.f[0] = p->dropout;
    pr_node_save(n, 0, ws);
    pr_node_save(n, 1, W);
    for (int i = 0; i < 3; i++) {
      pr_Tensor *v = views[i];
      const pr_Tensor *r1 = R;
      if (v == NULL) continue;
      pr_Node *u = pr_node_attach(rt, v, PR_BW_RNN_UNPACK, name, 1, &r1);
      if (u == NULL) goto end;
      u->args.i[0] = v->offset - R->offset;
    }
  }
  rc = 0;
end:
  pr_tensor_release(W);
  pr_tensor_release(ws);
  return rc;
}
