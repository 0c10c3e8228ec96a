/* cuda_copy.cu — the device's copies that move elements: strided copies, casts, cat/stack,
   triangles, accumulation, where, and binary arithmetic with broadcasting. */
#include <math.h>
#include <stdlib.h>

#include "cuda_util.cuh"
#include "binary_ops.h"

/* {====================== strided copies ======================} */

/* dst[dv(i)] = src[sv(i)] for elements of es bytes (copied as their own width). */
template <class T> static void copy_elems(void *dst, View dv, const void *src, View sv, int64_t n) {
  T *d = (T *)dst;
  const T *s = (const T *)src;
  pr_launch(n, [=] __device__(int64_t i) { d[view_off(dv, i)] = s[view_off(sv, i)]; });
}

static int copy_view(pr_Runtime *rt, const char *op, void *dst, View dv, const void *src, View sv,
                     int64_t n, size_t es) {
  switch (es) {
    case 1: copy_elems<uint8_t>(dst, dv, src, sv, n); break;
    case 2: copy_elems<uint16_t>(dst, dv, src, sv, n); break;
    case 4: copy_elems<uint32_t>(dst, dv, src, sv, n); break;
    case 8: copy_elems<uint64_t>(dst, dv, src, sv, n); break;
    default: return pr_error(rt, "%s: elements of %zu bytes", op, es);
  }
  return pr_cuda_check(rt, op);
}

/* c's elements laid out contiguously from c->offset. */
static View dense_view(const pr_Tensor *c) {
  View v = view_of(c);
  int64_t s = 1;
  for (int d = c->ndim - 1; d >= 0; d--) {
    v.stride[d] = s;
    s *= c->shape[d];
  }
  return v;
}

extern "C" int pr_cuda_contiguous(pr_Runtime *rt, const pr_Tensor *t, pr_Tensor *c) {
  return copy_view(rt, "contiguous", c->storage->data, dense_view(c), t->storage->data, view_of(t),
                   pr_numel(t), dsize(t->dtype));
}

extern "C" int pr_cuda_copy_into(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src) {
  if (dst->dtype != src->dtype || pr_numel(dst) != pr_numel(src))
    return pr_error(rt, "copy: %s into %s of another size or dtype", dname(src->dtype),
                    dname(dst->dtype));
  /* both walked in logical order: src's shape may differ from dst's, only the count matches */
  return copy_view(rt, "copy", dst->storage->data, view_of(dst), src->storage->data, view_of(src),
                   pr_numel(dst), dsize(dst->dtype));
}

/* {====================== casts ======================} */

__device__ __forceinline__ double load_as(int dtype, const void *p, int64_t off) {
  switch (dtype) {
    case PROF_F32: return ((const float *)p)[off];
    case PROF_F64: return ((const double *)p)[off];
    case PROF_F16: return __half2float(((const __half *)p)[off]);
    case PROF_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[off]);
    case PROF_I64: return (double)((const int64_t *)p)[off];
    case PROF_I32: return ((const int32_t *)p)[off];
    case PROF_I8: return ((const int8_t *)p)[off];
    default: return ((const uint8_t *)p)[off];   /* uint8, bool */
  }
}

__device__ __forceinline__ void store_as(int dtype, void *p, int64_t i, double v) {
  switch (dtype) {
    case PROF_F32: ((float *)p)[i] = (float)v; break;
    case PROF_F64: ((double *)p)[i] = v; break;
    case PROF_F16: ((__half *)p)[i] = __float2half((float)v); break;
    case PROF_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
    case PROF_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case PROF_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PROF_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PROF_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
  }
}

/* Through double as the cpu's cast: exact for every value the narrower types hold (int64 beyond
   2^53 rounds, as on the cpu). float16 and bfloat16 exist here, unlike on the cpu. */
extern "C" int pr_cuda_cast(pr_Runtime *rt, const pr_Tensor *src, pr_Tensor *dst) {
  int st = src->dtype, dt = dst->dtype;
  const void *s = src->storage->data;
  void *d = dst->storage->data;
  View sv = view_of(src);
  int64_t o = dst->offset;
  pr_launch(pr_numel(src), [=] __device__(int64_t i) {
    store_as(dt, d, o + i, load_as(st, s, view_off(sv, i)));
  });
  return pr_cuda_check(rt, "to");
}

/* {====================== cat, stack, triangles ======================} */

