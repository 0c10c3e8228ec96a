/* flops_conv.c — flop formulas of convolutions, pooling and interpolate. */
#include <math.h>

#include "flops_internal.h"

/* Python's a // b for b > 0 (rounds toward minus infinity): DeepSpeed's sizes use it. */
static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && a < 0) q--;
  return q;
}

static int64_t gcd(int64_t a, int64_t b) {
  while (b != 0) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* stride, padding, dilation: 0 means PyTorch's default (1, 0, 1); negative values are errors. */
static int check_geometry(const profF_Ctx *c, const prof_Op *op, int nsp) {
  for (int i = 0; i < nsp; i++) {
    if (op->stride[i] < 0 || op->padding[i] < 0 || op->dilation[i] < 0 ||
        op->output_padding[i] < 0)
      return profF_fail(c, op, "negative stride, padding, dilation or output_padding on axis %d",
                        i);
  }
  return PROF_OK;
}

/*
** DeepSpeed's output spatial size of a (forward) convolution: prod over axes of
** (in + 2p - (d(k-1) + 1)) // s + 1, Python floor division, signs and all.
*/
static int64_t ds_conv_out_sp(const prof_Op *op, const prof_Operand *x, const prof_Operand *w) {
  int64_t sp = 1;
  for (int i = 0; i < x->ndim - 2; i++) {
    int64_t s = op->stride[i] > 0 ? op->stride[i] : 1;
    int64_t d = op->dilation[i] > 0 ? op->dilation[i] : 1;
    int64_t span = profF_add(profF_mul(d, w->dim[2 + i] - 1), 1);
    int64_t num = profF_sub(profF_add(x->dim[2 + i], profF_mul(2, op->padding[i])), span);
    sp = profF_mul(sp, profF_add(floordiv(num, s), 1));
  }
  return sp;
}

/* Operands shared by conv and conv_transpose: x [N, C, *sp], weight [*, *, *k], bias, groups. */
static int conv_operands(const profF_Ctx *c, const prof_Op *op, int64_t *groups) {
  int bias = (op->flags & PROF_OPF_BIAS) != 0;
  int rc = profF_need_inputs(c, op, 2 + bias, 2 + bias);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0], *w = &op->in[1];
  if ((rc = profF_need_ndim(c, op, x, "input", 3, 5)) != PROF_OK) return rc;
  if (w->ndim != x->ndim)
    return profF_fail(c, op, "input %s does not match weight %s (%d-D vs %d-D)", PROFF_SHAPE(x),
                      PROFF_SHAPE(w), (int)x->ndim, (int)w->ndim);
  if (op->groups < 0) return profF_fail(c, op, "groups %lld", (long long)op->groups);
  *groups = op->groups > 0 ? op->groups : 1;
  if ((rc = check_geometry(c, op, x->ndim - 2)) != PROF_OK) return rc;
  if (op->out.ndim != x->ndim || op->out.dim[0] != x->dim[0])
    return profF_fail(c, op, "out %s does not fit input %s", PROFF_SHAPE(&op->out),
                      PROFF_SHAPE(x));
  return PROF_OK;
}

/*
** exact: N·Cout·out_sp·(C/groups)·K MACs with out_sp from out; bias N·Cout·out_sp adds.
** deepspeed: K·C·(Cout//groups)·N·out_sp with its own out_sp formula; bias Cout·N·out_sp.
*/
int profF_conv(const profF_Ctx *c, prof_Op *op) {
  int64_t g;
  int rc = conv_operands(c, op, &g);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0], *w = &op->in[1];
  int nsp = x->ndim - 2;
  int64_t n = x->dim[0], cin = x->dim[1], cout = w->dim[0];
  if (profF_mul(w->dim[1], g) != cin || cout % g != 0)
    return profF_fail(c, op, "input %s does not match weight %s with groups=%lld",
                      PROFF_SHAPE(x), PROFF_SHAPE(w), (long long)g);
  if ((op->flags & PROF_OPF_BIAS) && profF_numel(&op->in[2]) != cout)
    return profF_fail(c, op, "bias %s does not match weight %s", PROFF_SHAPE(&op->in[2]),
                      PROFF_SHAPE(w));
  if (op->out.dim[1] != cout)
    return profF_fail(c, op, "out %s does not match weight %s", PROFF_SHAPE(&op->out),
                      PROFF_SHAPE(w));
  int64_t k = profF_prod(w->dim + 2, nsp);
  int64_t sp = PROFF_DS(c) ? ds_conv_out_sp(op, x, w) : profF_prod(op->out.dim + 2, nsp);
  int64_t positions = profF_mul(n, sp);
  if (PROFF_DS(c))
    op->macs = profF_mul(profF_mul(k, cin), profF_mul(cout / g, positions));
  else
    op->macs = profF_mul(profF_mul(positions, cout), profF_mul(cin / g, k));
  op->flops = profF_mul(2, op->macs);
  if (op->flags & PROF_OPF_BIAS) op->flops = profF_add(op->flops, profF_mul(cout, positions));
  return PROF_OK;
}

