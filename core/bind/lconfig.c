/* lconfig.c — core.load_config: a DeepSpeed-style JSON config as a plain Lua table. */
#include <math.h>
#include <string.h>

#include "lbind.h"

static void set_list(lua_State *L, const char *k, char **items, int32_t n) {
  lua_createtable(L, n, 0);
  for (int32_t i = 0; i < n; i++) {
    lua_pushstring(L, items[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, k);
}

/*
** Leaves on the stack the table for the section that holds path's last key (creating the ones on
** the way) and returns that key. The config table is at index t.
*/
static const char *section_of(lua_State *L, int t, const char *path) {
  const char *seg = path, *dot;
  lua_pushvalue(L, t);
  while ((dot = strchr(seg, '.')) != NULL) {
    lua_pushlstring(L, seg, (size_t)(dot - seg));
    if (lua_rawget(L, -2) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 8);
      lua_pushlstring(L, seg, (size_t)(dot - seg));
      lua_pushvalue(L, -2);
      lua_rawset(L, -4);
    }
    lua_remove(L, -2);
    seg = dot + 1;
  }
  return seg;
}

static void push_json(lua_State *L, const prof_JsonValue *v);

/* One schema row's value; absent (nil) where it is not set. Numbers stay floats, ints integers. */
static void set_row(lua_State *L, int t, const prof_ConfigKey *k, const prof_Config *c) {
  const char *at = (const char *)c + k->offset;
  const char *key = section_of(L, t, k->path);
  switch (k->type) {
    case PROF_CONFIG_SECTION:
      lua_createtable(L, 0, 8);
      break;
    case PROF_CONFIG_BOOL: lua_pushboolean(L, *(const int *)(const void *)at); break;
    case PROF_CONFIG_INT: {
      int64_t v = *(const int64_t *)(const void *)at;
      if (k->nullable && v == 0) lua_pushnil(L);   /* 0: not set */
      else lua_pushinteger(L, (lua_Integer)v);
      break;
    }
    case PROF_CONFIG_NUMBER: lua_pushnumber(L, *(const double *)(const void *)at); break;
    case PROF_CONFIG_STRING: lua_pushstring(L, *(char *const *)(const void *)at); break;
    case PROF_CONFIG_ENUM: lua_pushstring(L, k->choices[*(const int *)(const void *)at]); break;
    case PROF_CONFIG_OBJECT: {
      const prof_JsonValue *v = *(prof_JsonValue *const *)(const void *)at;
      if (v == NULL) lua_pushnil(L);
      else push_json(L, v);
      break;
    }
    case PROF_CONFIG_STRINGS:
      set_list(L, key, *(char **const *)(const void *)at,
               *(const int32_t *)(const void *)((const char *)c + k->count_offset));
      lua_pop(L, 1);
      return;
  }
  if (k->type == PROF_CONFIG_SECTION) {
    lua_pushstring(L, key);
    if (lua_rawget(L, -3) == LUA_TTABLE) {   /* made already, on the way to a key */
      lua_pop(L, 3);
      return;
    }
    lua_pop(L, 1);
  }
  lua_setfield(L, -2, key);
  lua_pop(L, 1);
}

/* A JSON value as Lua: objects and arrays as tables, null as core.null, integral numbers as
   integers (DeepSpeed's stage 3 reads as 3). */
static void push_json(lua_State *L, const prof_JsonValue *v) {
  luaL_checkstack(L, 4, "config nested too deeply");
  switch (v->type) {
    case PROF_JSON_NULL: lua_pushlightuserdata(L, NULL); break;
    case PROF_JSON_FALSE: lua_pushboolean(L, 0); break;
    case PROF_JSON_TRUE: lua_pushboolean(L, 1); break;
    case PROF_JSON_NUMBER:
      if (v->number == floor(v->number) && fabs(v->number) < 9007199254740992.0)
        lua_pushinteger(L, (lua_Integer)v->number);
      else lua_pushnumber(L, v->number);
      break;
    case PROF_JSON_STRING: lua_pushstring(L, v->string); break;
    case PROF_JSON_ARRAY:
      lua_createtable(L, v->n_items, 0);
      for (int32_t i = 0; i < v->n_items; i++) {
        push_json(L, &v->items[i]);
        lua_rawseti(L, -2, i + 1);
      }
      break;
    case PROF_JSON_OBJECT:
      lua_createtable(L, 0, v->n_items);
      for (int32_t i = 0; i < v->n_items; i++) {
        push_json(L, &v->items[i]);
        lua_setfield(L, -2, v->items[i].key);
      }
      break;
  }
}

static void push_config(lua_State *L, const prof_Config *c) {
  const prof_ConfigKey *k;
  int t;
  lua_createtable(L, 0, 16);
  t = lua_gettop(L);
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) set_row(L, t, k, c);
  /* DeepSpeed's own keys, as the file gave them: the engine owns their policy */
  for (int32_t i = 0; c->deepspeed != NULL && i < c->deepspeed->n_items; i++) {
    push_json(L, &c->deepspeed->items[i]);
    lua_setfield(L, t, c->deepspeed->items[i].key);
  }
  set_list(L, "unused_keys", c->unused_keys, c->n_unused_keys);
  set_list(L, "forced_keys", c->forced_keys, c->n_forced_keys);
  set_list(L, "auto_keys", c->auto_keys, c->n_auto_keys);
}

