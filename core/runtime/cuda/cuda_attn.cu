/* cuda_attn.cu — attention's score softmax (mask, causal, dropout) and its gradient, and the
   optimizers' element updates, on the device (cpu_attn.c's and cpu_optim.c's formulas). */
#include <math.h>
#include <stdlib.h>

#include "cuda_util.cuh"

/* One block per row of S scores: masked in place, then the softmax in double. */
__global__ void attn_rows(float *p, int64_t rows, int64_t L, int64_t S, const void *mask,
                          int mask_bool, View mv, int causal) {
  __shared__ double sd[32];
  __shared__ float sf[32];
  __shared__ double sum_s;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float *row = p + r * S;
    int64_t i = r % L;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      double v = row[j];
      if (mask != NULL) {
        int64_t off = view_off(mv, r * S + j);
        v += mask_bool ? (((const uint8_t *)mask)[off] ? 0.0 : -INFINITY) : ((const float *)mask)[off];
      }
      if (causal && j > i) v = -INFINITY;
      row[j] = (float)v;
      mx = row[j] > mx ? row[j] : mx;
    }
    mx = block_max_plain(mx, sf);
    double s = 0;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) s += exp((double)row[j] - mx);
    s = block_sum(s, sd);
    if (threadIdx.x == 0) sum_s = s;
    __syncthreads();
    s = sum_s;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x)
      row[j] = mx == -INFINITY ? NAN : (float)(exp((double)row[j] - mx) / s);
    __syncthreads();
  }
}

static unsigned row_blocks(int64_t rows) { return (unsigned)(rows < 1 ? 1 : rows > 65536 ? 65536 : rows); }

/*
** void in the table; failures wait for the next check. The dropout draws come from the
** runtime's generator on the host (as the cpu's, so both devices drop the same entries) and are
** copied up once per call.
*/
extern "C" void pr_cuda_attn_softmax(pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask,
                                     int causal, double dropout_p, float *A) {
  int nd = scores->ndim;
  int64_t L = scores->shape[nd - 2], S = scores->shape[nd - 1];
  int64_t rows = S > 0 ? pr_numel(scores) / S : 0;
  float *p = pr_f32(scores);
  View mv = mask ? view_of(mask) : view_of(scores);
  if (rows > 0)
    attn_rows<<<row_blocks(rows), PR_THREADS, 0, PR_STREAM>>>(
        p, rows, L, S, mask ? mask->storage->data : NULL, mask && mask->dtype == PROF_BOOL, mv,
        causal);
  pr_cuda_note("scaled_dot_product_attention");
  if (dropout_p <= 0 || A == NULL) return;
  int64_t n = rows * S;
  float *u = (float *)malloc(sizeof *u * (size_t)(n > 0 ? n : 1));
  float *du = u ? (float *)pr_cuda_alloc(sizeof *u * (size_t)(n > 0 ? n : 1)) : NULL;
  if (du == NULL) {
    free(u);
    pr_cuda_fail("scaled_dot_product_attention: out of memory for the dropout draws");
    return;
  }
  double keep = 1.0 - dropout_p;
  /* the keep flags decided on the host exactly as the cpu's loop (no draws when p >= 1) */
  for (int64_t k = 0; k < n; k++) u[k] = keep <= 0 || pr_rand_uniform(rt) < dropout_p ? 0.0f : 1.0f;
  if (pr_cuda_from_host(du, u, sizeof *u * (size_t)n) != 0)
    pr_cuda_fail("scaled_dot_product_attention: copying the dropout draws failed");
  pr_launch(n, [=] __device__(int64_t k) { A[k] = du[k] != 0.0f ? (float)(p[k] / keep) : 0.0f; });
  pr_cuda_note("scaled_dot_product_attention dropout");
  pr_cuda_free(du, sizeof *u * (size_t)(n > 0 ? n : 1));
  free(u);
}

__global__ void attn_grad_rows(const float *P, const float *A, const float *gA, int64_t rows,
                               int64_t S, double dropout_p, double scale, float *gS) {
  __shared__ double sd[32];
  __shared__ double dot_s;
  double keep = 1.0 - dropout_p;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *pr = P + r * S, *gr = gA + r * S, *ar = A ? A + r * S : NULL;
    float *o = gS + r * S;
    double dot = 0;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      double gp = gr[j];
      if (ar != NULL) gp = keep > 0 && ar[j] != 0.0f ? gp / keep : 0.0;
      o[j] = (float)gp;
      dot += gp * pr[j];
    }
    dot = block_sum(dot, sd);
    if (threadIdx.x == 0) dot_s = dot;
    __syncthreads();
    dot = dot_s;
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x)
      o[j] = (float)(scale * pr[j] * (o[j] - dot));
    __syncthreads();
  }
}

extern "C" void pr_cuda_attn_softmax_backward(const float *P, const float *A, const float *gA,
                                              int64_t rows, int64_t S, double dropout_p,
                                              double scale, float *gS) {
  if (rows > 0 && S > 0)
    attn_grad_rows<<<row_blocks(rows), PR_THREADS, 0, PR_STREAM>>>(P, A, gA, rows, S, dropout_p,
                                                                   scale, gS);
  pr_cuda_note("scaled_dot_product_attention backward");
}

/* {====================== optimizers ======================} */

extern "C" void pr_cuda_sgd(float *p, const float *grad, float *buf, int64_t n, int fresh,
                            const pr_SgdArgs *a) {
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
  pr_cuda_note("sgd_step");
}

extern "C" void pr_cuda_adam(float *p, const float *grad, float *m, float *v, float *vmax,
                             int64_t n, int64_t step, const pr_AdamArgs *a) {
  const double bc1 = 1.0 - pow(a->beta1, (double)step);
  const double bc2 = 1.0 - pow(a->beta2, (double)step);
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
  pr_cuda_note("adam_step");
}
