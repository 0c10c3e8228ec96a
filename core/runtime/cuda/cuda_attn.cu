/* cuda_attn.cu — attention's score softmax (mask, causal, dropout) and its gradient, and the
   optimizers' element updates, on the device (cpu_attn.c's and cpu_optim.c's formulas). */
#include <math.h>
#include <stdlib.h>

#include "cuda_util.cuh"

/* Score j of a row: the GEMM's value plus the mask (bool keep: 0 or -inf; additive: the
   scores' dtype T), -inf past the causal diagonal, rounded to float as the float32 path stores it.
   Each pass recomputes it, so a half row holds only the final probabilities (one rounding). */
template <class T>
__device__ __forceinline__ float masked_score(const T *row, int64_t r, int64_t S, int64_t i,
                                              int64_t j, const void *mask, int mask_bool,
                                              const View &mv, int causal) {
  double v = f_of(row[j]);
  if (mask != NULL) {
    int64_t off = view_off(mv, r * S + j);
    v += mask_bool ? (((const uint8_t *)mask)[off] ? 0.0 : -INFINITY) : f_of(((const T *)mask)[off]);
  }
  if (causal && j > i) v = -INFINITY;
  return (float)v;
}

/* One block per row of S scores: masked, then the softmax in double, in place. */
template <class T>
__global__ void attn_rows(T *p, int64_t rows, int64_t L, int64_t S, const void *mask,
                          int mask_bool, View mv, int causal) {
  __shared__ double sd[32];
  __shared__ float sf[32];
  __shared__ double sum_s;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T *row = p + r * S;
    int64_t i = r % L;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      float v = masked_score(row, r, S, i, j, mask, mask_bool, mv, causal);
      mx = v > mx ? v : mx;
    }
    mx = block_max_plain(mx, sf);
    double s = 0;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x)
      s += exp((double)masked_score(row, r, S, i, j, mask, mask_bool, mv, causal) - mx);
    s = block_sum(s, sd);
    if (threadIdx.x == 0) sum_s = s;
    __syncthreads();
    s = sum_s;
    /* each thread reads and then writes only its own entries j */
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      float v = masked_score(row, r, S, i, j, mask, mask_bool, mv, causal);
      row[j] = of_f<T>(mx == -INFINITY ? NAN : (float)(exp((double)v - mx) / s));
    }
    __syncthreads();
  }
}

static unsigned row_blocks(int64_t rows) { return pr_grid(rows); }

template <class T>
static void attn_softmax_of(T *p, int64_t rows, int64_t L, int64_t S, const pr_Tensor *mask,
                            View mv, int causal) {
  if (rows > 0)
    attn_rows<T><<<row_blocks(rows), PR_THREADS, 0, PR_STREAM>>>(
        p, rows, L, S, mask ? mask->storage->data : NULL, mask && mask->dtype == PROF_BOOL, mv,
        causal);
}

/* A[k] = P[k] / keep where the host's draw keeps k, else 0 (one rounding). */
template <class T>
static void attn_drop_of(const T *p, const float *du, double keep, T *A, int64_t n) {
  pr_launch(n, [=] __device__(int64_t k) {
    A[k] = du[k] != 0.0f ? of_f<T>((float)(f_of(p[k]) / keep)) : of_f<T>(0.0f);
  });
}

