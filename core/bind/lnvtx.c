/* lnvtx.c — profiler.emit_nvtx: each module call of prof.core's recorder as an NVTX range, so Nsight Systems shows profrun's tree. */
#include <stdio.h>
#include <string.h>

#include "lbind.h"
#include "lnvtx.h"

/* NVTX v3 is header-only (the CUDA toolkit ships it): with no toolkit the hook is absent and
   asking for it says so. */
#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define LNVTX_HAVE 1
#endif
#endif

#ifdef LNVTX_HAVE
void lnvtx_push(prof_State *S, prof_ModuleId id) {
  /* "features.0:Conv2d": libprof_inject.so (and a reader of the Nsight timeline) gets both the
     path and the type back from the name */
  char buf[512];
  prof_ModuleInfo info = {.size = sizeof info};
  if (prof_module_info(S, id, &info) != PROF_OK) return;
  int n = prof_module_path(S, id, buf, sizeof buf - 1);
  if (n < 0) return;
  size_t len = strlen(buf);
  if (len == 0) snprintf(buf, sizeof buf, "%s", info.type);
  else snprintf(buf + len, sizeof buf - len, ":%s", info.type);
  nvtxRangePushA(buf);
}

void lnvtx_pop(void) { nvtxRangePop(); }
#else
void lnvtx_push(prof_State *S, prof_ModuleId id) {
  (void)S;
  (void)id;
}

void lnvtx_pop(void) {}
#endif

int lnvtx_set(lua_State *L) {
  int on = lua_toboolean(L, 1);
#ifdef LNVTX_HAVE
  lbind_ctx(L)->emit_nvtx = on;
  lua_pushboolean(L, 1);
  return 1;
#else
  lbind_ctx(L)->emit_nvtx = 0;
  if (!on) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_pushliteral(L, "profiler.emit_nvtx: profrun was built without NVTX's headers (nvtx3/nvToolsExt.h)");
  return 2;
#endif
}
