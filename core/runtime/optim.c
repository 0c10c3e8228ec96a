/* optim.c — torch.optim's SGD, Adam and AdamW: in-place float32 updates, one op record per step. */
#include <math.h>
#include <string.h>

#include "runtime.h"

/*
** Every kernel repeats torch 1.13's single-tensor loop (torch/optim/{sgd,adam,adamw}.py) op by op
** in float32, rounded where ATen rounds: a Scalar becomes a float before use, and ATen's
** vectorised cpu kernels fuse add(a, b, alpha) into one fma(alpha, b, a) and addcmul's
** self + v·t1·t2 into fma(v·t1, t2, self), so fmaf stands exactly there (the ISO C11 build
** fuses nothing else). Bias corrections are doubles, as in Python. With this the fixture's five
** steps of every case match torch bit for bit.
*/

/* {====================== checks ======================} */

static int same_layout(pr_Runtime *rt, const char *who, const char *what, const pr_Tensor *p,
                       const pr_Tensor *t) {
  char sp[96], st[96];
  if (t->device != p->device || t->dtype != p->dtype)
    return pr_error(rt, "%s: %s is %s on %s, the parameter %s on %s", who, what,
                    prof_dtype_name(t->dtype), t->be->name,
                    prof_dtype_name(p->dtype), p->be->name);
  if (t->ndim != p->ndim || memcmp(t->shape, p->shape, sizeof *t->shape * (size_t)t->ndim) != 0)
    return pr_error(rt, "%s: %s has shape %s, the parameter %s", who, what,
                    pr_shape_str(t, st, sizeof st), pr_shape_str(p, sp, sizeof sp));
  return 0;
}

/*
** A slot is usable when its state tensors (the first nstate) match the parameter, and on the cpu
** the parameter and its state are contiguous float32 (the kernels index them flat). The gradient
** may have any strides: it is read through a contiguous copy then.
*/
static int check_slot(pr_Runtime *rt, const char *who, const pr_OptimSlot *s, int nstate) {
  static const char *const names[3] = {"state 0", "state 1", "state 2"};
  const pr_Tensor *p = s->param;
  if (p == NULL) return pr_error(rt, "%s: a slot has no parameter", who);
  if (!pr_is_float(p->dtype))
    return pr_error(rt, "%s: parameters must be floating point, got %s", who,
                    prof_dtype_name(p->dtype));
  if (s->grad != NULL && same_layout(rt, who, "the gradient", p, s->grad) != 0) return PR_ERR;
  for (int i = 0; i < nstate; i++) {
    if (s->state[i] == NULL) return pr_error(rt, "%s: %s of a parameter is missing", who, names[i]);
    if (same_layout(rt, who, names[i], p, s->state[i]) != 0) return PR_ERR;
  }
  if (s->step < 1)
    return pr_error(rt, "%s: step counts start at 1, got %lld", who, (long long)s->step);
  if (!pr_holds_values(p)) return 0;
  if (p->dtype != PROF_F32)
    return pr_error(rt, "%s: cpu parameters are float32, got %s", who, prof_dtype_name(p->dtype));
  if (!pr_is_contiguous(p)) return pr_error(rt, "%s: a parameter is not contiguous", who);
  for (int i = 0; i < nstate; i++)
    if (!pr_is_contiguous(s->state[i]))
      return pr_error(rt, "%s: %s of a parameter is not contiguous", who, names[i]);
  return 0;
}

/* One op for the whole step: its operand is a 1-D tensor of every element updated. */
static int record(pr_Runtime *rt, const char *name, const pr_Tensor *like, int64_t numel,
                  int64_t flops, int64_t bytes_read, int64_t bytes_written) {
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = PROF_OP_CUSTOM;
  op.name = name;
  op.ninputs = 1;
  op.in[0].ndim = 1;
  op.in[0].dtype = like != NULL ? like->dtype : PROF_F32;
  op.in[0].dim[0] = numel;
  op.out = op.in[0];
  op.flops = flops;
  op.bytes_read = bytes_read;
  op.bytes_written = bytes_written;
  return pr_record(rt, &op, NULL);
}

