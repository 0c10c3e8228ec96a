/* cpu_resample.c — float32 interpolate kernels on the cpu: nearest, linear family, bicubic, area. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/*
** Every mode but area is separable: output position o of an axis reads `taps` inputs idx[o·taps
** + t] with weights wt[o·taps + t], and a point of the volume is the product of its axes' weights.
** One table per axis (built once per call) serves the forward and, as its adjoint, the backward.
*/
typedef struct Axis {
  int taps;
  int64_t *idx;
  double *wt;
} Axis;

static double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
static double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

/* PyTorch's area_pixel_compute_scale: (in-1)/(out-1) with align_corners, else 1/scale_factor
   when one was given, else in/out. */
static double pixel_scale(int64_t in, int64_t out, int align, double given) {
  if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
  return given > 0 ? 1.0 / given : (double)in / (double)out;
}

static int64_t clamp_index(int64_t i, int64_t in) { return i < 0 ? 0 : (i >= in ? in - 1 : i); }

/* The taps of one axis, as PyTorch 1.13's cpu kernels place them. */
static void fill_axis(const pr_ResampleGeom *g, int a, Axis *ax) {
  int64_t in = g->in[a], out = g->out[a];
  int ac = g->align_corners > 0;
  double sc = pixel_scale(in, out, ac, g->scale[a]);
  for (int64_t o = 0; o < out; o++) {
    int64_t *ix = ax->idx + o * ax->taps;
    double *w = ax->wt + o * ax->taps;
    if (ax->taps == 1) {
      /* nearest: floor(o · scale) in float arithmetic, scale = 1/scale_factor or in/out */
      float fs = g->scale[a] > 0 ? (float)(1.0 / g->scale[a]) : (float)in / (float)out;
      int64_t i = (int64_t)floorf((float)o * fs);
      ix[0] = i < in - 1 ? i : in - 1;
      w[0] = 1.0;
    } else if (ax->taps == 2) {
      /* linear: sizes that agree copy; otherwise half-pixel centres clamped at 0 */
      if (in == out) {
        ix[0] = ix[1] = o;
        w[0] = 1.0;
        w[1] = 0.0;
        continue;
      }
      double src = ac ? sc * (double)o : sc * ((double)o + 0.5) - 0.5;
      if (src < 0) src = 0;
      int64_t i0 = (int64_t)src;
      double l1 = src - (double)i0;
      l1 = l1 < 0 ? 0 : (l1 > 1 ? 1 : l1);
      ix[0] = i0;
      ix[1] = i0 + (i0 < in - 1 ? 1 : 0);
      w[0] = 1.0 - l1;
      w[1] = l1;
    } else {
      /* bicubic: Keys' kernel with A = -0.75 over taps i-1 .. i+2, indices clamped to the edge */
      double src = ac ? sc * (double)o : sc * ((double)o + 0.5) - 0.5;
      double fl = floor(src), t = src - fl;
      for (int j = 0; j < 4; j++) ix[j] = clamp_index((int64_t)fl - 1 + j, in);
      w[0] = cubic2(t + 1.0, -0.75);
      w[1] = cubic1(t, -0.75);
      w[2] = cubic1(1.0 - t, -0.75);
      w[3] = cubic2(2.0 - t, -0.75);
    }
  }
}

/* Tables of the three (padded) axes in one allocation; NULL with rt->err set when out of memory. */
static void *build_axes(pr_Runtime *rt, const pr_ResampleGeom *g, Axis *ax) {
  int taps = g->mode == PROF_INTERP_NEAREST ? 1 : g->mode == PROF_INTERP_BICUBIC ? 4 : 2;
  size_t n = 0;
  for (int a = 0; a < 3; a++) {
    /* the leading axes that pad 1-D and 2-D inputs to three are one-tap copies */
    ax[a].taps = g->in[a] == 1 && g->out[a] == 1 ? 1 : taps;
    n += (size_t)(g->out[a] * ax[a].taps);
  }
  char *mem = malloc((sizeof(int64_t) + sizeof(double)) * (n > 0 ? n : 1));
  if (mem == NULL) {
    pr_error(rt, "interpolate: out of memory");
    return NULL;
  }
  int64_t *ip = (int64_t *)mem;
  double *wp = (double *)(mem + sizeof(int64_t) * n);
  for (int a = 0; a < 3; a++) {
    ax[a].idx = ip;
    ax[a].wt = wp;
    ip += g->out[a] * ax[a].taps;
    wp += g->out[a] * ax[a].taps;
    if (ax[a].taps == 1 && g->in[a] == 1 && g->out[a] == 1) {
      ax[a].idx[0] = 0;
      ax[a].wt[0] = 1.0;
    } else {
      fill_axis(g, a, &ax[a]);
    }
  }
  return mem;
}

