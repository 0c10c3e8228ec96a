/* cpu_norm.c — float32 cpu kernels of the norms (statistics, running buffers, gradients) and embedding. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/* {====================== statistics cells ======================} */

/*
** A cell is the set of elements one mean and rstd describe: the samples [n0, n1) times the
** channels [c0, c1), all S positions of each. batch_norm: every sample of one channel; the others:
** one sample and one group of C / groups channels (contiguous in memory).
*/
typedef struct Cell {
  int64_t n0, n1, c0, c1;
} Cell;

int64_t pr_norm_cells(const pr_NormPlan *p) {
  return p->groups == 0 ? p->C : p->N * p->groups;
}

static Cell cell_of(const pr_NormPlan *p, int64_t k) {
  Cell c;
  if (p->groups == 0) {
    c.n0 = 0, c.n1 = p->N, c.c0 = k, c.c1 = k + 1;
  } else {
    int64_t per = p->C / p->groups;
    c.n0 = k / p->groups, c.n1 = c.n0 + 1;
    c.c0 = (k % p->groups) * per, c.c1 = c.c0 + per;
  }
  return c;
}

static int64_t cell_count(const pr_NormPlan *p, const Cell *c) {
  return (c->n1 - c->n0) * (c->c1 - c->c0) * p->S;
}

/* Runs body for every element of cell c with its offset i and channel ch. */
#define FOR_CELL(p, c, i, ch, body)                                                   \
  for (int64_t n_ = (c).n0; n_ < (c).n1; n_++)                                        \
    for (int64_t ch = (c).c0; ch < (c).c1; ch++)                                      \
      for (int64_t i = (n_ * (p)->C + ch) * (p)->S, e_ = i + (p)->S; i < e_; i++) { body; }

/* {====================== forward ======================} */

/* Two passes in double, as the definition reads: float32 one-pass sums lose the digits the
   PyTorch references keep. */
void pr_cpu_norm_stats(const pr_NormPlan *p, const float *x, float *mean, float *rstd,
                       double *var) {
  for (int64_t k = 0, cells = pr_norm_cells(p); k < cells; k++) {
    Cell c = cell_of(p, k);
    int64_t n = cell_count(p, &c);
    double m = 0, v = 0;
    if (!p->rms) {
      FOR_CELL(p, c, i, ch, (void)ch; m += x[i]);
      m = n > 0 ? m / (double)n : 0;
    }
    FOR_CELL(p, c, i, ch, (void)ch; v += (x[i] - m) * (x[i] - m));
    v = n > 0 ? v / (double)n : NAN;
    mean[k] = (float)m;
    rstd[k] = (float)(1.0 / sqrt(v + p->eps));
    if (var != NULL) var[k] = v;
  }
}

void pr_cpu_norm_apply(const pr_NormPlan *p, const float *x, const float *mean, const float *rstd,
                       const float *w, const float *b, float *y) {
  for (int64_t k = 0, cells = pr_norm_cells(p); k < cells; k++) {
    Cell c = cell_of(p, k);
    double m = mean[k], r = rstd[k];
    FOR_CELL(p, c, i, ch, {
      double v = (x[i] - m) * r;
      if (w != NULL) v *= w[ch];
      if (b != NULL) v += b[ch];
      y[i] = (float)v;
    });
  }
}

/* {====================== backward ======================} */

