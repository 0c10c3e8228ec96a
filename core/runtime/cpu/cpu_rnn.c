/* cpu_rnn.c — float32 cpu kernels of RNN, GRU and LSTM stacks: forward over time and BPTT. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"
#include "rnn_layout.h"

/* The layouts of weights and workspace: rnn_layout.h. */
int64_t pr_rnn_gates(const pr_RnnPlan *p) { return pr_rnnl_gates(p); }
int64_t pr_rnn_in_size(const pr_RnnPlan *p, int64_t l) { return pr_rnnl_in_size(p, l); }
int64_t pr_rnn_weights_size(const pr_RnnPlan *p) { return pr_rnnl_weight_offset(p, p->L, 0); }

static int dropped(const pr_RnnPlan *p) { return p->dropout > 0 && p->L > 1; }

static int64_t mask_offset(const pr_RnnPlan *p, int64_t l) {
  return pr_rnnl_state_offset(p, p->L, 0) + l * p->T * p->N * p->D * p->H;
}

int64_t pr_rnn_masks_offset(const pr_RnnPlan *p) { return dropped(p) ? mask_offset(p, 0) : -1; }

int64_t pr_rnn_workspace_size(const pr_RnnPlan *p) {
  return mask_offset(p, dropped(p) ? p->L - 1 : 0);
}

/* out[i] *= m[i]: a layer's output or its gradient through the layer's dropout mask. */
static void apply_mask(float *out, const float *m, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] *= m[i];
}

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

/* rows × G = a[rows, k] · Wᵀ (W [G, k]) + bias (NULL: none), by sgemm. */
static void project(const float *a, int64_t rows, int64_t k, const float *W, const float *bias,
                    int64_t G, float *out) {
  for (int64_t r = 0; r < rows; r++) {
    if (bias != NULL) memcpy(out + r * G, bias, sizeof(float) * (size_t)G);
    else memset(out + r * G, 0, sizeof(float) * (size_t)G);
  }
  if (rows > 0 && G > 0 && k > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)rows, (blasint)G, (blasint)k,
                1.0f, a, (blasint)k, W, (blasint)k, 1.0f, out, (blasint)G);
}

/* One step of one cell for sample n: xi, hh its two projections [G]; writes h (and c, act). */
static void cell_step(const pr_RnnPlan *p, const float *xi, const float *hh, const float *hp,
                      const float *cp, float *h, float *c, float *act) {
  int64_t H = p->H;
  for (int64_t j = 0; j < H; j++) {
    if (p->cell == 0) {
      double a = (double)xi[j] + hh[j];
      h[j] = (float)(p->relu ? (a > 0 ? a : 0) : tanh(a));
    } else if (p->cell == 1) {
      double r = sigm((double)xi[j] + hh[j]), z = sigm((double)xi[H + j] + hh[H + j]);
      double hn = hh[2 * H + j], nn = tanh(xi[2 * H + j] + r * hn);
      h[j] = (float)((1 - z) * nn + z * hp[j]);
      act[j] = (float)r, act[H + j] = (float)z;
      act[2 * H + j] = (float)nn, act[3 * H + j] = (float)hn;
    } else {
      double i = sigm((double)xi[j] + hh[j]), f = sigm((double)xi[H + j] + hh[H + j]);
      double g = tanh((double)xi[2 * H + j] + hh[2 * H + j]);
      double o = sigm((double)xi[3 * H + j] + hh[3 * H + j]);
      double cc = f * cp[j] + i * g;
      c[j] = (float)cc;
      h[j] = (float)(o * tanh(cc));
      act[j] = (float)i, act[H + j] = (float)f;
      act[2 * H + j] = (float)g, act[3 * H + j] = (float)o;
    }
  }
}

