/* alloc.c — memory through the session's allocator and its error message: what every core file uses. */
#include <stdio.h>
#include <string.h>

#include "session.h"

const char *prof_errmsg(const prof_State *S) { return S->errmsg; }

void *profI_alloc(prof_State *S, size_t size) { return S->alloc(S->ud, NULL, 0, size); }

void *profI_realloc(prof_State *S, void *ptr, size_t osize, size_t nsize) {
  return S->alloc(S->ud, ptr, osize, nsize);
}

void profI_free(prof_State *S, void *ptr, size_t size) {
  if (ptr != NULL) S->alloc(S->ud, ptr, size, 0);
}

char *profI_strdup(prof_State *S, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = profI_alloc(S, n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

void profI_strfree(prof_State *S, char *s) {
  if (s != NULL) profI_free(S, s, strlen(s) + 1);
}

int profI_error(prof_State *S, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(S->errmsg, sizeof S->errmsg, fmt, ap);
  va_end(ap);
  return code;
}
