/* cuda_conv.cu — convolution (im2col / col2im around the device GEMM) and pooling on the device,
   float32, with cpu_conv.c's and cpu_pool.c's layouts and rules. */
#include <math.h>

#include <type_traits>

#include "cuda_util.cuh"

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

/*
** cols of one sample: row r = c·K + kidx (taps row-major over the three padded axes), column o
** the output position. Unfold writes every entry (zero over the padding); fold adds each entry
** back into x (atomics: overlapping windows meet at one input).
*/
__global__ void im2col(const float *x, float *cols, pr_ConvGeom g, int64_t channels, int fold,
                       float *xf) {
  int64_t K = g.k[0] * g.k[1] * g.k[2], osp = g.out[0] * g.out[1] * g.out[2];
  int64_t n = channels * K * osp;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    int64_t o = t % osp, r = t / osp, kidx = r % K, c = r / K;
    int64_t ox = o % g.out[2], oy = (o / g.out[2]) % g.out[1], oz = o / (g.out[2] * g.out[1]);
    int64_t e = kidx % g.k[2], b = (kidx / g.k[2]) % g.k[1], a = kidx / (g.k[2] * g.k[1]);
    int64_t iz = oz * g.stride[0] - g.pad[0] + a * g.dil[0];
    int64_t iy = oy * g.stride[1] - g.pad[1] + b * g.dil[1];
    int64_t ix = ox * g.stride[2] - g.pad[2] + e * g.dil[2];
    int inside = iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1] && ix >= 0 && ix < g.in[2];
    int64_t i = ((c * g.in[0] + iz) * g.in[1] + iy) * g.in[2] + ix;
    if (fold) {
      if (inside) atomicAdd(&xf[i], cols[t]);
    } else {
      cols[t] = inside ? x[i] : 0.0f;
    }
  }
}

static void unfold(const float *x, float *cols, const pr_ConvGeom *g, int fold, float *xf) {
  int64_t n = g->c * prod3(g->k) * prod3(g->out);
  if (n > 0) im2col<<<pr_blocks(n), PR_THREADS, 0, PR_STREAM>>>(x, cols, *g, g->c, fold, xf);
}

static int is_pointwise(const pr_ConvGeom *g) {
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0 || g->in[i] != g->out[i]) return 0;
  return 1;
}

/* Contiguous copies (or references) of up to three float32 operands. */
static int gather(pr_Runtime *rt, const char *op, const pr_Tensor *const *in, pr_Tensor **c, int n) {
  for (int i = 0; i < n; i++) c[i] = NULL;
  for (int i = 0; i < n; i++) {
    if (in[i] == NULL) continue;
    if (need_f32(rt, op, in[i]) != 0 || (c[i] = pr_contiguous_data(rt, in[i])) == NULL) return PR_ERR;
  }
  return 0;
}

static void release(pr_Tensor **c, int n) {
  for (int i = 0; i < n; i++) pr_tensor_release(c[i]);
}

/* The unfold buffer of one sample (cached device memory, reused across the batch). */
static float *cols_buffer(pr_Runtime *rt, const pr_ConvGeom *g, const char *op, size_t *bytes) {
  *bytes = sizeof(float) * (size_t)(g->c * prod3(g->k) * prod3(g->out) + 1);
  float *p = (float *)pr_cuda_alloc(*bytes);
  if (p == NULL) pr_error(rt, "%s: out of device memory for a %zu-byte unfold buffer", op, *bytes);
  return p;
}

/* out[ch, i] = v[ch] for `per` positions per channel, `chans` channels (+= when add). */
static void channel_fill(float *o, const float *v, int64_t chans, int64_t per, int add) {
  pr_launch(chans * per, [=] __device__(int64_t i) {
    if (add) o[i] += v[i / per];
    else o[i] = v[i / per];
  });
}