int pr_cpu_rnn_forward(const pr_RnnPlan *p, const float *x, const float *h0, const float *c0,
                       const float *w, float *ws, float *hn, float *cn) {
  int64_t T = p->T, N = p->N, H = p->H, G = pr_rnnl_gates(p) * H, DH = p->D * H;
  float *xi = malloc(sizeof(float) * (size_t)(T * N * G + N * G + 1));
  if (xi == NULL) return PR_ERR;
  float *hh = xi + T * N * G;
  memcpy(ws, x, sizeof(float) * (size_t)(T * N * p->In));
  for (int64_t l = 0; l < p->L; l++) {
    const float *in = l == 0 ? ws : ws + pr_rnnl_out_offset(p, l - 1);
    float *out = ws + pr_rnnl_out_offset(p, l);
    for (int64_t d = 0; d < p->D; d++) {
      pr_RnnDir r = pr_rnnl_dir(p, w, ws, l, d);
      int64_t s0 = (l * p->D + d) * N * H;
      project(in, T * N, r.in, r.wih, r.bih, G, xi);
      for (int64_t i = 0; i < N * H; i++) {
        r.hs[i] = h0 ? h0[s0 + i] : 0.0f;
        if (r.cs) r.cs[i] = c0 ? c0[s0 + i] : 0.0f;
      }
      for (int64_t k = 0; k < T; k++) {
        int64_t t = d ? T - 1 - k : k;
        const float *hp = r.hs + k * N * H, *cp = r.cs ? r.cs + k * N * H : NULL;
        project(hp, N, H, r.whh, r.bhh, G, hh);
        for (int64_t n = 0; n < N; n++) {
          float *h = r.hs + (k + 1) * N * H + n * H;
          cell_step(p, xi + (t * N + n) * G, hh + n * G, hp + n * H, cp ? cp + n * H : NULL, h,
                    r.cs ? r.cs + (k + 1) * N * H + n * H : NULL, r.act + (k * N + n) * pr_rnnl_acts(p));
          memcpy(out + (t * N + n) * DH + d * H, h, sizeof(float) * (size_t)H);
        }
      }
      memcpy(hn + s0, r.hs + T * N * H, sizeof(float) * (size_t)(N * H));
      if (r.cs && cn) memcpy(cn + s0, r.cs + T * N * H, sizeof(float) * (size_t)(N * H));
    }
    if (dropped(p) && l < p->L - 1) apply_mask(out, ws + mask_offset(p, l), T * N * DH);
  }
  free(xi);
  return 0;
}

/* {====================== backpropagation through time ======================} */

/*
** The gradient of one step for sample n: dh (and dc, updated to the previous step's) give the
** pre-activation gradients on the input side dxi and on the hidden side dhh [G] (they differ only
** in GRU's n gate, where r scales W_hn·h) and the part of dh_prev that skips W_hh (GRU's z·dh).
*/
static void cell_back(const pr_RnnPlan *p, const float *dh, float *dc, const float *hp,
                      const float *h, const float *cp, const float *c, const float *act,
                      float *dxi, float *dhh, float *dhp) {
  int64_t H = p->H;
  for (int64_t j = 0; j < H; j++) {
    double g = dh[j];
    dhp[j] = 0;
    if (p->cell == 0) {
      double a = p->relu ? (h[j] > 0 ? g : 0) : g * (1 - (double)h[j] * h[j]);
      dxi[j] = dhh[j] = (float)a;
    } else if (p->cell == 1) {
      double r = act[j], z = act[H + j], nn = act[2 * H + j], hn = act[3 * H + j];
      double an = g * (1 - z) * (1 - nn * nn), ar = an * hn * r * (1 - r);
      double az = g * (hp[j] - nn) * z * (1 - z);
      dxi[j] = dhh[j] = (float)ar;
      dxi[H + j] = dhh[H + j] = (float)az;
      dxi[2 * H + j] = (float)an;
      dhh[2 * H + j] = (float)(an * r);
      dhp[j] = (float)(g * z);
    } else {
      double i = act[j], f = act[H + j], gg = act[2 * H + j], o = act[3 * H + j];
      double tc = tanh((double)c[j]), dct = dc[j] + g * o * (1 - tc * tc);
      dxi[j] = dhh[j] = (float)(dct * gg * i * (1 - i));
      dxi[H + j] = dhh[H + j] = (float)(dct * cp[j] * f * (1 - f));
      dxi[2 * H + j] = dhh[2 * H + j] = (float)(dct * i * (1 - gg * gg));
      dxi[3 * H + j] = dhh[3 * H + j] = (float)(g * tc * o * (1 - o));
      dc[j] = (float)(dct * f);
    }
  }
}

/* out[c] += Σ_rows m[r, c] (the bias gradients) */
static void col_sums(const float *m, int64_t rows, int64_t cols, float *out) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) out[c] += m[r * cols + c];
}

