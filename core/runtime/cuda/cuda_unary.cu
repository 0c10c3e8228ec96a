/* cuda_unary.cu — float32/float16/bfloat16 device kernels: activations and elementwise math with
   their gradients, softmax, prelu, and maximum/minimum's gradients (the formulas of cpu_unary.c). */
#include <math.h>

#include "cuda_util.cuh"

#define SQRT1_2 0.70710678118654752440f
#define INV_SQRT_2PI 0.39894228040143267794f
#define TWO_SQRT_PI 1.12837916709551257390f
#define GELU_K 0.79788456080286535588f
#define GELU_C 0.044715f

/* {====================== unary ops ======================} */

/* Comparisons written so that NaN falls through to v, as the cpu's (and PyTorch's). */
__device__ __forceinline__ float unary_f(int kind, float v, float a, float b) {
  switch (kind) {
    case PROF_OP_RELU: return v <= 0.0f ? 0.0f : v;
    case PROF_OP_RELU6: return v <= 0.0f ? 0.0f : v >= 6.0f ? 6.0f : v;
    case PROF_OP_LEAKY_RELU: return v > 0.0f ? v : v * a;
    case PROF_OP_ELU: return v > 0.0f ? v : a * expm1f(v);
    case PROF_OP_GELU:
      return a != 0.0f ? 0.5f * v * (1.0f + tanhf(GELU_K * (v + GELU_C * v * v * v)))
                       : 0.5f * v * (1.0f + erff(v * SQRT1_2));
    case PROF_OP_SILU: return v / (1.0f + expf(-v));
    case PROF_OP_TANH: return tanhf(v);
    case PROF_OP_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case PROF_OP_SOFTPLUS: return v * a > b ? v : log1pf(expf(v * a)) / a;
    case PROF_OP_HARDSWISH: return v <= -3.0f ? 0.0f : v >= 3.0f ? v : v * (v + 3.0f) / 6.0f;
    case PROF_OP_MISH: return v * tanhf(log1pf(expf(v)));
    case PROF_OP_NEG: return -v;
    case PROF_OP_EXP: return expf(v);
    case PROF_OP_LOG: return logf(v);
    case PROF_OP_SQRT: return sqrtf(v);
    case PROF_OP_RSQRT: return 1.0f / sqrtf(v);
    case PROF_OP_ABS: return fabsf(v);
    case PROF_OP_SIN: return sinf(v);
    case PROF_OP_COS: return cosf(v);
    case PROF_OP_ERF: return erff(v);
    case PROF_OP_RECIPROCAL: return 1.0f / v;
    case PROF_OP_CLAMP: return v < a ? a : v > b ? b : v;
    default: return 0.0f;
  }
}

