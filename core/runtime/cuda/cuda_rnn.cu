/* cuda_rnn.cu — float32 RNN, GRU and LSTM stacks on the device: cpu_rnn.c's layouts and maths. */
#include <math.h>
#include <stdlib.h>

#include "cuda_util.cuh"
#include "rnn_layout.h"

/*
** The weights and the workspace have rnn_layout.h's layouts, as cpu_rnn.c: the workspace is
** saved by the op layer for the backward, so both devices read it the same way, and the helpers
** of plans.h (pr_rnn_workspace_size, pr_rnn_masks_offset, pr_rnn_output) place it. Per layer and
** direction the input projections of all steps are one GEMM, each step's hidden projection one
** GEMM of N rows, and each step's gates one pointwise kernel (double arithmetic, as the cpu's);
** one scratch block per call, none per step.
*/

/* The layouts of weights and workspace: rnn_layout.h, shared with cpu_rnn.c. */

/* [a, b, f] -> [b, a, f]: batch-first and time-major into each other. */
static void swap_01(const float *src, float *dst, int64_t a, int64_t b, int64_t f) {
  pr_launch(a * b * f, [=] __device__(int64_t t) {
    int64_t c = t % f, j = (t / f) % b, i = t / (f * b);
    dst[(j * a + i) * f + c] = src[t];
  });
}

/* dst[i] = src ? src[i] : 0 for i < n (initial states, their gradients) */
static void copy_or_zero(float *dst, const float *src, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) { dst[i] = src != NULL ? src[i] : 0.0f; });
}

static void apply_mask(float *out, const float *m, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) { out[i] *= m[i]; });
}

/* out [rows, G] = a [rows, k] · Wᵀ (W [G, k]) + bias (NULL: none): cpu_rnn.c's project. */
static int project(pr_Runtime *rt, const float *a, int64_t rows, int64_t k, const float *W,
                   const float *bias, int64_t G, float *out) {
  pr_launch(rows * G, [=] __device__(int64_t i) { out[i] = bias != NULL ? bias[i % G] : 0.0f; });
  if (pr_cuda_check(rt, "rnn") != 0) return PR_ERR;
  return pr_cuda_gemm(rt, "rnn", PROF_F32, 0, 1, rows, G, k, 1.0f, a, k, 0, W, k, 0, 1.0f, out, G,
                      0, 1);
}

/* The scalars a step's kernels need (a plan's fields, passed by value). */
struct Cell {
  int cell, relu;
  int64_t N, H, G, A, DH;
};

static Cell cell_of(const pr_RnnPlan *p) {
  Cell c;
  c.cell = p->cell;
  c.relu = p->relu;
  c.N = p->N;
  c.H = p->H;
  c.G = pr_rnnl_gates(p) * p->H;
  c.A = pr_rnnl_acts(p);
  c.DH = p->D * p->H;
  return c;
}

static __device__ __forceinline__ double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

/*
** cpu_rnn.c's cell_step for every (n, j) of step k (time t) of direction d: xi, hh the two
** projections, hp/cp the previous states, h/c/act this step's, out the layer output [T, N, D·H].
*/
static void step_kernel(Cell C, int64_t d, const float *xi, const float *hh, const float *hp,
                        const float *cp, float *h, float *c, float *act, float *out) {
  pr_launch(C.N * C.H, [=] __device__(int64_t e) {
    int64_t n = e / C.H, j = e % C.H, H = C.H;
    const float *x = xi + n * C.G, *y = hh + n * C.G;
    float *a = act != NULL ? act + n * C.A : NULL;
    float hv;
    if (C.cell == 0) {
      double s = (double)x[j] + y[j];
      hv = (float)(C.relu ? (s > 0 ? s : 0) : tanh(s));
    } else if (C.cell == 1) {
      double r = sigm((double)x[j] + y[j]), z = sigm((double)x[H + j] + y[H + j]);
      double hn = y[2 * H + j], nn = tanh(x[2 * H + j] + r * hn);
      hv = (float)((1 - z) * nn + z * hp[e]);
      a[j] = (float)r, a[H + j] = (float)z;
      a[2 * H + j] = (float)nn, a[3 * H + j] = (float)hn;
    } else {
      double i = sigm((double)x[j] + y[j]), f = sigm((double)x[H + j] + y[H + j]);
      double g = tanh((double)x[2 * H + j] + y[2 * H + j]);
      double o = sigm((double)x[3 * H + j] + y[3 * H + j]);
      double cc = f * cp[e] + i * g;
      c[e] = (float)cc;
      hv = (float)(o * tanh(cc));
      a[j] = (float)i, a[H + j] = (float)f;
      a[2 * H + j] = (float)g, a[3 * H + j] = (float)o;
    }
    h[e] = hv;
    out[n * C.DH + d * H + j] = hv;
  });
}