extern "C" int pr_cuda_join(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int d, int stacked,
                            pr_Tensor *out) {
  int64_t start = 0;
  for (int k = 0; k < n; k++) {
    const pr_Tensor *x = xs[k];
    int64_t len = stacked ? 1 : x->shape[d];
    if (pr_numel(x) > 0) {
      /* x's slice of out: out's strides without the stacked dim, offset at its start */
      View dv = view_of(x);
      for (int i = 0, j = 0; i < out->ndim; i++)
        if (!stacked || i != d) dv.stride[j++] = out->stride[i];
      dv.offset = out->offset + start * out->stride[d];
      int rc = copy_view(rt, stacked ? "stack" : "cat", out->storage->data, dv, x->storage->data,
                         view_of(x), pr_numel(x), dsize(out->dtype));
      if (rc != 0) return rc;
    }
    start += len;
  }
  return 0;
}

template <class T> static void triangle_of(T *p, int64_t n, int64_t rows, int64_t cols,
                                           int64_t diagonal, int upper) {
  pr_launch(n, [=] __device__(int64_t i) {
    int64_t c = i % cols, r = (i / cols) % rows;
    /* triu keeps c - r >= diagonal, tril keeps c - r <= diagonal */
    if (upper ? c - r < diagonal : c - r > diagonal) p[i] = (T)0;
  });
}

extern "C" int pr_cuda_triangle(pr_Runtime *rt, pr_Tensor *out, int64_t diagonal, int upper) {
  int64_t rows = out->shape[out->ndim - 2], cols = out->shape[out->ndim - 1], n = pr_numel(out);
  if (rows * cols == 0) return 0;
  char *p = (char *)out->storage->data + dsize(out->dtype) * (size_t)out->offset;
  switch (dsize(out->dtype)) {
    case 1: triangle_of((uint8_t *)p, n, rows, cols, diagonal, upper); break;
    case 2: triangle_of((uint16_t *)p, n, rows, cols, diagonal, upper); break;
    case 4: triangle_of((uint32_t *)p, n, rows, cols, diagonal, upper); break;
    default: triangle_of((uint64_t *)p, n, rows, cols, diagonal, upper); break;
  }
  return pr_cuda_check(rt, upper ? "triu" : "tril");
}

/* {====================== accumulate, where ======================} */

template <class T> static void accumulate_of(T *d, View dv, const T *s, View sv, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    T *p = d + view_off(dv, i);
    *p = of_f<T>(f_of(*p) + f_of(s[view_off(sv, i)]));
  });
}

/* Gradients of a half tensor are of its dtype (as torch's): each sum is rounded once. */
extern "C" int pr_cuda_accumulate(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src) {
  if (need_float(rt, "accumulate", dst, src) != 0) return PR_ERR;
  PR_FLOAT_SWITCH(dst->dtype, accumulate_of<T>(base_of<T>(dst), view_of(dst), base_of<T>(src),
                                               view_of(src), pr_numel(dst)));
  return pr_cuda_check(rt, "accumulate");
}

template <class T>
static void where_of(const uint8_t *c, View cv, const T *a, View av, const T *b, View bv, T sa,
                     T sb, T *o, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    o[i] = c[view_off(cv, i)] ? (a ? a[view_off(av, i)] : sa) : (b ? b[view_off(bv, i)] : sb);
  });
}

extern "C" int pr_cuda_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a,
                             const pr_Tensor *b, double sa, double sb, pr_Tensor *out) {
  if (cond->dtype != PROF_BOOL)
    return pr_error(rt, "where: the condition must be bool, got %s", dname(cond->dtype));
  if ((a != NULL && a->dtype != out->dtype) || (b != NULL && b->dtype != out->dtype))
    return pr_error(rt, "where: values of another dtype than %s", dname(out->dtype));
  int nd = out->ndim;
  View cv = view_bcast(cond, nd, out->shape), av = view_bcast(a, nd, out->shape),
       bv = view_bcast(b, nd, out->shape);
  const uint8_t *c = base_of<uint8_t>(cond);
  int64_t n = pr_numel(out);
#define WHERE(T, A, B)                                                                        \
  where_of<T>(c, cv, a ? base_of<T>(a) : NULL, av, b ? base_of<T>(b) : NULL, bv, (A), (B),    \
              base_of<T>(out) + out->offset, n)
  switch (out->dtype) {
    case PROF_F32: WHERE(float, (float)sa, (float)sb); break;
    case PROF_F64: WHERE(double, sa, sb); break;
    case PROF_F16: WHERE(__half, __float2half((float)sa), __float2half((float)sb)); break;
    case PROF_BF16:
      WHERE(__nv_bfloat16, __float2bfloat16((float)sa), __float2bfloat16((float)sb));
      break;
    case PROF_I64: WHERE(int64_t, (int64_t)sa, (int64_t)sb); break;
    case PROF_I32: WHERE(int32_t, (int32_t)sa, (int32_t)sb); break;
    case PROF_I8: WHERE(int8_t, (int8_t)sa, (int8_t)sb); break;
    case PROF_BOOL: WHERE(uint8_t, sa != 0, sb != 0); break;
    case PROF_U8: WHERE(uint8_t, (uint8_t)sa, (uint8_t)sb); break;
    default: return pr_error(rt, "where: %s is not computed on cuda", dname(out->dtype));
  }
#undef WHERE
  return pr_cuda_check(rt, "where");
}

