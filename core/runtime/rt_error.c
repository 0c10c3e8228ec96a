/* rt_error.c — the runtime's error messages: the bottom of the runtime, it calls nothing of it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

int pr_error(pr_Runtime *rt, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->err, sizeof rt->err, fmt, ap);
  va_end(ap);
  return PR_ERR;
}

pr_Tensor *pr_fail(pr_Runtime *rt, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->err, sizeof rt->err, fmt, ap);
  va_end(ap);
  return NULL;
}

int pr_error_wrap(pr_Runtime *rt, const char *fmt, ...) {
  char why[sizeof rt->err];
  memcpy(why, rt->err, sizeof why);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->err, sizeof rt->err, fmt, ap);
  va_end(ap);
  size_t n = strlen(rt->err), room = sizeof rt->err - n;
  if (why[0] != '\0' && room > 3) {   /* ": " and what fits of why, cut as the buffer is */
    size_t k = strnlen(why, room - 3);
    memcpy(rt->err + n, ": ", 2);
    memcpy(rt->err + n + 2, why, k);
    rt->err[n + 2 + k] = '\0';
  }
  return PR_ERR;
}