/* The masks of layers 0 … L − 2, drawn on the host from the runtime's generator in cpu_rnn.c's
   draw_masks order (so a seed gives both devices the same masks), then copied into ws. */
static int draw_masks(pr_Runtime *rt, const pr_RnnPlan *p, float *ws) {
  int64_t at = pr_rnn_masks_offset(p);
  if (at < 0) return 0;
  int64_t n = pr_rnn_workspace_size(p) - at;
  float scale = p->dropout < 1.0 ? (float)(1.0 / (1.0 - p->dropout)) : 0.0f;
  float *m = (float *)malloc(sizeof *m * (size_t)(n > 0 ? n : 1));
  if (m == NULL)
    return pr_error(rt, "rnn: out of host memory for %lld dropout mask values", (long long)n);
  for (int64_t i = 0; i < n; i++) m[i] = pr_rand_uniform(rt) < p->dropout ? 0.0f : scale;
  int rc = pr_cuda_from_host(rt, ws + at, m, sizeof *m * (size_t)n);
  free(m);
  return rc;
}

extern "C" int pr_cuda_rnn_forward(pr_Runtime *rt, const pr_RnnPlan *p, int batch_first,
                                   const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0,
                                   const pr_Tensor *W, pr_Tensor *ws_t, pr_Tensor *R) {
  if (need_f32(rt, "rnn", x, h0, c0) != 0 || need_f32(rt, "rnn", W) != 0) return PR_ERR;
  int64_t T = p->T, N = p->N, H = p->H, G = pr_rnnl_gates(p) * H, DH = p->D * H;
  int64_t nout = T * N * DH, nh = p->L * p->D * N * H;
  size_t sbytes = sizeof(float) * (size_t)(T * N * G + N * G + 1);
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  pr_Tensor *hc = xc && h0 ? pr_contiguous_data(rt, h0) : NULL;
  pr_Tensor *cc = xc && c0 ? pr_contiguous_data(rt, c0) : NULL;
  float *xi = NULL;
  int rc = PR_ERR;
  if (xc == NULL || (h0 && !hc) || (c0 && !cc)) goto end;
  xi = (float *)pr_cuda_alloc(sbytes);
  if (xi == NULL) {
    pr_error(rt, "rnn: out of device memory for %zu bytes of projections", sbytes);
    goto end;
  }
  {
    const float *w = pr_f32(W), *h0p = hc ? pr_f32(hc) : NULL, *c0p = cc ? pr_f32(cc) : NULL;
    float *ws = pr_f32(ws_t), *r = pr_f32(R), *hh = xi + T * N * G;
    float *hn = r + nout, *cn = p->cell == 2 ? r + nout + nh : NULL;
    Cell C = cell_of(p);
    if (draw_masks(rt, p, ws) != 0) goto end;
    /* the workspace starts with x time-major */
    if (batch_first) swap_01(pr_f32(xc), ws, N, T, p->In);
    else if (pr_cuda_copy(rt, ws, pr_f32(xc), sizeof(float) * (size_t)(T * N * p->In)) != 0) goto end;
    if (pr_cuda_check(rt, "rnn") != 0) goto end;
    for (int64_t l = 0; l < p->L; l++) {
      const float *in = l == 0 ? ws : ws + pr_rnnl_out_offset(p, l - 1);
      float *out = ws + pr_rnnl_out_offset(p, l);
      for (int64_t d = 0; d < p->D; d++) {
        pr_RnnDir dr = pr_rnnl_dir(p, w, ws, l, d);
        int64_t s0 = (l * p->D + d) * N * H;
        if (project(rt, in, T * N, dr.in, dr.wih, dr.bih, G, xi) != 0) goto end;
        copy_or_zero(dr.hs, h0p ? h0p + s0 : NULL, N * H);
        if (dr.cs) copy_or_zero(dr.cs, c0p ? c0p + s0 : NULL, N * H);
        for (int64_t k = 0; k < T; k++) {
          int64_t t = d ? T - 1 - k : k;
          const float *hp = dr.hs + k * N * H, *cp = dr.cs ? dr.cs + k * N * H : NULL;
          if (project(rt, hp, N, H, dr.whh, dr.bhh, G, hh) != 0) goto end;
          step_kernel(C, d, xi + t * N * G, hh, hp, cp, dr.hs + (k + 1) * N * H,
                      dr.cs ? dr.cs + (k + 1) * N * H : NULL,
                      C.A > 0 ? dr.act + k * N * C.A : NULL, out + t * N * DH);
          if (pr_cuda_check(rt, "rnn") != 0) goto end;
        }
        copy_or_zero(hn + s0, dr.hs + T * N * H, N * H);
        if (dr.cs && cn) copy_or_zero(cn + s0, dr.cs + T * N * H, N * H);
      }
      if (pr_rnn_masks_offset(p) >= 0 && l < p->L - 1)
        apply_mask(out, ws + pr_rnn_masks_offset(p) + l * nout, nout);
    }
    const float *y = pr_rnn_output(p, ws);
    if (batch_first) swap_01(y, r, T, N, DH);
    else if (pr_cuda_copy(rt, r, y, sizeof(float) * (size_t)nout) != 0) goto end;
    rc = pr_cuda_check(rt, "rnn");
  }
end:
  if (xi != NULL) pr_cuda_free(xi, sbytes);
  pr_tensor_release(xc);
  pr_tensor_release(hc);
  pr_tensor_release(cc);
  return rc;
}

