/* ignore.c — the C twin of ignore_modules: a host predicate over every module's path and type. */
#include <string.h>

#include "prof_internal.h"

int32_t prof_ignore_apply(prof_State *S, prof_IgnoreFn fn, void *ud) {
  if (fn == NULL) return profI_error(S, PROF_ERRARG, "prof_ignore_apply: no filter function"), -PROF_ERRARG;
  int32_t n = prof_module_count(S), ignored = 0;
  if (n == 0) return 0;
  prof_ModuleId *ids = profI_alloc(S, (size_t)n * sizeof *ids);
  char small[256], *path = small;
  size_t cap = sizeof small;
  int32_t rc = 0;
  if (ids == NULL) {
    profI_error(S, PROF_ERRMEM, "out of memory applying an ignore filter to %d modules", (int)n);
    return -PROF_ERRMEM;
  }
  prof_module_preorder(S, ids, n);
  for (int32_t i = 0; i < n; i++) {
    int len = prof_module_path(S, ids[i], path, cap);
    if (len >= 0 && (size_t)len >= cap) {   /* a long path: grow the buffer once for it */
      if (path != small) profI_free(S, path, cap);
      cap = (size_t)len + 1;
      path = profI_alloc(S, cap);
      if (path == NULL) {
        path = small, cap = sizeof small;
        rc = -profI_error(S, PROF_ERRMEM, "out of memory reading the path of module %d", (int)ids[i]);
        break;
      }
      prof_module_path(S, ids[i], path, cap);
    }
    prof_ModuleInfo info = {.size = sizeof info};
    prof_module_info(S, ids[i], &info);
    if (fn(ud, S, ids[i], path, info.type)) {
      prof_module_set_flags(S, ids[i], info.flags | PROF_MODULE_IGNORED);
      ignored++;
    }
  }
  if (path != small) profI_free(S, path, cap);
  profI_free(S, ids, (size_t)n * sizeof *ids);
  return rc < 0 ? rc : ignored;
}
