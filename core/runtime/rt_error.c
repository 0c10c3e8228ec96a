/* rt_error.c — the runtime's error messages: the bottom of the runtime, it calls nothing of it. */
#include <stdarg.h>
#include <stdio.h>

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
