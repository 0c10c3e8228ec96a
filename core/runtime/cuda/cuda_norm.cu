/* cuda_norm.cu — the norms (statistics cells, running buffers, gradients) and embedding on the
   device, with cpu_norm.c's definitions: two passes in double per cell. Elements T are float,
   __half or __nv_bfloat16 (read as float, rounded once on the store); mean and rstd stay float32. */
#include <math.h>

#include <type_traits>

#include "cuda_util.cuh"

/* A statistics cell (cpu_norm.c's Cell): samples [n0, n1) × channels [c0, c1), all S positions. */
__host__ __device__ __forceinline__ void cell_bounds(const pr_NormPlan &p, int64_t k, int64_t *n0,
                                                     int64_t *n1, int64_t *c0, int64_t *c1) {
  if (p.groups == 0) {
    *n0 = 0, *n1 = p.N, *c0 = k, *c1 = k + 1;
  } else {
    int64_t per = p.C / p.groups;
    *n0 = k / p.groups, *n1 = *n0 + 1;
    *c0 = (k % p.groups) * per, *c1 = *c0 + per;
  }
}

/* The j-th element of a cell: its offset in x and its channel. */
__device__ __forceinline__ int64_t cell_elem(const pr_NormPlan &p, int64_t n0, int64_t c0,
                                             int64_t cw, int64_t j, int64_t *ch) {
  int64_t s = j % p.S, rest = j / p.S;
  *ch = c0 + rest % cw;
  int64_t n = n0 + rest / cw;
  return (n * p.C + *ch) * p.S + s;
}

/* mean, rstd (and the biased variance when var != NULL) of every cell; one block per cell. */
template <class T>
__global__ void norm_stats(pr_NormPlan p, const T *x, float *mean, float *rstd, double *var) {
  __shared__ double sd[32];
  __shared__ double bm;
  int64_t cells = p.groups == 0 ? p.C : p.N * p.groups;
  for (int64_t k = blockIdx.x; k < cells; k += gridDim.x) {
    int64_t n0, n1, c0, c1, ch;
    cell_bounds(p, k, &n0, &n1, &c0, &c1);
    int64_t cw = c1 - c0, n = (n1 - n0) * cw * p.S;
    double m = 0;
    if (!p.rms) {
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m += f_of(x[cell_elem(p, n0, c0, cw, j, &ch)]);
      m = block_sum(m, sd);
      if (threadIdx.x == 0) bm = n > 0 ? m / (double)n : 0;
      __syncthreads();
      m = bm;
    }
    double v = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      double d = f_of(x[cell_elem(p, n0, c0, cw, j, &ch)]) - m;
      v += d * d;
    }
    v = block_sum(v, sd);
    if (threadIdx.x == 0) {
      v = n > 0 ? v / (double)n : NAN;
      mean[k] = (float)m;
      rstd[k] = (float)(1.0 / sqrt(v + p.eps));
      if (var != NULL) var[k] = v;
    }
    __syncthreads();
  }
}

static int64_t cells_of(const pr_NormPlan *p) { return p->groups == 0 ? p->C : p->N * p->groups; }

static unsigned cell_blocks(int64_t cells) { return pr_grid(cells); }

/* t's element 0 as a T pointer (NULL for no tensor). */
template <class T> static T *at1(const pr_Tensor *t) {
  return t ? base_of<T>(t) + t->offset : NULL;
}

