/* cpu_select.c — copies that select: cat and stack into their slices, the triangles of triu and tril. */
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/*
** Copies the inputs into their slices of the contiguous out along dim d (stacked: d is the new
** dim and each input fills one index of it). A contiguous input is a run of whole blocks, one
** memcpy per index of the dims before d; other layouts go through a strided copy.
*/
int pr_cpu_join(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int d, int stacked,
                pr_Tensor *out) {
  size_t es = (size_t)prof_dtype_size(out->dtype);
  int64_t outer = 1, start = 0;
  for (int i = 0; i < d; i++) outer *= out->shape[i];
  int64_t row = out->shape[d] * out->stride[d];   /* elements per index of the outer dims */
  char *dst = (char *)out->storage->data;
  for (int k = 0; k < n; k++) {
    const pr_Tensor *x = xs[k];
    int64_t len = stacked ? 1 : x->shape[d], block = len * out->stride[d];
    if (pr_numel(x) > 0 && pr_is_contiguous(x)) {
      const char *src = (const char *)x->storage->data + es * (size_t)x->offset;
      for (int64_t o = 0; o < outer; o++)
        memcpy(dst + es * (size_t)(o * row + start * out->stride[d]),
               src + es * (size_t)(o * block), es * (size_t)block);
    } else if (pr_numel(x) > 0) {
      int64_t stride[PR_MAX_DIMS];
      for (int i = 0, j = 0; i < out->ndim; i++)
        if (!stacked || i != d) stride[j++] = out->stride[i];
      pr_Tensor *slice = pr_tensor_view(rt, out, x->ndim, x->shape, stride,
                                        start * out->stride[d]);
      int rc = slice != NULL ? pr_cpu_copy_into(rt, slice, x) : PR_ERR;
      pr_tensor_release(slice);
      if (rc != 0) return PR_ERR;
    }
    start += len;
  }
  return 0;
}

/* Zeroes what lies outside the triangle of every matrix of the contiguous out. */
int pr_cpu_triangle(pr_Runtime *rt, pr_Tensor *out, int64_t diagonal, int upper) {
  (void)rt;   /* the host's kernels cannot fail */
  int64_t rows = out->shape[out->ndim - 2], cols = out->shape[out->ndim - 1];
  int64_t mats = rows * cols > 0 ? pr_numel(out) / (rows * cols) : 0;
  size_t es = (size_t)prof_dtype_size(out->dtype);
  char *p = (char *)out->storage->data;
  for (int64_t m = 0; m < mats; m++) {
    for (int64_t r = 0; r < rows; r++, p += es * (size_t)cols) {
      /* triu keeps c - r >= diagonal, tril keeps c - r <= diagonal */
      int64_t edge = r + diagonal + (upper ? 0 : 1);   /* first column kept (triu) / dropped */
      edge = edge < 0 ? 0 : edge > cols ? cols : edge;
      if (upper) memset(p, 0, es * (size_t)edge);
      else memset(p + es * (size_t)edge, 0, es * (size_t)(cols - edge));
    }
  }
  return 0;
}
