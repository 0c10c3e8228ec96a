/* cpu_conv.c — float32 convolution kernels on the cpu: im2col / col2im around OpenBLAS sgemm. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/*
** Layout of the unfolded input ("cols") of one sample: row r = c·K + kidx (channel-major, kernel
** taps in row-major order over the three padded axes), column o = the output position. A group's
** rows are therefore one contiguous block of (C/groups)·K rows, which sgemm reads in place.
*/

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

/* sgemm rejects a leading dimension of 0 even when the matrix is empty */
#define LD(v) ((blasint)((v) > 0 ? (v) : 1))

/* Columns ox whose input column ox·s + ix0 lies in [0, iw): [*lo, *hi). */
static void valid_range(int64_t ix0, int64_t s, int64_t iw, int64_t ow, int64_t *lo, int64_t *hi) {
  int64_t l = ix0 >= 0 ? 0 : (-ix0 + s - 1) / s;
  int64_t h = iw - ix0 <= 0 ? 0 : (iw - ix0 + s - 1) / s;
  if (l > ow) l = ow;
  if (h > ow) h = ow;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

/*
** One walk serves both directions: unfold copies x into cols (zeros where the window hangs over
** the padding); fold adds cols back into x (the adjoint, skipping the padding). The innermost
** axis is split into its valid range once per row so the copy loop carries no bounds checks.
*/
static void im2col_walk(float *x, float *cols, const pr_ConvGeom *g, int64_t channels, int fold) {
  const int64_t *in = g->in, *out = g->out, *k = g->k, *s = g->stride, *p = g->pad, *d = g->dil;
  int64_t plane = prod3(in), ow = out[2];
  float *dst = cols;
  for (int64_t c = 0; c < channels; c++) {
    float *xc = x + c * plane;
    for (int64_t a = 0; a < k[0]; a++)
      for (int64_t b = 0; b < k[1]; b++)
        for (int64_t e = 0; e < k[2]; e++) {
          int64_t ix0 = e * d[2] - p[2], lo, hi;
          valid_range(ix0, s[2], in[2], ow, &lo, &hi);
          for (int64_t oz = 0; oz < out[0]; oz++) {
            int64_t iz = oz * s[0] - p[0] + a * d[0];
            for (int64_t oy = 0; oy < out[1]; oy++, dst += ow) {
              int64_t iy = oy * s[1] - p[1] + b * d[1];
              if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1]) {
                if (!fold) memset(dst, 0, sizeof *dst * (size_t)ow);
                continue;
              }
              float *row = xc + (iz * in[1] + iy) * in[2] + ix0;
              if (fold) {
                if (s[2] == 1)
                  for (int64_t ox = lo; ox < hi; ox++) row[ox] += dst[ox];
                else
                  for (int64_t ox = lo; ox < hi; ox++) row[ox * s[2]] += dst[ox];
                continue;
              }
              memset(dst, 0, sizeof *dst * (size_t)lo);
              if (s[2] == 1)
                memcpy(dst + lo, row + lo, sizeof *dst * (size_t)(hi - lo));
              else
                for (int64_t ox = lo; ox < hi; ox++) dst[ox] = row[ox * s[2]];
              memset(dst + hi, 0, sizeof *dst * (size_t)(ow - hi));
            }
          }
        }
  }
}

/* A 1×1 kernel with stride 1 and no padding: the input already is its own unfolding. */
static int is_pointwise(const pr_ConvGeom *g) {
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0 || g->in[i] != g->out[i]) return 0;
  return 1;
}

/* Contiguous float32 copies (or references) of up to three operands; NULL operands stay NULL. */
static int gather(pr_Runtime *rt, const char *op, const pr_Tensor *const *in, pr_Tensor **c,
                  int n) {
  for (int i = 0; i < n; i++) c[i] = NULL;
  for (int i = 0; i < n; i++) {
    if (in[i] == NULL) continue;
    if (in[i]->dtype != PROF_F32)
      return pr_error(rt, "%s: cpu kernels compute float32, got %s", op,
                      prof_dtype_name(in[i]->dtype));
    if ((c[i] = pr_contiguous_data(rt, in[i])) == NULL) return PR_ERR;
  }
  return 0;
}