template <class T>
static int norm_of(pr_Runtime *rt, const pr_NormPlan *p, int input_stats, pr_Tensor *run_mean,
                   pr_Tensor *run_var, double momentum, const pr_Tensor *xc, const pr_Tensor *w,
                   const pr_Tensor *b, pr_Tensor *mean, pr_Tensor *rstd, pr_Tensor *out) {
  int64_t cells = cells_of(p), C = p->C;
  float *mp = pr_f32(mean), *rp = pr_f32(rstd);
  pr_NormPlan pl = *p;
  int64_t rms_s = run_mean ? run_mean->stride[0] : 0, rvs_s = run_var ? run_var->stride[0] : 0;
  T *rm = at1<T>(run_mean), *rv = at1<T>(run_var);
  if (input_stats) {
    int run = run_mean != NULL || run_var != NULL;
    size_t vbytes = sizeof(double) * (size_t)(cells > 0 ? cells : 1);
    double *var = run ? (double *)pr_cuda_alloc(vbytes) : NULL;
    if (run && var == NULL) return pr_error(rt, "norm: out of device memory");
    if (cells > 0)
      norm_stats<T><<<cell_blocks(cells), PR_THREADS, 0, PR_STREAM>>>(pl, at1<T>(xc), mp, rp, var);
    if (run) {
      /* torch's running update: momentum towards the batch's mean and unbiased variance;
         instance norm averages its per-sample statistics over the batch first */
      int64_t per = p->groups == 0 ? p->N * p->S : p->S, reps = p->groups == 0 ? 1 : p->N;
      double unbias = per > 1 ? (double)per / (double)(per - 1) : NAN, m = momentum;
      pr_launch(C, [=] __device__(int64_t c) {
        double mu = 0, v = 0;
        for (int64_t r = 0; r < reps; r++) {
          mu += mp[r * C + c];
          v += var[r * C + c] * unbias;
        }
        if (rm) rm[c * rms_s] = of_f<T>((float)((1 - m) * f_of(rm[c * rms_s]) + m * mu / (double)reps));
        if (rv) rv[c * rvs_s] = of_f<T>((float)((1 - m) * f_of(rv[c * rvs_s]) + m * v / (double)reps));
      });
      pr_cuda_free(var, vbytes);
    }
  } else {
    double eps = p->eps;
    pr_launch(cells, [=] __device__(int64_t k) {
      mp[k] = f_of(rm[(k % C) * rms_s]);
      rp[k] = (float)(1.0 / sqrt((double)f_of(rv[(k % C) * rvs_s]) + eps));
    });
  }
  pr_Tensor *wc = w ? pr_contiguous_data(rt, w) : NULL, *bc = b ? pr_contiguous_data(rt, b) : NULL;
  int rc = (w && !wc) || (b && !bc) ? PR_ERR : 0;
  if (rc == 0) {
    const T *x = at1<T>(xc), *wp = at1<T>(wc), *bp = at1<T>(bc);
    T *y = at1<T>(out);
    int64_t S = p->S, groups = p->groups, per = groups ? C / groups : 1;
    /* element i = (n·C + ch)·S + s belongs to cell ch (batch norm) or n·groups + ch / per */
    pr_launch(p->N * C * S, [=] __device__(int64_t i) {
      int64_t ch = (i / S) % C, n = i / (S * C);
      int64_t k = groups == 0 ? ch : n * groups + ch / per;
      double v = (f_of(x[i]) - (double)mp[k]) * (double)rp[k];
      if (wp) v *= f_of(wp[ch]);
      if (bp) v += f_of(bp[ch]);
      y[i] = of_f<T>((float)v);
    });
    rc = pr_cuda_check(rt, "norm");
  }
  pr_tensor_release(wc);
  pr_tensor_release(bc);
  return rc;
}

extern "C" int pr_cuda_norm(pr_Runtime *rt, const pr_NormPlan *p, int input_stats,
                            pr_Tensor *run_mean, pr_Tensor *run_var, double momentum,
                            const pr_Tensor *xc, const pr_Tensor *w, const pr_Tensor *b,
                            pr_Tensor *mean, pr_Tensor *rstd, pr_Tensor *out) {
  if (need_float(rt, "norm", xc, w, b) != 0 || need_float(rt, "norm", xc, out, run_mean) != 0 ||
      need_float(rt, "norm", xc, run_var) != 0 || need_f32(rt, "norm", mean, rstd) != 0)
    return PR_ERR;
  int rc = PR_ERR;
  PR_FLOAT_SWITCH(xc->dtype, rc = norm_of<T>(rt, p, input_stats, run_mean, run_var, momentum, xc,
                                             w, b, mean, rstd, out));
  return rc;
}

/* Per cell: s1 = mean(ĝ), s2 = mean(ĝ·x̂) (input statistics), then gx; gw, gb by atomics in
   double per channel (Σ g·x̂ and Σ g). */
