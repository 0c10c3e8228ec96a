/* lops_factory.c — Lua bindings of tensors made from values: arange, full, ones, tensor. */
#include <math.h>
#include <string.h>

#include "lbind.h"


/* {====================== constructors ======================} */

/* dtype= and device= of the options at idx (defaults: def and the runtime's device). */
static void read_dd(lua_State *L, int idx, int def, int *dtype, int *device) {
  const char *dt = lbind_opt_str(L, idx, "dtype", NULL);
  const char *dev = lbind_opt_str(L, idx, "device", NULL);
  *dtype = def;
  *device = lbind_rt(L)->default_device;
  if (dt != NULL && (*dtype = prof_dtype_parse(dt)) < 0)
    luaL_error(L, "unknown dtype '%s'", dt);
  char list[128];
  if (dev != NULL && (*device = pr_device_parse(lbind_rt(L), dev)) < 0)
    luaL_error(L, "unknown device '%s' (expected %s)", dev,
               pr_device_list(lbind_rt(L), list, sizeof list));
  if (lbind_ctx(L)->forced_device >= 0) *device = lbind_ctx(L)->forced_device;   /* --device */
}

/* core.arange(end) or core.arange(start, end, step=1), then {dtype=, device=}: int64 when every
   bound is an integer, else the default dtype (as torch.arange) */
static int l_arange(lua_State *L) {
  int nums = 0, all_int = 1;
  while (nums < 3 && lua_type(L, nums + 1) == LUA_TNUMBER) {
    all_int = all_int && lua_isinteger(L, nums + 1);
    nums++;
  }
  if (nums == 0) return luaL_argerror(L, 1, "expected a number");
  double start = nums >= 2 ? lua_tonumber(L, 1) : 0;
  double end = nums >= 2 ? lua_tonumber(L, 2) : lua_tonumber(L, 1);
  double step = nums == 3 ? lua_tonumber(L, 3) : 1;
  int dtype, device;
  read_dd(L, nums + 1, all_int ? PROF_I64 : lbind_rt(L)->default_dtype, &dtype, &device);
  return lbind_push_tensor(L, pr_arange(lbind_rt(L), start, end, step, dtype, device));
}

/* A shape as a table or as integers from idx on; returns the index after it. */
static int read_shape(lua_State *L, int idx, int *ndim, int64_t *shape) {
  *ndim = lbind_check_shape(L, idx, shape);
  if (lua_istable(L, idx)) return idx + 1;
  return idx + *ndim;
}

/* core.full(shape, value, {dtype=, device=}): int64 for an integer value, bool for a boolean,
   else the default dtype (as torch.full) */
static int l_full(lua_State *L) {
  int ndim, dtype, device;
  int64_t shape[PR_MAX_DIMS];
  luaL_checktype(L, 1, LUA_TTABLE);
  read_shape(L, 1, &ndim, shape);
  double v = lbind_check_value(L, 2);
  int def = lua_isboolean(L, 2) ? PROF_BOOL : lua_isinteger(L, 2) ? PROF_I64
                                                                  : lbind_rt(L)->default_dtype;
  read_dd(L, 3, def, &dtype, &device);
  return lbind_push_tensor(L, pr_full(lbind_rt(L), "full", ndim, shape, v, dtype, device));
}

/* core.ones(shape, {dtype=, device=}) or core.ones(2, 3, {...}) */
static int l_ones(lua_State *L) {
  int ndim, dtype, device;
  int64_t shape[PR_MAX_DIMS];
  int o = read_shape(L, 1, &ndim, shape);
  read_dd(L, o, lbind_rt(L)->default_dtype, &dtype, &device);
  return lbind_push_tensor(L, pr_full(lbind_rt(L), "ones", ndim, shape, 1, dtype, device));
}

/* What core.tensor learns from a nested list: its shape, then its values and their kinds. */
typedef struct Nested {
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  int64_t n;                   /* values written so far */
  double *f;
  int64_t *i;
  int any_float, all_bool;
} Nested;