/*
** exact: every input position scatters into Cout/groups channels over K taps:
** N·C·in_sp·(Cout/groups)·K MACs; the bias adds once per real output element.
** deepspeed: takes weight.shape[1] (already Cout/groups) as out_channels and divides by groups
** again; the bias uses the forward-conv output size formula (DeepSpeed PR #8323 fixes both).
*/
int profF_conv_transpose(const profF_Ctx *c, prof_Op *op) {
  int64_t g;
  int rc = conv_operands(c, op, &g);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0], *w = &op->in[1];
  int nsp = x->ndim - 2;
  int64_t n = x->dim[0], cin = x->dim[1], per_group = w->dim[1];
  int64_t cout = profF_mul(per_group, g);
  if (w->dim[0] != cin || cin % g != 0)
    return profF_fail(c, op, "input %s does not match weight %s with groups=%lld",
                      PROFF_SHAPE(x), PROFF_SHAPE(w), (long long)g);
  if ((op->flags & PROF_OPF_BIAS) && profF_numel(&op->in[2]) != cout)
    return profF_fail(c, op, "bias %s does not match weight %s with groups=%lld",
                      PROFF_SHAPE(&op->in[2]), PROFF_SHAPE(w), (long long)g);
  if (op->out.dim[1] != cout)
    return profF_fail(c, op, "out %s does not match weight %s with groups=%lld",
                      PROFF_SHAPE(&op->out), PROFF_SHAPE(w), (long long)g);
  int64_t k = profF_prod(w->dim + 2, nsp);
  int64_t in_pos = profF_mul(n, profF_prod(x->dim + 2, nsp));
  if (PROFF_DS(c)) {
    op->macs = profF_mul(profF_mul(k, cin), profF_mul(per_group / g, in_pos));
    op->flops = profF_mul(2, op->macs);
    if (op->flags & PROF_OPF_BIAS)
      op->flops = profF_add(op->flops,
                            profF_mul(profF_mul(per_group, n), ds_conv_out_sp(op, x, w)));
    return PROF_OK;
  }
  op->macs = profF_mul(profF_mul(in_pos, cin), profF_mul(per_group, k));
  op->flops = profF_mul(2, op->macs);
  if (op->flags & PROF_OPF_BIAS) op->flops = profF_add(op->flops, profF_numel(&op->out));
  return PROF_OK;
}

/* {====================== pooling ======================} */

/*
** exact: K = prod(kernel) per output element: avg pool K-1 adds and a divide, max pool K
** comparisons (a running max starting at -inf). deepspeed: numel(input), kernel ignored.
*/
int profF_pool(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 1);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0];
  int nsp = 0;
  while (nsp < 3 && op->kernel[nsp] > 0) nsp++;
  if (nsp == 0) return profF_fail(c, op, "no kernel size (kernel[0] is %lld)",
                                  (long long)op->kernel[0]);
  if ((rc = check_geometry(c, op, nsp)) != PROF_OK) return rc;
  if ((rc = profF_need_ndim(c, op, x, "input", nsp + 1, nsp + 2)) != PROF_OK) return rc;
  if (op->out.ndim != x->ndim)
    return profF_fail(c, op, "out %s does not fit input %s", PROFF_SHAPE(&op->out),
                      PROFF_SHAPE(x));
  op->macs = 0;
  if (PROFF_DS(c))
    op->flops = profF_numel(x);
  else
    op->flops = profF_mul(profF_numel(&op->out), profF_prod(op->kernel, nsp));
  return PROF_OK;
}

/*
** The number of input elements all adaptive windows of one axis cover. Window i spans
** [floor(i·in/out), ceil((i+1)·in/out)); the sum telescopes to in + out - gcd(in, out)
** (the ceilings exceed the floors exactly where out does not divide i·in).
*/
static int64_t adaptive_cover(int64_t in, int64_t out) {
  if (out == 0) return 0;
  return profF_sub(profF_add(in, out), gcd(in, out));
}

/* Sum over output elements of their window sizes: the product of the per-axis covers. N and C
   axes have out == in, whose cover is in: so every axis can be treated alike. */
static int64_t adaptive_total(const prof_Operand *x, const prof_Operand *out) {
  int64_t t = 1;
  for (int i = 0; i < x->ndim; i++) t = profF_mul(t, adaptive_cover(x->dim[i], out->dim[i]));
  return t;
}

