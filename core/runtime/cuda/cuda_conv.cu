/* cuda_conv.cu — convolution (im2col / col2im around the device GEMM) and pooling on the device,
   float32, float16 and bfloat16, with cpu_conv.c's and cpu_pool.c's layouts and rules. */
#include <math.h>

#include <type_traits>

#include "cuda_util.cuh"

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

/*
** cols of one sample: row r = c·K + kidx (taps row-major over the three padded axes), column o
** the output position. Unfold writes every entry (zero over the padding); fold adds each entry
** back into the float xf (atomics: overlapping windows meet at one input). T: float, __half or
** __nv_bfloat16, the GEMM's dtype; unfold only moves elements, so it rounds nothing.
*/
template <class T>
__global__ void im2col(const T *x, T *cols, pr_ConvGeom g, int64_t channels, int fold, float *xf) {
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
      if (inside) atomicAdd(&xf[i], f_of(cols[t]));
    } else {
      cols[t] = inside ? x[i] : of_f<T>(0.0f);
    }
  }
}

template <class T>
static void unfold(const T *x, T *cols, const pr_ConvGeom *g, int fold, float *xf) {
  int64_t n = g->c * prod3(g->k) * prod3(g->out);
  if (n > 0) im2col<T><<<pr_blocks(n), PR_THREADS, 0, PR_STREAM>>>(x, cols, *g, g->c, fold, xf);
}

static int is_pointwise(const pr_ConvGeom *g) {
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0 || g->in[i] != g->out[i]) return 0;
  return 1;
}

/* Contiguous copies (or references) of up to three operands of in[0]'s float dtype. */
static int gather(pr_Runtime *rt, const char *op, const pr_Tensor *const *in, pr_Tensor **c, int n) {
  for (int i = 0; i < n; i++) c[i] = NULL;
  for (int i = 0; i < n; i++) {
    if (in[i] == NULL) continue;
    if (need_float(rt, op, in[0], in[i]) != 0 || (c[i] = pr_contiguous_data(rt, in[i])) == NULL)
      return PR_ERR;
  }
  return 0;
}

static void release(pr_Tensor **c, int n) {
  for (int i = 0; i < n; i++) pr_tensor_release(c[i]);
}

/* The unfold buffer of one sample (cached device memory, reused across the batch). */
template <class T>
static T *cols_buffer(pr_Runtime *rt, const pr_ConvGeom *g, const char *op, size_t *bytes) {
  *bytes = sizeof(T) * (size_t)(g->c * prod3(g->k) * prod3(g->out) + 1);
  T *p = (T *)pr_cuda_alloc(*bytes);
  if (p == NULL) pr_error(rt, "%s: out of device memory for a %zu-byte unfold buffer", op, *bytes);
  return p;
}

/* out[ch, i] = v[ch] for `per` positions per channel, `chans` channels (+= when add). */
template <class T>
static void channel_fill(T *o, const T *v, int64_t chans, int64_t per, int add) {
  pr_launch(chans * per, [=] __device__(int64_t i) {
    if (add) o[i] = of_f<T>(f_of(o[i]) + f_of(v[i / per]));
    else o[i] = v[i / per];
  });
}

/* The bias fills y first and the GEMM adds into it (beta 1): cuBLAS accumulates in float and a
   half y rounds once. */