static int conv_forward(pr_Runtime *rt, const float *xp, const float *wp, const float *bp,
                        const pr_ConvGeom *g, float *yp) {
  int pointwise = is_pointwise(g);
  size_t cbytes = 0;
  float *cols = pointwise ? NULL : cols_buffer(rt, g, "conv", &cbytes);
  if (!pointwise && cols == NULL) return PR_ERR;
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isz = g->c * prod3(g->in), osp = prod3(g->out), rows = cin * K;
  int rc = 0;
  for (int64_t n = 0; n < g->n && rc == 0; n++) {
    float *yn = yp + n * g->cout * osp;
    const float *src = xp + n * isz;
    if (!pointwise) {
      unfold(src, cols, g, 0, NULL);
      src = cols;
    }
    if (bp != NULL) channel_fill(yn, bp, g->cout, osp, 0);
    /* per group: W[cog, rows] · cols[rows, osp], the groups as one strided batch */
    rc = pr_cuda_gemm(rt, "conv", PROF_F32, 0, 0, cog, osp, rows, 1.0f, wp, rows, cog * rows, src,
                      osp, rows * osp, bp != NULL ? 1.0f : 0.0f, yn, osp, cog * osp, G);
  }
  if (cols != NULL) pr_cuda_free(cols, cbytes);
  return rc != 0 ? rc : pr_cuda_check(rt, "conv");
}

extern "C" int pr_cuda_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                            const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *out) {
  const pr_Tensor *in[3] = {x, w, b};
  pr_Tensor *c[3];
  int rc = gather(rt, "conv", in, c, 3);
  if (rc == 0)
    rc = conv_forward(rt, pr_f32(c[0]), pr_f32(c[1]), c[2] ? pr_f32(c[2]) : NULL, g, pr_f32(out));
  release(c, 3);
  return rc;
}

/* gx = Wᵀ·gy folded back (col2im), + b per input channel: conv_transpose's forward. */
extern "C" int pr_cuda_conv_input_grad(pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,
                                       const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx) {
  const pr_Tensor *in[3] = {gy, w, b};
  pr_Tensor *c[3];
  float *cols = NULL;
  size_t cbytes = 0;
  int rc = PR_ERR, pointwise = is_pointwise(g);
  if (gather(rt, "conv_transpose", in, c, 3) != 0) goto end;
  if (!pointwise && (cols = cols_buffer(rt, g, "conv_transpose", &cbytes)) == NULL) goto end;
  {
    const float *gp = pr_f32(c[0]), *wp = pr_f32(c[1]), *bp = c[2] ? pr_f32(c[2]) : NULL;
    float *xp = pr_f32(gx);
    int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
    int64_t isp = prod3(g->in), osp = prod3(g->out), rows = cin * K;
    rc = 0;
    for (int64_t n = 0; n < g->n && rc == 0; n++) {
      float *xn = xp + n * g->c * isp;
      const float *gn = gp + n * g->cout * osp;
      float *dst = pointwise ? xn : cols;
      /* cols[gi] = W[gi]ᵀ [rows, cog] · gy[gi] [cog, osp] */
      rc = pr_cuda_gemm(rt, "conv_transpose", PROF_F32, 1, 0, rows, osp, cog, 1.0f, wp + 0, rows,
                        cog * rows, gn, osp, cog * osp, 0.0f, dst, osp, rows * osp, G);
      if (rc != 0) break;
      if (!pointwise) {
        cudaMemsetAsync(xn, 0, sizeof(float) * (size_t)(g->c * isp), PR_STREAM);
        unfold(NULL, cols, g, 1, xn);
      }
      if (bp != NULL) channel_fill(xn, bp, g->c, isp, 1);
    }
    if (rc == 0) rc = pr_cuda_check(rt, "conv_transpose");
  }
end:
  if (cols != NULL) pr_cuda_free(cols, cbytes);
  release(c, 3);
  return rc;
}

extern "C" int pr_cuda_conv_weight_grad(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,
                                        const pr_ConvGeom *g, pr_Tensor *gw) {
  const pr_Tensor *in[2] = {x, gy};
  pr_Tensor *c[2];
  float *cols = NULL;
  size_t cbytes = 0;
  int rc = PR_ERR, pointwise = is_pointwise(g);
  if (gather(rt, "conv weight gradient", in, c, 2) != 0) goto end;
  if (!pointwise && (cols = cols_buffer(rt, g, "conv weight gradient", &cbytes)) == NULL) goto end;
  {
    int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
    int64_t isz = g->c * prod3(g->in), osp = prod3(g->out), rows = cin * K;
    const float *xp = pr_f32(c[0]), *gp = pr_f32(c[1]);
    float *wp = pr_f32(gw);
    rc = 0;
    if (g->n == 0) cudaMemsetAsync(wp, 0, sizeof(float) * (size_t)(g->cout * rows), PR_STREAM);
    for (int64_t n = 0; n < g->n && rc == 0; n++) {
      const float *src = xp + n * isz, *gn = gp + n * g->cout * osp;
      if (!pointwise) {
        unfold(src, cols, g, 0, NULL);
        src = cols;
      }
      /* gW[gi] (+)= gy[gi] [cog, osp] · cols[gi]ᵀ [osp, rows], summed over the batch by beta */
      rc = pr_cuda_gemm(rt, "conv weight gradient", PROF_F32, 0, 1, cog, rows, osp, 1.0f, gn, osp,
                        cog * osp, src, osp, rows * osp, n > 0 ? 1.0f : 0.0f, wp, rows,
                        cog * rows, G);
    }
    if (rc == 0) rc = pr_cuda_check(rt, "conv weight gradient");
  }
end:
  if (cols != NULL) pr_cuda_free(cols, cbytes);
  release(c, 2);
  return rc;
}

