/* lops_dense.c — Lua bindings of linear and the matmul family. */
#include "lbind.h"

/* core.linear(x, weight, bias?) */
static int l_linear(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1), *w = lbind_check_tensor(L, 2);
  pr_Tensor *b = lbind_opt_tensor(L, 3);
  return lbind_push_tensor(L, pr_linear(&ctx->rt, x, w, b));
}

void lbind_open_ops_dense(lua_State *L) {
  static const luaL_Reg funcs[] = {{"linear", l_linear}, {NULL, NULL}};
  lbind_register(L, funcs);
}
