/* lops_resample.c — Lua binding of interpolate. */
#include <string.h>

#include "lbind.h"

static const char *const mode_names[] = {"nearest", "linear", "bilinear", "bicubic", "trilinear",
                                         "area"};   /* prof_InterpMode's order */

/* core.interpolate(x, {size=, scale_factor=, mode="nearest", align_corners=}) */
static int l_interpolate(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  pr_InterpArgs a;
  memset(&a, 0, sizeof a);
  const char *mode = lbind_opt_str(L, 2, "mode", "nearest");
  a.mode = -1;
  for (int i = 0; i < 6; i++)
    if (strcmp(mode, mode_names[i]) == 0) a.mode = i;
  if (a.mode < 0)
    return luaL_error(L, "interpolate: unknown mode '%s' (expected nearest, linear, bilinear, "
                      "bicubic, trilinear or area)", mode);
  a.align_corners = -1;
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_getfield(L, 2, "align_corners");
    if (!lua_isnil(L, -1)) a.align_corners = lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 2, "size");
    if (lua_isinteger(L, -1)) {
      a.nsize = 1;
      a.size_scalar = 1;
      a.size[0] = lua_tointeger(L, -1);
    } else if (lua_istable(L, -1)) {
      lua_Integer n = luaL_len(L, -1);
      if (n < 1 || n > 3) return luaL_error(L, "interpolate: size has %d entries", (int)n);
      a.nsize = (int)n;
      for (int i = 0; i < a.nsize; i++) {
        lua_geti(L, -1, i + 1);
        if (!lua_isinteger(L, -1)) return luaL_error(L, "interpolate: size must be integers");
        a.size[i] = lua_tointeger(L, -1);
        lua_pop(L, 1);
      }
    } else if (!lua_isnil(L, -1)) {
      return luaL_error(L, "interpolate: size must be an integer or a list, got %s",
                        luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    lua_getfield(L, 2, "scale_factor");
    if (lua_type(L, -1) == LUA_TNUMBER) {
      a.nscale = 1;
      a.scale_scalar = 1;
      a.scale[0] = lua_tonumber(L, -1);
    } else if (lua_istable(L, -1)) {
      lua_Integer n = luaL_len(L, -1);
      if (n < 1 || n > 3) return luaL_error(L, "interpolate: scale_factor has %d entries", (int)n);
      a.nscale = (int)n;
      for (int i = 0; i < a.nscale; i++) {
        lua_geti(L, -1, i + 1);
        if (lua_type(L, -1) != LUA_TNUMBER)
          return luaL_error(L, "interpolate: scale_factor must be numbers");
        a.scale[i] = lua_tonumber(L, -1);
        lua_pop(L, 1);
      }
    } else if (!lua_isnil(L, -1)) {
      return luaL_error(L, "interpolate: scale_factor must be a number or a list, got %s",
                        luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  return lbind_push_tensor(L, pr_interpolate(&lbind_ctx(L)->rt, x, &a));
}

void lbind_open_ops_resample(lua_State *L) {
  static const luaL_Reg funcs[] = {{"interpolate", l_interpolate}, {NULL, NULL}};
  lbind_register(L, funcs);
}