/*
** The dropout draws come from the runtime's generator on the host (as the cpu's, so both devices drop the same entries) and are
** copied up once per call. The scores (and A, and an additive mask) are float32, float16 or
** bfloat16, one dtype (ops_sequence.c checks the mask's).
*/
extern "C" int pr_cuda_attn_softmax(pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask,
                                    int causal, double dropout_p, pr_Tensor *At) {
  int nd = scores->ndim, d = scores->dtype;
  if ((d != PROF_F32 && d != PROF_F16 && d != PROF_BF16) || (At != NULL && At->dtype != d))
    return pr_error(rt, "scaled_dot_product_attention: cuda kernels take float32, float16 or "
                    "bfloat16 scores and probabilities of one dtype");
  int64_t L = scores->shape[nd - 2], S = scores->shape[nd - 1];
  int64_t rows = S > 0 ? pr_numel(scores) / S : 0;
  View mv = mask ? view_of(mask) : view_of(scores);
  PR_FLOAT_SWITCH(d, attn_softmax_of<T>(base_of<T>(scores) + scores->offset, rows, L, S, mask, mv,
                                        causal));
  int rc = pr_cuda_check(rt, "scaled_dot_product_attention");
  if (rc != 0 || dropout_p <= 0 || At == NULL) return rc;
  int64_t n = rows * S;
  float *u = (float *)malloc(sizeof *u * (size_t)(n > 0 ? n : 1));
  float *du = u ? (float *)pr_cuda_alloc(sizeof *u * (size_t)(n > 0 ? n : 1)) : NULL;
  if (du == NULL) {
    free(u);
    return pr_error(rt, "scaled_dot_product_attention: out of memory for the dropout draws");
  }
  double keep = 1.0 - dropout_p;
  /* the keep flags decided on the host exactly as the cpu's loop (no draws when p >= 1) */
  for (int64_t k = 0; k < n; k++) u[k] = keep <= 0 || pr_rand_uniform(rt) < dropout_p ? 0.0f : 1.0f;
  if (pr_cuda_from_host(rt, du, u, sizeof *u * (size_t)n) == 0) {
    PR_FLOAT_SWITCH(d, attn_drop_of<T>(base_of<T>(scores) + scores->offset, du, keep,
                                       base_of<T>(At) + At->offset, n));
    rc = pr_cuda_check(rt, "scaled_dot_product_attention dropout");
  } else {
    rc = PR_ERR;
  }
  pr_cuda_free(du, sizeof *u * (size_t)(n > 0 ? n : 1));
  free(u);
  return rc;
}

/* gP = gA·m/(1 − p) (m: A ≠ 0), unrounded as the float32 path's row sum takes it. */
template <class T>
__device__ __forceinline__ double attn_gp(const T *gr, const T *ar, int64_t j, double keep) {
  double gp = f_of(gr[j]);
  if (ar != NULL) gp = keep > 0 && f_of(ar[j]) != 0.0f ? gp / keep : 0.0;
  return gp;
}

/* gS = scale·P ⊙ (gP − Σ gP·P); gP is recomputed in the second pass (rounded to float, as the
   float32 path keeps it in gS between the passes), so a half gS rounds once. */
template <class T>
__global__ void attn_grad_rows(const T *P, const T *A, const T *gA, int64_t rows, int64_t S,
                               double dropout_p, double scale, T *gS) {
  __shared__ double sd[32];
  __shared__ double dot_s;
  double keep = 1.0 - dropout_p;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *pr = P + r * S, *gr = gA + r * S, *ar = A ? A + r * S : NULL;
    T *o = gS + r * S;
    double dot = 0;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) dot += attn_gp(gr, ar, j, keep) * f_of(pr[j]);
    dot = block_sum(dot, sd);
    if (threadIdx.x == 0) dot_s = dot;
    __syncthreads();
    dot = dot_s;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      float gp = (float)attn_gp(gr, ar, j, keep);
      o[j] = of_f<T>((float)(scale * f_of(pr[j]) * (gp - dot)));
    }
    __syncthreads();
  }
}

template <class T>
static void attn_grad_of(const T *P, const T *A, const T *gA, int64_t rows, int64_t S,
                         double dropout_p, double scale, T *gS) {
  attn_grad_rows<T><<<row_blocks(rows), PR_THREADS, 0, PR_STREAM>>>(P, A, gA, rows, S, dropout_p,
                                                                    scale, gS);
}