__device__ __forceinline__ float unary_g(int kind, float v, float yv, float gv, float a, float b) {
  switch (kind) {
    case PROF_OP_RELU: return v > 0.0f ? gv : 0.0f;
    case PROF_OP_RELU6: return v <= 0.0f || v >= 6.0f ? 0.0f : gv;
    case PROF_OP_LEAKY_RELU: return v > 0.0f ? gv : gv * a;
    case PROF_OP_ELU: return v > 0.0f ? gv : gv * a * expf(v);
    case PROF_OP_GELU:
      if (a != 0.0f) {
        float t = tanhf(GELU_K * (v + GELU_C * v * v * v));
        return gv * (0.5f * (1.0f + t) +
                     0.5f * v * (1.0f - t * t) * GELU_K * (1.0f + 3.0f * GELU_C * v * v));
      }
      return gv * (0.5f * (1.0f + erff(v * SQRT1_2)) + v * INV_SQRT_2PI * expf(-0.5f * v * v));
    case PROF_OP_SILU: {
      float s = 1.0f / (1.0f + expf(-v));
      return gv * (s * (1.0f + v * (1.0f - s)));
    }
    case PROF_OP_TANH: return gv * (1.0f - yv * yv);
    case PROF_OP_SIGMOID: return gv * yv * (1.0f - yv);
    case PROF_OP_SOFTPLUS: return v * a > b ? gv : gv / (1.0f + expf(-v * a));
    case PROF_OP_HARDSWISH: return v < -3.0f ? 0.0f : v >= 3.0f ? gv : gv * (v / 3.0f + 0.5f);
    case PROF_OP_MISH: {
      float t = tanhf(log1pf(expf(v))), s = 1.0f / (1.0f + expf(-v));
      return gv * (t + v * s * (1.0f - t * t));
    }
    case PROF_OP_NEG: return -gv;
    case PROF_OP_EXP: return gv * yv;
    case PROF_OP_LOG: return gv / v;
    case PROF_OP_SQRT: return gv / (2.0f * yv);
    case PROF_OP_RSQRT: return -0.5f * gv * yv * yv * yv;
    case PROF_OP_ABS: return v > 0.0f ? gv : v < 0.0f ? -gv : 0.0f;
    case PROF_OP_SIN: return gv * cosf(v);
    case PROF_OP_COS: return -gv * sinf(v);
    case PROF_OP_ERF: return gv * TWO_SQRT_PI * expf(-v * v);
    case PROF_OP_RECIPROCAL: return -gv * yv * yv;
    case PROF_OP_CLAMP: return v >= a && v <= b ? gv : 0.0f;
    default: return 0.0f;
  }
}

static int known_unary(prof_OpKind k) {
  switch (k) {
    case PROF_OP_RELU: case PROF_OP_RELU6: case PROF_OP_LEAKY_RELU: case PROF_OP_ELU:
    case PROF_OP_GELU: case PROF_OP_SILU: case PROF_OP_TANH: case PROF_OP_SIGMOID:
    case PROF_OP_SOFTPLUS: case PROF_OP_HARDSWISH: case PROF_OP_MISH: case PROF_OP_NEG:
    case PROF_OP_EXP: case PROF_OP_LOG: case PROF_OP_SQRT: case PROF_OP_RSQRT: case PROF_OP_ABS:
    case PROF_OP_SIN: case PROF_OP_COS: case PROF_OP_ERF: case PROF_OP_RECIPROCAL:
    case PROF_OP_CLAMP: return 1;
    default: return 0;
  }
}

/* Element types T: float, __half, __nv_bfloat16 (cuda_util.cuh's f_of/of_f: math in float). */
template <class T>
static void unary_of(int k, const T *xp, View xv, float fa, float fb, T *o, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    o[i] = of_f<T>(unary_f(k, f_of(xp[view_off(xv, i)]), fa, fb));
  });
}

extern "C" int pr_cuda_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a,
                             double b, pr_Tensor *out) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, x, out) != 0) return PR_ERR;
  if (!known_unary(kind)) return pr_cuda_refuse(rt, name, "not a unary kind");
  PR_FLOAT_SWITCH(x->dtype, unary_of<T>((int)kind, base_of<T>(x), view_of(x), (float)a, (float)b,
                                        base_of<T>(out) + out->offset, pr_numel(x)));
  return pr_cuda_check(rt, name);
}

template <class T>
static void unary_grad_of(int k, const T *xp, View xv, const T *yp, View yv, const T *gp, View gv,
                          float fa, float fb, T *o, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    o[i] = of_f<T>(unary_g(k, f_of(xp[view_off(xv, i)]), f_of(yp[view_off(yv, i)]),
                           f_of(gp[view_off(gv, i)]), fa, fb));
  });
}