static void release(pr_Tensor **c, int n) {
  for (int i = 0; i < n; i++) pr_tensor_release(c[i]);
}

/* The unfold buffer of one sample, allocated once per call and reused across the batch. */
static float *cols_buffer(pr_Runtime *rt, const pr_ConvGeom *g, const char *op) {
  size_t n = (size_t)(g->c * prod3(g->k) * prod3(g->out));
  float *p = malloc(sizeof *p * (n > 0 ? n : 1));
  if (p == NULL) pr_error(rt, "%s: out of memory for a %zu-float unfold buffer", op, n);
  return p;
}

/* y = conv(x, w) + b over contiguous float32 blocks (b NULL: none). */
static int conv_forward(pr_Runtime *rt, const float *xp, const float *wp, const float *bp,
                        const pr_ConvGeom *g, float *yp) {
  int pointwise = is_pointwise(g);
  float *cols = pointwise ? NULL : cols_buffer(rt, g, "conv");
  if (!pointwise && cols == NULL) return PR_ERR;
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isz = g->c * prod3(g->in), osp = prod3(g->out), rows = cin * K;
  for (int64_t n = 0; n < g->n; n++) {
    float *yn = yp + n * g->cout * osp;
    const float *src = xp + n * isz;
    if (!pointwise) {
      im2col_walk((float *)src, cols, g, g->c, 0);   /* unfolding only reads x */
      src = cols;
    }
    if (bp != NULL)
      for (int64_t o = 0; o < g->cout; o++)
        for (int64_t i = 0; i < osp; i++) yn[o * osp + i] = bp[o];
    for (int64_t gi = 0; gi < G; gi++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)cog, (blasint)osp,
                  (blasint)rows, 1.0f, wp + gi * cog * rows, LD(rows), src + gi * rows * osp,
                  LD(osp), bp != NULL ? 1.0f : 0.0f, yn + gi * cog * osp, LD(osp));
  }
  free(cols);
  return 0;
}

int pr_cpu_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                const pr_ConvGeom *g, pr_Tensor *out) {
  const pr_Tensor *in[3] = {x, w, b};
  pr_Tensor *c[3];
  int rc = gather(rt, "conv", in, c, 3);
  if (rc == 0)
    rc = conv_forward(rt, pr_f32(c[0]), pr_f32(c[1]), c[2] ? pr_f32(c[2]) : NULL, g, pr_f32(out));
  release(c, 3);
  return rc;
}

/*
** With stride 1 the adjoint is itself a convolution: gx = conv(gy, W′, padding d(k-1) - p), W′ the
** weight with input and output channels swapped and its taps reversed. That runs the forward's
** GEMM shape (C × Cout·K by Cout·K × in) instead of Wᵀ·gy, whose inner dimension is only
** Cout/groups and whose C·K × out result a col2im pass must read back.
*/
static int adjoint_by_conv(pr_Runtime *rt, const float *gp, const float *wp, const float *bp,
                           const pr_ConvGeom *g, float *xp) {
  pr_ConvGeom f = *g;
  f.c = g->cout;
  f.cout = g->c;
  for (int i = 0; i < 3; i++) {
    f.in[i] = g->out[i];
    f.out[i] = g->in[i];
    f.pad[i] = g->dil[i] * (g->k[i] - 1) - g->pad[i];
  }
  int64_t G = g->groups, cig = g->c / G, cog = g->cout / G, K = prod3(g->k);
  size_t n = (size_t)(g->c * cog * K);
  float *wf = malloc(sizeof *wf * (n > 0 ? n : 1));
  if (wf == NULL) return pr_error(rt, "conv_transpose: out of memory");
  for (int64_t gi = 0; gi < G; gi++)
    for (int64_t o = 0; o < cog; o++)
      for (int64_t c = 0; c < cig; c++) {
        const float *src = wp + ((gi * cog + o) * cig + c) * K;
        float *dst = wf + ((gi * cig + c) * cog + o) * K;
        for (int64_t k = 0; k < K; k++) dst[K - 1 - k] = src[k];
      }
  int rc = conv_forward(rt, gp, wf, bp, &f, xp);
  free(wf);
  return rc;
}

