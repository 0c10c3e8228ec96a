/* lbind.c — helpers every file of the prof.core binding shares: the context, option readers, shapes. */
#include "lbind.h"

#include <string.h>

LCtx *lbind_ctx(lua_State *L) { return (LCtx *)lua_touserdata(L, lua_upvalueindex(1)); }

void lbind_register(lua_State *L, const luaL_Reg *funcs) {
  lua_pushvalue(L, -2);        /* the context, stored at the slot below the table */
  luaL_setfuncs(L, funcs, 1);
}

const char *lbind_interned(lua_State *L, prof_State *S, int cache_idx, int name_idx) {
  name_idx = lua_absindex(L, name_idx);
  if (cache_idx < 0 && cache_idx > LUA_REGISTRYINDEX) cache_idx = lua_absindex(L, cache_idx);
  lua_pushvalue(L, name_idx);
  const char *p;
  if (lua_rawget(L, cache_idx) == LUA_TLIGHTUSERDATA) {
    p = lua_touserdata(L, -1);
  } else {
    p = prof_intern(S, luaL_checkstring(L, name_idx));
    if (p == NULL) luaL_error(L, "out of memory interning a name");
    lua_pushvalue(L, name_idx);
    lua_pushlightuserdata(L, (void *)p);
    lua_rawset(L, cache_idx);
  }
  lua_pop(L, 1);
  return p;
}

prof_State *lbind_new_state(lua_State *L) {
  prof_State *S = prof_new(NULL, NULL);
  if (S != NULL) prof_set_output_watch(S, &lbind_ctx(L)->watch);
  return S;
}

int lbind_rt_error(lua_State *L) {
  lua_pushstring(L, lbind_ctx(L)->rt.err);
  return lua_error(L);
}

lua_Integer lbind_opt_int(lua_State *L, int idx, const char *name, lua_Integer def) {
  if (lua_type(L, idx) != LUA_TTABLE) return def;
  lua_getfield(L, idx, name);
  lua_Integer v = def;
  if (!lua_isnil(L, -1)) {
    int isnum;
    v = lua_tointegerx(L, -1, &isnum);
    if (!isnum) return luaL_error(L, "option '%s': expected an integer, got %s", name, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return v;
}

lua_Number lbind_opt_num(lua_State *L, int idx, const char *name, lua_Number def) {
  if (lua_type(L, idx) != LUA_TTABLE) return def;
  lua_getfield(L, idx, name);
  lua_Number v = def;
  if (!lua_isnil(L, -1)) {
    int isnum;
    v = lua_tonumberx(L, -1, &isnum);
    if (!isnum) return luaL_error(L, "option '%s': expected a number, got %s", name, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return v;
}

int lbind_opt_bool(lua_State *L, int idx, const char *name, int def) {
  if (lua_type(L, idx) != LUA_TTABLE) return def;
  lua_getfield(L, idx, name);
  int v = lua_isnil(L, -1) ? def : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

const char *lbind_opt_str(lua_State *L, int idx, const char *name, const char *def) {
  if (lua_type(L, idx) != LUA_TTABLE) return def;
  lua_getfield(L, idx, name);
  const char *v = def;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      return (luaL_error(L, "option '%s': expected a string, got %s", name, luaL_typename(L, -1)), def);
    v = lua_tostring(L, -1);   /* stays alive: it is in the options table */
  }
  lua_pop(L, 1);
  return v;
}

int lbind_opt_ints(lua_State *L, int idx, const char *name, int n, int64_t def, int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = def;
  if (lua_type(L, idx) != LUA_TTABLE) return 0;
  lua_getfield(L, idx, name);
  int present = !lua_isnil(L, -1);
  if (lua_isinteger(L, -1)) {
    for (int i = 0; i < n; i++) out[i] = lua_tointeger(L, -1);
  } else if (lua_istable(L, -1)) {
    lua_Integer len = luaL_len(L, -1);
    if (len != n && len != 1)
      return luaL_error(L, "option '%s': expected %d values, got %d", name, n, (int)len);
    for (int i = 0; i < n; i++) {
      lua_geti(L, -1, len == 1 ? 1 : i + 1);
      if (!lua_isinteger(L, -1)) return luaL_error(L, "option '%s': expected integers", name);
      out[i] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  } else if (present) {
    return luaL_error(L, "option '%s': expected an integer or a list, got %s", name,
                      luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return present;
}

lua_Number lbind_check_value(lua_State *L, int idx) {
  if (lua_isboolean(L, idx)) return lua_toboolean(L, idx);
  return luaL_checknumber(L, idx);
}

int lbind_check_shape(lua_State *L, int idx, int64_t *shape) {
  int ndim = 0;
  if (lua_istable(L, idx)) {
    lua_Integer n = luaL_len(L, idx);
    if (n > PR_MAX_DIMS) return luaL_error(L, "a shape has at most %d dimensions", PR_MAX_DIMS);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, idx, i);
      int isnum;
      lua_Integer v = lua_tointegerx(L, -1, &isnum);
      /* lua_tointegerx converts "3": a size given as a string is a mistake, as in PyTorch */
      if (lua_type(L, -1) == LUA_TSTRING)
        return luaL_error(L, "shape entry %d is a string (\"%s\"), expected an integer", (int)i,
                          lua_tostring(L, -1));
      if (!isnum) return luaL_error(L, "shape entry %d is not an integer", (int)i);
      shape[ndim++] = v;
      lua_pop(L, 1);
    }
    return ndim;
  }
  int top = lua_gettop(L);
  for (int i = idx; i <= top && lua_isinteger(L, i); i++) {
    if (ndim == PR_MAX_DIMS) return luaL_error(L, "a shape has at most %d dimensions", PR_MAX_DIMS);
    shape[ndim++] = lua_tointeger(L, i);
  }
  return ndim;
}

/* The one exported symbol of prof/core.so (everything else is built hidden). */