extern "C" int pr_cuda_attn_softmax_backward(pr_Runtime *rt, const pr_Tensor *P,
                                             const pr_Tensor *A, const pr_Tensor *gA, int64_t rows,
                                             int64_t S, double dropout_p, double scale,
                                             pr_Tensor *gS) {
  int d = gS->dtype;
  if ((d != PROF_F32 && d != PROF_F16 && d != PROF_BF16) || P->dtype != d || gA->dtype != d ||
      (A != NULL && A->dtype != d))
    return pr_error(rt, "scaled_dot_product_attention backward: cuda kernels take float32, "
                    "float16 or bfloat16 probabilities and gradients of one dtype");
  if (rows > 0 && S > 0)
    PR_FLOAT_SWITCH(d, attn_grad_of<T>(base_of<T>(P) + P->offset,
                                       A != NULL ? base_of<T>(A) + A->offset : NULL,
                                       base_of<T>(gA) + gA->offset, rows, S, dropout_p, scale,
                                       base_of<T>(gS) + gS->offset));
  return pr_cuda_check(rt, "scaled_dot_product_attention backward");
}

/* {====================== optimizers ======================} */

extern "C" int pr_cuda_sgd(pr_Runtime *rt, float *p, const float *grad, float *buf, int64_t n,
                           int fresh, const pr_SgdArgs *a) {
  const float wd = (float)a->weight_decay, m = (float)a->momentum;
  const float keep = (float)(1.0 - a->dampening), neg_lr = (float)-a->lr;
  int maximize = a->maximize, nesterov = a->nesterov, decay = a->weight_decay != 0;
  pr_launch(n, [=] __device__(int64_t i) {
    float g = maximize ? -grad[i] : grad[i];
    if (decay) g = fmaf(wd, p[i], g);
    if (buf != NULL) {
      float b = fresh ? g : buf[i] * m;
      if (!fresh) b = fmaf(keep, g, b);
      buf[i] = b;
      g = nesterov ? fmaf(m, b, g) : b;
    }
    p[i] = fmaf(neg_lr, g, p[i]);
  });
  return pr_cuda_check(rt, "sgd_step");
}

extern "C" int pr_cuda_adam(pr_Runtime *rt, float *p, const float *grad, float *m, float *v,
                            float *vmax, int64_t n, int64_t step, const pr_AdamArgs *a) {
  /* FusedAdam without bias_correction divides the raw moments */
  const double bc1 = a->bias_correction ? 1.0 - pow(a->beta1, (double)step) : 1.0;
  const double bc2 = a->bias_correction ? 1.0 - pow(a->beta2, (double)step) : 1.0;
  const float b1 = (float)a->beta1, b2 = (float)a->beta2;
  const float one_b1 = (float)(1.0 - a->beta1), one_b2 = (float)(1.0 - a->beta2);
  const float wd = (float)a->weight_decay, decay = (float)(1.0 - a->lr * a->weight_decay);
  const float bc2_sqrt = (float)sqrt(bc2), eps = (float)a->eps;
  const float neg_step = (float)-(a->lr / bc1);
  int maximize = a->maximize, decoupled = a->decoupled, l2 = a->weight_decay != 0;
  pr_launch(n, [=] __device__(int64_t i) {
    float g = maximize ? -grad[i] : grad[i];
    if (decoupled) p[i] = p[i] * decay;
    else if (l2) g = fmaf(wd, p[i], g);
    float mi = m[i] * b1;
    mi = fmaf(one_b1, g, mi);
    float vi = v[i] * b2;
    vi = fmaf(one_b2 * g, g, vi);
    m[i] = mi;
    v[i] = vi;
    float use = vi;
    if (vmax != NULL) {
      use = (vmax[i] != vmax[i] || vmax[i] > vi) ? vmax[i] : vi;
      vmax[i] = use;
    }
    float d = __fsqrt_rn(use) / bc2_sqrt;
    d = d + eps;
    p[i] = p[i] + neg_step * mi / d;
  });
  return pr_cuda_check(rt, "adam_step");
}
