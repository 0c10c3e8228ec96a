/* lops_linalg.c — Lua bindings of matmul, mm, bmm, addmm, baddbmm and einsum. */
#include "lbind.h"


/* core.matmul(a, b), core.mm(a, b), core.bmm(a, b) */
static int l_matmul(lua_State *L) {
  pr_Tensor *a = lbind_check_tensor(L, 1), *b = lbind_check_tensor(L, 2);
  return lbind_push_tensor(L, pr_matmul(lbind_rt(L), a, b));
}

static int l_mm(lua_State *L) {
  pr_Tensor *a = lbind_check_tensor(L, 1), *b = lbind_check_tensor(L, 2);
  return lbind_push_tensor(L, pr_mm(lbind_rt(L), a, b));
}

static int l_bmm(lua_State *L) {
  pr_Tensor *a = lbind_check_tensor(L, 1), *b = lbind_check_tensor(L, 2);
  return lbind_push_tensor(L, pr_bmm(lbind_rt(L), a, b));
}

/* core.addmm(c, a, b, {beta=1, alpha=1}) */
static int l_addmm(lua_State *L) {
  pr_Tensor *c = lbind_check_tensor(L, 1), *a = lbind_check_tensor(L, 2);
  pr_Tensor *b = lbind_check_tensor(L, 3);
  double beta = lbind_opt_num(L, 4, "beta", 1), alpha = lbind_opt_num(L, 4, "alpha", 1);
  return lbind_push_tensor(L, pr_addmm(lbind_rt(L), c, a, b, beta, alpha));
}

/* core.baddbmm(c, a, b, {beta=1, alpha=1}) */
static int l_baddbmm(lua_State *L) {
  pr_Tensor *c = lbind_check_tensor(L, 1), *a = lbind_check_tensor(L, 2);
  pr_Tensor *b = lbind_check_tensor(L, 3);
  double beta = lbind_opt_num(L, 4, "beta", 1), alpha = lbind_opt_num(L, 4, "alpha", 1);
  return lbind_push_tensor(L, pr_baddbmm(lbind_rt(L), c, a, b, beta, alpha));
}

/* core.einsum(equation, a, b?) or core.einsum(equation, {a, b}) as torch.einsum takes a list */
static int l_einsum(lua_State *L) {
  const char *eq = luaL_checkstring(L, 1);
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, 2);
    if (n < 1 || n > 2) return luaL_error(L, "einsum: expected 1 or 2 operands, got %d", (int)n);
    lua_settop(L, 2);
    for (lua_Integer i = 1; i <= n; i++) lua_geti(L, 2, i);   /* at 3 and 4 */
    lua_remove(L, 2);
  } else if (lua_gettop(L) > 3) {
    return luaL_error(L, "einsum: at most two operands are supported, got %d",
                      lua_gettop(L) - 1);
  }
  pr_Tensor *a = lbind_check_tensor(L, 2), *b = lbind_opt_tensor(L, 3);
  return lbind_push_tensor(L, pr_einsum(lbind_rt(L), eq, a, b));
}

void lbind_open_ops_linalg(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"matmul", l_matmul}, {"mm", l_mm}, {"bmm", l_bmm}, {"addmm", l_addmm},
      {"baddbmm", l_baddbmm}, {"einsum", l_einsum}, {NULL, NULL}};
  lbind_register(L, funcs);
}
