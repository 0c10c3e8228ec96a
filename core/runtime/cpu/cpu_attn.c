/* cpu_attn.c — float32 cpu kernels of attention's scores: mask, softmax, dropout, gradient. */
#include <math.h>

#include "runtime.h"
#include "cpu.h"

/* The mask value at each score, walking mask (a view of the scores' shape) in row-major order. */
typedef struct MaskWalk {
  const pr_Tensor *m;
  int64_t idx[PR_MAX_DIMS], off;
} MaskWalk;

static void walk_next(MaskWalk *w) {
  const pr_Tensor *m = w->m;
  for (int d = m->ndim - 1; d >= 0; d--) {
    w->off += m->stride[d];
    if (++w->idx[d] < m->shape[d]) return;
    w->off -= m->stride[d] * m->shape[d];
    w->idx[d] = 0;
  }
}

/* The additive term of a mask at the walk's position: bool false is −inf, true 0. */
static double mask_term(const MaskWalk *w) {
  const pr_Tensor *m = w->m;
  if (m->dtype == PROF_BOOL)
    return ((const uint8_t *)m->storage->data)[m->offset + w->off] ? 0.0 : -INFINITY;
  return ((const float *)m->storage->data)[m->offset + w->off];
}

/*
** Scores [..., L, S] (contiguous, already scaled) become probabilities in place: the mask is added
** (is_causal: entries j > i, top-left aligned, are −inf), then a softmax per row in double; a row
** with every entry −inf gives NaN, as torch's math path. With dropout_p > 0, A gets the kept
** probabilities divided by 1 − p (drawn from the runtime's generator), else it is not touched.
*/
int pr_cpu_attn_softmax(pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask, int causal,
                        double dropout_p, pr_Tensor *At) {
  float *A = At != NULL ? pr_f32(At) : NULL;
  int nd = scores->ndim;
  int64_t L = scores->shape[nd - 2], S = scores->shape[nd - 1];
  int64_t rows = S > 0 ? pr_numel(scores) / S : 0;
  float *p = pr_f32(scores);
  MaskWalk w = {mask, {0}, 0};
  for (int64_t r = 0; r < rows; r++) {
    float *row = p + r * S;
    int64_t i = r % L;
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < S; j++) {
      double v = row[j];
      if (mask != NULL) {
        v += mask_term(&w);
        walk_next(&w);
      }
      if (causal && j > i) v = -INFINITY;
      row[j] = (float)v;
      if (v > mx) mx = v;
    }
    for (int64_t j = 0; j < S; j++) sum += exp(row[j] - mx);
    for (int64_t j = 0; j < S; j++)
      row[j] = mx == -INFINITY ? NAN : (float)(exp(row[j] - mx) / sum);
  }
  if (dropout_p <= 0 || A == NULL) return 0;
  double keep = 1.0 - dropout_p;
  for (int64_t k = 0, n = rows * S; k < n; k++)
    A[k] = keep <= 0 || pr_rand_uniform(rt) < dropout_p ? 0.0f : (float)(p[k] / keep);
  return 0;
}

/*
** gS = scale·P ⊙ (gP − Σ_j gP_j·P_j) per row, gP = gA·m/(1 − p) with m the dropout's keep mask:
** wherever P > 0 the mask is A ≠ 0, and where P = 0 the term vanishes anyway.
*/
int pr_cpu_attn_softmax_backward(pr_Runtime *rt, const pr_Tensor *Pt, const pr_Tensor *At,
                                 const pr_Tensor *gAt, int64_t rows, int64_t S, double dropout_p,
                                 double scale, pr_Tensor *gSt) {
  (void)rt;   /* the host's kernels cannot fail */
  const float *P = pr_f32(Pt), *A = At != NULL ? pr_f32(At) : NULL, *gA = pr_f32(gAt);
  float *gS = pr_f32(gSt);
  double keep = 1.0 - dropout_p;
  for (int64_t r = 0; r < rows; r++) {
    const float *pr = P + r * S, *gr = gA + r * S, *ar = A ? A + r * S : NULL;
    float *o = gS + r * S;
    double dot = 0;
    for (int64_t j = 0; j < S; j++) {
      double gp = gr[j];
      if (ar != NULL) gp = keep > 0 && ar[j] != 0.0f ? gp / keep : 0.0;
      o[j] = (float)gp;
      dot += gp * pr[j];
    }
    for (int64_t j = 0; j < S; j++) o[j] = (float)(scale * pr[j] * (o[j] - dot));
  }
  return 0;
}
