/* cuda_loss.cu — cross_entropy, nll_loss and mse_loss on the device, values and gradients
   (cpu_loss.c's formulas, per row in double), float32, float16 and bfloat16. */
#include <math.h>

#include "cuda_util.cuh"

/* Element (n, c, s) of a contiguous [N, C, S] block; row r = n·S + s. */
#define AT(p, r, c) ((((r) / (p).S) * (p).C + (c)) * (p).S + (r) % (p).S)

/* The first target outside [0, classes) that is not ignore reaches the host (one wait). */
extern "C" int pr_cuda_class_targets_check(pr_Runtime *rt, const char *name, const pr_Tensor *t,
                                           int64_t classes, int64_t ignore) {
  int64_t n = pr_numel(t);
  if (n == 0) return 0;
  unsigned long long *first = (unsigned long long *)pr_cuda_alloc(sizeof *first);
  if (first == NULL) return pr_error(rt, "%s: out of device memory", name);
  unsigned long long none = ~0ull, at = none;
  int rc = pr_cuda_from_host(rt, first, &none, sizeof none);
  const int64_t *tp = base_of<int64_t>(t);
  View tv = view_of(t);
  if (rc == 0) {
    pr_launch(n, [=] __device__(int64_t i) {
      int64_t v = tp[view_off(tv, i)];
      if (v != ignore && (v < 0 || v >= classes)) atomicMin(first, (unsigned long long)i);
    });
    rc = pr_cuda_check(rt, name);
  }
  if (rc == 0) rc = pr_cuda_to_host(rt, &at, first, sizeof at);
  if (rc == 0 && at != none) {
    int64_t off = t->offset, rest = (int64_t)at, v = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
      off += (rest % t->shape[d]) * t->stride[d];
      rest /= t->shape[d];
    }
    rc = pr_cuda_to_host(rt, &v, tp + off, sizeof v);
    if (rc == 0)
      rc = pr_error(rt, "%s: target %lld is out of bounds for %lld classes", name, (long long)v,
                    (long long)classes);
  }
  pr_cuda_free(first, sizeof *first);
  return rc;
}

/* One block per row: log-softmax into logp (float32 scratch), the row's nll and smoothing terms
   and its weight into part[3 r ...]. T: float, __half or __nv_bfloat16 for x, tp and w. */
template <class T>
__global__ void class_rows(pr_ClassLoss p, const T *x, const int64_t *ti, const T *tp,
                           const T *w, float *logp, double *part) {
  __shared__ double sd[32];
  __shared__ float sf[32];
  __shared__ double lse_s;
  int64_t rows = p.N * p.S;
  double eps = p.smoothing;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    double lse = 0;
    if (!p.nll) {
      float mx = -INFINITY;
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) {
        float v = f_of(x[AT(p, r, c)]);
        mx = v > mx ? v : mx;
      }
      mx = block_max_plain(mx, sf);
      if (mx == -INFINITY) mx = 0;   /* a row of -inf: NaN log-probabilities, as in torch */
      double s = 0;
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x)
        s += exp(f_of(x[AT(p, r, c)]) - (double)mx);
      s = block_sum(s, sd);
      if (threadIdx.x == 0) lse_s = mx + log(s);
      __syncthreads();
      lse = lse_s;
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x)
        logp[AT(p, r, c)] = (float)(f_of(x[AT(p, r, c)]) - lse);
    }
#define LOGP(c) (p.nll ? (double)f_of(x[AT(p, r, (c))]) : (double)f_of(x[AT(p, r, (c))]) - lse)
#define WC(c) (w ? f_of(w[c]) : 1.0)
    double nll = 0, smooth = 0, wt = 0;
    if (p.soft) {
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) {
        double t = (1 - eps) * f_of(tp[AT(p, r, c)]) + eps / (double)p.C;
        nll -= WC(c) * t * LOGP(c);
      }
      nll = block_sum(nll, sd);
    } else if (ti[r] != p.ignore_index) {
      if (eps > 0) {
        for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) smooth -= WC(c) * LOGP(c);
        smooth = block_sum(smooth, sd);
      }
      wt = WC(ti[r]);
      nll = -wt * LOGP(ti[r]);
    }