/* {====================== pooling ======================} */

struct Win {
  int64_t lo, hi, step, span;
};

/* cpu_pool.c's window of output o along axis a. */
__device__ __forceinline__ Win window(int kind, const pr_PoolGeom &g, int a, int64_t o) {
  Win t;
  int64_t in = g.in[a], s = g.stride[a], p = g.pad[a], k = g.k[a], d = g.dil[a];
  t.step = 1;
  t.span = 0;
  if (kind == PROF_OP_ADAPTIVE_AVG_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL) {
    t.lo = o * in / g.out[a];
    t.hi = ((o + 1) * in + g.out[a] - 1) / g.out[a];
  } else if (kind == PROF_OP_MAX_POOL) {
    int64_t lo = o * s - p;
    t.hi = lo + (k - 1) * d + 1 < in ? lo + (k - 1) * d + 1 : in;
    if (lo < 0) lo += (-lo + d - 1) / d * d;
    t.lo = lo;
    t.step = d;
  } else {
    int64_t lo = o * s - p, hi = lo + k < in + p ? lo + k : in + p;
    t.span = hi - lo;
    t.lo = lo > 0 ? lo : 0;
    t.hi = hi < in ? hi : in;
  }
  if (t.hi < t.lo) t.hi = t.lo;
  return t;
}

__device__ __forceinline__ int64_t pool_divisor(int kind, const pr_PoolGeom &g, const Win &z,
                                                const Win &y, const Win &x, int64_t n) {
  if (kind != PROF_OP_AVG_POOL) return n;
  if (g.divisor_override != 0) return g.divisor_override;
  return g.count_include_pad ? z.span * y.span * x.span : n;
}

static int is_max(prof_OpKind kind) {
  return kind == PROF_OP_MAX_POOL || kind == PROF_OP_ADAPTIVE_MAX_POOL;
}

/* T: float, __half or __nv_bfloat16; maxima compare in float (a half value converts exactly, so
   the stored maximum is the input element itself), averages sum in double and round once. */
template <class T>
static void pool_of(int k, int max, pr_PoolGeom G, const T *xp, T *yp, int64_t *ip, int64_t n,
                    int64_t isp, int64_t osp) {
  pr_launch(n, [=] __device__(int64_t t) {
    int64_t pl = t / osp, o = t % osp;
    int64_t ox = o % G.out[2], oy = (o / G.out[2]) % G.out[1], oz = o / (G.out[2] * G.out[1]);
    Win z = window(k, G, 0, oz), y = window(k, G, 1, oy), wx = window(k, G, 2, ox);
    const T *xs = xp + pl * isp;
    if (max) {
      /* ties keep the first maximum and a NaN wins, as PyTorch's kernels do */
      float m = -INFINITY;
      int64_t at = -1;
      for (int64_t iz = z.lo; iz < z.hi; iz += z.step)
        for (int64_t iy = y.lo; iy < y.hi; iy += y.step)
          for (int64_t ix = wx.lo; ix < wx.hi; ix += wx.step) {
            int64_t i = (iz * G.in[1] + iy) * G.in[2] + ix;
            float v = f_of(xs[i]);
            if (at < 0 || v > m || isnan(v)) {
              m = v;
              at = i;
            }
          }
      yp[t] = of_f<T>(m);
      if (ip != NULL) ip[t] = at;
      return;
    }
    double sum = 0;
    for (int64_t iz = z.lo; iz < z.hi; iz++)
      for (int64_t iy = y.lo; iy < y.hi; iy++)
        for (int64_t ix = wx.lo; ix < wx.hi; ix++)
          sum += f_of(xs[(iz * G.in[1] + iy) * G.in[2] + ix]);
    int64_t cnt = (z.hi - z.lo) * (y.hi - y.lo) * (wx.hi - wx.lo);
    int64_t div = pool_divisor(k, G, z, y, wx, cnt);
    yp[t] = of_f<T>(cnt > 0 ? (float)(sum / (double)div) : 0.0f);
  });
}

