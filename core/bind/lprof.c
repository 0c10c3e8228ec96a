/* lprof.c — luaopen_prof_core: builds the prof.core module table and its shared context. */
#include "lbind.h"

#include <string.h>

__attribute__((visibility("default"))) int luaopen_prof_core(lua_State *L);

int luaopen_prof_core(lua_State *L) {
  luaL_checkversion(L);
  LCtx *ctx = lua_newuserdatauv(L, sizeof *ctx, 1);   /* uservalue 1: the recorder's userdata */
  pr_runtime_init(&ctx->rt);
  ctx->forced_device = -1;
  ctx->new_tensors = 0;
  ctx->state_mt = NULL;        /* set when lstate.c makes the metatable */
  ctx->emit_nvtx = 0;          /* profiler.emit_nvtx turns it on (core.set_emit_nvtx) */
  ctx->watch = (prof_OutputWatch){NULL, NULL};
  lua_newtable(L);
  lbind_open_state(L);
  lbind_open_tensor(L);
  lbind_open_ops(L);
  lbind_open_config(L);
  lbind_open_autograd(L);
  lbind_open_optim(L);
  lbind_open_peaks(L);
  lbind_open_term(L);
  lbind_open_files(L);
  lbind_open_report(L);
  lbind_open_hooks(L);
  lbind_open_scopes(L);
  lua_pushliteral(L, PROF_VERSION);
  lua_setfield(L, -2, "VERSION");
  return 1;
}
