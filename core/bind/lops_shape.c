/* lops_shape.c — Lua bindings of views and shape changes (view, transpose, select, cat, ...). */
#include "lbind.h"


/* Shapes and dim lists come as a table or as trailing integers: x:view(2, 3) or x:view{2, 3}. */
static int read_shape(lua_State *L, int idx, int64_t *shape) { return lbind_check_shape(L, idx, shape); }

static int l_view(lua_State *L) {
  int64_t shape[PR_MAX_DIMS];
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int n = read_shape(L, 2, shape);
  return lbind_push_tensor(L, pr_reshape(lbind_rt(L), x, n, shape, 1));
}

static int l_reshape(lua_State *L) {
  int64_t shape[PR_MAX_DIMS];
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int n = read_shape(L, 2, shape);
  return lbind_push_tensor(L, pr_reshape(lbind_rt(L), x, n, shape, 0));
}

static int l_flatten(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int s = (int)luaL_optinteger(L, 2, 0), e = (int)luaL_optinteger(L, 3, -1);
  return lbind_push_tensor(L, pr_flatten(lbind_rt(L), x, s, e));
}

static int l_transpose(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_transpose(lbind_rt(L), x, (int)luaL_checkinteger(L, 2),
                                           (int)luaL_checkinteger(L, 3)));
}

static int l_permute(lua_State *L) {
  int64_t d64[PR_MAX_DIMS];
  int dims[PR_MAX_DIMS];
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int n = read_shape(L, 2, d64);
  for (int i = 0; i < n; i++) dims[i] = (int)d64[i];
  return lbind_push_tensor(L, pr_permute(lbind_rt(L), x, n, dims));
}

static int l_unsqueeze(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_unsqueeze(lbind_rt(L), x, (int)luaL_checkinteger(L, 2)));
}

static int l_squeeze(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int all = lua_isnoneornil(L, 2);
  return lbind_push_tensor(L, pr_squeeze(lbind_rt(L), x, all ? 0 : (int)luaL_checkinteger(L, 2), all));
}

static int l_expand(lua_State *L) {
  int64_t shape[PR_MAX_DIMS];
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int n = read_shape(L, 2, shape);
  return lbind_push_tensor(L, pr_expand(lbind_rt(L), x, n, shape));
}

static int l_contiguous(lua_State *L) {
  return lbind_push_tensor(L, pr_contiguous(lbind_rt(L), lbind_check_tensor(L, 1)));
}

static int l_select(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_select(lbind_rt(L), x, (int)luaL_checkinteger(L, 2),
                                        luaL_checkinteger(L, 3)));
}

static int l_narrow(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_narrow(lbind_rt(L), x, (int)luaL_checkinteger(L, 2),
                                        luaL_checkinteger(L, 3), luaL_checkinteger(L, 4)));
}

/* core.cat({a, b, ...}, dim) */
static int l_cat(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int dim = (int)luaL_optinteger(L, 2, 0);
  int n = (int)luaL_len(L, 1);
  if (n < 1) return luaL_error(L, "cat: expected a non-empty list of tensors");
  const pr_Tensor **xs = lua_newuserdatauv(L, sizeof *xs * (size_t)n, 0);
  for (int i = 0; i < n; i++) {
    lua_geti(L, 1, i + 1);
    xs[i] = lbind_check_tensor(L, -1);
    lua_pop(L, 1);   /* still referenced by the list */
  }
  return lbind_push_tensor(L, pr_cat(lbind_rt(L), n, xs, dim));
}

/* core.to(x, "float32" | "cpu" | {dtype=, device=}) */
static int l_to(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int dtype = -1, device = -1;
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *name = lua_tostring(L, 2);
    dtype = prof_dtype_parse(name);
    if (dtype < 0) device = pr_device_parse(lbind_rt(L), name);
    if (dtype < 0 && device < 0) return luaL_error(L, "to: '%s' is neither a dtype nor a device", name);
  } else {
    const char *d = lbind_opt_str(L, 2, "dtype", NULL), *v = lbind_opt_str(L, 2, "device", NULL);
    if (d != NULL && (dtype = prof_dtype_parse(d)) < 0) return luaL_error(L, "to: unknown dtype '%s'", d);
    if (v != NULL && (device = pr_device_parse(lbind_rt(L), v)) < 0) return luaL_error(L, "to: unknown device '%s'", v);
  }
  return lbind_push_tensor(L, pr_to(lbind_rt(L), x, dtype, device));
}

void lbind_open_ops_shape(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"view", l_view}, {"reshape", l_reshape}, {"flatten", l_flatten},
      {"transpose", l_transpose}, {"permute", l_permute}, {"unsqueeze", l_unsqueeze},
      {"squeeze", l_squeeze}, {"expand", l_expand}, {"contiguous", l_contiguous},
      {"select", l_select}, {"narrow", l_narrow}, {"cat", l_cat}, {"to", l_to}, {NULL, NULL}};
  lbind_register(L, funcs);
}