#undef WC
#undef LOGP
    if (threadIdx.x == 0) {
      if (!p.soft && eps > 0) nll = (1 - eps) * nll;
      smooth *= eps / (double)p.C;
      part[3 * r] = nll;
      part[3 * r + 1] = smooth;
      part[3 * r + 2] = wt;
    }
    __syncthreads();
  }
}

/* The totals of the rows' parts in one block, then out (reduction sum, mean, or per row). */
template <class T>
__global__ void class_total(pr_ClassLoss p, const double *part, T *out, double *tot) {
  __shared__ double sd[32];
  int64_t rows = p.N * p.S;
  double a = 0, b = 0, c = 0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    a += part[3 * r];
    b += part[3 * r + 1];
    c += part[3 * r + 2];
    if (p.reduction == PROF_REDUCE_NONE) out[r] = of_f<T>((float)(part[3 * r] + part[3 * r + 1]));
  }
  a = block_sum(a, sd);
  b = block_sum(b, sd);
  c = block_sum(c, sd);
  if (threadIdx.x == 0) {
    double eps = p.smoothing, wsum = p.soft ? (double)rows : c;
    tot[0] = wsum;
    if (p.reduction == PROF_REDUCE_SUM) out[0] = of_f<T>((float)(a + b));
    if (p.reduction == PROF_REDUCE_MEAN)
      out[0] = of_f<T>((float)((a + (eps > 0 && !p.soft ? b : 0)) / wsum));
  }
}

template <class T>
static void class_loss_of(const pr_ClassLoss *p, const T *x, const int64_t *ti, const T *tp,
                          const T *w, float *logp, T *out, double *part) {
  int64_t rows = p->N * p->S;
  if (rows > 0)
    class_rows<T><<<pr_grid(rows), PR_THREADS, 0, PR_STREAM>>>(
        *p, x, ti, tp, w, logp, part);
  class_total<T><<<1, 1024, 0, PR_STREAM>>>(*p, part, out, part + 3 * rows);
}

/* The data of a (contiguous) tensor, element 0 of its view; NULL for NULL. */
template <class T> static T *at0(const pr_Tensor *t) {
  return t != NULL ? base_of<T>(t) + t->offset : NULL;
}

/* Every float operand in x's dtype (float32, float16 or bfloat16), logp float32. */
static int class_dtypes_ok(const pr_ClassLoss *p, const pr_Tensor *x, const pr_Tensor *t,
                           const pr_Tensor *w, const pr_Tensor *logp, const pr_Tensor *o) {
  int d = x->dtype;
  return (d == PROF_F32 || d == PROF_F16 || d == PROF_BF16) && o->dtype == d &&
         (w == NULL || w->dtype == d) && (p->soft ? t->dtype == d : t->dtype == PROF_I64) &&
         (logp == NULL || logp->dtype == PROF_F32);
}

/* The divisor must reach the host, so this waits for the stream once. */
extern "C" int pr_cuda_class_loss(pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *x,
                                  const pr_Tensor *t, const pr_Tensor *w, pr_Tensor *logp,
                                  pr_Tensor *out, double *divisor) {
  int64_t rows = p->N * p->S;
  size_t bytes = sizeof(double) * (size_t)(3 * rows + 1);
  *divisor = 0;
  if (!class_dtypes_ok(p, x, t, w, logp, out))
    return pr_error(rt, "class loss: cuda kernels take float32, float16 or bfloat16 inputs, "
                    "weights, probabilities and results of one dtype");
  double *part = (double *)pr_cuda_alloc(bytes);
  if (part == NULL) return pr_error(rt, "class loss: out of device memory");
  const int64_t *ti = p->soft ? NULL : at0<int64_t>(t);
  PR_FLOAT_SWITCH(x->dtype, class_loss_of<T>(p, at0<T>(x), ti, p->soft ? at0<T>(t) : NULL,
                                             at0<T>(w), at0<float>(logp), at0<T>(out), part));
  int rc = pr_cuda_check(rt, "cross_entropy");
  if (rc == 0) rc = pr_cuda_to_host(rt, divisor, part + 3 * rows, sizeof *divisor);
  pr_cuda_free(part, bytes);
  return rc;
}

