/* lops_norm.c — Lua bindings of the norms (batch, instance, layer, group, RMS), embedding and
   dropout. */
#include <math.h>

#include "lbind.h"


/* normalized_shape: an int or a list of ints (PyTorch's `4` or `(3, 4)`); returns the count. */
static int check_normalized_shape(lua_State *L, int idx, int64_t *shape) {
  if (lua_isinteger(L, idx)) {
    shape[0] = lua_tointeger(L, idx);
    return 1;
  }
  luaL_argexpected(L, lua_istable(L, idx), idx, "integer or list of integers");
  int n = lbind_check_shape(L, idx, shape);
  if (n < 1) luaL_argerror(L, idx, "normalized_shape is empty");
  return n;
}

static void read_norm_args(lua_State *L, int idx, const char *training_key, int def,
                           pr_NormArgs *a) {
  a->training = lbind_opt_bool(L, idx, training_key, def);
  a->momentum = lbind_opt_num(L, idx, "momentum", 0.1);
  a->eps = lbind_opt_num(L, idx, "eps", 1e-5);
}

/* core.batch_norm(x, running_mean, running_var, weight?, bias?,
                   {training=false, momentum=0.1, eps=1e-5}) */
static int l_batch_norm(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  pr_Tensor *rm = lbind_opt_tensor(L, 2), *rv = lbind_opt_tensor(L, 3);
  pr_Tensor *w = lbind_opt_tensor(L, 4), *b = lbind_opt_tensor(L, 5);
  pr_NormArgs a;
  read_norm_args(L, 6, "training", 0, &a);
  return lbind_push_tensor(L, pr_batch_norm(lbind_rt(L), x, rm, rv, w, b, &a));
}

/* core.instance_norm(x, running_mean?, running_var?, weight?, bias?,
                      {use_input_stats=true, momentum=0.1, eps=1e-5}) */
static int l_instance_norm(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  pr_Tensor *rm = lbind_opt_tensor(L, 2), *rv = lbind_opt_tensor(L, 3);
  pr_Tensor *w = lbind_opt_tensor(L, 4), *b = lbind_opt_tensor(L, 5);
  pr_NormArgs a;
  read_norm_args(L, 6, "use_input_stats", 1, &a);
  return lbind_push_tensor(L, pr_instance_norm(lbind_rt(L), x, rm, rv, w, b, &a));
}

/* core.layer_norm(x, normalized_shape, weight?, bias?, {eps=1e-5}) */
static int l_layer_norm(lua_State *L) {
  int64_t shape[PR_MAX_DIMS];
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int n = check_normalized_shape(L, 2, shape);
  pr_Tensor *w = lbind_opt_tensor(L, 3), *b = lbind_opt_tensor(L, 4);
  double eps = lbind_opt_num(L, 5, "eps", 1e-5);
  return lbind_push_tensor(L, pr_layer_norm(lbind_rt(L), x, n, shape, w, b, eps));
}

/* core.rms_norm(x, normalized_shape, weight?, {eps=}) (eps nil: PyTorch uses the dtype's eps) */
static int l_rms_norm(lua_State *L) {
  int64_t shape[PR_MAX_DIMS];
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int n = check_normalized_shape(L, 2, shape);
  pr_Tensor *w = lbind_opt_tensor(L, 3);
  double eps = lbind_opt_num(L, 4, "eps", NAN);   /* NaN: the op takes the dtype's eps */
  return lbind_push_tensor(L, pr_rms_norm(lbind_rt(L), x, n, shape, w, eps));
}

/* core.group_norm(x, num_groups, weight?, bias?, {eps=1e-5}) */
static int l_group_norm(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  lua_Integer groups = luaL_checkinteger(L, 2);
  pr_Tensor *w = lbind_opt_tensor(L, 3), *b = lbind_opt_tensor(L, 4);
  double eps = lbind_opt_num(L, 5, "eps", 1e-5);
  return lbind_push_tensor(L, pr_group_norm(lbind_rt(L), x, groups, w, b, eps));
}

/* core.embedding(indices, weight, {padding_idx=}) */
static int l_embedding(lua_State *L) {
  pr_Tensor *idx = lbind_check_tensor(L, 1), *w = lbind_check_tensor(L, 2);
  int64_t pad = 0;
  int has_pad = 0;
  if (lua_type(L, 3) == LUA_TTABLE) {
    lua_getfield(L, 3, "padding_idx");
    has_pad = !lua_isnil(L, -1);
    lua_pop(L, 1);
    pad = lbind_opt_int(L, 3, "padding_idx", 0);
  }
  return lbind_push_tensor(L, pr_embedding(lbind_rt(L), idx, w, has_pad ? &pad : NULL));
}

/* core.dropout(x, p=0.5, training=true), or core.dropout(x, {p=, training=}) */
static int l_dropout(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  double p;
  int training;
  if (lua_type(L, 2) == LUA_TTABLE) {
    p = lbind_opt_num(L, 2, "p", 0.5);
    training = lbind_opt_bool(L, 2, "training", 1);
  } else {
    p = luaL_optnumber(L, 2, 0.5);
    training = lua_isnoneornil(L, 3) ? 1 : lua_toboolean(L, 3);
  }
  return lbind_push_tensor(L, pr_dropout(lbind_rt(L), x, p, training));
}

void lbind_open_ops_norm(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"batch_norm", l_batch_norm}, {"instance_norm", l_instance_norm},
      {"layer_norm", l_layer_norm}, {"rms_norm", l_rms_norm}, {"group_norm", l_group_norm},
      {"embedding", l_embedding}, {"dropout", l_dropout}, {NULL, NULL}};
  lbind_register(L, funcs);
}
