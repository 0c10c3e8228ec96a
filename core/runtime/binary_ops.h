/* binary_ops.h — what add, sub, mul, div, pow, maximum and minimum compute on one pair of elements, for the cpu and cuda kernels alike. */
#ifndef PR_BINARY_OPS_H
#define PR_BINARY_OPS_H

#include <math.h>
#include <stdint.h>

#include "prof.h"

/* Compiled by cc for cpu/ and by nvcc for cuda/: there the same functions run on the device. */
#ifdef __CUDACC__
#define PR_ELEMENT_FN static inline __host__ __device__
#else
#define PR_ELEMENT_FN static inline
#endif

/* float32: NaN propagates through maximum and minimum, as in torch */
PR_ELEMENT_FN float pr_f32op(int k, float x, float y) {
  switch (k) {
    case PROF_OP_ADD: return x + y;
    case PROF_OP_SUB: return x - y;
    case PROF_OP_MUL: return x * y;
    case PROF_OP_DIV: return x / y;
    case PROF_OP_POW: return powf(x, y);
    case PROF_OP_MAXIMUM: return (x != x || x > y) ? x : y;
    case PROF_OP_MINIMUM: return (x != x || x < y) ? x : y;
    default: return 0;
  }
}

/* int64 (the op layer computes integer division and pow in float32: ops_pointwise.c) */
PR_ELEMENT_FN int64_t pr_i64op(int k, int64_t x, int64_t y) {
  switch (k) {
    case PROF_OP_ADD: return x + y;
    case PROF_OP_SUB: return x - y;
    case PROF_OP_MUL: return x * y;
    case PROF_OP_MAXIMUM: return x > y ? x : y;
    case PROF_OP_MINIMUM: return x < y ? x : y;
    default: return 0;
  }
}

#endif