/* {====================== binary arithmetic ======================} */

/* Float element types T (float, __half, __nv_bfloat16): the float32 formula, one rounding. */
template <class T>
static void binary_of(int k, const T *pa, View av, const T *pb, View bv, float sv,
                      int scalar_first, T *o, int64_t n) {
  pr_launch(n, [=] __device__(int64_t i) {
    float x = f_of(pa[view_off(av, i)]);
    o[i] = of_f<T>(pb ? pr_f32op(k, x, f_of(pb[view_off(bv, i)]))
                      : scalar_first ? pr_f32op(k, sv, x) : pr_f32op(k, x, sv));
  });
}

extern "C" int pr_cuda_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,
                              const pr_Tensor *b, double s, int scalar_first, pr_Tensor *out) {
  const char *name = prof_op_kind_name(kind);
  int od = out->dtype, is_float = od == PROF_F32 || od == PROF_F16 || od == PROF_BF16;
  int k = (int)kind;
  if (!is_float && od != PROF_I64)
    return pr_error(rt, "%s: cuda kernels compute float32, float16, bfloat16 and int64, got %s",
                    name, dname(od));
  if (!is_float && (kind == PROF_OP_DIV || kind == PROF_OP_POW))
    return pr_error(rt, "%s: int64 operands need a float operand on cuda", name);
  int nd = out->ndim;
  View av = view_bcast(a, nd, out->shape), bv = view_bcast(b, nd, out->shape);
  int64_t n = pr_numel(out);
  int has_b = b != NULL;
  if (is_float) {
    if (need_float(rt, name, out, a, b) != 0) return PR_ERR;
    PR_FLOAT_SWITCH(od, binary_of<T>(k, base_of<T>(a), av, has_b ? base_of<T>(b) : NULL, bv,
                                     (float)s, scalar_first, base_of<T>(out) + out->offset, n));
  } else {
    const int64_t *pa = base_of<int64_t>(a), *pb = has_b ? base_of<int64_t>(b) : NULL;
    int64_t *o = base_of<int64_t>(out) + out->offset, sv = (int64_t)s;
    pr_launch(n, [=] __device__(int64_t i) {
      int64_t x = pa[view_off(av, i)];
      o[i] = has_b ? pr_i64op(k, x, pb[view_off(bv, i)])
                   : scalar_first ? pr_i64op(k, sv, x) : pr_i64op(k, x, sv);
    });
  }
  return pr_cuda_check(rt, name);
}

/*
** The keep-mask is drawn on the host from the runtime's generator, as the cpu draws it, and
** copied up: the same seed gives the same mask on both devices (the specs compare them), at the
** cost of one host pass and one copy per dropout.
*/
extern "C" int pr_cuda_dropout(pr_Runtime *rt, const pr_Tensor *x, double p, pr_Tensor *mask,
                               pr_Tensor *out) {
  if (need_float(rt, "dropout", x, mask, out) != 0) return PR_ERR;
  int64_t n = pr_numel(mask);
  int d = mask->dtype;
  size_t es = dsize(d);
  float scale = p < 1.0 ? (float)(1.0 / (1.0 - p)) : 0.0f;
  /* a half mask holds the scale rounded to its dtype, so forward and backward use one factor */
  void *h = malloc(es * (size_t)(n > 0 ? n : 1));
  if (h == NULL) return pr_error(rt, "dropout: out of host memory for a %lld-element mask", (long long)n);
  for (int64_t i = 0; i < n; i++) {
    float v = pr_rand_uniform(rt) < p ? 0.0f : scale;
    if (d == PROF_F16) ((__half *)h)[i] = __float2half(v);
    else if (d == PROF_BF16) ((__nv_bfloat16 *)h)[i] = __float2bfloat16(v);
    else ((float *)h)[i] = v;
  }
  int rc = pr_cuda_from_host(rt, (char *)mask->storage->data + es * (size_t)mask->offset, h,
                             es * (size_t)n);
  free(h);
  if (rc != 0) return rc;
  return pr_cuda_binary(rt, PROF_OP_MUL, x, mask, 0, 0, out);
}