/* {====================== backpropagation through time ======================} */

/*
** cpu_rnn.c's cell_back for every (n, j) of step k (time t): dh (plus the output's gradient at
** t) and dc give dxi and dhh; dh is left holding the part of dh_prev that skips W_hh (GRU's z·dh,
** else 0: the cpu's dhp), to which the caller's GEMM adds dhh · W_hh; dc becomes dc_prev.
*/
static void back_kernel(Cell C, int64_t d, const float *dout, float *dh, float *dc,
                        const float *hp, const float *hv, const float *cp, const float *cv,
                        const float *act, float *dxi, float *dhh) {
  pr_launch(C.N * C.H, [=] __device__(int64_t e) {
    int64_t n = e / C.H, j = e % C.H, H = C.H;
    double g = (double)(dh[e] + dout[n * C.DH + d * H + j]);
    const float *a = act != NULL ? act + n * C.A : NULL;
    float *x = dxi + n * C.G, *y = dhh + n * C.G;
    float direct = 0.0f;
    if (C.cell == 0) {
      double s = C.relu ? (hv[e] > 0 ? g : 0) : g * (1 - (double)hv[e] * hv[e]);
      x[j] = y[j] = (float)s;
    } else if (C.cell == 1) {
      double r = a[j], z = a[H + j], nn = a[2 * H + j], hn = a[3 * H + j];
      double an = g * (1 - z) * (1 - nn * nn), ar = an * hn * r * (1 - r);
      double az = g * (hp[e] - nn) * z * (1 - z);
      x[j] = y[j] = (float)ar;
      x[H + j] = y[H + j] = (float)az;
      x[2 * H + j] = (float)an;
      y[2 * H + j] = (float)(an * r);
      direct = (float)(g * z);
    } else {
      double i = a[j], f = a[H + j], gg = a[2 * H + j], o = a[3 * H + j];
      double tc = tanh((double)cv[e]), dct = dc[e] + g * o * (1 - tc * tc);
      x[j] = y[j] = (float)(dct * gg * i * (1 - i));
      x[H + j] = y[H + j] = (float)(dct * cp[e] * f * (1 - f));
      x[2 * H + j] = y[2 * H + j] = (float)(dct * i * (1 - gg * gg));
      x[3 * H + j] = y[3 * H + j] = (float)(g * tc * o * (1 - o));
      dc[e] = (float)(dct * f);
    }
    dh[e] = direct;
  });
}