/*
** With statistics from the input the mean and rstd depend on every element of the cell:
** gx = r·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)) with ĝ = g·w and x̂ = (x − μ)·r (RMS: no mean term);
** with fixed (running) statistics gx = g·w·r. gw and gb sum over the samples and positions.
*/
void pr_cpu_norm_backward(const pr_NormPlan *p, const float *x, const float *g, const float *w,
                          const float *mean, const float *rstd, int input_stats, float *gx,
                          double *gw_acc, double *gb_acc) {
  for (int64_t k = 0, cells = pr_norm_cells(p); k < cells; k++) {
    Cell c = cell_of(p, k);
    int64_t n = cell_count(p, &c);
    double m = mean[k], r = rstd[k], s1 = 0, s2 = 0;
    if (gx != NULL && input_stats) {
      FOR_CELL(p, c, i, ch, {
        double gh = w != NULL ? (double)g[i] * w[ch] : g[i];
        s1 += gh;
        s2 += gh * (x[i] - m) * r;
      });
      s1 = n > 0 ? s1 / (double)n : 0;
      s2 = n > 0 ? s2 / (double)n : 0;
      if (p->rms) s1 = 0;
    }
    FOR_CELL(p, c, i, ch, {
      double xh = (x[i] - m) * r;
      if (gx != NULL) {
        double gh = w != NULL ? (double)g[i] * w[ch] : g[i];
        gx[i] = (float)(input_stats ? r * (gh - s1 - xh * s2) : gh * r);
      }
      if (gw_acc != NULL) gw_acc[ch] += g[i] * xh;
      if (gb_acc != NULL) gb_acc[ch] += g[i];
    });
  }
}

/* {====================== embedding ======================} */

int pr_cpu_embedding_check(pr_Runtime *rt, const pr_Tensor *idx, int64_t vocab) {
  pr_Tensor *c = pr_contiguous_data(rt, idx);
  if (c == NULL) return PR_ERR;
  int rc = 0;
  for (int64_t i = 0, n = pr_numel(c); i < n && rc == 0; i++) {
    int64_t v = c->dtype == PROF_I64 ? ((const int64_t *)c->storage->data)[c->offset + i]
                                     : ((const int32_t *)c->storage->data)[c->offset + i];
    if (v < 0 || v >= vocab)
      rc = pr_error(rt, "embedding: index %lld is out of range for a vocabulary of %lld",
                    (long long)v, (long long)vocab);
  }
  pr_tensor_release(c);
  return rc;
}

int pr_cpu_embedding(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *w, pr_Tensor *out) {
  pr_Tensor *ic = pr_contiguous_data(rt, idx);
  pr_Tensor *wc = ic ? pr_contiguous_data(rt, w) : NULL;
  if (wc == NULL) {
    pr_tensor_release(ic);
    return PR_ERR;
  }
  int64_t d = w->shape[1];
  const float *wp = pr_f32(wc);
  float *o = pr_f32(out);
  for (int64_t i = 0, n = pr_numel(ic); i < n; i++) {
    int64_t v = ic->dtype == PROF_I64 ? ((const int64_t *)ic->storage->data)[ic->offset + i]
                                      : ((const int32_t *)ic->storage->data)[ic->offset + i];
    memcpy(o + i * d, wp + v * d, sizeof(float) * (size_t)d);
  }
  pr_tensor_release(ic);
  pr_tensor_release(wc);
  return 0;
}

void pr_cpu_embedding_backward(const pr_Tensor *idx, const float *g, int64_t d, int64_t pad,
                               float *gw) {
  for (int64_t i = 0, n = pr_numel(idx); i < n; i++) {
    int64_t v = idx->dtype == PROF_I64 ? ((const int64_t *)idx->storage->data)[idx->offset + i]
                                       : ((const int32_t *)idx->storage->data)[idx->offset + i];
    if (v == pad) continue;
    for (int64_t j = 0; j < d; j++) gw[v * d + j] += g[i * d + j];
  }
}

/* {============ the norm ops' kernels: statistics, running buffers, gradients ============} */

static float *at1(const pr_Tensor *t, int64_t i) {
  return (float *)t->storage->data + t->offset + i * t->stride[0];
}

