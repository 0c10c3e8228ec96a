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

static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* optimizer = {type=, params={...}}: only the params the file gave, so the engine can tell a
   missing one (the constructor's default applies) from one set to its default value. */
static void set_optimizer(lua_State *L, const prof_OptimizerConfig *o) {
  static const struct { const char *key; uint32_t bit; } flags[] = {
    {"amsgrad", PROF_OPTIM_AMSGRAD}, {"maximize", PROF_OPTIM_MAXIMIZE},
    {"bias_correction", PROF_OPTIM_BIAS_CORRECTION}, {"torch_adam", PROF_OPTIM_TORCH_ADAM},
    {"adam_w_mode", PROF_OPTIM_ADAM_W_MODE}, {"nesterov", PROF_OPTIM_NESTEROV}
  };
  const int values[] = {o->amsgrad, o->maximize, o->bias_correction, o->torch_adam,
                        o->adam_w_mode, o->nesterov};
  if (o->type == NULL) return;   /* no optimizer: the key stays nil */
  lua_createtable(L, 0, 2);
  set_str(L, "type", o->type);
  lua_createtable(L, 0, 8);
  if (o->set & PROF_OPTIM_LR) set_num(L, "lr", o->lr);
  if (o->set & PROF_OPTIM_BETAS) {
    lua_createtable(L, 2, 0);
    for (int i = 0; i < 2; i++) {
      lua_pushnumber(L, o->betas[i]);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "betas");
  }
  if (o->set & PROF_OPTIM_EPS) set_num(L, "eps", o->eps);
  if (o->set & PROF_OPTIM_WEIGHT_DECAY) set_num(L, "weight_decay", o->weight_decay);
  if (o->set & PROF_OPTIM_MOMENTUM) set_num(L, "momentum", o->momentum);
  if (o->set & PROF_OPTIM_DAMPENING) set_num(L, "dampening", o->dampening);
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (o->set & flags[i].bit) set_bool(L, flags[i].key, values[i]);
  lua_setfield(L, -2, "params");
  lua_setfield(L, -2, "optimizer");
}

static void push_config(lua_State *L, const prof_Config *c) {
  lua_createtable(L, 0, 13);
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

  set_optimizer(L, &c->optimizer);

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