static int flips_to_conv(const pr_ConvGeom *g) {
  for (int i = 0; i < 3; i++)
    if (g->stride[i] != 1 || g->pad[i] > g->dil[i] * (g->k[i] - 1)) return 0;
  return !is_pointwise(g);
}

int pr_cpu_conv_input_grad(pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,
                           const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx) {
  const pr_Tensor *in[3] = {gy, w, b};
  pr_Tensor *c[3];
  float *cols = NULL;
  int rc = PR_ERR, pointwise = is_pointwise(g);
  if (gather(rt, "conv_transpose", in, c, 3) != 0) goto end;
  const float *gp = pr_f32(c[0]), *wp = pr_f32(c[1]), *bp = c[2] ? pr_f32(c[2]) : NULL;
  float *xp = pr_f32(gx);
  if (flips_to_conv(g)) {
    rc = adjoint_by_conv(rt, gp, wp, bp, g, xp);
    goto end;
  }
  if (!pointwise && (cols = cols_buffer(rt, g, "conv_transpose")) == NULL) goto end;
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isp = prod3(g->in), osp = prod3(g->out), rows = cin * K;
  for (int64_t n = 0; n < g->n; n++) {
    float *xn = xp + n * g->c * isp;
    const float *gn = gp + n * g->cout * osp;
    /* cols = Wᵀ·gy per group; folded back, the overlapping windows add up */
    float *dst = pointwise ? xn : cols;
    for (int64_t gi = 0; gi < G; gi++)
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)rows, (blasint)osp,
                  (blasint)cog, 1.0f, wp + gi * cog * rows, LD(rows), gn + gi * cog * osp,
                  LD(osp), 0.0f, dst + gi * rows * osp, LD(osp));
    if (!pointwise) {
      memset(xn, 0, sizeof *xn * (size_t)(g->c * isp));
      im2col_walk(xn, cols, g, g->c, 1);
    }
    if (bp != NULL)
      for (int64_t ch = 0; ch < g->c; ch++)
        for (int64_t i = 0; i < isp; i++) xn[ch * isp + i] += bp[ch];
  }
  rc = 0;
end:
  free(cols);
  release(c, 3);
  return rc;
}

int pr_cpu_conv_weight_grad(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,
                            const pr_ConvGeom *g, pr_Tensor *gw) {
  const pr_Tensor *in[2] = {x, gy};
  pr_Tensor *c[2];
  float *cols = NULL;
  int rc = PR_ERR, pointwise = is_pointwise(g);
  if (gather(rt, "conv weight gradient", in, c, 2) != 0) goto end;
  if (!pointwise && (cols = cols_buffer(rt, g, "conv weight gradient")) == NULL) goto end;
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isz = g->c * prod3(g->in), osp = prod3(g->out), rows = cin * K;
  const float *xp = pr_f32(c[0]), *gp = pr_f32(c[1]);
  float *wp = pr_f32(gw);
  if (g->n == 0) memset(wp, 0, sizeof *wp * (size_t)(g->cout * rows));
  for (int64_t n = 0; n < g->n; n++) {
    const float *src = xp + n * isz, *gn = gp + n * g->cout * osp;
    if (!pointwise) {
      im2col_walk((float *)src, cols, g, g->c, 0);
      src = cols;
    }
    /* gW[group] += gy·colsᵀ, summed over the batch by sgemm's beta */
    for (int64_t gi = 0; gi < G; gi++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)cog, (blasint)rows,
                  (blasint)osp, 1.0f, gn + gi * cog * osp, LD(osp), src + gi * rows * osp,
                  LD(osp), n > 0 ? 1.0f : 0.0f, wp + gi * cog * rows, LD(rows));
  }
  rc = 0;
end:
  free(cols);
  release(c, 2);
  return rc;
}