/*
** The running statistics move towards the batch's (torch's batch_norm: momentum, and the unbiased
** variance); instance norm averages its per-sample statistics over the batch first, as torch
** repeats the buffers per sample and then takes their mean.
*/
static void update_running(const pr_NormPlan *p, pr_Tensor *run_mean, pr_Tensor *run_var,
                           double m, const float *mean, const double *var) {
  int64_t per = p->groups == 0 ? p->N * p->S : p->S, reps = p->groups == 0 ? 1 : p->N;
  double unbias = per > 1 ? (double)per / (double)(per - 1) : NAN;
  for (int64_t c = 0; c < p->C; c++) {
    double mu = 0, v = 0;
    for (int64_t r = 0; r < reps; r++) {
      mu += mean[r * p->C + c];
      v += var[r * p->C + c] * unbias;
    }
    float *rm = run_mean ? at1(run_mean, c) : NULL, *rv = run_var ? at1(run_var, c) : NULL;
    if (rm != NULL) *rm = (float)((1 - m) * *rm + m * mu / (double)reps);
    if (rv != NULL) *rv = (float)((1 - m) * *rv + m * v / (double)reps);
  }
}

int pr_cpu_norm(pr_Runtime *rt, const pr_NormPlan *p, int input_stats, pr_Tensor *run_mean,
                pr_Tensor *run_var, double momentum, const pr_Tensor *xc, const pr_Tensor *w,
                const pr_Tensor *b, pr_Tensor *mean, pr_Tensor *rstd, pr_Tensor *out) {
  int64_t cells = pr_norm_cells(p);
  float *mp = pr_f32(mean), *rp = pr_f32(rstd);
  if (input_stats) {
    int run = run_mean != NULL || run_var != NULL;
    double *var = run ? malloc(sizeof *var * (size_t)(cells ? cells : 1)) : NULL;
    if (run && var == NULL) return pr_error(rt, "norm: out of memory");
    pr_cpu_norm_stats(p, pr_f32(xc), mp, rp, var);
    if (var != NULL) update_running(p, run_mean, run_var, momentum, mp, var);
    free(var);
  } else {
    /* cell k of batch_norm is channel k; of instance norm, sample k / C and channel k % C */
    for (int64_t k = 0; k < cells; k++) {
      mp[k] = *at1(run_mean, k % p->C);
      rp[k] = (float)(1.0 / sqrt((double)*at1(run_var, k % p->C) + p->eps));
    }
  }
  pr_Tensor *wc = w ? pr_contiguous_data(rt, w) : NULL, *bc = b ? pr_contiguous_data(rt, b) : NULL;
  int rc = (w && !wc) || (b && !bc) ? PR_ERR : 0;
  if (rc == 0)
    pr_cpu_norm_apply(p, pr_f32(xc), mp, rp, wc ? pr_f32(wc) : NULL, bc ? pr_f32(bc) : NULL,
                      pr_f32(out));
  pr_tensor_release(wc);
  pr_tensor_release(bc);
  return rc;
}

int pr_cpu_norm_grad(pr_Runtime *rt, const pr_NormPlan *p, const pr_Tensor *x, const pr_Tensor *g,
                     const pr_Tensor *w, const pr_Tensor *mean, const pr_Tensor *rstd,
                     int input_stats, pr_Tensor *gx, pr_Tensor *gw, pr_Tensor *gb) {
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  double *acc = gc ? calloc((size_t)(2 * p->C + 1), sizeof *acc) : NULL;
  if (acc == NULL) {
    pr_tensor_release(gc);
    return pr_error(rt, "norm backward: out of memory");
  }
  pr_cpu_norm_backward(p, pr_f32(x), pr_f32(gc), w ? pr_f32(w) : NULL, pr_f32(mean), pr_f32(rstd),
                       input_stats, gx ? pr_f32(gx) : NULL, gw ? acc : NULL, gb ? acc + p->C : NULL);
  pr_Tensor *sums[2] = {gw, gb};
  for (int i = 0; i < 2; i++)
    if (sums[i] != NULL)
      for (int64_t c = 0; c < p->C; c++) pr_f32(sums[i])[c] = (float)acc[i * p->C + c];
  free(acc);
  pr_tensor_release(gc);
  return 0;
}

int pr_cpu_embedding_grad(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *g, int64_t pad,
                          pr_Tensor *gw) {
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  pr_cpu_embedding_backward(idx, pr_f32(gc), gw->shape[1], pad, pr_f32(gw));
  pr_tensor_release(gc);
  return 0;
}