/* The shape, from the first element at each depth. */
static void nested_shape(lua_State *L, int idx, Nested *t) {
  lua_pushvalue(L, idx);
  while (lua_istable(L, -1)) {
    if (t->ndim == PR_MAX_DIMS) luaL_error(L, "tensor: at most %d dims", PR_MAX_DIMS);
    lua_Integer n = luaL_len(L, -1);
    t->shape[t->ndim++] = n;
    if (n == 0) break;
    lua_geti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

/* Walks the value at the top against the shape from depth on, writing leaves (f, i may be NULL). */
static void nested_values(lua_State *L, Nested *t, int depth) {
  if (depth == t->ndim) {
    int isnum = lua_type(L, -1) == LUA_TNUMBER, isbool = lua_isboolean(L, -1);
    if (!isnum && !isbool)
      luaL_error(L, "tensor: elements must be numbers or booleans, got %s", luaL_typename(L, -1));
    if (isnum && !lua_isinteger(L, -1)) t->any_float = 1;
    if (!isbool) t->all_bool = 0;
    if (t->f != NULL) {
      double f = isbool ? lua_toboolean(L, -1) : lua_tonumber(L, -1);
      t->f[t->n] = f;
      t->i[t->n] = isbool ? lua_toboolean(L, -1)
                   : lua_isinteger(L, -1) ? lua_tointeger(L, -1)
                   : (isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : 0);
    }
    t->n++;
    return;
  }
  if (!lua_istable(L, -1))
    luaL_error(L, "tensor: expected a list of length %d at dim %d, got a %s",
               (int)t->shape[depth], depth, luaL_typename(L, -1));
  if (luaL_len(L, -1) != t->shape[depth])
    luaL_error(L, "tensor: expected a list of length %d at dim %d (got %d)",
               (int)t->shape[depth], depth, (int)luaL_len(L, -1));
  for (lua_Integer k = 1; k <= t->shape[depth]; k++) {
    lua_geti(L, -1, k);
    nested_values(L, t, depth + 1);
    lua_pop(L, 1);
  }
}

/* core.tensor(list_or_number, {dtype=, device=}): meta keeps the shape, cpu the values too.
   dtype: bool for booleans, int64 for integers, else the default dtype (as torch.tensor). */
static int l_tensor(lua_State *L) {
  Nested t;
  memset(&t, 0, sizeof t);
  t.all_bool = 1;
  luaL_argexpected(L, lua_istable(L, 1) || lua_type(L, 1) == LUA_TNUMBER ||
                   lua_isboolean(L, 1), 1, "number, boolean or list");
  nested_shape(L, 1, &t);
  int64_t numel = 1;
  for (int d = 0; d < t.ndim; d++) numel *= t.shape[d];
  lua_pushvalue(L, 1);
  nested_values(L, &t, 0);     /* checks the shape and learns the kinds */
  t.f = lua_newuserdatauv(L, sizeof *t.f * (size_t)(numel > 0 ? numel : 1), 0);
  t.i = lua_newuserdatauv(L, sizeof *t.i * (size_t)(numel > 0 ? numel : 1), 0);
  t.n = 0;
  lua_pushvalue(L, 1);
  nested_values(L, &t, 0);
  int def = numel == 0 ? lbind_rt(L)->default_dtype
            : t.all_bool ? PROF_BOOL : t.any_float ? lbind_rt(L)->default_dtype : PROF_I64;
  int dtype, device;
  read_dd(L, 2, def, &dtype, &device);
  return lbind_push_tensor(L, pr_tensor_from(lbind_rt(L), t.ndim, t.shape, t.f, t.i, dtype,
                                             device));
}

void lbind_open_ops_factory(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"arange", l_arange}, {"full", l_full}, {"ones", l_ones}, {"tensor", l_tensor},
      {NULL, NULL}};
  lbind_register(L, funcs);
}
