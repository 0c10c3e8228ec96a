/* t.h — the tiny in-tree test runner for profrun's C unit tests (one main per test file). */
#ifndef T_H
#define T_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
** A test is a void function; it passes when none of its checks failed. A file's main runs its
** tests with T_RUN and ends with `return T_DONE();`, which prints "N passed, M failed" (the
** Makefile sums these lines with busted's) and returns non-zero when anything failed.
*/
static int t_passed_, t_failed_, t_current_failed_;

#define T_FAIL_(fmt, ...)                                                                 \
  do {                                                                                    \
    t_current_failed_ = 1;                                                                \
    fprintf(stderr, "  %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__);              \
  } while (0)

#define T_CHECK(cond)                                                                     \
  do {                                                                                    \
    if (!(cond)) T_FAIL_("check failed: %s", #cond);                                      \
  } while (0)

#define T_EQ_INT(a, b)                                                                    \
  do {                                                                                    \
    long long t_a_ = (long long)(a), t_b_ = (long long)(b);                               \
    if (t_a_ != t_b_) T_FAIL_("%s == %lld, expected %s == %lld", #a, t_a_, #b, t_b_);     \
  } while (0)

#define T_EQ_STR(a, b)                                                                    \
  do {                                                                                    \
    const char *t_a_ = (a), *t_b_ = (b);                                                  \
    if (t_a_ == NULL || t_b_ == NULL || strcmp(t_a_, t_b_) != 0)                          \
      T_FAIL_("%s is \"%s\", expected \"%s\"", #a, t_a_ ? t_a_ : "(null)",                \
              t_b_ ? t_b_ : "(null)");                                                    \
  } while (0)

#define T_CONTAINS(hay, needle)                                                           \
  do {                                                                                    \
    const char *t_h_ = (hay), *t_n_ = (needle);                                           \
    if (t_h_ == NULL || strstr(t_h_, t_n_) == NULL)                                       \
      T_FAIL_("%s is \"%s\", which lacks \"%s\"", #hay, t_h_ ? t_h_ : "(null)", t_n_);     \
  } while (0)

#define T_NEAR(a, b, tol)                                                                 \
  do {                                                                                    \
    double t_a_ = (double)(a), t_b_ = (double)(b);                                        \
    if (!(fabs(t_a_ - t_b_) <= (tol))) T_FAIL_("%s == %.17g, expected %.17g", #a, t_a_, t_b_); \
  } while (0)

#define T_RUN(fn)                                                                         \
  do {                                                                                    \
    t_current_failed_ = 0;                                                                \
    fn();                                                                                 \
    if (t_current_failed_) {                                                              \
      t_failed_++;                                                                        \
      fprintf(stderr, "FAIL %s\n", #fn);                                                  \
    } else {                                                                              \
      t_passed_++;                                                                        \
    }                                                                                     \
  } while (0)

#define T_DONE() (printf("%d passed, %d failed\n", t_passed_, t_failed_), t_failed_ != 0)

#endif