extern "C" int pr_cuda_unary_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                                      const pr_Tensor *y, const pr_Tensor *g, double a, double b,
                                      pr_Tensor *gx) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, x, y, g) != 0 || need_float(rt, name, x, gx) != 0) return PR_ERR;
  if (!known_unary(kind)) return pr_cuda_refuse(rt, name, "not a unary kind");
  const pr_Tensor *yy = y != NULL ? y : x;
  PR_FLOAT_SWITCH(x->dtype, unary_grad_of<T>((int)kind, base_of<T>(x), view_of(x), base_of<T>(yy),
                                             view_of(yy), base_of<T>(g), view_of(g), (float)a,
                                             (float)b, base_of<T>(gx) + gx->offset, pr_numel(gx)));
  return pr_cuda_check(rt, name);
}

/* {====================== softmax ======================} */

static void split_dims(const pr_Tensor *x, int d, int64_t *outer, int64_t *len, int64_t *inner) {
  *outer = *inner = 1;
  *len = x->ndim > 0 ? x->shape[d] : 1;
  for (int i = 0; i < x->ndim; i++) {
    if (i < d) *outer *= x->shape[i];
    if (i > d) *inner *= x->shape[i];
  }
}

/*
** One slice [len] at stride inner per (outer, inner) pair. A block takes a slice when inner is 1
** (the rows of attention and classifiers: long and contiguous), else a thread walks it. The
** cpu's order: the max, the exponentials' sum in double, then the normalisation.
*/
template <class T>
__global__ void softmax_rows(int log_form, const T *x, T *o, int64_t rows, int64_t len) {
  __shared__ double sd[32];
  __shared__ float sf[32];
  __shared__ double total;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * len;
    T *orow = o + r * len;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
      float v = f_of(xr[j]);
      mx = v > mx ? v : mx;
    }
    mx = block_max_plain(mx, sf);
    double s = 0;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) s += expf(f_of(xr[j]) - mx);
    s = block_sum(s, sd);
    if (threadIdx.x == 0) total = s;
    __syncthreads();
    double t = total;
    if (log_form) {
      float ls = (float)log(t);
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        orow[j] = of_f<T>((f_of(xr[j]) - mx) - ls);
    } else {
      float inv = (float)(1.0 / t);
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        orow[j] = of_f<T>(expf(f_of(xr[j]) - mx) * inv);
    }
    __syncthreads();
  }
}

template <class T>
__global__ void softmax_strided(int log_form, const T *x, T *o, int64_t outer, int64_t len,
                                int64_t inner) {
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < outer * inner;
       q += (int64_t)gridDim.x * blockDim.x) {
    const T *xs = x + (q / inner) * len * inner + q % inner;
    T *os = o + (q / inner) * len * inner + q % inner;
    float mx = -INFINITY;
    for (int64_t k = 0; k < len; k++) {
      float v = f_of(xs[k * inner]);
      mx = v > mx ? v : mx;
    }
    double s = 0;
    for (int64_t k = 0; k < len; k++) s += expf(f_of(xs[k * inner]) - mx);
    if (log_form) {
      float ls = (float)log(s);
      for (int64_t k = 0; k < len; k++) os[k * inner] = of_f<T>((f_of(xs[k * inner]) - mx) - ls);
    } else {
      float inv = (float)(1.0 / s);
      for (int64_t k = 0; k < len; k++) os[k * inner] = of_f<T>(expf(f_of(xs[k * inner]) - mx) * inv);
    }
  }
}

/* softmax: gx = y (g − Σ g·y); log_softmax: gx = g − exp(y) Σ g. */
template <class T>
__global__ void softmax_grad_rows(int log_form, const T *y, const T *g, T *o, int64_t rows,
                                  int64_t len) {
  __shared__ double sd[32];
  __shared__ double total;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *yr = y + r * len, *gr = g + r * len;
    T *orow = o + r * len;
    double s = 0;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
      s += log_form ? (double)f_of(gr[j]) : (double)f_of(gr[j]) * f_of(yr[j]);
    s = block_sum(s, sd);
    if (threadIdx.x == 0) total = s;
    __syncthreads();
    float t = (float)total;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
      float yv = f_of(yr[j]), gv = f_of(gr[j]);
      orow[j] = of_f<T>(log_form ? gv - expf(yv) * t : yv * (gv - t));
    }
    __syncthreads();
  }
}