/* core.load_config(path|nil, {"a.b=v", ...}) -> config | nil, message, "io"|"config" */
static int l_load_config(lua_State *L) {
  const char *path = luaL_optstring(L, 1, NULL);
  int n = lua_istable(L, 2) ? (int)luaL_len(L, 2) : 0;
  const char **ov = lua_newuserdatauv(L, sizeof *ov * (size_t)(n > 0 ? n : 1), 0);
  for (int i = 0; i < n; i++) {
    lua_geti(L, 2, i + 1);
    ov[i] = luaL_checkstring(L, -1);   /* anchored by the overrides table */
    lua_pop(L, 1);
  }
  prof_State *S = prof_new(NULL, NULL);
  if (S == NULL) return luaL_error(L, "out of memory");
  prof_Config *cfg = NULL;
  int rc = prof_config_load(S, path, ov, n, &cfg);
  if (rc != PROF_OK) {
    lua_pushnil(L);
    lua_pushstring(L, prof_errmsg(S));
    lua_pushstring(L, rc == PROF_ERRIO ? "io" : "config");
    prof_close(S);
    return 3;
  }
  push_config(L, cfg);
  prof_config_free(S, cfg);
  prof_close(S);
  return 1;
}

/* core.config_help() -> the listing of profrun --help-config */
static int l_config_help(lua_State *L) {
  luaL_Buffer b;
  size_t n = prof_config_help(NULL, 0);
  char *p = luaL_buffinitsize(L, &b, n + 1);
  prof_config_help(p, n + 1);
  luaL_pushresultsize(&b, n);
  return 1;
}

/* core.config_keys() -> {{path=, type=, default=, doc=}, ...}: the schema's rows, sections too */
static int l_config_keys(lua_State *L) {
  const prof_ConfigKey *k;
  char type[128];
  lua_newtable(L);
  for (int32_t i = 0; (k = prof_config_key(i)) != NULL; i++) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, k->path);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, prof_config_type_name(k, type, sizeof type));
    lua_setfield(L, -2, "type");
    lua_pushstring(L, k->default_json);
    lua_setfield(L, -2, "default");
    lua_pushstring(L, k->doc);
    lua_setfield(L, -2, "doc");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void lbind_open_config(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"load_config", l_load_config}, {"config_help", l_config_help},
    {"config_keys", l_config_keys}, {NULL, NULL}
  };
  lbind_register(L, funcs);
  /* DeepSpeed's JSON null inside its sections (lua-cjson's convention: a light userdata) */
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
}