template <class T>
static int conv_forward(pr_Runtime *rt, int dtype, const T *xp, const T *wp, const T *bp,
                        const pr_ConvGeom *g, T *yp) {
  int pointwise = is_pointwise(g);
  size_t cbytes = 0;
  T *cols = pointwise ? NULL : cols_buffer<T>(rt, g, "conv", &cbytes);
  if (!pointwise && cols == NULL) return PR_ERR;
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isz = g->c * prod3(g->in), osp = prod3(g->out), rows = cin * K;
  int rc = 0;
  for (int64_t n = 0; n < g->n && rc == 0; n++) {
    T *yn = yp + n * g->cout * osp;
    const T *src = xp + n * isz;
    if (!pointwise) {
      unfold<T>(src, cols, g, 0, NULL);
      src = cols;
    }
    if (bp != NULL) channel_fill<T>(yn, bp, g->cout, osp, 0);
    /* per group: W[cog, rows] · cols[rows, osp], the groups as one strided batch */
    rc = pr_cuda_gemm(rt, "conv", dtype, 0, 0, cog, osp, rows, 1.0f, wp, rows, cog * rows, src,
                      osp, rows * osp, bp != NULL ? 1.0f : 0.0f, yn, osp, cog * osp, G);
  }
  if (cols != NULL) pr_cuda_free(cols, cbytes);
  return rc != 0 ? rc : pr_cuda_check(rt, "conv");
}

extern "C" int pr_cuda_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                            const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *out) {
  const pr_Tensor *in[3] = {x, w, b};
  pr_Tensor *c[3] = {NULL, NULL, NULL};
  int rc = need_float(rt, "conv", x, out);
  if (rc == 0) rc = gather(rt, "conv", in, c, 3);
  if (rc == 0)
    PR_FLOAT_SWITCH(x->dtype, rc = conv_forward<T>(rt, x->dtype, base_of<T>(c[0]) + c[0]->offset,
                                                   base_of<T>(c[1]) + c[1]->offset,
                                                   c[2] ? base_of<T>(c[2]) + c[2]->offset : NULL,
                                                   g, base_of<T>(out) + out->offset));
  release(c, 3);
  return rc;
}

/*
** gx = Wᵀ·gy folded back (col2im), + b per input channel: conv_transpose's forward. float32 folds
** straight into gx and adds the bias after. A half gx folds into a float32 scratch (one sample)
** and rounds once with the bias added; its columns are the GEMM's output, rounded to the dtype
** before the fold. A half pointwise conv starts from the bias and lets the GEMM add (beta 1).
*/
template <class T>
static int conv_input_grad_of(pr_Runtime *rt, int dtype, const T *gp, const T *wp, const T *bp,
                              const pr_ConvGeom *g, T *xp) {
  const int half = !std::is_same<T, float>::value;
  int pointwise = is_pointwise(g);
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isp = prod3(g->in), osp = prod3(g->out), rows = cin * K, plane = g->c * isp;
  size_t cbytes = 0, abytes = sizeof(float) * (size_t)(plane > 0 ? plane : 1);
  T *cols = NULL;
  float *acc = NULL;
  int rc = PR_ERR;
  if (!pointwise && (cols = cols_buffer<T>(rt, g, "conv_transpose", &cbytes)) == NULL) goto end;
  if (half && !pointwise && (acc = (float *)pr_cuda_alloc(abytes)) == NULL) {
    pr_error(rt, "conv_transpose: out of device memory for a %zu-byte fold buffer", abytes);
    goto end;
  }
  rc = 0;
  for (int64_t n = 0; n < g->n && rc == 0; n++) {
    T *xn = xp + n * plane;
    const T *gn = gp + n * g->cout * osp;
    T *dst = pointwise ? xn : cols;
    float beta = 0.0f;
    if (half && pointwise && bp != NULL) {
      channel_fill<T>(xn, bp, g->c, isp, 0);
      beta = 1.0f;
    }
    /* cols[gi] = W[gi]ᵀ [rows, cog] · gy[gi] [cog, osp] */
    rc = pr_cuda_gemm(rt, "conv_transpose", dtype, 1, 0, rows, osp, cog, 1.0f, wp + 0, rows,
                      cog * rows, gn, osp, cog * osp, beta, dst, osp, rows * osp, G);
    if (rc != 0) break;
    if (!half) {
      if (!pointwise) {
        cudaMemsetAsync(xn, 0, sizeof(float) * (size_t)plane, PR_STREAM);
        unfold<T>(NULL, cols, g, 1, (float *)xn);
      }
      if (bp != NULL) channel_fill<T>(xn, bp, g->c, isp, 1);
    } else if (!pointwise) {
      cudaMemsetAsync(acc, 0, sizeof(float) * (size_t)plane, PR_STREAM);
      unfold<T>(NULL, cols, g, 1, acc);
      const float *ac = acc;
      pr_launch(plane, [=] __device__(int64_t i) {
        xn[i] = of_f<T>(ac[i] + (bp != NULL ? f_of(bp[i / isp]) : 0.0f));
      });
    }
  }
  if (rc == 0) rc = pr_cuda_check(rt, "conv_transpose");
end:
  if (acc != NULL) pr_cuda_free(acc, abytes);
  if (cols != NULL) pr_cuda_free(cols, cbytes);
  return rc;
}

