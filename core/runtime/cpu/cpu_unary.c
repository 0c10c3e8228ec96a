/* cpu_unary.c — float32 cpu kernels: activations, elementwise math, softmax, prelu, selections. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

#define SQRT1_2 0.70710678118654752440f
#define INV_SQRT_2PI 0.39894228040143267794f   /* 1/sqrt(2 pi): the normal density's constant */
#define TWO_SQRT_PI 1.12837916709551257390f    /* 2/sqrt(pi): erf's derivative */
#define GELU_K 0.79788456080286535588f         /* sqrt(2/pi), as in PyTorch's tanh GELU */
#define GELU_C 0.044715f

static int need_f32(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *t) {
  if (t->dtype == PROF_F32) return 0;
  return pr_error(rt, "%s: cpu kernels compute float32, got %s", prof_op_kind_name(kind),
                  prof_dtype_name(t->dtype));
}

/* {====================== unary ops ======================} */

/*
** The compare-and-select kinds four floats at a time, through GCC/clang vector extensions: real
** activations have random signs, so a per-element branch would mispredict half the time. Each
** select keeps the scalar loops' NaN behaviour. Returns how many leading elements it wrote (0
** for the other kinds); the scalar loops finish the tail.
*/
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static inline v4f splat(float a) { return (v4f){a, a, a, a}; }
static inline v4f sel(v4i m, v4f a, v4f b) { return (v4f)(((v4i)a & m) | ((v4i)b & ~m)); }
static inline v4f load4(const float *p) { v4f v; memcpy(&v, p, sizeof v); return v; }
static inline void store4(float *p, v4f v) { memcpy(p, &v, sizeof v); }

#define VLOOP(expr)                                                                   \
  for (int64_t i = 0; i < m; i += 4) {                                                \
    v4f v = load4(x + i), gv = g != NULL ? load4(g + i) : z;                           \
    (void)gv;                                                                         \
    store4(o + i, (expr));                                                            \
  }

/* Forward (g NULL) or gradient (g: the incoming gradient) of the select kinds. */
static int64_t select_run(prof_OpKind kind, int grad, float a, float b, const float *x,
                          const float *g, float *o, int64_t n) {
  v4f z = splat(0.0f), va = splat(a), vb = splat(b), six = splat(6.0f), three = splat(3.0f);
  int64_t m = n & ~(int64_t)3;
  switch (kind * 2 + grad) {
    case PROF_OP_RELU * 2: VLOOP(sel(v <= z, z, v)); break;
    case PROF_OP_RELU * 2 + 1: VLOOP(sel(v > z, gv, z)); break;
    case PROF_OP_RELU6 * 2: VLOOP(sel(v <= z, z, sel(v >= six, six, v))); break;
    case PROF_OP_RELU6 * 2 + 1: VLOOP(sel((v <= z) | (v >= six), z, gv)); break;
    case PROF_OP_LEAKY_RELU * 2: VLOOP(sel(v > z, v, v * va)); break;
    case PROF_OP_LEAKY_RELU * 2 + 1: VLOOP(sel(v > z, gv, gv * va)); break;
    case PROF_OP_CLAMP * 2: VLOOP(sel(v < va, va, sel(v > vb, vb, v))); break;
    case PROF_OP_CLAMP * 2 + 1: VLOOP(sel((v >= va) & (v <= vb), gv, z)); break;
    case PROF_OP_HARDSWISH * 2:
      VLOOP(sel(v <= -three, z, sel(v >= three, v, v * (v + three) / six)));
      break;
    case PROF_OP_HARDSWISH * 2 + 1:
      VLOOP(sel(v < -three, z, sel(v >= three, gv, gv * (v / three + splat(0.5f)))));
      break;
    default: return 0;
  }
  return m;
}

/*
** One run of n elements (x at stride xs; o contiguous). The switch sits outside the loops, and the
** unit stride gets a loop of its own, so that each case is a tight loop the compiler vectorises.
*/
#define MAP(expr)                                                                     \
  do {                                                                                \
    if (xs == 1)                                                                      \
      for (int64_t i = 0; i < n; i++) { float v = x[i]; o[i] = (expr); }              \
    else                                                                              \
      for (int64_t i = 0; i < n; i++) { float v = x[i * xs]; o[i] = (expr); }         \
  } while (0)

