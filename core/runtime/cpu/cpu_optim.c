/* cpu_optim.c — the optimizers' element updates (SGD, Adam, AdamW) as torch.optim runs them. */
#include <math.h>

#include "runtime.h"
#include "cpu.h"

/*
** Per element, torch's SGD runs (only the lines its options enable):
**   g = -g                          maximize          1 flop
**   g = g + wd·p                    weight_decay != 0  2 flops
**   b = g            (first step)   momentum != 0      0 flops, or
**   b = m·b + (1 - dampening)·g     (later steps)      3 flops
**   g = g + m·b                     nesterov           2 flops (else g = b)
**   p = p + (-lr)·g                                    2 flops
** Bytes: p and g read, p written; with momentum b is written, and read after the first step.
*/
int pr_cpu_sgd(pr_Runtime *rt, float *p, const float *grad, float *buf, int64_t n, int fresh,
               const pr_SgdArgs *a) {
  (void)rt;   /* the host's kernels cannot fail */
  const float wd = (float)a->weight_decay, m = (float)a->momentum;
  const float keep = (float)(1.0 - a->dampening), neg_lr = (float)-a->lr;
  for (int64_t i = 0; i < n; i++) {
    float g = a->maximize ? -grad[i] : grad[i];
    if (a->weight_decay != 0) g = fmaf(wd, p[i], g);
    if (buf != NULL) {
      float b = fresh ? g : buf[i] * m;
      if (!fresh) b = fmaf(keep, g, b);
      buf[i] = b;
      g = a->nesterov ? fmaf(m, b, g) : b;
    }
    p[i] = fmaf(neg_lr, g, p[i]);
  }
  return 0;
}

/*
** Per element, at step t, torch's Adam (AdamW: decoupled) runs:
**   g = -g                                   maximize           1 flop
**   g = g + wd·p                             Adam, wd != 0      2 flops
**   p = p·(1 - lr·wd)                        AdamW (always)     1 flop
**   m = β1·m;  m = m + (1 - β1)·g                               3 flops
**   v = β2·v;  v = v + (1 - β2)·g·g                             4 flops
**   vmax = max(vmax, v)                      amsgrad            1 flop
**   d = sqrt(v or vmax) / sqrt(1 - β2^t) + eps                  3 flops
**   p = p + (-lr / (1 - β1^t))·m / d                            3 flops
** 13 flops at least. Bytes: p, g, m, v (and vmax) read; p, m, v (and vmax) written.
*/
int pr_cpu_adam(pr_Runtime *rt, float *p, const float *grad, float *m, float *v, float *vmax,
                int64_t n, int64_t step, const pr_AdamArgs *a) {
  (void)rt;   /* the host's kernels cannot fail */
  /* FusedAdam without bias_correction divides the raw moments */
  const double bc1 = a->bias_correction ? 1.0 - pow(a->beta1, (double)step) : 1.0;
  const double bc2 = a->bias_correction ? 1.0 - pow(a->beta2, (double)step) : 1.0;
  const float b1 = (float)a->beta1, b2 = (float)a->beta2;
  const float one_b1 = (float)(1.0 - a->beta1), one_b2 = (float)(1.0 - a->beta2);
  const float wd = (float)a->weight_decay, decay = (float)(1.0 - a->lr * a->weight_decay);
  const float bc2_sqrt = (float)sqrt(bc2), eps = (float)a->eps;
  const float neg_step = (float)-(a->lr / bc1);
  for (int64_t i = 0; i < n; i++) {
    float g = a->maximize ? -grad[i] : grad[i];
    if (a->decoupled) p[i] = p[i] * decay;
    else if (a->weight_decay != 0) g = fmaf(wd, p[i], g);
    float mi = m[i] * b1;
    mi = fmaf(one_b1, g, mi);
    float vi = v[i] * b2;
    vi = fmaf(one_b2 * g, g, vi);
    m[i] = mi;
    v[i] = vi;
    float use = vi;
    if (vmax != NULL) {
      use = (vmax[i] != vmax[i] || vmax[i] > vi) ? vmax[i] : vi;   /* torch.maximum: NaN wins */
      vmax[i] = use;
    }
    float d = sqrtf(use) / bc2_sqrt;
    d = d + eps;
    p[i] = p[i] + neg_step * mi / d;
  }
  return 0;
}
