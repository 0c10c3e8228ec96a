/* cpu_loss.c — float32 cpu kernels of cross_entropy and nll_loss, values and gradients. */
#include <math.h>

#include "runtime.h"
#include "cpu.h"

/* Element (n, c, s) of a contiguous [N, C, S] block; row r = n·S + s. */
#define AT(p, r, c) ((((r) / (p)->S) * (p)->C + (c)) * (p)->S + (r) % (p)->S)

int pr_cpu_class_targets_check(pr_Runtime *rt, const char *name, const pr_Tensor *t,
                               int64_t classes, int64_t ignore) {
  pr_Tensor *c = pr_contiguous_data(rt, t);
  if (c == NULL) return PR_ERR;
  const int64_t *tp = (const int64_t *)c->storage->data + c->offset;
  int rc = 0;
  for (int64_t i = 0, n = pr_numel(c); i < n && rc == 0; i++)
    if (tp[i] != ignore && (tp[i] < 0 || tp[i] >= classes))
      rc = pr_error(rt, "%s: target %lld is out of bounds for %lld classes", name,
                    (long long)tp[i], (long long)classes);
  pr_tensor_release(c);
  return rc;
}

/* log_softmax of row r into logp; returns the log-sum-exp (double: the loss reads it again). */
static double log_softmax_row(const pr_ClassLoss *p, const float *x, int64_t r, float *logp) {
  double mx = -INFINITY, s = 0;
  for (int64_t c = 0; c < p->C; c++)
    if (x[AT(p, r, c)] > mx) mx = x[AT(p, r, c)];
  if (mx == -INFINITY) mx = 0;   /* a row of -inf: every log-probability is NaN, as in torch */
  for (int64_t c = 0; c < p->C; c++) s += exp(x[AT(p, r, c)] - mx);
  double lse = mx + log(s);
  for (int64_t c = 0; c < p->C; c++) logp[AT(p, r, c)] = (float)(x[AT(p, r, c)] - lse);
  return lse;
}

/*
** Per row: class indices give −w_t·logp_t (nll) and, with label smoothing ε, −Σ_c w_c·logp_c
** mixed in as (1 − ε)·nll + ε/C·smooth; probabilities give −Σ_c w_c·t'_c·logp_c with
** t' = (1 − ε)·t + ε/C. mean divides both terms by Σ w_t over the rows not ignored (their
** number without weights), probability targets by the rows.
*/
static void class_loss_f32(const pr_ClassLoss *p, const float *x, const int64_t *ti,
                           const float *tp, const float *w, float *logp, float *out,
                           double *divisor) {
  int64_t rows = p->N * p->S;
  double eps = p->smoothing, tot_nll = 0, tot_smooth = 0, wsum = 0;
  for (int64_t r = 0; r < rows; r++) {
    double lse = 0;
    if (!p->nll) lse = log_softmax_row(p, x, r, logp);
    /* log-probabilities in double: the input's, or x − lse */
#define LOGP(c) (p->nll ? (double)x[AT(p, r, (c))] : (double)x[AT(p, r, (c))] - lse)
    double nll = 0, smooth = 0;
    if (p->soft) {
      for (int64_t c = 0; c < p->C; c++) {
        double t = (1 - eps) * tp[AT(p, r, c)] + eps / (double)p->C;
        nll -= (w ? w[c] : 1.0) * t * LOGP(c);
      }
    } else if (ti[r] != p->ignore_index) {
      double wt = w ? w[ti[r]] : 1.0;
      nll = -wt * LOGP(ti[r]);
      wsum += wt;
      if (eps > 0)
        for (int64_t c = 0; c < p->C; c++) smooth -= (w ? w[c] : 1.0) * LOGP(c);
    }
#undef LOGP
    if (!p->soft && eps > 0) nll = (1 - eps) * nll;
    smooth *= eps / (double)p->C;
    if (p->reduction == PROF_REDUCE_NONE) out[r] = (float)(nll + smooth);
    tot_nll += nll;
    tot_smooth += smooth;
  }
  if (p->soft) wsum = (double)rows;
  *divisor = wsum;
  if (p->reduction == PROF_REDUCE_SUM) out[0] = (float)(tot_nll + tot_smooth);
  if (p->reduction == PROF_REDUCE_MEAN)
    out[0] = (float)((tot_nll + (eps > 0 && !p->soft ? tot_smooth : 0)) / wsum);
}