static void unary_run(prof_OpKind kind, float a, float b, const float *x, int64_t xs, float *o,
                      int64_t n) {
  switch (kind) {
    /* comparisons written so that NaN falls through to v, as PyTorch propagates it */
    case PROF_OP_RELU: MAP(v <= 0.0f ? 0.0f : v); break;
    case PROF_OP_RELU6: MAP(v <= 0.0f ? 0.0f : v >= 6.0f ? 6.0f : v); break;
    case PROF_OP_LEAKY_RELU: MAP(v > 0.0f ? v : v * a); break;
    case PROF_OP_ELU: MAP(v > 0.0f ? v : a * expm1f(v)); break;
    case PROF_OP_GELU:
      if (a != 0.0f) MAP(0.5f * v * (1.0f + tanhf(GELU_K * (v + GELU_C * v * v * v))));
      else MAP(0.5f * v * (1.0f + erff(v * SQRT1_2)));
      break;
    case PROF_OP_SILU: MAP(v / (1.0f + expf(-v))); break;
    case PROF_OP_TANH: MAP(tanhf(v)); break;
    case PROF_OP_SIGMOID: MAP(1.0f / (1.0f + expf(-v))); break;
    /* above the threshold softplus is x itself (and exp would overflow) */
    case PROF_OP_SOFTPLUS: MAP(v * a > b ? v : log1pf(expf(v * a)) / a); break;
    case PROF_OP_HARDSWISH: MAP(v <= -3.0f ? 0.0f : v >= 3.0f ? v : v * (v + 3.0f) / 6.0f); break;
    case PROF_OP_MISH: MAP(v * tanhf(log1pf(expf(v)))); break;
    case PROF_OP_NEG: MAP(-v); break;
    case PROF_OP_EXP: MAP(expf(v)); break;
    case PROF_OP_LOG: MAP(logf(v)); break;
    case PROF_OP_SQRT: MAP(sqrtf(v)); break;
    case PROF_OP_RSQRT: MAP(1.0f / sqrtf(v)); break;
    case PROF_OP_ABS: MAP(fabsf(v)); break;
    case PROF_OP_SIN: MAP(sinf(v)); break;
    case PROF_OP_COS: MAP(cosf(v)); break;
    case PROF_OP_ERF: MAP(erff(v)); break;
    case PROF_OP_RECIPROCAL: MAP(1.0f / v); break;
    case PROF_OP_CLAMP: MAP(v < a ? a : v > b ? b : v); break;
    default: break;
  }
}

int pr_cpu_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,
                 pr_Tensor *out) {
  if (need_f32(rt, kind, x) != 0) return PR_ERR;
  int64_t n = pr_numel(x);
  if (n == 0) return 0;
  const float *xp = (const float *)x->storage->data;
  float *o = pr_f32(out), fa = (float)a, fb = (float)b;
  if (pr_is_contiguous(x)) {
    int64_t v = select_run(kind, 0, fa, fb, xp + x->offset, NULL, o, n);
    unary_run(kind, fa, fb, xp + x->offset + v, 1, o + v, n - v);
    return 0;
  }
  /* strided: one run per innermost row, the outer dims walked by index */
  int nd = x->ndim;
  int64_t idx[PR_MAX_DIMS] = {0}, inner = x->shape[nd - 1];
  for (int64_t done = 0; done < n; done += inner) {
    int64_t off = x->offset;
    for (int d = 0; d < nd - 1; d++) off += idx[d] * x->stride[d];
    unary_run(kind, fa, fb, xp + off, x->stride[nd - 1], o + done, inner);
    for (int d = nd - 2; d >= 0; d--) {
      if (++idx[d] < x->shape[d]) break;
      idx[d] = 0;
    }
  }
  return 0;
}

/* Derivatives that reuse a subexpression, written out as PyTorch's kernels compute them. */
static inline float gelu_tanh_grad(float v) {
  float t = tanhf(GELU_K * (v + GELU_C * v * v * v));
  return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * GELU_K * (1.0f + 3.0f * GELU_C * v * v);
}

static inline float silu_grad(float v) {
  float s = 1.0f / (1.0f + expf(-v));
  return s * (1.0f + v * (1.0f - s));
}

static inline float mish_grad(float v) {
  float t = tanhf(log1pf(expf(v))), s = 1.0f / (1.0f + expf(-v));
  return t + v * s * (1.0f - t * t);
}