int pr_cpu_interpolate(pr_Runtime *rt, const pr_Tensor *x, const pr_ResampleGeom *g,
                       pr_Tensor *out) {
  if (x->dtype != PROF_F32)
    return pr_error(rt, "interpolate: cpu kernels compute float32, got %s",
                    prof_dtype_name(x->dtype));
  if (g->mode == PROF_INTERP_AREA) {
    pr_PoolGeom p = pr_resample_area_geom(g);
    return pr_cpu_pool(rt, PROF_OP_ADAPTIVE_AVG_POOL, x, &p, out, NULL);
  }
  Axis ax[3];
  void *mem = build_axes(rt, g, ax);
  pr_Tensor *xc = mem ? pr_contiguous_data(rt, x) : NULL;
  if (xc == NULL) {
    free(mem);
    return PR_ERR;
  }
  int64_t isp = g->in[0] * g->in[1] * g->in[2];
  const float *xp = pr_f32(xc);
  float *yp = pr_f32(out);
  for (int64_t pl = 0; pl < g->planes; pl++) {
    const float *xs = xp + pl * isp;
    for (int64_t oz = 0; oz < g->out[0]; oz++)
      for (int64_t oy = 0; oy < g->out[1]; oy++)
        for (int64_t ox = 0; ox < g->out[2]; ox++) {
          double sum = 0;
          for (int tz = 0; tz < ax[0].taps; tz++) {
            int64_t kz = oz * ax[0].taps + tz;
            for (int ty = 0; ty < ax[1].taps; ty++) {
              int64_t ky = oy * ax[1].taps + ty;
              const float *row = xs + (ax[0].idx[kz] * g->in[1] + ax[1].idx[ky]) * g->in[2];
              double wzy = ax[0].wt[kz] * ax[1].wt[ky];
              for (int tx = 0; tx < ax[2].taps; tx++) {
                int64_t kx = ox * ax[2].taps + tx;
                sum += wzy * ax[2].wt[kx] * row[ax[2].idx[kx]];
              }
            }
          }
          *yp++ = (float)sum;
        }
  }
  pr_tensor_release(xc);
  free(mem);
  return 0;
}

int pr_cpu_interpolate_backward(pr_Runtime *rt, const pr_Tensor *gy, const pr_ResampleGeom *g,
                                pr_Tensor *gx) {
  if (g->mode == PROF_INTERP_AREA) {
    pr_PoolGeom p = pr_resample_area_geom(g);
    return pr_cpu_pool_backward(rt, PROF_OP_ADAPTIVE_AVG_POOL, gy, NULL, &p, gx);
  }
  Axis ax[3];
  void *mem = build_axes(rt, g, ax);
  pr_Tensor *gc = mem ? pr_contiguous_data(rt, gy) : NULL;
  if (gc == NULL) {
    free(mem);
    return PR_ERR;
  }
  int64_t isp = g->in[0] * g->in[1] * g->in[2];
  const float *gp = pr_f32(gc);
  float *xp = pr_f32(gx);
  memset(xp, 0, sizeof *xp * (size_t)(g->planes * isp));
  for (int64_t pl = 0; pl < g->planes; pl++) {
    float *xs = xp + pl * isp;
    for (int64_t oz = 0; oz < g->out[0]; oz++)
      for (int64_t oy = 0; oy < g->out[1]; oy++)
        for (int64_t ox = 0; ox < g->out[2]; ox++) {
          double v = *gp++;
          for (int tz = 0; tz < ax[0].taps; tz++) {
            int64_t kz = oz * ax[0].taps + tz;
            for (int ty = 0; ty < ax[1].taps; ty++) {
              int64_t ky = oy * ax[1].taps + ty;
              float *row = xs + (ax[0].idx[kz] * g->in[1] + ax[1].idx[ky]) * g->in[2];
              double vzy = v * ax[0].wt[kz] * ax[1].wt[ky];
              for (int tx = 0; tx < ax[2].taps; tx++) {
                int64_t kx = ox * ax[2].taps + tx;
                row[ax[2].idx[kx]] += (float)(vzy * ax[2].wt[kx]);
              }
            }
          }
        }
  }
  pr_tensor_release(gc);
  free(mem);
  return 0;
}