/*
** d/dx_j: nll −w_t·(δ_jt − p_j); smoothing p_j·Σw − w_j; probabilities p_j·Σ_c w_c·t'_c − w_j·t'_j
** (and d/dt_j = −(1 − ε)·w_j·logp_j); nll_loss on log-probabilities −w_t at the target.
*/
static void class_loss_backward_f32(const pr_ClassLoss *p, const float *logp,
                                    const int64_t *ti, const float *tp, const float *w,
                                    const float *g, double divisor, float *gx, float *gt) {
  int64_t rows = p->N * p->S;
  double eps = p->smoothing, wall = 0;
  for (int64_t c = 0; c < p->C; c++) wall += w ? w[c] : 1.0;
  for (int64_t i = 0, n = rows * p->C; i < n; i++) gx[i] = 0;
  for (int64_t r = 0; r < rows; r++) {
    double s = p->reduction == PROF_REDUCE_NONE ? g[r] : g[0];
    if (p->reduction == PROF_REDUCE_MEAN) s /= divisor;
    if (p->soft) {
      double tw = 0;
      for (int64_t c = 0; c < p->C; c++)
        tw += (w ? w[c] : 1.0) * ((1 - eps) * tp[AT(p, r, c)] + eps / (double)p->C);
      for (int64_t c = 0; c < p->C; c++) {
        int64_t k = AT(p, r, c);
        double t = (1 - eps) * tp[k] + eps / (double)p->C, wc = w ? w[c] : 1.0;
        gx[k] = (float)(s * (exp((double)logp[k]) * tw - wc * t));
        if (gt != NULL) gt[k] = (float)(-s * (1 - eps) * wc * logp[k]);
      }
      continue;
    }
    if (ti[r] == p->ignore_index) continue;
    double wt = w ? w[ti[r]] : 1.0, a = (1 - eps) * s * wt, b = eps / (double)p->C * s;
    if (p->nll) {
      gx[AT(p, r, ti[r])] = (float)-a;
      continue;
    }
    for (int64_t c = 0; c < p->C; c++) {
      int64_t k = AT(p, r, c);
      double pc = exp((double)logp[k]);
      double v = a * (pc - (c == ti[r])) + (eps > 0 ? b * (pc * wall - (w ? w[c] : 1.0)) : 0);
      gx[k] = (float)v;
    }
  }
}

/* The class indices of a contiguous int64 target. */
static const int64_t *indices_of(const pr_Tensor *t) {
  return (const int64_t *)t->storage->data + t->offset;
}

/* The table's entries: the float32 buffers of the (contiguous) tensors. */
int pr_cpu_class_loss(pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *x, const pr_Tensor *t,
                      const pr_Tensor *w, pr_Tensor *logp, pr_Tensor *out, double *divisor) {
  (void)rt;   /* the host's kernels cannot fail */
  class_loss_f32(p, pr_f32(x), p->soft ? NULL : indices_of(t), p->soft ? pr_f32(t) : NULL,
                 w ? pr_f32(w) : NULL, logp ? pr_f32(logp) : NULL, pr_f32(out), divisor);
  return 0;
}

int pr_cpu_class_loss_backward(pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *logp,
                               const pr_Tensor *t, const pr_Tensor *w, const pr_Tensor *g,
                               double divisor, pr_Tensor *gx, pr_Tensor *gt) {
  (void)rt;   /* the host's kernels cannot fail */
  class_loss_backward_f32(p, logp ? pr_f32(logp) : NULL, p->soft ? NULL : indices_of(t),
                          p->soft ? pr_f32(t) : NULL, w ? pr_f32(w) : NULL, pr_f32(g), divisor,
                          pr_f32(gx), gt ? pr_f32(gt) : NULL);
  return 0;
}

/* {====================== mse_loss ======================} */

/* t viewed with d's shape: broadcast dims read with stride 0, as expand makes them. */
static pr_Tensor broadcast_view(const pr_Tensor *t, const pr_Tensor *d) {
  pr_Tensor v = *t;
  v.ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) {
    int j = t->ndim - d->ndim + i;
    v.shape[i] = d->shape[i];
    v.stride[i] = j >= 0 && t->shape[j] != 1 ? t->stride[j] : 0;
  }
  v.grad_fn = NULL;
  v.grad = NULL;
  return v;
}

/* The elements of v in logical order: v's own when contiguous, else a copy held in *copy. */
static const float *dense(pr_Runtime *rt, const pr_Tensor *v, pr_Tensor **copy) {
  *copy = NULL;
  if (pr_is_contiguous(v)) return pr_f32(v);
  *copy = pr_contiguous_data(rt, v);
  return *copy != NULL ? pr_f32(*copy) : NULL;
}

int pr_cpu_mse(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *t, int reduction,
               pr_Tensor *d, pr_Tensor *out) {
  pr_Tensor xv = broadcast_view(x, d), tv = broadcast_view(t, d), *xc, *tc = NULL;
  const float *xp = dense(rt, &xv, &xc), *tp = xp ? dense(rt, &tv, &tc) : NULL;
  if (tp != NULL) {
    float *dp = pr_f32(d), *o = pr_f32(out);
    double sum = 0;
    int64_t numel = pr_numel(d);
    for (int64_t i = 0; i < numel; i++) {
      double v = (double)xp[i] - tp[i];
      dp[i] = (float)v;
      if (reduction == PROF_REDUCE_NONE) o[i] = (float)(v * v);
      sum += v * v;
    }
    if (reduction != PROF_REDUCE_NONE)
      o[0] = (float)(reduction == PROF_REDUCE_MEAN ? sum / (double)numel : sum);
  }
  pr_tensor_release(xc);
  pr_tensor_release(tc);
  return tp != NULL ? 0 : PR_ERR;
}

int pr_cpu_mse_backward(pr_Runtime *rt, const pr_Tensor *d, const pr_Tensor *g, int reduction,
                        pr_Tensor *gd, pr_Tensor *neg) {
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  const float *dp = pr_f32(d), *gp = pr_f32(gc);
  float *o = pr_f32(gd);
  int64_t numel = pr_numel(d);
  double scale = reduction == PROF_REDUCE_MEAN ? 2.0 / (double)numel : 2.0;
  for (int64_t i = 0; i < numel; i++) {
    o[i] = (float)(scale * dp[i] * gp[reduction == PROF_REDUCE_NONE ? i : 0]);
    if (neg != NULL) pr_f32(neg)[i] = -o[i];
  }
  pr_tensor_release(gc);
  return 0;
}