extern "C" int pr_cuda_conv_input_grad(pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,
                                       const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx) {
  const pr_Tensor *in[3] = {gy, w, b};
  pr_Tensor *c[3] = {NULL, NULL, NULL};
  int rc = need_float(rt, "conv_transpose", gy, gx);
  if (rc == 0) rc = gather(rt, "conv_transpose", in, c, 3);
  if (rc == 0)
    PR_FLOAT_SWITCH(gy->dtype,
                    rc = conv_input_grad_of<T>(rt, gy->dtype, base_of<T>(c[0]) + c[0]->offset,
                                               base_of<T>(c[1]) + c[1]->offset,
                                               c[2] ? base_of<T>(c[2]) + c[2]->offset : NULL, g,
                                               base_of<T>(gx) + gx->offset));
  release(c, 3);
  return rc;
}

/* gW sums over the batch by the GEMM's beta: a half gW rounds once per sample. */
template <class T>
static int conv_weight_grad_of(pr_Runtime *rt, int dtype, const T *xp, const T *gp,
                               const pr_ConvGeom *g, T *wp) {
  int pointwise = is_pointwise(g);
  size_t cbytes = 0;
  T *cols = NULL;
  if (!pointwise && (cols = cols_buffer<T>(rt, g, "conv weight gradient", &cbytes)) == NULL)
    return PR_ERR;
  int64_t G = g->groups, cin = g->c / G, cog = g->cout / G, K = prod3(g->k);
  int64_t isz = g->c * prod3(g->in), osp = prod3(g->out), rows = cin * K;
  int rc = 0;
  if (g->n == 0) cudaMemsetAsync(wp, 0, sizeof(T) * (size_t)(g->cout * rows), PR_STREAM);
  for (int64_t n = 0; n < g->n && rc == 0; n++) {
    const T *src = xp + n * isz, *gn = gp + n * g->cout * osp;
    if (!pointwise) {
      unfold<T>(src, cols, g, 0, NULL);
      src = cols;
    }
    /* gW[gi] (+)= gy[gi] [cog, osp] · cols[gi]ᵀ [osp, rows], summed over the batch by beta */
    rc = pr_cuda_gemm(rt, "conv weight gradient", dtype, 0, 1, cog, rows, osp, 1.0f, gn, osp,
                      cog * osp, src, osp, rows * osp, n > 0 ? 1.0f : 0.0f, wp, rows, cog * rows,
                      G);
  }
  if (rc == 0) rc = pr_cuda_check(rt, "conv weight gradient");
  if (cols != NULL) pr_cuda_free(cols, cbytes);
  return rc;
}

extern "C" int pr_cuda_conv_weight_grad(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,
                                        const pr_ConvGeom *g, pr_Tensor *gw) {
  const pr_Tensor *in[2] = {x, gy};
  pr_Tensor *c[2] = {NULL, NULL};
  int rc = need_float(rt, "conv weight gradient", x, gw);
  if (rc == 0) rc = gather(rt, "conv weight gradient", in, c, 2);
  if (rc == 0)
    PR_FLOAT_SWITCH(x->dtype, rc = conv_weight_grad_of<T>(rt, x->dtype,
                                                          base_of<T>(c[0]) + c[0]->offset,
                                                          base_of<T>(c[1]) + c[1]->offset, g,
                                                          base_of<T>(gw) + gw->offset));
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