/* {====================== SGD ======================} */

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
static void sgd_kernel(float *p, const float *grad, float *buf, int64_t n, int fresh,
                       const pr_SgdArgs *a) {
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
}

int pr_sgd_step(pr_Runtime *rt, int n, const pr_OptimSlot *slots, const pr_SgdArgs *a) {
  const char *who = "sgd_step";
  int momentum = a->momentum != 0;
  if (a->nesterov && (!momentum || a->dampening != 0))
    return pr_error(rt, "%s: Nesterov momentum requires a momentum and zero dampening", who);
  for (int i = 0; i < n; i++)
    if (slots[i].grad != NULL && check_slot(rt, who, &slots[i], momentum) != 0) return PR_ERR;
  int64_t numel = 0, flops = 0, rd = 0, wr = 0;
  const pr_Tensor *like = NULL;
  for (int i = 0; i < n; i++) {
    const pr_OptimSlot *s = &slots[i];
    if (s->grad == NULL) continue;   /* torch skips parameters without a gradient */
    int64_t k = pr_numel(s->param), es = prof_dtype_size(s->param->dtype);
    int fresh = momentum && s->step == 1;
    like = s->param;
    numel += k;
    flops += k * (2 + (a->maximize ? 1 : 0) + (a->weight_decay != 0 ? 2 : 0) +
                  (momentum && !fresh ? 3 : 0) + (momentum && a->nesterov ? 2 : 0));
    rd += k * es * (2 + (momentum && !fresh ? 1 : 0));
    wr += k * es * (1 + momentum);
    if (!pr_holds_values(s->param)) continue;
    pr_Tensor *g = pr_contiguous_data(rt, s->grad);
    if (g == NULL) return PR_ERR;
    sgd_kernel(pr_f32(s->param), pr_f32(g), momentum ? pr_f32(s->state[0]) : NULL, k, fresh, a);
    pr_tensor_release(g);
  }
  return numel > 0 ? record(rt, who, like, numel, flops, rd, wr) : 0;
}

/* {====================== Adam and AdamW ======================} */

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
static void adam_kernel(float *p, const float *grad, float *m, float *v, float *vmax, int64_t n,
                        int64_t step, const pr_AdamArgs *a) {
  const double bc1 = 1.0 - pow(a->beta1, (double)step);
  const double bc2 = 1.0 - pow(a->beta2, (double)step);
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
}

int pr_adam_step(pr_Runtime *rt, int n, const pr_OptimSlot *slots, const pr_AdamArgs *a) {
  const char *who = "adam_step";
  int nstate = a->amsgrad ? 3 : 2;
  for (int i = 0; i < n; i++)
    if (slots[i].grad != NULL && check_slot(rt, who, &slots[i], nstate) != 0) return PR_ERR;
  int64_t per = 13 + (a->maximize ? 1 : 0) + (a->amsgrad ? 1 : 0) +
                (a->decoupled ? 1 : a->weight_decay != 0 ? 2 : 0);
  int64_t numel = 0, rd = 0, wr = 0;
  const pr_Tensor *like = NULL;
  for (int i = 0; i < n; i++) {
    const pr_OptimSlot *s = &slots[i];
    if (s->grad == NULL) continue;
    int64_t k = pr_numel(s->param), es = prof_dtype_size(s->param->dtype);
    like = s->param;
    numel += k;
    rd += k * es * (2 + nstate);
    wr += k * es * (1 + nstate);
    if (!pr_holds_values(s->param)) continue;
    pr_Tensor *g = pr_contiguous_data(rt, s->grad);
    if (g == NULL) return PR_ERR;
    adam_kernel(pr_f32(s->param), pr_f32(g), pr_f32(s->state[0]), pr_f32(s->state[1]),
                a->amsgrad ? pr_f32(s->state[2]) : NULL, k, s->step, a);
    pr_tensor_release(g);
  }
  return numel > 0 ? record(rt, who, like, numel, numel * per, rd, wr) : 0;
}