/* One layer and direction backwards over time; dout: the gradient of the layer's output. */
static void dir_back(const pr_RnnPlan *p, const pr_RnnDir *r, int64_t l, int64_t d, const float *in,
                     const float *dout, const float *ghn, const float *gcn, float *din,
                     float *gh0, float *gc0, float *gw, const float *w, float *buf) {
  int64_t T = p->T, N = p->N, H = p->H, G = r->G, DH = p->D * H, s0 = (l * p->D + d) * N * H;
  float *dxi = buf, *dhh = dxi + T * N * G, *dh = dhh + T * N * G, *dc = dh + N * H;
  float *dhp = dc + N * H;
  for (int64_t i = 0; i < N * H; i++) {
    dh[i] = ghn ? ghn[s0 + i] : 0.0f;
    dc[i] = gcn ? gcn[s0 + i] : 0.0f;
  }
  for (int64_t k = T - 1; k >= 0; k--) {
    int64_t t = d ? T - 1 - k : k;
    for (int64_t n = 0; n < N; n++) {
      int64_t o = n * H;
      for (int64_t j = 0; j < H; j++) dh[o + j] += dout[(t * N + n) * DH + d * H + j];
      cell_back(p, dh + o, dc + o, r->hs + k * N * H + o, r->hs + (k + 1) * N * H + o,
                r->cs ? r->cs + k * N * H + o : NULL, r->cs ? r->cs + (k + 1) * N * H + o : NULL,
                r->act + (k * N + n) * pr_rnnl_acts(p), dxi + (t * N + n) * G, dhh + (k * N + n) * G,
                dhp + o);
    }
    /* dh_prev = dhh · W_hh + the direct part */
    memcpy(dh, dhp, sizeof(float) * (size_t)(N * H));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)N, (blasint)H, (blasint)G,
                1.0f, dhh + k * N * G, (blasint)G, r->whh, (blasint)H, 1.0f, dh, (blasint)H);
  }
  if (gh0 != NULL) memcpy(gh0 + s0, dh, sizeof(float) * (size_t)(N * H));
  if (gc0 != NULL && r->cs) memcpy(gc0 + s0, dc, sizeof(float) * (size_t)(N * H));
  int64_t rows = T * N;
  if (gw != NULL && rows > 0) {
    float *gwih = gw + (r->wih - w), *gwhh = gw + (r->whh - w);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)G, (blasint)r->in,
                (blasint)rows, 1.0f, dxi, (blasint)G, in, (blasint)r->in, 1.0f, gwih,
                (blasint)r->in);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)G, (blasint)H, (blasint)rows,
                1.0f, dhh, (blasint)G, r->hs, (blasint)H, 1.0f, gwhh, (blasint)H);
    if (p->bias) {
      col_sums(dxi, rows, G, gw + (r->bih - w));
      col_sums(dhh, rows, G, gw + (r->bhh - w));
    }
  }
  if (din != NULL && rows > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)rows, (blasint)r->in,
                (blasint)G, 1.0f, dxi, (blasint)G, r->wih, (blasint)r->in, 1.0f, din,
                (blasint)r->in);
}

int pr_cpu_rnn_backward(const pr_RnnPlan *p, const float *w, const float *ws, const float *gout,
                        const float *ghn, const float *gcn, float *gx, float *gh0, float *gc0,
                        float *gw) {
  int64_t T = p->T, N = p->N, H = p->H, G = pr_rnnl_gates(p) * H, DH = p->D * H;
  int64_t wide = p->In > DH ? p->In : DH, lay = T * N * wide;
  /* two layer gradients (this layer's output, its input), then dxi, dhh, dh, dc, dhp */
  size_t n = (size_t)(2 * lay + 2 * T * N * G + 3 * N * H + 1);
  float *mem = calloc(n, sizeof(float));
  if (mem == NULL) return PR_ERR;
  float *dout = mem, *din = mem + lay, *buf = mem + 2 * lay;
  if (gout != NULL) memcpy(dout, gout, sizeof(float) * (size_t)(T * N * DH));
  if (gw != NULL) memset(gw, 0, sizeof(float) * (size_t)pr_rnn_weights_size(p));
  float *wsm = (float *)ws;   /* read only: the states and activations */
  for (int64_t l = p->L - 1; l >= 0; l--) {
    const float *in = l == 0 ? ws : ws + pr_rnnl_out_offset(p, l - 1);
    int want_in = l > 0 || gx != NULL;
    memset(din, 0, sizeof(float) * (size_t)lay);
    for (int64_t d = 0; d < p->D; d++) {
      pr_RnnDir r = pr_rnnl_dir(p, w, wsm, l, d);
      dir_back(p, &r, l, d, in, dout, ghn, gcn, want_in ? din : NULL, gh0, gc0, gw, w, buf);
    }
    /* din is the gradient of the dropped input: through the mask to the layer below's output */
    if (dropped(p) && l > 0) apply_mask(din, ws + mask_offset(p, l - 1), T * N * DH);
    float *t = dout;
    dout = din;
    din = t;
  }
  if (gx != NULL) memcpy(gx, dout, sizeof(float) * (size_t)(T * N * p->In));
  free(mem);
  return 0;
}

const float *pr_rnn_output(const pr_RnnPlan *p, const float *ws) {
  return ws + pr_rnnl_out_offset(p, p->L - 1);
}

/* {====================== the recurrent ops' kernels on tensors ======================} */

/* [N, T, F] <-> [T, N, F] (to: batch-first into time-major). */
static void swap_01(const float *src, float *dst, int64_t a, int64_t b, int64_t f) {
  for (int64_t i = 0; i < a; i++)
    for (int64_t j = 0; j < b; j++)
      memcpy(dst + (j * a + i) * f, src + (i * b + j) * f, sizeof(float) * (size_t)f);
}