template <class T>
__global__ void softmax_grad_strided(int log_form, const T *y, const T *g, T *o, int64_t outer,
                                     int64_t len, int64_t inner) {
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < outer * inner;
       q += (int64_t)gridDim.x * blockDim.x) {
    int64_t base = (q / inner) * len * inner + q % inner;
    double s = 0;
    for (int64_t k = 0; k < len; k++) {
      int64_t i = base + k * inner;
      s += log_form ? (double)f_of(g[i]) : (double)f_of(g[i]) * f_of(y[i]);
    }
    float t = (float)s;
    for (int64_t k = 0; k < len; k++) {
      int64_t i = base + k * inner;
      float yv = f_of(y[i]), gv = f_of(g[i]);
      o[i] = of_f<T>(log_form ? gv - expf(yv) * t : yv * (gv - t));
    }
  }
}

static unsigned row_blocks(int64_t rows) { return pr_grid(rows); }

extern "C" int pr_cuda_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int d,
                               pr_Tensor *out) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, x, out) != 0) return PR_ERR;
  int64_t outer, len, inner;
  split_dims(x, d, &outer, &len, &inner);
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  if (xc == NULL) return PR_ERR;
  int lf = kind == PROF_OP_LOG_SOFTMAX;
  if (outer * inner > 0 && len > 0)
    PR_FLOAT_SWITCH(x->dtype, {
      const T *xp = base_of<T>(xc) + xc->offset;
      T *o = base_of<T>(out) + out->offset;
      if (inner == 1)
        softmax_rows<T><<<row_blocks(outer), PR_THREADS, 0, PR_STREAM>>>(lf, xp, o, outer, len);
      else
        softmax_strided<T><<<pr_blocks(outer * inner), PR_THREADS, 0, PR_STREAM>>>(
            lf, xp, o, outer, len, inner);
    });
  pr_tensor_release(xc);
  return pr_cuda_check(rt, name);
}

extern "C" int pr_cuda_softmax_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *y,
                                        const pr_Tensor *g, int d, pr_Tensor *gx) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, y, g, gx) != 0) return PR_ERR;
  int64_t outer, len, inner;
  split_dims(y, d, &outer, &len, &inner);
  pr_Tensor *yc = pr_contiguous_data(rt, y), *gc = yc ? pr_contiguous_data(rt, g) : NULL;
  int rc = PR_ERR;
  if (gc != NULL) {
    int lf = kind == PROF_OP_LOG_SOFTMAX;
    if (outer * inner > 0 && len > 0)
      PR_FLOAT_SWITCH(y->dtype, {
        const T *yp = base_of<T>(yc) + yc->offset, *gp = base_of<T>(gc) + gc->offset;
        T *o = base_of<T>(gx) + gx->offset;
        if (inner == 1)
          softmax_grad_rows<T><<<row_blocks(outer), PR_THREADS, 0, PR_STREAM>>>(lf, yp, gp, o,
                                                                               outer, len);
        else
          softmax_grad_strided<T><<<pr_blocks(outer * inner), PR_THREADS, 0, PR_STREAM>>>(
              lf, yp, gp, o, outer, len, inner);
      });
    rc = pr_cuda_check(rt, name);
  }
  pr_tensor_release(yc);
  pr_tensor_release(gc);
  return rc;
}

/* {====================== prelu, maximum/minimum gradients ======================} */

static void prelu_layout(const pr_Tensor *x, const pr_Tensor *w, int64_t *inner, int64_t *c) {
  *c = pr_numel(w);
  *inner = 1;
  for (int i = 2; i < x->ndim; i++) *inner *= x->shape[i];
}

