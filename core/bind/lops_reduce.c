/* lops_reduce.c — Lua bindings of sum, mean, amax, var and the losses. */
#include <string.h>

#include "lbind.h"


static prof_OpKind kind_of(lua_State *L) {
  return (prof_OpKind)lua_tointeger(L, lua_upvalueindex(2));
}

/*
** dim: nil (every dim), an int, or a list of ints. A table without [1] at idx is the options
** table (x:sum{keepdim=true}) unless it is empty; returns the index of the options.
*/
static int read_dims(lua_State *L, int idx, int *ndims, int *dims) {
  *ndims = 0;
  if (lua_isnoneornil(L, idx)) return idx + 1;
  if (lua_isinteger(L, idx)) {
    dims[0] = (int)lua_tointeger(L, idx);
    *ndims = 1;
    return idx + 1;
  }
  luaL_argexpected(L, lua_istable(L, idx), idx, "nil, integer or list of integers");
  lua_Integer n = luaL_len(L, idx);
  if (n == 0) {
    lua_pushnil(L);
    if (lua_next(L, idx) != 0) {
      lua_pop(L, 2);
      return idx;              /* options in place of dim */
    }
  }
  if (n > PR_MAX_DIMS) return luaL_argerror(L, idx, "too many dims");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    if (!lua_isinteger(L, -1)) return luaL_argerror(L, idx, "dims must be integers");
    dims[*ndims] = (int)lua_tointeger(L, -1);
    (*ndims)++;
    lua_pop(L, 1);
  }
  return idx + 1;
}

/* core.sum(x, dim?, {keepdim=false}); mean and amax alike; var adds correction (or unbiased) */
static int l_reduce(lua_State *L) {
  int dims[PR_MAX_DIMS], ndims;
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int o = read_dims(L, 2, &ndims, dims);
  int keepdim = lbind_opt_bool(L, o, "keepdim", 0);
  double correction = (double)lbind_opt_num(L, o, "correction", 1);
  if (lua_type(L, o) == LUA_TTABLE) {
    lua_getfield(L, o, "unbiased");
    if (!lua_isnil(L, -1)) correction = lua_toboolean(L, -1) ? 1 : 0;
    lua_pop(L, 1);
  }
  return lbind_push_tensor(L, pr_reduce(lbind_rt(L), kind_of(L), x, ndims, dims, keepdim,
                                        correction));
}

/* A tensor under key name of the options table at idx, or NULL. */
static pr_Tensor *opt_tensor_field(lua_State *L, int idx, const char *name) {
  if (lua_type(L, idx) != LUA_TTABLE) return NULL;
  lua_getfield(L, idx, name);
  pr_Tensor *t = NULL;
  if (!lua_isnil(L, -1)) {
    if (!lbind_is_tensor(L, -1))
      return (luaL_error(L, "option '%s': expected a tensor, got %s", name,
                         luaL_typename(L, -1)), NULL);
    t = lbind_check_tensor(L, -1);   /* stays alive: the options table holds it */
  }
  lua_pop(L, 1);
  return t;
}

static int read_reduction(lua_State *L, int idx, const char *op) {
  static const char *const names[] = {"mean", "sum", "none"};   /* prof_Reduction's order */
  const char *r = lbind_opt_str(L, idx, "reduction", "mean");
  for (int i = 0; i < 3; i++)
    if (strcmp(r, names[i]) == 0) return i;
  return luaL_error(L, "%s: reduction '%s' is not one of mean, sum, none", op, r);
}

/* core.cross_entropy(input, target, {weight=, ignore_index=-100, reduction="mean",
                                      label_smoothing=0}); nll_loss alike without smoothing */
static int l_class_loss(lua_State *L) {
  prof_OpKind kind = kind_of(L);
  pr_Tensor *x = lbind_check_tensor(L, 1), *t = lbind_check_tensor(L, 2);
  pr_LossArgs a;
  a.reduction = read_reduction(L, 3, prof_op_kind_name(kind));
  a.ignore_index = lbind_opt_int(L, 3, "ignore_index", -100);
  a.label_smoothing = lbind_opt_num(L, 3, "label_smoothing", 0);
  pr_Tensor *w = opt_tensor_field(L, 3, "weight");
  if (kind == PROF_OP_CROSS_ENTROPY)
    return lbind_push_tensor(L, pr_cross_entropy(lbind_rt(L), x, t, w, &a));
  return lbind_push_tensor(L, pr_nll_loss(lbind_rt(L), x, t, w, &a));
}

/* core.mse_loss(input, target, {reduction="mean"}) */
static int l_mse_loss(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1), *t = lbind_check_tensor(L, 2);
  int r = read_reduction(L, 3, "mse_loss");
  return lbind_push_tensor(L, pr_mse_loss(lbind_rt(L), x, t, r));
}

void lbind_open_ops_reduce(lua_State *L) {
  static const struct { const char *name; lua_CFunction f; prof_OpKind kind; } ops[] = {
      {"sum", l_reduce, PROF_OP_SUM}, {"mean", l_reduce, PROF_OP_MEAN},
      {"amax", l_reduce, PROF_OP_AMAX}, {"var", l_reduce, PROF_OP_VAR},
      {"cross_entropy", l_class_loss, PROF_OP_CROSS_ENTROPY},
      {"nll_loss", l_class_loss, PROF_OP_NLL_LOSS}, {"mse_loss", l_mse_loss, PROF_OP_MSE_LOSS}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    lua_pushvalue(L, -2);      /* ctx, below the module table */
    lua_pushinteger(L, ops[i].kind);
    lua_pushcclosure(L, ops[i].f, 2);
    lua_setfield(L, -2, ops[i].name);
  }
}
