/* lnvtx.h — profiler.emit_nvtx: prof.core's module calls as NVTX ranges (for Nsight Systems). */
#ifndef LNVTX_H
#define LNVTX_H

#include <lua.h>

#include "prof.h"

/* An NVTX range "path:Type" ("Type" for a root) around module id's call; pop closes it. */
void lnvtx_push(prof_State *S, prof_ModuleId id);
void lnvtx_pop(void);

/* core.set_emit_nvtx(on) -> true, or nil and why (built without NVTX's headers). */
int lnvtx_set(lua_State *L);

#define LNVTX_FUNCS {"set_emit_nvtx", lnvtx_set}

#endif