/* out[c] += Σ_rows m[r, c] (the bias gradients), one block per column, the sum in double */
static __global__ void col_sums(const float *m, int64_t rows, int64_t cols, float *out) {
  __shared__ double part[32];
  for (int64_t c = blockIdx.x; c < cols; c += gridDim.x) {
    double s = 0;
    for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) s += m[r * cols + c];
    s = block_sum(s, part);
    if (threadIdx.x == 0) out[c] += (float)s;
  }
}

/* One layer and direction backwards over time (cpu_rnn.c's dir_back); dh, dc [N, H] scratch. */
static int dir_back(pr_Runtime *rt, const pr_RnnPlan *p, const pr_RnnDir *r, int64_t l, int64_t d,
                    const float *in, const float *dout, const float *ghn, const float *gcn,
                    float *din, float *gh0, float *gc0, float *gw, const float *w, float *dxi,
                    float *dhh, float *dh, float *dc) {
  int64_t T = p->T, N = p->N, H = p->H, G = r->G, DH = p->D * H, s0 = (l * p->D + d) * N * H;
  Cell C = cell_of(p);
  copy_or_zero(dh, ghn ? ghn + s0 : NULL, N * H);
  copy_or_zero(dc, gcn ? gcn + s0 : NULL, N * H);
  for (int64_t k = T - 1; k >= 0; k--) {
    int64_t t = d ? T - 1 - k : k;
    back_kernel(C, d, dout + t * N * DH, dh, dc, r->hs + k * N * H, r->hs + (k + 1) * N * H,
                r->cs ? r->cs + k * N * H : NULL, r->cs ? r->cs + (k + 1) * N * H : NULL,
                C.A > 0 ? r->act + k * N * C.A : NULL, dxi + t * N * G, dhh + k * N * G);
    if (pr_cuda_check(rt, "rnn backward") != 0) return PR_ERR;
    /* dh_prev = dhh · W_hh + the direct part */
    if (pr_cuda_gemm(rt, "rnn backward", PROF_F32, 0, 0, N, H, G, 1.0f, dhh + k * N * G, G, 0,
                     r->whh, H, 0, 1.0f, dh, H, 0, 1) != 0)
      return PR_ERR;
  }
  if (gh0 != NULL && pr_cuda_copy(rt, gh0 + s0, dh, sizeof(float) * (size_t)(N * H)) != 0)
    return PR_ERR;
  if (gc0 != NULL && r->cs && pr_cuda_copy(rt, gc0 + s0, dc, sizeof(float) * (size_t)(N * H)) != 0)
    return PR_ERR;
  int64_t rows = T * N;
  if (gw != NULL && rows > 0) {
    float *gwih = gw + (r->wih - w), *gwhh = gw + (r->whh - w);
    if (pr_cuda_gemm(rt, "rnn backward", PROF_F32, 1, 0, G, r->in, rows, 1.0f, dxi, G, 0, in,
                     r->in, 0, 1.0f, gwih, r->in, 0, 1) != 0 ||
        pr_cuda_gemm(rt, "rnn backward", PROF_F32, 1, 0, G, H, rows, 1.0f, dhh, G, 0, r->hs, H,
                     0, 1.0f, gwhh, H, 0, 1) != 0)
      return PR_ERR;
    if (p->bias && G > 0) {
      unsigned blocks = pr_grid(G);
      col_sums<<<blocks, PR_THREADS, 0, PR_STREAM>>>(dxi, rows, G, gw + (r->bih - w));
      col_sums<<<blocks, PR_THREADS, 0, PR_STREAM>>>(dhh, rows, G, gw + (r->bhh - w));
    }
  }
  if (din != NULL && rows > 0 &&
      pr_cuda_gemm(rt, "rnn backward", PROF_F32, 0, 0, rows, r->in, G, 1.0f, dxi, G, 0, r->wih,
                   r->in, 0, 1.0f, din, r->in, 0, 1) != 0)
    return PR_ERR;
  return pr_cuda_check(rt, "rnn backward");
}

