/* lconfig.c — core.load_config: a DeepSpeed-style JSON config as a plain Lua table. */
#include "lbind.h"

static void set_str(lua_State *L, const char *k, const char *v) {
  if (v == NULL) return;   /* absent keys stay nil */
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

static void set_list(lua_State *L, const char *k, char **items, int32_t n) {
  lua_createtable(L, n, 0);
  for (int32_t i = 0; i < n; i++) {
    lua_pushstring(L, items[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, k);
}

static void push_config(lua_State *L, const prof_Config *c) {
  lua_createtable(L, 0, 12);
  if (c->train_batch_size > 0) set_int(L, "train_batch_size", c->train_batch_size);
  if (c->train_micro_batch_size_per_gpu > 0)
    set_int(L, "train_micro_batch_size_per_gpu", c->train_micro_batch_size_per_gpu);
  if (c->gradient_accumulation_steps > 0)
    set_int(L, "gradient_accumulation_steps", c->gradient_accumulation_steps);
  set_bool(L, "wall_clock_breakdown", c->wall_clock_breakdown);
  set_str(L, "device", c->device);

  const prof_FlopsConfig *f = &c->flops_profiler;
  lua_createtable(L, 0, 11);
  set_bool(L, "enabled", f->enabled);
  lua_pushnumber(L, f->recompute_fwd_factor);
  lua_setfield(L, -2, "recompute_fwd_factor");
  set_int(L, "profile_step", f->profile_step);
  set_int(L, "module_depth", f->module_depth);
  set_int(L, "top_modules", f->top_modules);
  set_bool(L, "detailed", f->detailed);
  set_str(L, "output_file", f->output_file);
  set_str(L, "conventions", prof_conventions_name(f->conventions));
  set_str(L, "format", f->format);
  set_list(L, "ignore_modules", f->ignore_modules, f->n_ignore_modules);
  set_list(L, "rules", f->rules, f->n_rules);
  lua_setfield(L, -2, "flops_profiler");

  lua_createtable(L, 0, 2);
  set_int(L, "model_parallel_size", c->model_parallel_size);
  set_int(L, "model_parallel_rank", c->model_parallel_rank);
  lua_setfield(L, -2, "parallel");

  lua_createtable(L, 0, 1);
  set_str(L, "script", c->report_script);
  lua_setfield(L, -2, "report");

  set_list(L, "unused_keys", c->unused_keys, c->n_unused_keys);
  set_list(L, "forced_keys", c->forced_keys, c->n_forced_keys);
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

void lbind_open_config(lua_State *L) {
  static const luaL_Reg funcs[] = {{"load_config", l_load_config}, {NULL, NULL}};
  lbind_register(L, funcs);
}