template <class T>
__global__ void norm_grad(pr_NormPlan p, const T *x, const T *g, const T *w, const float *mean,
                          const float *rstd, int input_stats, T *gx, double *gw, double *gb) {
  __shared__ double sd[32];
  __shared__ double b1, b2;
  int64_t cells = p.groups == 0 ? p.C : p.N * p.groups;
  for (int64_t k = blockIdx.x; k < cells; k += gridDim.x) {
    int64_t n0, n1, c0, c1, ch;
    cell_bounds(p, k, &n0, &n1, &c0, &c1);
    int64_t cw = c1 - c0, n = (n1 - n0) * cw * p.S;
    double m = mean[k], r = rstd[k], s1 = 0, s2 = 0;
    if (gx != NULL && input_stats) {
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        int64_t i = cell_elem(p, n0, c0, cw, j, &ch);
        double gh = w != NULL ? (double)f_of(g[i]) * f_of(w[ch]) : f_of(g[i]);
        s1 += gh;
        s2 += gh * (f_of(x[i]) - m) * r;
      }
      s1 = block_sum(s1, sd);
      s2 = block_sum(s2, sd);
      if (threadIdx.x == 0) {
        b1 = n > 0 && !p.rms ? s1 / (double)n : 0;
        b2 = n > 0 ? s2 / (double)n : 0;
      }
      __syncthreads();
      s1 = b1;
      s2 = b2;
    }
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      int64_t i = cell_elem(p, n0, c0, cw, j, &ch);
      double xh = (f_of(x[i]) - m) * r, gi = f_of(g[i]);
      if (gx != NULL) {
        double gh = w != NULL ? gi * f_of(w[ch]) : gi;
        gx[i] = of_f<T>((float)(input_stats ? r * (gh - s1 - xh * s2) : gh * r));
      }
      if (gw != NULL) atomicAdd(&gw[ch], gi * xh);
      if (gb != NULL) atomicAdd(&gb[ch], gi);
    }
    __syncthreads();
  }
}

template <class T>
static int norm_grad_of(pr_Runtime *rt, const pr_NormPlan *p, const pr_Tensor *x,
                        const pr_Tensor *g, const pr_Tensor *w, const pr_Tensor *mean,
                        const pr_Tensor *rstd, int input_stats, pr_Tensor *gx, pr_Tensor *gw,
                        pr_Tensor *gb) {
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  int64_t C = p->C, cells = cells_of(p);
  size_t abytes = sizeof(double) * (size_t)(2 * C + 1);
  double *acc = (double *)pr_cuda_alloc(abytes);   /* zero-filled */
  if (acc == NULL) {
    pr_tensor_release(gc);
    return pr_error(rt, "norm backward: out of device memory");
  }
  if (cells > 0)
    norm_grad<T><<<cell_blocks(cells), PR_THREADS, 0, PR_STREAM>>>(
        *p, at1<T>(x), at1<T>(gc), at1<T>(w), pr_f32(mean), pr_f32(rstd), input_stats, at1<T>(gx),
        gw ? acc : NULL, gb ? acc + C : NULL);
  T *gwp = at1<T>(gw), *gbp = at1<T>(gb);
  pr_launch(C, [=] __device__(int64_t c) {
    if (gwp) gwp[c] = of_f<T>((float)acc[c]);
    if (gbp) gbp[c] = of_f<T>((float)acc[C + c]);
  });
  int rc = pr_cuda_check(rt, "norm backward");
  pr_cuda_free(acc, abytes);
  pr_tensor_release(gc);
  return rc;
}

extern "C" int pr_cuda_norm_backward(pr_Runtime *rt, const pr_NormPlan *p, const pr_Tensor *x,
                                     const pr_Tensor *g, const pr_Tensor *w, const pr_Tensor *mean,
                                     const pr_Tensor *rstd, int input_stats, pr_Tensor *gx,
                                     pr_Tensor *gw, pr_Tensor *gb) {
  if (need_float(rt, "norm backward", x, g, w) != 0 ||
      need_float(rt, "norm backward", x, gx, gw) != 0 ||
      need_float(rt, "norm backward", x, gb) != 0 || need_f32(rt, "norm backward", mean, rstd) != 0)
    return PR_ERR;
  int rc = PR_ERR;
  PR_FLOAT_SWITCH(x->dtype, rc = norm_grad_of<T>(rt, p, x, g, w, mean, rstd, input_stats, gx, gw,
                                                 gb));
  return rc;
}

/* {====================== embedding ======================} */

__device__ __forceinline__ int64_t index_at(const void *p, int i64, int64_t off) {
  return i64 ? ((const int64_t *)p)[off] : ((const int32_t *)p)[off];
}