template <class T>
__global__ void class_grad_rows(pr_ClassLoss p, const float *logp, const int64_t *ti,
                                const T *tp, const T *w, const T *g, double divisor, T *gx,
                                T *gt) {
  __shared__ double sd[32];
  __shared__ double tw_s, wall_s;
  int64_t rows = p.N * p.S;
  double eps = p.smoothing;
  double wall = 0;
#define WC(c) (w ? f_of(w[c]) : 1.0)
  for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) wall += WC(c);
  wall = block_sum(wall, sd);
  if (threadIdx.x == 0) wall_s = wall;
  __syncthreads();
  wall = wall_s;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    double s = f_of(p.reduction == PROF_REDUCE_NONE ? g[r] : g[0]);
    if (p.reduction == PROF_REDUCE_MEAN) s /= divisor;
    if (p.soft) {
      double tw = 0;
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x)
        tw += WC(c) * ((1 - eps) * f_of(tp[AT(p, r, c)]) + eps / (double)p.C);
      tw = block_sum(tw, sd);
      if (threadIdx.x == 0) tw_s = tw;
      __syncthreads();
      tw = tw_s;
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) {
        int64_t k = AT(p, r, c);
        double t = (1 - eps) * f_of(tp[k]) + eps / (double)p.C, wc = WC(c);
        gx[k] = of_f<T>((float)(s * (exp((double)logp[k]) * tw - wc * t)));
        if (gt != NULL) gt[k] = of_f<T>((float)(-s * (1 - eps) * wc * logp[k]));
      }
      __syncthreads();
      continue;
    }
    int64_t t = ti[r];
    if (t == p.ignore_index) {
      for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) gx[AT(p, r, c)] = of_f<T>(0.0f);
      continue;
    }
    double wt = WC(t), a = (1 - eps) * s * wt, b = eps / (double)p.C * s;
    for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) {
      int64_t k = AT(p, r, c);
      if (p.nll) {
        gx[k] = of_f<T>(c == t ? (float)-a : 0.0f);
        continue;
      }
      double pc = exp((double)logp[k]);
      gx[k] = of_f<T>((float)(a * (pc - (c == t)) + (eps > 0 ? b * (pc * wall - WC(c)) : 0)));
    }
  }
#undef WC
}

template <class T>
static void class_grad_of(const pr_ClassLoss *p, const float *logp, const int64_t *ti,
                          const T *tp, const T *w, const T *g, double divisor, T *gx, T *gt) {
  int64_t rows = p->N * p->S;
  if (rows > 0)
    class_grad_rows<T><<<pr_grid(rows), PR_THREADS, 0, PR_STREAM>>>(
        *p, logp, ti, tp, w, g, divisor, gx, gt);
}

extern "C" int pr_cuda_class_loss_backward(pr_Runtime *rt, const pr_ClassLoss *p,
                                           const pr_Tensor *logp, const pr_Tensor *t,
                                           const pr_Tensor *w, const pr_Tensor *g, double divisor,
                                           pr_Tensor *gx, pr_Tensor *gt) {
  if (!class_dtypes_ok(p, gx, t, w, logp, g) || (gt != NULL && gt->dtype != gx->dtype))
    return pr_error(rt, "cross_entropy backward: cuda kernels take float32, float16 or bfloat16 "
                    "gradients, weights and probabilities of one dtype");
  const int64_t *ti = p->soft ? NULL : at0<int64_t>(t);
  PR_FLOAT_SWITCH(gx->dtype, class_grad_of<T>(p, at0<float>(logp), ti,
                                              p->soft ? at0<T>(t) : NULL, at0<T>(w), at0<T>(g),
                                              divisor, at0<T>(gx), at0<T>(gt)));
  return pr_cuda_check(rt, "cross_entropy backward");
}

