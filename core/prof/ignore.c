/* ignore.c — the C twin of ignore_modules: a host predicate over every module's path and type. */
#include <string.h>

#include "prof_internal.h"

/* Paths are built in pre-order from the parent's (len[d] is the length at depth d), so the cost
   is the length of the names, not of every path from the root. */
typedef struct Paths {
  char *buf;
  size_t cap;
  size_t *len;
} Paths;

static int grow(prof_State *S, Paths *p, size_t need) {
  if (need <= p->cap) return PROF_OK;
  size_t cap = p->cap * 2 > need ? p->cap * 2 : need;
  char *b = profI_realloc(S, p->buf, p->cap, cap);
  if (b == NULL) return PROF_ERRMEM;
  p->buf = b, p->cap = cap;
  return PROF_OK;
}

int32_t prof_ignore_apply(prof_State *S, prof_IgnoreFn fn, void *ud) {
  if (fn == NULL) return profI_error(S, PROF_ERRARG, "prof_ignore_apply: no filter function"), -PROF_ERRARG;
  int32_t n = prof_module_count(S), ignored = 0;
  if (n == 0) return 0;
  prof_ModuleId *ids = profI_alloc(S, (size_t)n * sizeof *ids);
  Paths p = {profI_alloc(S, 256), 256, profI_alloc(S, (size_t)n * sizeof(size_t))};
  int32_t rc = 0;
  if (ids == NULL || p.buf == NULL || p.len == NULL) {
    rc = -profI_error(S, PROF_ERRMEM, "out of memory applying an ignore filter to %d modules", (int)n);
    goto end;
  }
  prof_module_preorder(S, ids, n);
  for (int32_t i = 0; i < n; i++) {
    prof_ModuleInfo info = {.size = sizeof info};
    prof_module_info(S, ids[i], &info);
    size_t at = info.depth > 0 ? p.len[info.depth - 1] : 0, name = strlen(info.name);
    if (grow(S, &p, at + name + 2) != PROF_OK) {
      rc = -profI_error(S, PROF_ERRMEM, "out of memory building the path of module %d", (int)ids[i]);
      goto end;
    }
    if (info.depth > 1) p.buf[at++] = '.';
    if (info.depth > 0) memcpy(p.buf + at, info.name, name), at += name;
    p.buf[at] = '\0';
    p.len[info.depth] = at;
    if (fn(ud, S, ids[i], p.buf, info.type)) {
      prof_module_set_flags(S, ids[i], info.flags | PROF_MODULE_IGNORED);
      ignored++;
    }
  }
  rc = ignored;
end:
  profI_free(S, ids, (size_t)n * sizeof *ids);
  profI_free(S, p.buf, p.cap);
  profI_free(S, p.len, (size_t)n * sizeof(size_t));
  return rc;
}