extern "C" int pr_cuda_rnn_backward(pr_Runtime *rt, const pr_RnnPlan *p, int batch_first,
                                    const pr_Tensor *W, const pr_Tensor *ws_t, const pr_Tensor *g,
                                    pr_Tensor *gx_out, pr_Tensor *gh0_t, pr_Tensor *gc0_t,
                                    pr_Tensor *gw_t) {
  if (need_f32(rt, "rnn backward", W, ws_t, g) != 0) return PR_ERR;
  int64_t T = p->T, N = p->N, H = p->H, G = pr_rnnl_gates(p) * H, DH = p->D * H;
  int64_t nout = T * N * DH, nh = p->L * p->D * N * H;
  int64_t wide = p->In > DH ? p->In : DH, lay = T * N * wide;
  /* two layer gradients (this layer's output, its input), then dxi, dhh, dh, dc */
  size_t sbytes = sizeof(float) * (size_t)(2 * lay + 2 * T * N * G + 2 * N * H + 1);
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  float *mem = (float *)pr_cuda_alloc(sbytes);
  if (mem == NULL) {
    pr_tensor_release(gc);
    return pr_error(rt, "rnn backward: out of device memory for %zu bytes of gradients", sbytes);
  }
  const float *gp = pr_f32(gc), *w = pr_f32(W), *ws = pr_f32(ws_t);
  const float *ghn = gp + nout, *gcn = p->cell == 2 ? gp + nout + nh : NULL;
  float *gx = gx_out ? pr_f32(gx_out) : NULL, *gh0 = gh0_t ? pr_f32(gh0_t) : NULL;
  float *gc0 = gc0_t ? pr_f32(gc0_t) : NULL, *gw = gw_t ? pr_f32(gw_t) : NULL;
  float *dout = mem, *din = mem + lay, *dxi = mem + 2 * lay, *dhh = dxi + T * N * G;
  float *dh = dhh + T * N * G, *dc = dh + N * H;
  int64_t at = pr_rnn_masks_offset(p);
  int rc = PR_ERR;
  /* the output's gradient time-major */
  if (batch_first) swap_01(gp, dout, N, T, DH);
  else if (pr_cuda_copy(rt, dout, gp, sizeof(float) * (size_t)nout) != 0) goto end;
  if (gw != NULL && pr_cuda_zero(rt, gw, sizeof(float) * (size_t)pr_rnn_weights_size(p)) != 0)
    goto end;
  if (pr_cuda_check(rt, "rnn backward") != 0) goto end;
  for (int64_t l = p->L - 1; l >= 0; l--) {
    const float *in = l == 0 ? ws : ws + pr_rnnl_out_offset(p, l - 1);
    int want_in = l > 0 || gx != NULL;
    if (pr_cuda_zero(rt, din, sizeof(float) * (size_t)lay) != 0) goto end;
    for (int64_t d = 0; d < p->D; d++) {
      pr_RnnDir r = pr_rnnl_dir(p, w, (float *)ws, l, d);   /* read only: the states and activations */
      if (dir_back(rt, p, &r, l, d, in, dout, ghn, gcn, want_in ? din : NULL, gh0, gc0, gw, w,
                   dxi, dhh, dh, dc) != 0)
        goto end;
    }
    /* din is the gradient of the dropped input: through the mask to the layer below's output */
    if (at >= 0 && l > 0) apply_mask(din, ws + at + (l - 1) * nout, nout);
    float *t = dout;
    dout = din;
    din = t;
  }
  if (gx != NULL) {
    if (batch_first) swap_01(dout, gx, T, N, p->In);
    else if (pr_cuda_copy(rt, gx, dout, sizeof(float) * (size_t)(T * N * p->In)) != 0) goto end;
  }
  rc = pr_cuda_check(rt, "rnn backward");
end:
  pr_cuda_free(mem, sbytes);
  pr_tensor_release(gc);
  return rc;
}
