/* cuda_resample.cu — float32 interpolate on the device, with cpu_resample.c's taps and weights. */
#include <math.h>
#include <string.h>

#include "cuda_util.cuh"

/*
** Every mode but area is separable, as on the cpu: output position o of an axis reads `taps`
** inputs with weights, and a point of the volume takes the product of its axes' weights. The cpu
** builds one table per axis per call; here each thread derives its own taps (a few flops), so a
** call allocates nothing. The arithmetic (double weights, float nearest scale) is the cpu's.
*/
struct Taps {
  int n;
  int64_t idx[4];
  double wt[4];
};

static __device__ __forceinline__ double cubic1(double x, double a) {
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
static __device__ __forceinline__ double cubic2(double x, double a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

static __device__ __forceinline__ int64_t clamp_index(int64_t i, int64_t in) {
  return i < 0 ? 0 : (i >= in ? in - 1 : i);
}

/* cpu_resample.c's taps count of an axis: padding axes (1 -> 1) are one-tap copies. */
static int mode_taps(int mode) {
  return mode == PROF_INTERP_NEAREST ? 1 : mode == PROF_INTERP_BICUBIC ? 4 : 2;
}

/* fill_axis for one output position o of axis a (taps: mode_taps, or 1 on a padding axis). */
static __device__ Taps axis_taps(const pr_ResampleGeom &g, int a, int taps, int64_t o) {
  Taps r;
  r.n = taps;
  int64_t in = g.in[a], out = g.out[a];
  if (in == 1 && out == 1) {
    r.n = 1;
    r.idx[0] = 0;
    r.wt[0] = 1.0;
    return r;
  }
  int ac = g.align_corners > 0;
  double sc = ac ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0)
                 : (g.scale[a] > 0 ? 1.0 / g.scale[a] : (double)in / (double)out);
  if (taps == 1) {
    float fs = g.scale[a] > 0 ? (float)(1.0 / g.scale[a]) : (float)in / (float)out;
    int64_t i = (int64_t)floorf((float)o * fs);
    r.idx[0] = i < in - 1 ? i : in - 1;
    r.wt[0] = 1.0;
  } else if (taps == 2) {
    if (in == out) {
      r.idx[0] = r.idx[1] = o;
      r.wt[0] = 1.0;
      r.wt[1] = 0.0;
      return r;
    }
    double src = ac ? sc * (double)o : sc * ((double)o + 0.5) - 0.5;
    if (src < 0) src = 0;
    int64_t i0 = (int64_t)src;
    double l1 = src - (double)i0;
    l1 = l1 < 0 ? 0 : (l1 > 1 ? 1 : l1);
    r.idx[0] = i0;
    r.idx[1] = i0 + (i0 < in - 1 ? 1 : 0);
    r.wt[0] = 1.0 - l1;
    r.wt[1] = l1;
  } else {
    double src = ac ? sc * (double)o : sc * ((double)o + 0.5) - 0.5;
    double fl = floor(src), t = src - fl;
    for (int j = 0; j < 4; j++) r.idx[j] = clamp_index((int64_t)fl - 1 + j, in);
    r.wt[0] = cubic2(t + 1.0, -0.75);
    r.wt[1] = cubic1(t, -0.75);
    r.wt[2] = cubic1(1.0 - t, -0.75);
    r.wt[3] = cubic2(2.0 - t, -0.75);
  }
  return r;
}

extern "C" int pr_cuda_interpolate(pr_Runtime *rt, const pr_Tensor *x, const pr_ResampleGeom *g,
                                   pr_Tensor *out) {
  if (need_f32(rt, "interpolate", x) != 0) return PR_ERR;
  if (g->mode == PROF_INTERP_AREA) {
    pr_PoolGeom p = pr_resample_area_geom(g);
    return pr_cuda_pool(rt, PROF_OP_ADAPTIVE_AVG_POOL, x, &p, out, NULL);
  }
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  if (xc == NULL) return PR_ERR;
  pr_ResampleGeom G = *g;
  int taps = mode_taps(g->mode);
  int64_t isp = g->in[0] * g->in[1] * g->in[2], osp = g->out[0] * g->out[1] * g->out[2];
  const float *xp = pr_f32(xc);
  float *yp = pr_f32(out);
  pr_launch(g->planes * osp, [=] __device__(int64_t t) {
    int64_t pl = t / osp, o = t % osp;
    int64_t ox = o % G.out[2], oy = (o / G.out[2]) % G.out[1], oz = o / (G.out[2] * G.out[1]);
    Taps z = axis_taps(G, 0, taps, oz), y = axis_taps(G, 1, taps, oy), w = axis_taps(G, 2, taps, ox);
    const float *xs = xp + pl * isp;
    double sum = 0;
    for (int tz = 0; tz < z.n; tz++)
      for (int ty = 0; ty < y.n; ty++) {
        const float *row = xs + (z.idx[tz] * G.in[1] + y.idx[ty]) * G.in[2];
        double wzy = z.wt[tz] * y.wt[ty];
        for (int tx = 0; tx < w.n; tx++) sum += wzy * w.wt[tx] * row[w.idx[tx]];
      }
    yp[t] = (float)sum;
  });
  int rc = pr_cuda_check(rt, "interpolate");
  pr_tensor_release(xc);
  return rc;
}

/* The adjoint: each output's gradient is spread over its taps (atomics: taps of neighbouring
   outputs meet at one input; float additions in another order than the cpu's). */
extern "C" int pr_cuda_interpolate_backward(pr_Runtime *rt, const pr_Tensor *gy,
                                            const pr_ResampleGeom *g, pr_Tensor *gx) {
  if (need_f32(rt, "interpolate backward", gy) != 0) return PR_ERR;
  if (g->mode == PROF_INTERP_AREA) {
    pr_PoolGeom p = pr_resample_area_geom(g);
    return pr_cuda_pool_backward(rt, PROF_OP_ADAPTIVE_AVG_POOL, gy, NULL, &p, gx);
  }
  pr_Tensor *gc = pr_contiguous_data(rt, gy);
  if (gc == NULL) return PR_ERR;
  pr_ResampleGeom G = *g;
  int taps = mode_taps(g->mode);
  int64_t isp = g->in[0] * g->in[1] * g->in[2], osp = g->out[0] * g->out[1] * g->out[2];
  const float *gp = pr_f32(gc);
  float *xp = pr_f32(gx);
  cudaMemsetAsync(xp, 0, sizeof(float) * (size_t)(g->planes * isp), PR_STREAM);
  pr_launch(g->planes * osp, [=] __device__(int64_t t) {
    int64_t pl = t / osp, o = t % osp;
    int64_t ox = o % G.out[2], oy = (o / G.out[2]) % G.out[1], oz = o / (G.out[2] * G.out[1]);
    Taps z = axis_taps(G, 0, taps, oz), y = axis_taps(G, 1, taps, oy), w = axis_taps(G, 2, taps, ox);
    float *xs = xp + pl * isp;
    double v = gp[t];
    for (int tz = 0; tz < z.n; tz++)
      for (int ty = 0; ty < y.n; ty++) {
        float *row = xs + (z.idx[tz] * G.in[1] + y.idx[ty]) * G.in[2];
        double vzy = v * z.wt[tz] * y.wt[ty];
        for (int tx = 0; tx < w.n; tx++) atomicAdd(&row[w.idx[tx]], (float)(vzy * w.wt[tx]));
      }
  });
  int rc = pr_cuda_check(rt, "interpolate backward");
  pr_tensor_release(gc);
  return rc;
}
