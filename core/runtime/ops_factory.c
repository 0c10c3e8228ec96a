/* ops_factory.c — tensors made from values: arange, full, ones and tensor (values built on the host, copied in by the backend), recorded as torch's factory ops. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* {====================== constructors ======================} */

/* float -> bfloat16 bits, rounding to nearest even (NaN stays a quiet NaN). */
static uint16_t to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* float -> IEEE half bits, rounding to nearest even; overflow gives infinity. */
static uint16_t to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu, e8 = (x >> 23) & 0xffu;
  int32_t e = (int32_t)e8 - 127 + 15;
  if (e8 == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  int shift = 13;
  uint32_t base = sign | ((uint32_t)(e > 0 ? e : 0) << 10);
  if (e <= 0) {                /* subnormal: the implicit one joins the mantissa */
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    shift = 14 - e;
  }
  uint32_t h = base | (mant >> shift), rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
  if (rem > mid || (rem == mid && (h & 1u))) h++;   /* a carry rounds into the exponent */
  return (uint16_t)h;
}

/* double -> int64 truncating toward zero; out of range (or NaN) gives 0 rather than UB. */
static int64_t to_i64(double f) { return f > -9.2e18 && f < 9.2e18 ? (int64_t)f : 0; }

/* double -> float; beyond float's range is infinity (a plain cast would be undefined). */
static float to_f32(double f) {
  return f > FLT_MAX ? INFINITY : f < -FLT_MAX ? -INFINITY : (float)f;
}

/* Writes element i of a fresh contiguous cpu tensor. */
static void store(void *p, int dtype, int64_t i, double f, int64_t v) {
  switch (dtype) {
    case PROF_F32: ((float *)p)[i] = to_f32(f); break;
    case PROF_F64: ((double *)p)[i] = f; break;
    case PROF_F16: ((uint16_t *)p)[i] = to_f16(to_f32(f)); break;
    case PROF_BF16: ((uint16_t *)p)[i] = to_bf16(to_f32(f)); break;
    case PROF_I64: ((int64_t *)p)[i] = v; break;
    case PROF_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PROF_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PROF_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    default: ((uint8_t *)p)[i] = f != 0.0 || v != 0; break;   /* bool */
  }
}

/* The values, built on the host, into t through its backend; shapes-only tensors keep none. */
static pr_Tensor *fill(pr_Runtime *rt, pr_Tensor *t, const double *fvals, const int64_t *ivals,
                       int one, double start, double step) {
  if (t == NULL || !pr_holds_values(t)) return t;
  if (fvals == NULL && ivals == NULL && step == 0) return t;   /* already zeros */
  int64_t numel = pr_numel(t);
  size_t nbytes = t->storage->nbytes;
  void *host = malloc(nbytes ? nbytes : 1);
  if (host == NULL) {
    pr_tensor_release(t);
    return pr_fail(rt, "out of memory building %zu bytes of values", nbytes);
  }
  for (int64_t i = 0; i < numel; i++) {
    int64_t k = one ? 0 : i;
    double f = step != 0 ? start + (double)i * step : fvals != NULL ? fvals[k] : (double)ivals[k];
    int64_t v = step != 0 ? to_i64(f) : ivals != NULL ? ivals[k] : to_i64(fvals[k]);
    store(host, t->dtype, i, f, v);
  }
  int rc = t->be->from_host(t->be, rt, t->storage->data, host, nbytes);
  free(host);
  if (rc != 0) {
    pr_error_wrap(rt, "could not copy values to %s", t->be->name);
    pr_tensor_release(t);
    return NULL;
  }
  return t;
}

/* {====================== factory events ======================} */

pr_Tensor *pr_factory_new(pr_Runtime *rt, pr_Factory *f, const char *name, const char *alloc,
                          int ndim, const int64_t *shape, int dtype, int device) {
  f->outer = strcmp(name, "empty") != 0;
  f->filling = 0;
  if (f->outer) pr_part_begin(rt, &f->op, name, NULL, 0, NULL);
  prof_Op made;
  pr_part_begin(rt, &made, alloc != NULL ? alloc : "empty", NULL, 0, NULL);
  pr_Tensor *t = pr_tensor_new(rt, ndim, shape, dtype, device);
  pr_part_end(rt, &made);
  if (t == NULL) pr_factory_end(rt, f);
  return t;
}

void pr_factory_fill(pr_Runtime *rt, pr_Factory *f, const char *fill) {
  if (fill == NULL) return;
  pr_part_begin(rt, &f->fill, fill, NULL, 0, NULL);
  f->filling = 1;
}

void pr_factory_end(pr_Runtime *rt, pr_Factory *f) {
  if (f->filling) pr_part_end(rt, &f->fill);
  if (f->outer) pr_part_end(rt, &f->op);
  f->filling = f->outer = 0;
}

/* A factory's tensor with its values (fill's part around writing them). */
static pr_Tensor *made(pr_Runtime *rt, const char *name, const char *fill_name, int ndim,
                       const int64_t *shape, int dtype, int device, const double *fvals,
                       const int64_t *ivals, int one, double start, double step) {
  pr_Factory f;
  const char *alloc = strcmp(name, "ones_like") == 0 ? "empty_like" : NULL;
  pr_Tensor *t = pr_factory_new(rt, &f, name, alloc, ndim, shape, dtype, device);
  if (t == NULL) return NULL;
  pr_factory_fill(rt, &f, fill_name);
  t = fill(rt, t, fvals, ivals, one, start, step);
  pr_factory_end(rt, &f);
  return t;
}

pr_Tensor *pr_arange(pr_Runtime *rt, double start, double end, double step, int dtype,
                     int device) {
  if (step == 0.0 || !isfinite(step)) return pr_fail(rt, "arange: step must be nonzero and finite");
  if (!isfinite(start) || !isfinite(end) || (end - start) / step < 0.0)
    return pr_fail(rt, "arange: start %g and end %g are inconsistent with step %g", start, end,
                   step);
  double count = ceil((end - start) / step);
  if (count > 9.0e15) return pr_fail(rt, "arange: %g elements are too many", count);
  int64_t n = (int64_t)count;
  /* torch's arange writes through arange.out: aten::arange over aten::empty and aten::arange */
  return made(rt, "arange", "arange", 1, &n, dtype, device, NULL, NULL, 0, start, step);
}

pr_Tensor *pr_full(pr_Runtime *rt, const char *name, int ndim, const int64_t *shape, double value,
                   int dtype, int device) {
  int64_t v = to_i64(value);
  return made(rt, name, "fill_", ndim, shape, dtype, device, &value, &v, 1, 0, 0);
}

pr_Tensor *pr_tensor_from(pr_Runtime *rt, int ndim, const int64_t *shape, const double *fvals,
                          const int64_t *ivals, int dtype, int device) {
  pr_Tensor *t = pr_tensor_new(rt, ndim, shape, dtype, device);
  return fill(rt, t, fvals, ivals, 0, 0, 0);
}
