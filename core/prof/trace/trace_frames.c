/* trace_frames.c — with_stack's Lua frames as spans: consecutive events sharing a frame make one "lua_function" slice. */
#include <string.h>

#include "trace_internal.h"

/* Splits "inner;mid;outer" (innermost first, as the stack hook gives it) outermost first. */
static int split(const char *stack, const char **start, size_t *len) {
  const char *part[PROFX_MAX_FRAMES];
  size_t plen[PROFX_MAX_FRAMES];
  int n = 0;
  const char *p = stack;
  while (*p != '\0' && n < PROFX_MAX_FRAMES) {
    const char *q = strchr(p, ';');
    size_t l = q != NULL ? (size_t)(q - p) : strlen(p);
    if (l > 0) {
      part[n] = p;
      plen[n++] = l;
    }
    if (q == NULL) break;
    p = q + 1;
  }
  for (int i = 0; i < n; i++) {
    start[i] = part[n - 1 - i];
    len[i] = plen[n - 1 - i];
  }
  return n;
}

/* Closes the open frames from depth keep on, innermost first. */
static void close_from(profX_Frames *F, int keep, profX_FrameFn emit, void *ud) {
  while (F->n > keep) {
    F->n--;
    emit(ud, F->start[F->n], F->len[F->n], F->begin[F->n], F->end[F->n]);
  }
}

void profX_frames_feed(profX_Frames *F, const char *stack, int64_t begin, int64_t end,
                       profX_FrameFn emit, void *ud) {
  const char *start[PROFX_MAX_FRAMES];
  size_t len[PROFX_MAX_FRAMES];
  int n = split(stack, start, len);
  int same = 0;
  while (same < n && same < F->n && len[same] == F->len[same] &&
         memcmp(start[same], F->start[same], len[same]) == 0)
    same++;
  close_from(F, same, emit, ud);
  for (int i = same; i < n; i++) {
    F->start[i] = start[i];
    F->len[i] = len[i];
    F->begin[i] = begin;
    F->end[i] = end;
  }
  F->n = n;
  /* a frame lasts until the end of the latest event run in it */
  for (int i = 0; i < n; i++)
    if (end > F->end[i]) F->end[i] = end;
}

void profX_frames_flush(profX_Frames *F, profX_FrameFn emit, void *ud) { close_from(F, 0, emit, ud); }