/* The first out-of-range index (by position) reaches the host: one small copy and a wait. */
extern "C" int pr_cuda_embedding_check(pr_Runtime *rt, const pr_Tensor *idx, int64_t vocab) {
  int64_t n = pr_numel(idx);
  if (n == 0) return 0;
  unsigned long long *first = (unsigned long long *)pr_cuda_alloc(sizeof *first);
  if (first == NULL) return pr_error(rt, "embedding: out of device memory");
  unsigned long long none = ~0ull;
  int rc = pr_cuda_from_host(rt, first, &none, sizeof none);
  const void *ip = idx->storage->data;
  int i64 = idx->dtype == PROF_I64;
  View iv = view_of(idx);
  if (rc == 0) {
    pr_launch(n, [=] __device__(int64_t i) {
      int64_t v = index_at(ip, i64, view_off(iv, i));
      if (v < 0 || v >= vocab) atomicMin(first, (unsigned long long)i);
    });
    rc = pr_cuda_check(rt, "embedding");
  }
  unsigned long long at = none;
  if (rc == 0) rc = pr_cuda_to_host(rt, &at, first, sizeof at);
  if (rc == 0 && at != none) {
    int64_t v = 0;
    size_t es = dsize(idx->dtype);
    /* the offending value itself, for the message */
    int32_t v32 = 0;
    const char *src = (const char *)ip + es * (size_t)(idx->offset);
    int64_t off = 0, rest = (int64_t)at;
    for (int d = idx->ndim - 1; d >= 0; d--) {
      off += (rest % idx->shape[d]) * idx->stride[d];
      rest /= idx->shape[d];
    }
    if (i64) rc = pr_cuda_to_host(rt, &v, src + es * (size_t)off, sizeof v);
    else if ((rc = pr_cuda_to_host(rt, &v32, src + es * (size_t)off, sizeof v32)) == 0) v = v32;
    if (rc == 0)
      rc = pr_error(rt, "embedding: index %lld is out of range for a vocabulary of %lld",
                    (long long)v, (long long)vocab);
  }
  pr_cuda_free(first, sizeof *first);
  return rc;
}

template <class T>
static void embedding_of(const void *ip, int i64, View iv, const T *wp, View wv, int64_t d, T *o,
                         int64_t n) {
  pr_launch(n * d, [=] __device__(int64_t i) {
    int64_t r = i / d, j = i % d, v = index_at(ip, i64, view_off(iv, r));
    o[i] = wp[wv.offset + v * wv.stride[0] + j * wv.stride[1]];
  });
}

extern "C" int pr_cuda_embedding(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *w,
                                 pr_Tensor *out) {
  if (need_float(rt, "embedding", w, out) != 0) return PR_ERR;
  PR_FLOAT_SWITCH(w->dtype, embedding_of<T>(idx->storage->data, idx->dtype == PROF_I64,
                                            view_of(idx), base_of<T>(w), view_of(w), w->shape[1],
                                            at1<T>(out), pr_numel(idx)));
  return pr_cuda_check(rt, "embedding");
}

/* Scatter-add by atomics in float: rows that repeat add up in an order the cpu's loop does not
   fix, so the sums agree to float32 rounding, not bit for bit. A half gw gets a float scratch,
   added to gw (zero-filled) with one rounding per element: half atomics would round every add. */
template <class T>
static int embedding_grad_of(pr_Runtime *rt, const void *ip, int i64, View iv, const T *gp,
                             View gv, int64_t pad, int64_t d, T *o, int64_t cells, int64_t n) {
  size_t bytes = sizeof(float) * (size_t)(cells > 0 ? cells : 1);
  float *acc = (float *)o;
  if constexpr (!std::is_same<T, float>::value) {
    acc = (float *)pr_cuda_alloc(bytes);   /* zero-filled */
    if (acc == NULL) return pr_error(rt, "embedding backward: out of device memory");
  }
  pr_launch(n * d, [=] __device__(int64_t i) {
    int64_t r = i / d, j = i % d, v = index_at(ip, i64, view_off(iv, r));
    if (v != pad) atomicAdd(&acc[v * d + j], f_of(gp[view_off(gv, i)]));
  });
  int rc = 0;
  if constexpr (!std::is_same<T, float>::value) {
    pr_launch(cells, [=] __device__(int64_t i) { o[i] = of_f<T>(f_of(o[i]) + acc[i]); });
    rc = pr_cuda_check(rt, "embedding backward");
    pr_cuda_free(acc, bytes);
  }
  return rc != 0 ? rc : pr_cuda_check(rt, "embedding backward");
}

extern "C" int pr_cuda_embedding_backward(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *g,
                                          int64_t pad, pr_Tensor *gw) {
  if (need_float(rt, "embedding backward", gw, g) != 0) return PR_ERR;
  int rc = PR_ERR;
  PR_FLOAT_SWITCH(gw->dtype, rc = embedding_grad_of<T>(rt, idx->storage->data,
                                                       idx->dtype == PROF_I64, view_of(idx),
                                                       base_of<T>(g), view_of(g), pad,
                                                       gw->shape[1], at1<T>(gw), pr_numel(gw),
                                                       pr_numel(idx)));
  return rc;
}