/* gx[i] = g[i] · f'(x[i]); y is f(x) where the derivative reads it (else x again). */
#define DMAP(expr)                                                                    \
  do {                                                                                \
    for (int64_t i = 0; i < n; i++) {                                                 \
      float v = x[i], yv = y[i], gv = g[i];                                           \
      (void)v, (void)yv;                                                              \
      o[i] = (expr);                                                                  \
    }                                                                                 \
  } while (0)

static void unary_grad_run(prof_OpKind kind, float a, float b, const float *x, const float *y,
                           const float *g, float *o, int64_t n) {
  switch (kind) {
    /* at the kinks PyTorch's choices: relu 0 at 0, relu6 0 at 0 and 6, leaky_relu the slope */
    case PROF_OP_RELU: DMAP(v > 0.0f ? gv : 0.0f); break;
    case PROF_OP_RELU6: DMAP(v <= 0.0f || v >= 6.0f ? 0.0f : gv); break;
    case PROF_OP_LEAKY_RELU: DMAP(v > 0.0f ? gv : gv * a); break;
    case PROF_OP_ELU: DMAP(v > 0.0f ? gv : gv * a * expf(v)); break;
    case PROF_OP_GELU:
      if (a != 0.0f) DMAP(gv * gelu_tanh_grad(v));
      else DMAP(gv * (0.5f * (1.0f + erff(v * SQRT1_2)) + v * INV_SQRT_2PI * expf(-0.5f * v * v)));
      break;
    case PROF_OP_SILU: DMAP(gv * silu_grad(v)); break;
    case PROF_OP_TANH: DMAP(gv * (1.0f - yv * yv)); break;
    case PROF_OP_SIGMOID: DMAP(gv * yv * (1.0f - yv)); break;
    case PROF_OP_SOFTPLUS: DMAP(v * a > b ? gv : gv / (1.0f + expf(-v * a))); break;
    /* at 3 PyTorch's vectorised kernel (tensors of 16+ floats) gives g, its scalar tail 1.5 g */
    case PROF_OP_HARDSWISH: DMAP(v < -3.0f ? 0.0f : v >= 3.0f ? gv : gv * (v / 3.0f + 0.5f)); break;
    case PROF_OP_MISH: DMAP(gv * mish_grad(v)); break;
    case PROF_OP_NEG: DMAP(-gv); break;
    case PROF_OP_EXP: DMAP(gv * yv); break;
    case PROF_OP_LOG: DMAP(gv / v); break;
    case PROF_OP_SQRT: DMAP(gv / (2.0f * yv)); break;
    case PROF_OP_RSQRT: DMAP(-0.5f * gv * yv * yv * yv); break;
    case PROF_OP_ABS: DMAP(v > 0.0f ? gv : v < 0.0f ? -gv : 0.0f); break;
    case PROF_OP_SIN: DMAP(gv * cosf(v)); break;
    case PROF_OP_COS: DMAP(-gv * sinf(v)); break;
    case PROF_OP_ERF: DMAP(gv * TWO_SQRT_PI * expf(-v * v)); break;
    case PROF_OP_RECIPROCAL: DMAP(-gv * yv * yv); break;
    /* PyTorch passes the gradient at the bounds too */
    case PROF_OP_CLAMP: DMAP(v >= a && v <= b ? gv : 0.0f); break;
    default: break;
  }
}

/* Contiguous float32 copies (or the tensors themselves) of up to three operands. */
static int dense3(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *const *in, pr_Tensor **out) {
  int rc = 0;
  for (int i = 0; i < 3; i++) {
    out[i] = NULL;
    if (in[i] == NULL || rc != 0) continue;
    if (need_f32(rt, kind, in[i]) != 0 || (out[i] = pr_contiguous_data(rt, in[i])) == NULL)
      rc = PR_ERR;
  }
  return rc;
}

static void release3(pr_Tensor **t) {
  for (int i = 0; i < 3; i++) pr_tensor_release(t[i]);
}

int pr_cpu_unary_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                          const pr_Tensor *y, const pr_Tensor *g, double a, double b,
                          pr_Tensor *gx) {
  const pr_Tensor *in[3] = {x, y, g};
  pr_Tensor *c[3];
  int rc = dense3(rt, kind, in, c);
  if (rc == 0) {
    const float *xp = pr_f32(c[0]), *yp = c[1] ? pr_f32(c[1]) : xp, *gp = pr_f32(c[2]);
    float *o = pr_f32(gx);
    int64_t n = pr_numel(gx), v = select_run(kind, 1, (float)a, (float)b, xp, gp, o, n);
    unary_grad_run(kind, (float)a, (float)b, xp + v, yp + v, gp + v, o + v, n - v);
  }
  release3(c);
  return rc;
}

