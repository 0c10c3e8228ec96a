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

/* One op for the whole step, opened before the updates run: its operand is a 1-D tensor of
   every element updated. */
static int open_step(pr_Runtime *rt, prof_Op *op, const char *name, const pr_Tensor *like,
                     int64_t numel, int64_t flops, int64_t bytes_read, int64_t bytes_written) {
  memset(op, 0, sizeof *op);
  op->kind = PROF_OP_CUSTOM;
  op->name = name;
  op->ninputs = 1;
  op->in[0].ndim = 1;
  op->in[0].dtype = like != NULL ? like->dtype : PROF_F32;
  op->in[0].dim[0] = numel;
  op->flops = flops;
  op->bytes_read = bytes_read;
  op->bytes_written = bytes_written;
  return pr_op_open(rt, op, 1, &numel, op->in[0].dtype);
}

/* {====================== SGD ======================} */

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
  }
  if (numel == 0) return 0;
  prof_Op op;
  if (open_step(rt, &op, who, like, numel, flops, rd, wr) != 0) return PR_ERR;
  for (int i = 0; i < n; i++) {
    const pr_OptimSlot *s = &slots[i];
    if (s->grad == NULL || !pr_holds_values(s->param)) continue;
    pr_Tensor *g = pr_contiguous_data(rt, s->grad);
    if (g == NULL) return pr_op_close(rt, &op, PR_ERR);
    int rc = PR_K(s->param)->sgd(rt, pr_f32(s->param), pr_f32(g),
                                 momentum ? pr_f32(s->state[0]) : NULL, pr_numel(s->param),
                                 momentum && s->step == 1, a);
    pr_tensor_release(g);
    if (rc != 0) return pr_op_close(rt, &op, rc);
  }
  return pr_op_close(rt, &op, 0);
}

/* {====================== Adam and AdamW ======================} */

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
  }
  if (numel == 0) return 0;
  prof_Op op;
  if (open_step(rt, &op, who, like, numel, numel * per, rd, wr) != 0) return PR_ERR;
  for (int i = 0; i < n; i++) {
    const pr_OptimSlot *s = &slots[i];
    if (s->grad == NULL || !pr_holds_values(s->param)) continue;
    pr_Tensor *g = pr_contiguous_data(rt, s->grad);
    if (g == NULL) return pr_op_close(rt, &op, PR_ERR);
    int rc = PR_K(s->param)->adam(rt, pr_f32(s->param), pr_f32(g), pr_f32(s->state[0]),
                                  pr_f32(s->state[1]), a->amsgrad ? pr_f32(s->state[2]) : NULL,
                                  pr_numel(s->param), s->step, a);
    pr_tensor_release(g);
    if (rc != 0) return pr_op_close(rt, &op, rc);
  }
  return pr_op_close(rt, &op, 0);
}