/*
** The dropout masks of the inner layers' outputs into the workspace, drawn from the runtime's
** generator as pr_dropout draws (so manual_seed repeats them); the backward reads them back from
** the saved workspace rather than drawing again.
*/
static void draw_masks(pr_Runtime *rt, const pr_RnnPlan *p, float *ws) {
  int64_t at = pr_rnn_masks_offset(p);
  if (at < 0) return;
  float scale = p->dropout < 1.0 ? (float)(1.0 / (1.0 - p->dropout)) : 0.0f;
  float *m = ws + at;
  for (int64_t i = 0, n = pr_rnn_workspace_size(p) - at; i < n; i++)
    m[i] = pr_rand_uniform(rt) < p->dropout ? 0.0f : scale;
}

/* x as a time-major contiguous copy (or itself when it already is one). */
static pr_Tensor *time_major(pr_Runtime *rt, const pr_Tensor *x, int batch_first) {
  if (!batch_first) return pr_contiguous_data(rt, x);
  pr_Tensor *c = pr_contiguous_data(rt, x);
  pr_Tensor *t = c ? pr_tensor_new(rt, x->ndim, x->shape, PROF_F32, x->device) : NULL;
  if (t != NULL) swap_01(pr_f32(c), pr_f32(t), x->shape[0], x->shape[1], x->shape[2]);
  pr_tensor_release(c);
  return t;
}

int pr_cpu_rnn(pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *x,
               const pr_Tensor *h0, const pr_Tensor *c0, const pr_Tensor *W, pr_Tensor *ws,
               pr_Tensor *R) {
  int64_t nout = p->T * p->N * p->D * p->H, nh = p->L * p->D * p->N * p->H;
  pr_Tensor *xt = time_major(rt, x, batch_first);
  pr_Tensor *hc = xt && h0 ? pr_contiguous_data(rt, h0) : NULL;
  pr_Tensor *cc = xt && c0 ? pr_contiguous_data(rt, c0) : NULL;
  int rc = PR_ERR;
  if (xt == NULL || (h0 && !hc) || (c0 && !cc)) goto end;
  float *r = pr_f32(R);
  draw_masks(rt, p, pr_f32(ws));
  if (pr_cpu_rnn_forward(p, pr_f32(xt), hc ? pr_f32(hc) : NULL, cc ? pr_f32(cc) : NULL, pr_f32(W),
                         pr_f32(ws), r + nout, p->cell == 2 ? r + nout + nh : NULL) != 0) {
    pr_error(rt, "rnn: out of memory");
    goto end;
  }
  if (batch_first) swap_01(pr_rnn_output(p, pr_f32(ws)), r, p->T, p->N, p->D * p->H);
  else memcpy(r, pr_rnn_output(p, pr_f32(ws)), sizeof(float) * (size_t)nout);
  rc = 0;
end:
  pr_tensor_release(xt);
  pr_tensor_release(hc);
  pr_tensor_release(cc);
  return rc;
}

int pr_cpu_rnn_grad(pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *W,
                    const pr_Tensor *ws, const pr_Tensor *g, pr_Tensor *gx_out, pr_Tensor *gh0,
                    pr_Tensor *gc0, pr_Tensor *gw) {
  int64_t nout = p->T * p->N * p->D * p->H, nh = p->L * p->D * p->N * p->H;
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  float *tmp = gc ? malloc(sizeof(float) * (size_t)(nout + p->T * p->N * p->In + 1)) : NULL;
  if (tmp == NULL) {
    pr_tensor_release(gc);
    return pr_error(rt, "rnn backward: out of memory");
  }
  const float *gp = pr_f32(gc), *gout = gp;
  float *gx = gx_out ? pr_f32(gx_out) : NULL;
  if (batch_first) {
    swap_01(gp, tmp, p->N, p->T, p->D * p->H);
    gout = tmp;
    if (gx != NULL) gx = tmp + nout;
  }
  int rc = pr_cpu_rnn_backward(p, pr_f32(W), pr_f32(ws), gout, gp + nout,
                               p->cell == 2 ? gp + nout + nh : NULL, gx,
                               gh0 ? pr_f32(gh0) : NULL, gc0 ? pr_f32(gc0) : NULL,
                               gw ? pr_f32(gw) : NULL);
  if (rc == 0 && batch_first && gx_out != NULL) swap_01(gx, pr_f32(gx_out), p->T, p->N, p->In);
  free(tmp);
  pr_tensor_release(gc);
  return rc == 0 ? 0 : pr_error(rt, "rnn backward: out of memory");
}