/* {====================== softmax ======================} */

/* x as [outer, len, inner] around dim d. */
static void split_dims(const pr_Tensor *x, int d, int64_t *outer, int64_t *len, int64_t *inner) {
  *outer = *inner = 1;
  *len = x->ndim > 0 ? x->shape[d] : 1;
  for (int i = 0; i < x->ndim; i++) {
    if (i < d) *outer *= x->shape[i];
    if (i > d) *inner *= x->shape[i];
  }
}

/*
** softmax over one [len, inner] slice, its inner positions side by side so that every pass reads
** memory in order: one pass for the max (so exp never overflows), one for the exponentials and
** their sums (in double), one to normalise. mx and s hold one entry per inner position. log_softmax
** subtracts the max first: x - m is exact for the logits that matter, large ones keep their digits.
*/
static inline void softmax_slice(int log_form, const float *x, float *o, int64_t len,
                                 int64_t inner, float *mx, double *s) {
  for (int64_t j = 0; j < inner; j++) mx[j] = -INFINITY, s[j] = 0.0;
  for (int64_t k = 0; k < len; k++)
    for (int64_t j = 0; j < inner; j++)
      if (x[k * inner + j] > mx[j]) mx[j] = x[k * inner + j];
  if (log_form) {
    for (int64_t k = 0; k < len; k++)
      for (int64_t j = 0; j < inner; j++) s[j] += expf(x[k * inner + j] - mx[j]);
    for (int64_t j = 0; j < inner; j++) s[j] = log(s[j]);
    for (int64_t k = 0; k < len; k++)
      for (int64_t j = 0; j < inner; j++)
        o[k * inner + j] = (x[k * inner + j] - mx[j]) - (float)s[j];
  } else {
    for (int64_t k = 0; k < len; k++)
      for (int64_t j = 0; j < inner; j++)
        s[j] += (o[k * inner + j] = expf(x[k * inner + j] - mx[j]));
    for (int64_t j = 0; j < inner; j++) s[j] = 1.0 / s[j];
    for (int64_t k = 0; k < len; k++)
      for (int64_t j = 0; j < inner; j++) o[k * inner + j] *= (float)s[j];
  }
}

/* softmax: gx = y (g - sum(g y)); log_softmax: gx = g - exp(y) sum(g); laid out as above. */
static inline void softmax_grad_slice(int log_form, const float *y, const float *g, float *o,
                                      int64_t len, int64_t inner, double *s) {
  for (int64_t j = 0; j < inner; j++) s[j] = 0.0;
  for (int64_t k = 0; k < len; k++)
    for (int64_t j = 0; j < inner; j++)
      s[j] += log_form ? g[k * inner + j] : (double)g[k * inner + j] * y[k * inner + j];
  for (int64_t k = 0; k < len; k++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t i = k * inner + j;
      o[i] = log_form ? g[i] - expf(y[i]) * (float)s[j] : y[i] * (g[i] - (float)s[j]);
    }
}

/* Per-position scratch for slices with inner > 1 (one allocation per op). */
static int scratch(pr_Runtime *rt, prof_OpKind kind, int64_t inner, float **mx, double **s) {
  *s = malloc((sizeof **s + sizeof **mx) * (size_t)inner);
  if (*s == NULL) return pr_error(rt, "%s: out of memory", prof_op_kind_name(kind));
  *mx = (float *)(*s + inner);
  return 0;
}

int pr_cpu_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int d, pr_Tensor *out) {
  if (need_f32(rt, kind, x) != 0) return PR_ERR;
  int64_t outer, len, inner;
  split_dims(x, d, &outer, &len, &inner);
  float m1, *mx = &m1;
  double s1, *s = &s1;
  if (inner > 1 && scratch(rt, kind, inner, &mx, &s) != 0) return PR_ERR;
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  if (xc != NULL) {
    const float *xp = pr_f32(xc);
    float *o = pr_f32(out);
    int log_form = kind == PROF_OP_LOG_SOFTMAX;
    for (int64_t r = 0, step = len * inner; r < outer; r++) {
      if (inner == 1) softmax_slice(log_form, xp + r * step, o + r * step, len, 1, mx, s);
      else softmax_slice(log_form, xp + r * step, o + r * step, len, inner, mx, s);
    }
  }
  if (inner > 1) free(s);
  pr_tensor_release(xc);
  return xc != NULL ? 0 : PR_ERR;
}

