/* ljson.c — core.json_object: the text of one flat JSON object, exactly as json_encode.lua writes it. */
#include "lbind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A string as json_encode.lua's M.string: ", \ and control bytes escaped, the rest as is. */
static void add_string(luaL_Buffer *b, const char *s, size_t n) {
  luaL_addchar(b, '"');
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    luaL_addlstring(b, s + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': luaL_addstring(b, "\\\""); break;
      case '\\': luaL_addstring(b, "\\\\"); break;
      case '\n': luaL_addstring(b, "\\n"); break;
      case '\r': luaL_addstring(b, "\\r"); break;
      case '\t': luaL_addstring(b, "\\t"); break;
      default: {
        char esc[8];
        snprintf(esc, sizeof esc, "\\u%04x", c);
        luaL_addstring(b, esc);
      }
    }
  }
  luaL_addlstring(b, s + run, n - run);
  luaL_addchar(b, '"');
}

/* A number as M.number: integers and integral floats in int64's range as %d, other finite
   floats as %.17g, NaN and infinities as null. */
static void add_number(luaL_Buffer *b, int is_integer, lua_Integer i, double x) {
  char text[40];
  if (is_integer) {
    snprintf(text, sizeof text, "%lld", (long long)i);
  } else if (isnan(x) || isinf(x)) {
    luaL_addstring(b, "null");
    return;
  } else if (x == floor(x) && x > -9223372036854775808.0 && x < 9223372036854775808.0) {
    snprintf(text, sizeof text, "%lld", (long long)x);
  } else {
    snprintf(text, sizeof text, "%.17g", x);
  }
  luaL_addstring(b, text);
}

/*
** core.json_object(keys, values, n, indent, close_indent): "{\n" then, for i = 1 .. n, indent
** .. '"' .. keys[i] .. '": ' .. the value (nil: null; booleans, numbers, strings as above), the
** entries joined by ",\n", then "\n" .. close_indent .. "}". keys are JSON-safe names. One call
** per object of a large document (the JSON report's modules) instead of a dozen Lua string
** operations each; tables as values are the caller's to encode.
*/
static int l_json_object(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = luaL_checkinteger(L, 3);
  size_t indent_len, close_len;
  const char *indent = luaL_checklstring(L, 4, &indent_len);
  const char *close = luaL_checklstring(L, 5, &close_len);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "{\n");
  /* Each key and value is read and popped before the buffer grows: a luaL_Buffer needs the
     stack balanced between its calls. Strings stay alive in the tables that hold them. */
  for (lua_Integer i = 1; i <= n; i++) {
    size_t klen, vlen = 0;
    lua_rawgeti(L, 1, i);
    const char *key = lua_tolstring(L, -1, &klen);
    lua_pop(L, 1);
    if (key == NULL) return luaL_error(L, "json_object: keys[%d] is not a string", (int)i);
    int t = lua_rawgeti(L, 2, i);
    int is_integer = lua_isinteger(L, -1), flag = lua_toboolean(L, -1);
    lua_Integer iv = is_integer ? lua_tointeger(L, -1) : 0;
    double x = t == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    const char *str = t == LUA_TSTRING ? lua_tolstring(L, -1, &vlen) : NULL;
    const char *tname = luaL_typename(L, -1);
    lua_pop(L, 1);
    if (i > 1) luaL_addstring(&b, ",\n");
    luaL_addlstring(&b, indent, indent_len);
    luaL_addchar(&b, '"');
    luaL_addlstring(&b, key, klen);
    luaL_addstring(&b, "\": ");
    switch (t) {
      case LUA_TNIL: luaL_addstring(&b, "null"); break;
      case LUA_TBOOLEAN: luaL_addstring(&b, flag ? "true" : "false"); break;
      case LUA_TNUMBER: add_number(&b, is_integer, iv, x); break;
      case LUA_TSTRING: add_string(&b, str, vlen); break;
      default:
        return luaL_error(L, "json_object: values[%d] (%s) is not a scalar", (int)i, tname);
    }
  }
  luaL_addchar(&b, '\n');
  luaL_addlstring(&b, close, close_len);
  luaL_addchar(&b, '}');
  luaL_pushresult(&b);
  return 1;
}

void lbind_open_json(lua_State *L) {
  static const luaL_Reg funcs[] = {{"json_object", l_json_object}, {NULL, NULL}};
  lbind_register(L, funcs);
}
