/* lops_select.c — Lua bindings of splitting and selection: chunk, split, stack, masked_fill, where,
   triu, tril. */
#include <math.h>
#include <string.h>

#include "lbind.h"


/* {====================== chunk, split, stack ======================} */

/* Pushes the views of x along dim with the sizes in the userdata at the top. */
static int push_pieces(lua_State *L, pr_Tensor *x, int dim, int64_t n) {
  const int64_t *sizes = lua_touserdata(L, -1);
  if (n > 100000) return luaL_error(L, "%I pieces are too many to return", (lua_Integer)n);
  luaL_checkstack(L, (int)n + 2, "too many pieces");
  pr_Tensor **out = lua_newuserdatauv(L, sizeof *out * (size_t)(n > 0 ? n : 1), 0);
  if (pr_split(lbind_rt(L), x, dim, n, sizes, out) != 0) return lbind_rt_error(L);
  for (int64_t i = 0; i < n; i++) lbind_push_tensor(L, out[i]);
  return (int)n;
}

/* core.chunk(x, chunks, dim=0) -> the pieces (views) */
static int l_chunk(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int64_t chunks = luaL_checkinteger(L, 2);
  int dim = (int)luaL_optinteger(L, 3, 0);
  int64_t n = pr_split_plan(lbind_rt(L), x, dim, 1, chunks, NULL, 0);
  if (n < 0) return lbind_rt_error(L);
  int64_t *sizes = lua_newuserdatauv(L, sizeof *sizes * (size_t)(n > 0 ? n : 1), 0);
  pr_split_plan(lbind_rt(L), x, dim, 1, chunks, sizes, n);
  return push_pieces(L, x, dim, n);
}

/* core.split(x, split_size or {sizes...}, dim=0) -> the pieces (views) */
static int l_split(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int dim = (int)luaL_optinteger(L, 3, 0);
  int64_t n;
  if (lua_istable(L, 2)) {
    n = (int64_t)luaL_len(L, 2);
    int64_t *sizes = lua_newuserdatauv(L, sizeof *sizes * (size_t)(n > 0 ? n : 1), 0);
    for (int64_t i = 0; i < n; i++) {
      lua_geti(L, 2, i + 1);
      if (!lua_isinteger(L, -1)) return luaL_error(L, "split: sizes must be integers");
      sizes[i] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  } else {
    int64_t size = luaL_checkinteger(L, 2);
    n = pr_split_plan(lbind_rt(L), x, dim, 0, size, NULL, 0);
    if (n < 0) return lbind_rt_error(L);
    int64_t *sizes = lua_newuserdatauv(L, sizeof *sizes * (size_t)(n > 0 ? n : 1), 0);
    pr_split_plan(lbind_rt(L), x, dim, 0, size, sizes, n);
  }
  return push_pieces(L, x, dim, n);
}

/* core.stack({a, b, ...}, dim=0) */
static int l_stack(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int dim = (int)luaL_optinteger(L, 2, 0);
  int n = (int)luaL_len(L, 1);
  const pr_Tensor **xs = lua_newuserdatauv(L, sizeof *xs * (size_t)(n > 0 ? n : 1), 0);
  for (int i = 0; i < n; i++) {
    lua_geti(L, 1, i + 1);
    xs[i] = lbind_check_tensor(L, -1);
    lua_pop(L, 1);             /* still referenced by the list */
  }
  return lbind_push_tensor(L, pr_stack(lbind_rt(L), n, xs, dim));
}

/* {====================== masked_fill, where, triu, tril ======================} */


/* core.masked_fill(x, mask, value) */
static int l_masked_fill(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1), *mask = lbind_check_tensor(L, 2);
  return lbind_push_tensor(L, pr_masked_fill(lbind_rt(L), x, mask, lbind_check_value(L, 3)));
}

/* core.where(cond, a, b): a and b tensors or numbers */
static int l_where(lua_State *L) {
  pr_Tensor *cond = lbind_check_tensor(L, 1);
  pr_Tensor *a = lbind_is_tensor(L, 2) ? lbind_check_tensor(L, 2) : NULL;
  pr_Tensor *b = lbind_is_tensor(L, 3) ? lbind_check_tensor(L, 3) : NULL;
  double sa = a == NULL ? lbind_check_value(L, 2) : 0, sb = b == NULL ? lbind_check_value(L, 3) : 0;
  return lbind_push_tensor(L, pr_where(lbind_rt(L), cond, a, b, sa, sb));
}

/* core.triu(x, diagonal=0), core.tril(x, diagonal=0) */
static int l_triu(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_triangle(lbind_rt(L), x, luaL_optinteger(L, 2, 0), 1));
}

static int l_tril(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_triangle(lbind_rt(L), x, luaL_optinteger(L, 2, 0), 0));
}

void lbind_open_ops_select(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"chunk", l_chunk}, {"split", l_split}, {"stack", l_stack},
      {"masked_fill", l_masked_fill}, {"where", l_where}, {"triu", l_triu}, {"tril", l_tril},
      {NULL, NULL}};
  lbind_register(L, funcs);
}
