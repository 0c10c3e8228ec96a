/* ops_shape_backward.c — gradients of views, copies, cat and stack (autograd_table.c). */
#include "backward.h"

/* A zero tensor shaped like x with g written into the part of it a select/narrow took. */
static pr_Tensor *scatter_back(pr_Runtime *rt, const pr_Tensor *x, const pr_Node *n,
                               const pr_Tensor *g) {
  pr_Tensor *gx = pr_tensor_new(rt, x->ndim, x->shape, g->dtype, g->device);
  if (gx == NULL) return NULL;
  int dim = (int)n->args.i[1];
  pr_Tensor *part = n->args.i[0] == PR_VK_SELECT ? pr_select(rt, gx, dim, n->args.i[2])
                                              : pr_narrow(rt, gx, dim, n->args.i[2], g->shape[dim]);
  if (part == NULL || PR_K(part)->copy_into(rt, part, g) != 0) {
    pr_tensor_release(part);
    pr_tensor_release(gx);
    return NULL;
  }
  pr_tensor_release(part);
  return gx;
}

int pr_view_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *x = n->saved[0];
  int inv[PR_MAX_DIMS];
  switch (n->args.i[0]) {
    case PR_VK_RESHAPE:
      gin[0] = pr_reshape(rt, g, x->ndim, x->shape, 0);
      break;
    case PR_VK_PERMUTE:
      for (int i = 0; i < x->ndim; i++) inv[n->args.i[1 + i]] = i;
      gin[0] = pr_permute(rt, g, x->ndim, inv);
      break;
    case PR_VK_EXPAND:
      gin[0] = pr_sum_to(rt, g, x);
      break;
    case PR_VK_SELECT:
    case PR_VK_NARROW:
      gin[0] = scatter_back(rt, x, n, g);
      break;
    case PR_VK_CAST:
      gin[0] = pr_to(rt, g, x->dtype, x->device);
      break;
  }
  return gin[0] != NULL ? 0 : PR_ERR;
}

/* Each input's gradient is its slice of g: a narrow (cat) or a select (stack) view. */
int pr_join_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  int d = (int)n->args.i[0], stacked = (int)n->args.i[1];
  int64_t start = 0;
  for (int i = 0; i < n->n_inputs; i++) {
    int64_t len = n->args.i[2 + i];
    if (n->inputs[i] != NULL) {
      gin[i] = stacked ? pr_select(rt, g, d, start) : pr_narrow(rt, g, d, start, len);
      if (gin[i] == NULL) {
        while (i-- > 0) {
          pr_tensor_release(gin[i]);
          gin[i] = NULL;
        }
        return PR_ERR;
      }
    }
    start += len;
  }
  return 0;
}