template <class T>
static void prelu_of(const T *xp, View xv, const T *wp, View wv, int64_t inner, int64_t nc, T *o,
                     int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    float v = f_of(xp[view_off(xv, i)]), s = f_of(wp[view_off(wv, nc > 1 ? (i / inner) % nc : 0)]);
    o[i] = of_f<T>(v > 0.0f ? v : s * v);
  });
}

extern "C" int pr_cuda_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                             pr_Tensor *out) {
  if (need_float(rt, "prelu", x, w, out) != 0) return PR_ERR;
  int64_t inner, nc;
  prelu_layout(x, w, &inner, &nc);
  PR_FLOAT_SWITCH(x->dtype, prelu_of<T>(base_of<T>(x), view_of(x), base_of<T>(w), view_of(w), inner,
                                        nc, base_of<T>(out) + out->offset, pr_numel(x)));
  return pr_cuda_check(rt, "prelu");
}

template <class T>
static void prelu_grad_of(const T *xp, View xv, const T *wp, View wv, const T *gp, View gv,
                          int64_t inner, int64_t nc, T *ox, T *ow, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    float v = f_of(xp[view_off(xv, i)]), gg = f_of(gp[view_off(gv, i)]);
    float s = f_of(wp[view_off(wv, nc > 1 ? (i / inner) % nc : 0)]);
    int pos = v > 0.0f;
    if (ox) ox[i] = of_f<T>(pos ? gg : s * gg);
    if (ow) ow[i] = of_f<T>(pos ? 0.0f : v * gg);
  });
}

extern "C" int pr_cuda_prelu_backward(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                                      const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gwx) {
  if (need_float(rt, "prelu", x, w, g) != 0 || need_float(rt, "prelu", x, gx, gwx) != 0)
    return PR_ERR;
  int64_t inner, nc;
  prelu_layout(x, w, &inner, &nc);
  PR_FLOAT_SWITCH(x->dtype, prelu_grad_of<T>(base_of<T>(x), view_of(x), base_of<T>(w), view_of(w),
                                             base_of<T>(g), view_of(g), inner, nc,
                                             gx ? base_of<T>(gx) + gx->offset : NULL,
                                             gwx ? base_of<T>(gwx) + gwx->offset : NULL,
                                             pr_numel(x)));
  return pr_cuda_check(rt, "prelu");
}

template <class T>
static void extremum_grad_of(float sign, const T *ap, View av, const T *bp, View bv, float sv,
                             const T *gp, View gv, T *oa, T *ob, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    float x = f_of(ap[view_off(av, i)]), y = bp ? f_of(bp[view_off(bv, i)]) : sv;
    float gg = f_of(gp[view_off(gv, i)]);
    float share = x == y ? 0.5f * gg : gg;
    if (oa) oa[i] = of_f<T>(sign * x < sign * y ? 0.0f : share);
    if (ob) ob[i] = of_f<T>(sign * x > sign * y ? 0.0f : share);
  });
}

extern "C" int pr_cuda_extremum_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,
                                         const pr_Tensor *b, double s, const pr_Tensor *g,
                                         pr_Tensor *ga, pr_Tensor *gb) {
  const char *name = prof_op_kind_name(kind);
  if (need_float(rt, name, g, a, b) != 0 || need_float(rt, name, g, ga, gb) != 0) return PR_ERR;
  int nd = g->ndim;
  View av = view_bcast(a, nd, g->shape), bv = view_bcast(b, nd, g->shape);
  float sign = kind == PROF_OP_MAXIMUM ? 1.0f : -1.0f;
  PR_FLOAT_SWITCH(g->dtype, extremum_grad_of<T>(sign, base_of<T>(a), av, b ? base_of<T>(b) : NULL,
                                                bv, (float)s, base_of<T>(g), view_of(g),
                                                ga ? base_of<T>(ga) + ga->offset : NULL,
                                                gb ? base_of<T>(gb) + gb->offset : NULL,
                                                pr_numel(g)));
  return pr_cuda_check(rt, name);
}