/* {====================== mse_loss ======================} */

/* T: float, __half or __nv_bfloat16 for x, t, d and out; the squares sum in double. */
template <class T>
static int mse_of(pr_Runtime *rt, const T *xp, View xv, const T *tp, View tv, T *dp, T *o,
                  int64_t n, int reduction) {
  double *sum = NULL;
  if (reduction != PROF_REDUCE_NONE && (sum = (double *)pr_cuda_alloc(sizeof *sum)) == NULL)
    return pr_error(rt, "mse_loss: out of device memory");
  int none = reduction == PROF_REDUCE_NONE;
  pr_launch(n, [=] __device__(int64_t i) {
    double v = (double)f_of(xp[view_off(xv, i)]) - f_of(tp[view_off(tv, i)]);
    dp[i] = of_f<T>((float)v);
    if (none) o[i] = of_f<T>((float)(v * v));
    else atomicAdd(sum, v * v);
  });
  if (!none) {
    int mean = reduction == PROF_REDUCE_MEAN;
    pr_launch(1, [=] __device__(int64_t) {
      o[0] = of_f<T>((float)(mean ? *sum / (double)n : *sum));
    });
  }
  int rc = pr_cuda_check(rt, "mse_loss");
  if (sum != NULL) pr_cuda_free(sum, sizeof *sum);
  return rc;
}

extern "C" int pr_cuda_mse(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *t, int reduction,
                           pr_Tensor *d, pr_Tensor *out) {
  if (need_float(rt, "mse_loss", x, t, d) != 0 || need_float(rt, "mse_loss", x, out) != 0)
    return PR_ERR;
  int nd = d->ndim;
  /* broadcast dims of size 1 in x or t read with stride 0, as cpu_loss.c's views */
  View xv = view_bcast(x, nd, d->shape), tv = view_bcast(t, nd, d->shape);
  int rc = PR_ERR;
  PR_FLOAT_SWITCH(x->dtype, rc = mse_of<T>(rt, base_of<T>(x), xv, base_of<T>(t), tv,
                                           base_of<T>(d) + d->offset,
                                           base_of<T>(out) + out->offset, pr_numel(d), reduction));
  return rc;
}

template <class T>
static void mse_grad_of(const T *dp, const T *gp, View gv, T *o, T *np, int64_t n, double scale,
                        int none) {
  pr_launch(n, [=] __device__(int64_t i) {
    float v = (float)(scale * f_of(dp[i]) * f_of(gp[view_off(gv, none ? i : 0)]));
    o[i] = of_f<T>(v);
    if (np) np[i] = of_f<T>(-v);
  });
}

extern "C" int pr_cuda_mse_backward(pr_Runtime *rt, const pr_Tensor *d, const pr_Tensor *g,
                                    int reduction, pr_Tensor *gd, pr_Tensor *neg) {
  if (need_float(rt, "mse_loss backward", d, g, gd) != 0 ||
      need_float(rt, "mse_loss backward", d, neg) != 0)
    return PR_ERR;
  int64_t n = pr_numel(d);
  double scale = reduction == PROF_REDUCE_MEAN ? 2.0 / (double)n : 2.0;
  int none = reduction == PROF_REDUCE_NONE;
  PR_FLOAT_SWITCH(d->dtype, mse_grad_of<T>(base_of<T>(d) + d->offset, base_of<T>(g), view_of(g),
                                           base_of<T>(gd) + gd->offset,
                                           neg ? base_of<T>(neg) + neg->offset : NULL, n, scale,
                                           none));
  return pr_cuda_check(rt, "mse_loss backward");
}
