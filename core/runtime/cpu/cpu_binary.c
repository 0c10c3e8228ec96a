/* cpu_binary.c — elementwise binary kernels on the cpu (float32, int64) with PyTorch's broadcasting. */
#include <math.h>

#include "runtime.h"
#include "cpu.h"
#include "binary_ops.h"

/* Strides of t aligned to an output of nd dims, 0 where t is broadcast (or missing). */
static void aligned_strides(const pr_Tensor *t, int nd, const int64_t *oshape, int64_t *st) {
  for (int i = 0; i < nd; i++) {
    int j = t->ndim - nd + i;
    st[i] = (j >= 0 && t->shape[j] == oshape[i]) ? t->stride[j] : 0;
  }
}

/*
** out = a op b (b NULL: the scalar s; scalar_first: s op a). out is contiguous with the broadcast
** shape; a and b may have any strides. The innermost dim runs as a tight loop.
*/
int pr_cpu_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                  double s, int scalar_first, pr_Tensor *out) {
  int nd = out->ndim;
  int64_t sa[PR_MAX_DIMS], sb[PR_MAX_DIMS], idx[PR_MAX_DIMS] = {0};
  aligned_strides(a, nd, out->shape, sa);
  if (b != NULL) aligned_strides(b, nd, out->shape, sb);
  else for (int i = 0; i < nd; i++) sb[i] = 0;
  int64_t n = pr_numel(out);
  if (n == 0) return 0;
  int64_t inner = nd > 0 ? out->shape[nd - 1] : 1;
  int64_t ia = nd > 0 ? sa[nd - 1] : 0, ib = nd > 0 ? sb[nd - 1] : 0;
  int is_f32 = out->dtype == PROF_F32;
  if (!is_f32 && out->dtype != PROF_I64)
    return pr_error(rt, "%s: cpu kernels compute float32 and int64, got %s", prof_op_kind_name(kind),
                    prof_dtype_name(out->dtype));
  if (!is_f32 && (kind == PROF_OP_DIV || kind == PROF_OP_POW))
    return pr_error(rt, "%s: int64 operands need a float operand on the cpu", prof_op_kind_name(kind));
  for (int64_t done = 0; done < n; done += inner) {
    int64_t oa = a->offset, ob = b != NULL ? b->offset : 0;
    for (int d = 0; d < nd - 1; d++) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    if (is_f32) {
      float *o = pr_f32(out) + done;
      const float *pa = (const float *)a->storage->data + oa;
      const float *pb = b != NULL ? (const float *)b->storage->data + ob : NULL;
      float sv = (float)s;
      if (pb == NULL && !scalar_first)
        for (int64_t i = 0; i < inner; i++) o[i] = pr_f32op(kind, pa[i * ia], sv);
      else if (pb == NULL)
        for (int64_t i = 0; i < inner; i++) o[i] = pr_f32op(kind, sv, pa[i * ia]);
      else
        for (int64_t i = 0; i < inner; i++) o[i] = pr_f32op(kind, pa[i * ia], pb[i * ib]);
    } else {
      int64_t *o = (int64_t *)out->storage->data + done;
      const int64_t *pa = (const int64_t *)a->storage->data + oa;
      const int64_t *pb = b != NULL ? (const int64_t *)b->storage->data + ob : NULL;
      int64_t sv = (int64_t)s;
      for (int64_t i = 0; i < inner; i++) {
        int64_t x = pa[i * ia], y = pb != NULL ? pb[i * ib] : sv;
        o[i] = pb == NULL && scalar_first ? pr_i64op(kind, y, x) : pr_i64op(kind, x, y);
      }
    }
    for (int d = nd - 2; d >= 0; d--) {
      if (++idx[d] < out->shape[d]) break;
      idx[d] = 0;
    }
  }
  return 0;
}

/*
** out = x · mask with a Bernoulli keep-mask (contiguous, x's shape) drawn from the runtime's
** generator (so manual_seed repeats it), kept elements scaled by 1/(1-p) to keep the expectation
** (p = 1: all dropped).
*/
int pr_cpu_dropout(pr_Runtime *rt, const pr_Tensor *x, double p, pr_Tensor *mask, pr_Tensor *out) {
  float scale = p < 1.0 ? (float)(1.0 / (1.0 - p)) : 0.0f, *m = pr_f32(mask);
  for (int64_t i = 0, n = pr_numel(mask); i < n; i++)
    m[i] = pr_rand_uniform(rt) < p ? 0.0f : scale;
  return pr_cpu_binary(rt, PROF_OP_MUL, x, mask, 0, 0, out);
}
