/* saturate.h — saturating and checked int64 arithmetic for counts and shapes: the one place it is written. */
#ifndef PROF_SATURATE_H
#define PROF_SATURATE_H

#include <stdint.h>

/*
** Counts of huge or garbage workloads can pass INT64_MAX. Signed overflow is undefined behaviour
** and in practice wraps to a negative count, so sums saturate at INT64_MAX (INT64_MIN below) and
** stay there: a saturated value is its own flag, which the snapshot looks for (cold) so that the
** hot path pays one never-taken jump per add and keeps no flag. Reports warn when it is set.
*/
static inline int64_t prof_sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_expect(__builtin_add_overflow(a, b, &r), 0)) return b < 0 ? INT64_MIN : INT64_MAX;
  return r;
}

static inline int64_t prof_sat_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_expect(__builtin_sub_overflow(a, b, &r), 0)) return b > 0 ? INT64_MIN : INT64_MAX;
  return r;
}

static inline int64_t prof_sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_expect(__builtin_mul_overflow(a, b, &r), 0))
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  return r;
}

static inline int prof_is_saturated(int64_t v) { return v == INT64_MAX || v == INT64_MIN; }

/* What a running total gained since start; a saturated total stays saturated (the gain is
   unknown, and INT64_MAX - start would be a plausible-looking wrong number). */
static inline int64_t prof_sat_gain(int64_t now, int64_t start) {
  return prof_is_saturated(now) ? now : prof_sat_sub(now, start);
}

/* Product of n non-negative dims into *out: 0 when it fits in int64, -1 when it does not (checked,
   not saturating: a shape is either possible or refused). A zero dim makes the product 0. */
static inline int prof_checked_prod(const int64_t *dim, int n, int64_t *out) {
  int64_t p = 1;
  int over = 0;
  for (int i = 0; i < n; i++) {
    if (dim[i] == 0) {
      *out = 0;
      return 0;
    }
    over |= __builtin_mul_overflow(p, dim[i], &p);
  }
  *out = p;
  return over ? -1 : 0;
}

#endif