extern "C" int pr_cuda_pool(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                            const pr_PoolGeom *g, pr_Tensor *out, pr_Tensor *indices) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, x, out) != 0) return PR_ERR;
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  if (xc == NULL) return PR_ERR;
  int64_t isp = prod3(g->in), osp = prod3(g->out);
  int64_t *ip = indices != NULL ? base_of<int64_t>(indices) + indices->offset : NULL;
  PR_FLOAT_SWITCH(x->dtype, pool_of<T>((int)kind, is_max(kind), *g, base_of<T>(xc) + xc->offset,
                                       base_of<T>(out) + out->offset, ip, g->planes * osp, isp,
                                       osp));
  int rc = pr_cuda_check(rt, name);
  pr_tensor_release(xc);
  return rc;
}

/* The gradient adds up by float atomics (windows overlap): straight into a float32 gx, and for a
   half gx into a float scratch rounded once per element into gx, as embedding's backward does. */
template <class T>
static int pool_grad_of(pr_Runtime *rt, const char *name, int k, int max, pr_PoolGeom G,
                        const T *gp, const int64_t *ip, T *gx, int64_t planes, int64_t isp,
                        int64_t osp) {
  size_t bytes = sizeof(float) * (size_t)(planes * isp > 0 ? planes * isp : 1);
  float *xp = (float *)gx;
  if constexpr (std::is_same<T, float>::value) {
    cudaMemsetAsync(xp, 0, sizeof(float) * (size_t)(planes * isp), PR_STREAM);
  } else {
    xp = (float *)pr_cuda_alloc(bytes);   /* zero-filled */
    if (xp == NULL) return pr_error(rt, "%s backward: out of device memory", name);
  }
  if (max) {
    pr_launch(planes * osp, [=] __device__(int64_t t) {
      int64_t at = ip[t];
      if (at >= 0) atomicAdd(&xp[(t / osp) * isp + at], f_of(gp[t]));
    });
  } else {
    pr_launch(planes * osp, [=] __device__(int64_t t) {
      int64_t pl = t / osp, o = t % osp;
      int64_t ox = o % G.out[2], oy = (o / G.out[2]) % G.out[1], oz = o / (G.out[2] * G.out[1]);
      Win z = window(k, G, 0, oz), y = window(k, G, 1, oy), wx = window(k, G, 2, ox);
      int64_t n = (z.hi - z.lo) * (y.hi - y.lo) * (wx.hi - wx.lo);
      if (n == 0) return;
      float v = f_of(gp[t]) / (float)pool_divisor(k, G, z, y, wx, n);
      float *xs = xp + pl * isp;
      for (int64_t iz = z.lo; iz < z.hi; iz++)
        for (int64_t iy = y.lo; iy < y.hi; iy++)
          for (int64_t ix = wx.lo; ix < wx.hi; ix++)
            atomicAdd(&xs[(iz * G.in[1] + iy) * G.in[2] + ix], v);
    });
  }
  if constexpr (!std::is_same<T, float>::value) {
    pr_launch(planes * isp, [=] __device__(int64_t i) { gx[i] = of_f<T>(xp[i]); });
    int rc = pr_cuda_check(rt, name);
    pr_cuda_free(xp, bytes);
    return rc;
  }
  return pr_cuda_check(rt, name);
}

extern "C" int pr_cuda_pool_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *gy,
                                     const pr_Tensor *indices, const pr_PoolGeom *g,
                                     pr_Tensor *gx) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, gy, gx) != 0) return PR_ERR;
  pr_Tensor *gc = pr_contiguous_data(rt, gy);
  if (gc == NULL) return PR_ERR;
  int64_t isp = prod3(g->in), osp = prod3(g->out);
  const int64_t *ip = is_max(kind) ? base_of<int64_t>(indices) + indices->offset : NULL;
  int rc = PR_ERR;
  PR_FLOAT_SWITCH(gy->dtype, rc = pool_grad_of<T>(rt, name, (int)kind, is_max(kind), *g,
                                                  base_of<T>(gc) + gc->offset, ip,
                                                  base_of<T>(gx) + gx->offset, g->planes, isp,
                                                  osp));
  pr_tensor_release(gc);
  return rc;
}