int pr_cpu_softmax_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *y,
                            const pr_Tensor *g, int d, pr_Tensor *gx) {
  int64_t outer, len, inner;
  split_dims(y, d, &outer, &len, &inner);
  float m1, *mx = &m1;
  double s1, *s = &s1;
  if (inner > 1 && scratch(rt, kind, inner, &mx, &s) != 0) return PR_ERR;
  const pr_Tensor *in[3] = {y, g, NULL};
  pr_Tensor *c[3];
  int rc = dense3(rt, kind, in, c);
  if (rc == 0) {
    const float *yp = pr_f32(c[0]), *gp = pr_f32(c[1]);
    float *o = pr_f32(gx);
    int log_form = kind == PROF_OP_LOG_SOFTMAX;
    for (int64_t r = 0, step = len * inner; r < outer; r++) {
      int64_t b = r * step;
      if (inner == 1) softmax_grad_slice(log_form, yp + b, gp + b, o + b, len, 1, s);
      else softmax_grad_slice(log_form, yp + b, gp + b, o + b, len, inner, s);
    }
  }
  if (inner > 1) free(s);
  release3(c);
  return rc;
}

/* {====================== prelu ======================} */

/* Elements per channel and the channel count: the weight is per channel (dim 1) or shared. */
static void prelu_layout(const pr_Tensor *x, const pr_Tensor *w, int64_t *inner, int64_t *c) {
  *c = pr_numel(w);
  *inner = 1;
  for (int i = 2; i < x->ndim; i++) *inner *= x->shape[i];
}

int pr_cpu_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, pr_Tensor *out) {
  const pr_Tensor *in[3] = {x, w, NULL};
  pr_Tensor *c[3];
  int rc = dense3(rt, PROF_OP_PRELU, in, c);
  if (rc == 0) {
    int64_t inner, nc, n = pr_numel(x);
    prelu_layout(x, w, &inner, &nc);
    const float *xp = pr_f32(c[0]), *wp = pr_f32(c[1]);
    float *o = pr_f32(out);
    for (int64_t i = 0; i < n; i += inner) {
      float s = wp[nc > 1 ? (i / inner) % nc : 0];
      for (int64_t k = i; k < i + inner; k++) o[k] = xp[k] > 0.0f ? xp[k] : s * xp[k];
    }
  }
  release3(c);
  return rc;
}

int pr_cpu_prelu_backward(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                          const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gwx) {
  const pr_Tensor *in[3] = {x, w, g};
  pr_Tensor *c[3];
  int rc = dense3(rt, PROF_OP_PRELU, in, c);
  if (rc == 0) {
    int64_t inner, nc, n = pr_numel(x);
    prelu_layout(x, w, &inner, &nc);
    const float *xp = pr_f32(c[0]), *wp = pr_f32(c[1]), *gp = pr_f32(c[2]);
    float *ox = gx ? pr_f32(gx) : NULL, *ow = gwx ? pr_f32(gwx) : NULL;
    for (int64_t i = 0; i < n; i += inner) {
      float s = wp[nc > 1 ? (i / inner) % nc : 0];
      for (int64_t k = i; k < i + inner; k++) {
        int pos = xp[k] > 0.0f;
        if (ox) ox[k] = pos ? gp[k] : s * gp[k];
        if (ow) ow[k] = pos ? 0.0f : xp[k] * gp[k];
      }
    }
  }
  release3(c);
  return rc;
}

/* {====================== broadcast walks: maximum/minimum gradients, where ==============} */

/* Strides of t aligned to nd output dims, 0 where t is broadcast or missing. */
static void aligned(const pr_Tensor *t, int nd, const int64_t *shape, int64_t *st) {
  for (int i = 0; i < nd; i++) {
    int j = t != NULL ? t->ndim - nd + i : -1;
    st[i] = (j >= 0 && t->shape[j] == shape[i]) ? t->stride[j] : 0;
  }
}

/* Row-major walk over an output shape with up to three broadcast operands' offsets. */
typedef struct Walk {
  int nd;
  const int64_t *shape;
  int64_t idx[PR_MAX_DIMS], st[3][PR_MAX_DIMS], off[3];
} Walk;

