/* kernel_util.c — what kernels share above tensors: contiguous buffers (internal copies, not ops). */
#include "runtime.h"

pr_Tensor *pr_contiguous_data(pr_Runtime *rt, const pr_Tensor *t) {
  if (pr_is_contiguous(t) || !pr_holds_values(t)) return pr_tensor_retain((pr_Tensor *)t);
  pr_Tensor *c = pr_tensor_new(rt, t->ndim, t->shape, t->dtype, t->device);
  if (c != NULL && PR_K(t)->contiguous(rt, t, c) != 0) {
    pr_tensor_release(c);
    return NULL;
  }
  return c;
}
