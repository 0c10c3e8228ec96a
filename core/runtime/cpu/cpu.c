/* cpu.c — what cpu kernels share: element access, strided copies, accumulation, casts. */
#include <math.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

float *pr_f32(const pr_Tensor *t) {
  return (float *)t->storage->data + t->offset;
}

/* Calls fn for the element offsets of t in row-major order (any strides), without recursion. */
#define FOR_EACH_OFFSET(t, off, body)                                                       \
  do {                                                                                      \
    int64_t idx_[PR_MAX_DIMS] = {0};                                                        \
    int64_t n_ = pr_numel(t);                                                               \
    int64_t off = 0;                                                                        \
    for (int64_t k_ = 0; k_ < n_; k_++) {                                                   \
      body;                                                                                 \
      for (int d_ = (t)->ndim - 1; d_ >= 0; d_--) {                                         \
        off += (t)->stride[d_];                                                             \
        if (++idx_[d_] < (t)->shape[d_]) break;                                             \
        off -= (t)->stride[d_] * (t)->shape[d_];                                            \
        idx_[d_] = 0;                                                                       \
      }                                                                                     \
    }                                                                                       \
  } while (0)

int pr_cpu_contiguous(pr_Runtime *rt, const pr_Tensor *t, pr_Tensor *c) {
  (void)rt;
  size_t es = (size_t)prof_dtype_size(t->dtype);
  const char *src = (const char *)t->storage->data;
  char *dst = (char *)c->storage->data + es * (size_t)c->offset;
  int64_t i = 0;
  FOR_EACH_OFFSET(t, off, memcpy(dst + es * (size_t)i++, src + es * (size_t)(t->offset + off), es));
  return 0;
}

int pr_cpu_accumulate(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src) {
  if (dst->dtype != PROF_F32 || src->dtype != PROF_F32)
    return pr_error(rt, "accumulate: cpu gradients are float32, got %s", prof_dtype_name(src->dtype));
  float *d = (float *)dst->storage->data + dst->offset;
  const float *s = (const float *)src->storage->data + src->offset;
  if (pr_is_contiguous(dst) && pr_is_contiguous(src)) {
    for (int64_t i = 0, n = pr_numel(dst); i < n; i++) d[i] += s[i];
    return 0;
  }
  /* walk both in the same logical order */
  pr_Tensor *sc = pr_contiguous_data(rt, src);
  if (sc == NULL) return PR_ERR;
  const float *sp = pr_f32(sc);
  int64_t i = 0;
  FOR_EACH_OFFSET(dst, off, d[off] += sp[i++]);
  pr_tensor_release(sc);
  return 0;
}

/* {====================== dtype conversion ======================} */

static double load(const pr_Tensor *t, int64_t off) {
  const char *p = (const char *)t->storage->data;
  switch (t->dtype) {
    case PROF_F32: return ((const float *)p)[off];
    case PROF_F64: return ((const double *)p)[off];
    case PROF_I64: return (double)((const int64_t *)p)[off];
    case PROF_I32: return ((const int32_t *)p)[off];
    case PROF_I8: return ((const int8_t *)p)[off];
    default: return ((const uint8_t *)p)[off];   /* uint8, bool */
  }
}

static void store(pr_Tensor *t, int64_t i, double v) {
  char *p = (char *)t->storage->data;
  switch (t->dtype) {
    case PROF_F32: ((float *)p)[i] = (float)v; break;
    case PROF_F64: ((double *)p)[i] = v; break;
    case PROF_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case PROF_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PROF_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PROF_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
  }
}

int pr_cpu_cast(pr_Runtime *rt, const pr_Tensor *src, pr_Tensor *dst) {
  if (src->dtype == PROF_F16 || src->dtype == PROF_BF16 || dst->dtype == PROF_F16 ||
      dst->dtype == PROF_BF16)
    return pr_error(rt, "to: float16 and bfloat16 exist on meta only");
  int64_t i = 0;
  FOR_EACH_OFFSET(src, off, store(dst, i++, load(src, src->offset + off)));
  return 0;
}

int pr_cpu_copy_into(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src) {
  if (dst->dtype != src->dtype || pr_numel(dst) != pr_numel(src))
    return pr_error(rt, "copy: %s into %s of another size or dtype", prof_dtype_name(src->dtype),
                    prof_dtype_name(dst->dtype));
  pr_Tensor *c = pr_contiguous_data(rt, src);
  if (c == NULL) return PR_ERR;
  size_t es = (size_t)prof_dtype_size(dst->dtype);
  const char *s = (const char *)c->storage->data + es * (size_t)c->offset;
  char *d = (char *)dst->storage->data;
  int64_t i = 0;
  FOR_EACH_OFFSET(dst, off, memcpy(d + es * (size_t)(dst->offset + off), s + es * (size_t)i++, es));
  pr_tensor_release(c);
  return 0;
}