static void walk_init(Walk *w, const pr_Tensor *out, const pr_Tensor *const *ts) {
  memset(w, 0, sizeof *w);
  w->nd = out->ndim;
  w->shape = out->shape;
  for (int k = 0; k < 3; k++) {
    aligned(ts[k], w->nd, out->shape, w->st[k]);
    w->off[k] = ts[k] != NULL ? ts[k]->offset : 0;
  }
}

static inline void walk_next(Walk *w) {
  for (int d = w->nd - 1; d >= 0; d--) {
    for (int k = 0; k < 3; k++) w->off[k] += w->st[k][d];
    if (++w->idx[d] < w->shape[d]) return;
    for (int k = 0; k < 3; k++) w->off[k] -= w->st[k][d] * w->shape[d];
    w->idx[d] = 0;
  }
}

int pr_cpu_extremum_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,
                             const pr_Tensor *b, double s, const pr_Tensor *g, pr_Tensor *ga,
                             pr_Tensor *gb) {
  if (need_f32(rt, kind, a) != 0 || (b != NULL && need_f32(rt, kind, b) != 0)) return PR_ERR;
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  const pr_Tensor *ts[3] = {a, b, NULL};
  Walk w;
  walk_init(&w, gc, ts);
  const float *ap = (const float *)a->storage->data;
  const float *bp = b != NULL ? (const float *)b->storage->data : NULL;
  const float *gp = pr_f32(gc);
  float *oa = ga ? pr_f32(ga) : NULL, *ob = gb ? pr_f32(gb) : NULL, sv = (float)s;
  float sign = kind == PROF_OP_MAXIMUM ? 1.0f : -1.0f;   /* minimum: the same with signs flipped */
  for (int64_t i = 0, n = pr_numel(gc); i < n; i++, walk_next(&w)) {
    float x = ap[w.off[0]], y = bp ? bp[w.off[1]] : sv, gv = gp[i];
    /* PyTorch: ties share the gradient in halves; the loser gets none (NaN: both get it) */
    float share = x == y ? 0.5f * gv : gv;
    if (oa) oa[i] = sign * x < sign * y ? 0.0f : share;
    if (ob) ob[i] = sign * x > sign * y ? 0.0f : share;
  }
  pr_tensor_release(gc);
  return 0;
}

/* One typed loop per dtype: the scalars converted once, the elements copied as their own type. */
#define WHERE_LOOP(type, conv_a, conv_b)                                                   \
  do {                                                                                     \
    type *o = (type *)out->storage->data, va = (conv_a), vb = (conv_b);                    \
    const type *pa = a ? (const type *)a->storage->data : NULL;                            \
    const type *pb = b ? (const type *)b->storage->data : NULL;                            \
    for (int64_t i = 0; i < n; i++, walk_next(&w))                                         \
      o[i] = cp[w.off[0]] ? (pa ? pa[w.off[1]] : va) : (pb ? pb[w.off[2]] : vb);           \
  } while (0)

int pr_cpu_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b,
                 double sa, double sb, pr_Tensor *out) {
  if (cond->dtype != PROF_BOOL)
    return pr_error(rt, "where: the condition must be bool, got %s", prof_dtype_name(cond->dtype));
  if ((a != NULL && a->dtype != out->dtype) || (b != NULL && b->dtype != out->dtype))
    return pr_error(rt, "where: values of another dtype than %s", prof_dtype_name(out->dtype));
  const pr_Tensor *ts[3] = {cond, a, b};
  Walk w;
  walk_init(&w, out, ts);
  const uint8_t *cp = (const uint8_t *)cond->storage->data;
  int64_t n = pr_numel(out);
  switch (out->dtype) {
    case PROF_F32: WHERE_LOOP(float, (float)sa, (float)sb); break;
    case PROF_F64: WHERE_LOOP(double, sa, sb); break;
    case PROF_I64: WHERE_LOOP(int64_t, (int64_t)sa, (int64_t)sb); break;
    case PROF_I32: WHERE_LOOP(int32_t, (int32_t)sa, (int32_t)sb); break;
    case PROF_I8: WHERE_LOOP(int8_t, (int8_t)sa, (int8_t)sb); break;
    case PROF_BOOL: WHERE_LOOP(uint8_t, sa != 0, sb != 0); break;
    case PROF_U8: WHERE_LOOP(uint8_t, (uint8_t)sa, (uint8_t)sb); break;
    default:
      return pr_error(rt, "where: %s exists on meta only", prof_dtype_name(out->dtype));
  }
  return 0;
}
