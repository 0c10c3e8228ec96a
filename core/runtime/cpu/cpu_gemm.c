/* cpu_gemm.c — float32 matrix products on the cpu through OpenBLAS's sgemm, for strided views. */
#include <cblas.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/*
** How sgemm can read a 2-D view: row-major (NoTrans) with its row stride as leading dimension, or
** column-major (a transposed view: Trans). Anything else is copied to a contiguous block first.
*/
typedef struct Mat {
  const float *p;
  int64_t rows, cols, ld;
  CBLAS_TRANSPOSE trans;
  pr_Tensor *copy;             /* owned when a copy was needed */
} Mat;

static int as_mat(pr_Runtime *rt, const pr_Tensor *t, int64_t offset, const int64_t *shape,
                  const int64_t *stride, Mat *m) {
  int64_t r = shape[0], c = shape[1], s0 = stride[0], s1 = stride[1];
  m->rows = r;
  m->cols = c;
  m->copy = NULL;
  const float *base = (const float *)t->storage->data + offset;
  if ((s1 == 1 || c == 1) && (s0 >= c || r == 1) && s0 >= 1) {
    m->p = base;
    m->ld = r == 1 ? (c > 1 ? c : 1) : s0;
    m->trans = CblasNoTrans;
    return 0;
  }
  if ((s0 == 1 || r == 1) && (s1 >= r || c == 1) && s1 >= 1) {
    m->p = base;
    m->ld = c == 1 ? (r > 1 ? r : 1) : s1;
    m->trans = CblasTrans;
    return 0;
  }
  pr_Tensor v = *t;            /* a 2-D description of this block, copied to contiguous */
  v.ndim = 2;
  v.shape[0] = r;
  v.shape[1] = c;
  v.stride[0] = s0;
  v.stride[1] = s1;
  v.offset = offset;
  v.grad_fn = NULL;
  v.grad = NULL;
  m->copy = pr_contiguous_data(rt, &v);
  if (m->copy == NULL) return PR_ERR;
  m->p = pr_f32(m->copy);
  m->ld = c > 1 ? c : 1;
  m->trans = CblasNoTrans;
  return 0;
}

/* c[m, n] (row-major, row stride ldc) = alpha · a[m, k] · b[k, n] + beta · c */
static int gemm(pr_Runtime *rt, const pr_Tensor *a, int64_t aoff, const int64_t *ashape,
                const int64_t *astride, const pr_Tensor *b, int64_t boff, const int64_t *bshape,
                const int64_t *bstride, float *c, int64_t ldc, float alpha, float beta) {
  Mat A, B;
  if (as_mat(rt, a, aoff, ashape, astride, &A) != 0) return PR_ERR;
  if (as_mat(rt, b, boff, bshape, bstride, &B) != 0) {
    pr_tensor_release(A.copy);
    return PR_ERR;
  }
  int64_t m = ashape[0], k = ashape[1], n = bshape[1];
  if (m > 0 && n > 0) {
    if (k == 0) {
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) c[i * ldc + j] *= beta;
    } else {
      cblas_sgemm(CblasRowMajor, A.trans, B.trans, (blasint)m, (blasint)n, (blasint)k, alpha, A.p,
                  (blasint)A.ld, B.p, (blasint)B.ld, beta, c, (blasint)(ldc > 1 ? ldc : 1));
    }
  }
  pr_tensor_release(A.copy);
  pr_tensor_release(B.copy);
  return 0;
}

int pr_cpu_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out, float alpha,
              float beta) {
  return gemm(rt, a, a->offset, a->shape, a->stride, b, b->offset, b->shape, b->stride,
              pr_f32(out), out->shape[1], alpha, beta);
}

/*
** out[..., m, n] = a[..., m, k] · b[..., k, n] over broadcast batch dims (a and b already have
** their 1-D operands promoted to 2-D by the caller's view). out is contiguous.
*/
int pr_cpu_batched_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,
                      float alpha, float beta) {
  int nb = out->ndim - 2;
  int64_t m = out->shape[nb], n = out->shape[nb + 1];
  int64_t batch = 1;
  for (int i = 0; i < nb; i++) batch *= out->shape[i];
  int64_t idx[PR_MAX_DIMS] = {0};
  for (int64_t t = 0; t < batch; t++) {
    /* batch dims broadcast right-aligned: a size-1 (or missing) dim stays at 0 */
    int64_t aoff = a->offset, boff = b->offset;
    for (int i = 0; i < nb; i++) {
      int ia = a->ndim - 2 - nb + i, ib = b->ndim - 2 - nb + i;
      if (ia >= 0 && a->shape[ia] != 1) aoff += idx[i] * a->stride[ia];
      if (ib >= 0 && b->shape[ib] != 1) boff += idx[i] * b->stride[ib];
    }
    if (gemm(rt, a, aoff, a->shape + a->ndim - 2, a->stride + a->ndim - 2, b, boff,
             b->shape + b->ndim - 2, b->stride + b->ndim - 2, pr_f32(out) + t * m * n, n, alpha,
             beta) != 0)
      return PR_ERR;
    for (int i = nb - 1; i >= 0; i--) {
      if (++idx[i] < out->shape[i]) break;
      idx[i] = 0;
    }
  }
  return 0;
}

/* The row stride of x viewed as [rows, last dim] without a copy; -1 when its layout forbids. */
static int64_t row_stride(const pr_Tensor *x) {
  int64_t rs = -1, expect = 0;
  for (int d = x->ndim - 2; d >= 0; d--) {
    if (x->shape[d] == 1) continue;
    if (rs < 0) rs = x->stride[d];
    else if (x->stride[d] != expect) return -1;
    expect = x->stride[d] * x->shape[d];
  }
  return rs < 0 ? x->shape[x->ndim - 1] : rs;
}

/* y = x W^T + b through one sgemm: the bias is copied into every row first, then accumulated onto. */
int pr_cpu_linear(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                  pr_Tensor *out) {
  if (x->dtype != PROF_F32) return pr_error(rt, "linear: cpu kernels compute float32");
  int64_t in = x->shape[x->ndim - 1], nout = w->shape[0], rows = 1;
  for (int d = 0; d < x->ndim - 1; d++) rows *= x->shape[d];
  pr_Tensor *xc = NULL;        /* a contiguous copy when x's rows are no view */
  int64_t rs = row_stride(x);
  if (rs < 0) {
    if ((xc = pr_contiguous_data(rt, x)) == NULL) return PR_ERR;
    rs = in;
  }
  const pr_Tensor *xs = xc != NULL ? xc : x;
  int64_t xshape[2] = {rows, in}, xstride[2] = {rs, x->stride[x->ndim - 1]};
  if (xc != NULL) xstride[1] = 1;
  int64_t wshape[2] = {in, nout}, wstride[2] = {w->stride[1], w->stride[0]};   /* W^T, a view */
  float *y = pr_f32(out), beta = 0.0f;
  int rc = 0;
  if (b != NULL) {
    pr_Tensor *bc = pr_contiguous_data(rt, b);
    if (bc == NULL) rc = PR_ERR;
    else {
      const float *bp = pr_f32(bc);
      for (int64_t r = 0; r < rows; r++) memcpy(y + r * nout, bp, sizeof(float) * (size_t)nout);
      pr_tensor_release(bc);
      beta = 1.0f;
    }
  }
  if (rc == 0)
    rc = gemm(rt, xs, xs->offset, xshape, xstride, w, w->offset, wshape, wstride, y, nout, 1.0f,
              beta);
  pr_tensor_release(xc);
  return rc;
}