/*
** exact: one operation per covered input element and output (avg: adds and a divide; max:
** comparisons), i.e. the exact sum of the adaptive window sizes. deepspeed: numel(input).
*/
int profF_adaptive_pool(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 1);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0];
  if ((rc = profF_need_ndim(c, op, x, "input", 2, 5)) != PROF_OK) return rc;
  if (op->out.ndim != x->ndim)
    return profF_fail(c, op, "out %s does not fit input %s", PROFF_SHAPE(&op->out),
                      PROFF_SHAPE(x));
  op->macs = 0;
  op->flops = PROFF_DS(c) ? profF_numel(x) : adaptive_total(x, &op->out);
  return PROF_OK;
}

/* {====================== interpolate ======================} */

/* numel·s^k for a scalar scale factor, as Python computes numel * s**k (float unless integral). */
static int64_t ds_scale_pow(int64_t numel, double s, int k) {
  if (s == floor(s) && s < 2147483648.0) {
    int64_t p = 1;
    for (int i = 0; i < k; i++) p = profF_mul(p, (int64_t)s);
    return profF_mul(numel, p);
  }
  return profF_trunc((double)numel * pow(s, (double)k));
}

/*
** exact, per output element: nearest 0 (a gather); linear family 3 flops per lerp
** (a + w·(b - a)) with 2^d - 1 lerps in d dims: linear 3, bilinear 9, trilinear 21; bicubic
** 5 cubic rows of 4 taps (4 mul + 3 add) = 35; area = adaptive average pooling.
** deepspeed: with a size, prod(size) (a scalar size: that one int); with a scale factor,
** numel(input)·int(prod(scales)), or numel(input)·s^(ndim-2) for one scale; mode ignored.
*/
int profF_interpolate(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 1);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0], *out = &op->out;
  if ((rc = profF_need_ndim(c, op, x, "input", 3, 5)) != PROF_OK) return rc;
  int nsp = x->ndim - 2;
  if (out->ndim != x->ndim || out->dim[0] != x->dim[0] || out->dim[1] != x->dim[1])
    return profF_fail(c, op, "out %s does not fit input %s", PROFF_SHAPE(out), PROFF_SHAPE(x));
  int given = (op->flags & PROF_OPF_SIZE_GIVEN) != 0;
  if (!given) {
    if (op->scale_count != 1 && op->scale_count != nsp)
      return profF_fail(c, op, "%d scale factors for input %s (1 or %d expected)",
                        (int)op->scale_count, PROFF_SHAPE(x), nsp);
    for (int i = 0; i < op->scale_count; i++)
      if (!(op->scale[i] > 0.0) || isinf(op->scale[i]))
        return profF_fail(c, op, "scale factor %g", op->scale[i]);
  }
  static const int mode_nsp[] = {
    [PROF_INTERP_NEAREST] = 0, [PROF_INTERP_LINEAR] = 1, [PROF_INTERP_BILINEAR] = 2,
    [PROF_INTERP_BICUBIC] = 2, [PROF_INTERP_TRILINEAR] = 3, [PROF_INTERP_AREA] = 0,
  };
  if (op->mode < 0 || op->mode > PROF_INTERP_AREA)
    return profF_fail(c, op, "unknown mode %d", (int)op->mode);
  if (mode_nsp[op->mode] != 0 && mode_nsp[op->mode] != nsp)
    return profF_fail(c, op, "mode %d needs a %d-D input, got %s", (int)op->mode,
                      mode_nsp[op->mode] + 2, PROFF_SHAPE(x));
  op->macs = 0;
  if (PROFF_DS(c)) {
    if (given)
      op->flops = (op->flags & PROF_OPF_SIZE_SCALAR) ? out->dim[2] : profF_prod(out->dim + 2, nsp);
    else if (op->scale_count == 1)
      op->flops = ds_scale_pow(profF_numel(x), op->scale[0], nsp);
    else {
      double p = 1.0;
      for (int i = 0; i < nsp; i++) p *= op->scale[i];
      op->flops = profF_mul(profF_numel(x), profF_trunc(p));
    }
    return PROF_OK;
  }
  int64_t per;
  switch (op->mode) {
    case PROF_INTERP_NEAREST: per = 0; break;
    case PROF_INTERP_BICUBIC: per = 35; break;
    case PROF_INTERP_AREA: op->flops = adaptive_total(x, out); return PROF_OK;
    default: per = 3 * ((1 << nsp) - 1); break;
  }
  op->flops = profF_mul(per, profF_numel(out));
  return PROF_OK;
}
