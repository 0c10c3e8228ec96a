/* autograd.c — backward nodes on op outputs: what forward ops call to record their gradient. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

int pr_needs_grad(const pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, const pr_Tensor *c) {
  if (!rt->grad_enabled) return 0;
  const pr_Tensor *t[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (t[i] != NULL && (t[i]->flags & PR_T_REQUIRES_GRAD)) return 1;
  return 0;
}

pr_Node *pr_node_attach(pr_Runtime *rt, pr_Tensor *out, int backward, const char *name, int n,
                        const pr_Tensor *const *inputs) {
  pr_Node *node = calloc(1, sizeof *node);
  if (node == NULL) {
    pr_error(rt, "%s: out of memory recording its backward", name);
    return NULL;
  }
  node->refs = 1;
  node->backward = backward;
  node->name = name;
  node->module = rt->rec != NULL ? prof_module_current(rt->rec) : -1;
  node->n_inputs = n;
  for (int i = 0; i < n && i < PR_NODE_MAX; i++) {
    const pr_Tensor *t = inputs[i];
    if (t != NULL && (t->flags & PR_T_REQUIRES_GRAD)) node->inputs[i] = pr_tensor_retain((pr_Tensor *)t);
  }
  pr_node_release(out->grad_fn);
  out->grad_fn = node;
  out->flags |= PR_T_REQUIRES_GRAD;
  return node;
}

void pr_node_save(pr_Node *n, int slot, pr_Tensor *t) {
  if (t == NULL || slot < 0 || slot >= PR_NODE_MAX) return;
  pr_tensor_release(n->saved[slot]);
  /* an activation: told now, since the block is usually freed with the graph before anyone
     builds a memory timeline */
  pr_tensor_tag(t, PROF_MEM_ACTIVATION);
  if (t->grad_fn == n) {
    /* the output itself would own its node and be owned by it: keep a view of its values only */
    pr_Runtime scratch;
    t = pr_tensor_view(&scratch, t, t->ndim, t->shape, t->stride, t->offset);
    n->saved[slot] = t;
    return;
  }
  n->saved[slot] = pr_tensor_retain(t);
}

void pr_node_save_shape(pr_Runtime *rt, pr_Node *n, int slot, const pr_Tensor *t) {
  if (t == NULL || slot < 0 || slot >= PR_NODE_MAX) return;
  pr_tensor_release(n->saved[slot]);
  n->saved[slot] = pr_tensor_new(rt, t->ndim, t->shape, t->dtype, PR_SHAPES_DEVICE);
}
