/* loptim.c — Lua bindings of the optimizer steps: core.sgd_step and core.adam_step. */
#include "lbind.h"

/*
** prof.optim keeps torch's layout: a state table keyed by parameter, holding per parameter
** {momentum_buffer=} (SGD) or {step=, exp_avg=, exp_avg_sq=[, max_exp_avg_sq=]} (Adam, AdamW;
** step is a Lua integer where torch 1.13 keeps a 0-d tensor). The binding fills it as torch's
** step does, on a parameter's first update: that keeps a step free of Lua garbage (gradients are
** read from the parameters here, not through x.grad userdata) while Lua keeps the policy.
**
** Stack of both functions: 1 params, 2 state, 3 options, 4 the undo list (nil until the call
** creates state): what a failed step must take back, so that a retry starts afresh.
*/
#define UNDO 4

/* Slots for the largest group seen so far, reused by later calls: upvalue 2 of each function. */
static pr_OptimSlot *slot_buffer(lua_State *L, lua_Integer n) {
  size_t need = (size_t)n * sizeof(pr_OptimSlot);
  if (lua_rawlen(L, lua_upvalueindex(2)) < need) {
    lua_newuserdatauv(L, need, 0);
    lua_replace(L, lua_upvalueindex(2));
  }
  return lua_touserdata(L, lua_upvalueindex(2));
}

/* Appends the value on top (popped) to the undo list, creating the list on first use. */
static void push_undo(lua_State *L) {
  if (lua_isnil(L, UNDO)) {
    lua_newtable(L);
    lua_replace(L, UNDO);
  }
  lua_rawseti(L, UNDO, (lua_Integer)lua_rawlen(L, UNDO) + 1);
}

/* The state tensor under name in the table on top, created as zeros like the parameter when
   absent (torch's zeros_like; remembered as {table, name} for undo); *fresh says so. */
static pr_Tensor *state_tensor(lua_State *L, const char *name, const pr_Tensor *param, int *fresh) {
  pr_Tensor *t;
  *fresh = 0;
  if (lua_getfield(L, -1, name) != LUA_TNIL) {
    t = lbind_check_tensor(L, -1);
    lua_pop(L, 1);
    return t;
  }
  lua_pop(L, 1);
  t = pr_tensor_like(lbind_rt(L), param);
  lbind_push_tensor(L, t);     /* raises when t is NULL */
  lua_setfield(L, -2, name);   /* the state table keeps it alive */
  pr_tensor_tag(t, PROF_MEM_OPTIMIZER_STATE);   /* for a memory timeline recording now */
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, 1);
  lua_pushstring(L, name);
  lua_rawseti(L, -2, 2);
  push_undo(L);
  *fresh = 1;
  return t;
}

/*
** Fills slots from the parameters (arg 1, a list) that have a gradient: their state table in
** arg 2 (created when missing) and the state tensors named in names. Returns the slot count.
*/
static int gather(lua_State *L, const char *const *names, int nstate, int with_step) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 3);
  lua_pushnil(L);                                        /* UNDO */
  lua_Integer n = luaL_len(L, 1);
  pr_OptimSlot *slots = slot_buffer(L, n);
  int k = 0;
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);                                   /* param */
    pr_Tensor *p = lbind_check_tensor(L, -1);
    if (p->grad == NULL) {                               /* torch skips it, state untouched */
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, -1);
    if (lua_rawget(L, 2) == LUA_TNIL) {                  /* param state */
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, 2);
      lua_pushvalue(L, -2);                              /* undo: the parameter */
      push_undo(L);
    }
    luaL_checktype(L, -1, LUA_TTABLE);
    pr_OptimSlot *s = &slots[k++];
    s->param = p;
    s->grad = p->grad;
    s->state[0] = s->state[1] = s->state[2] = NULL;
    int fresh = 0;
    for (int j = 0; j < nstate; j++) s->state[j] = state_tensor(L, names[j], p, &fresh);
    if (with_step) {
      lua_getfield(L, -1, "step");
      s->step = luaL_optinteger(L, -1, 0) + 1;
      lua_pop(L, 1);
    } else {
      s->step = fresh ? 1 : 2;                           /* SGD: a new buffer takes the gradient */
    }
    lua_pop(L, 2);
  }
  return k;
}

/* Raises the runtime's error after removing the state this call created. */
static int fail(lua_State *L) {
  if (!lua_isnil(L, UNDO)) {
    for (lua_Integer i = (lua_Integer)lua_rawlen(L, UNDO); i >= 1; i--) {
      if (lua_rawgeti(L, UNDO, i) == LUA_TTABLE) {       /* {state table, field} */
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        lua_pushnil(L);
        lua_rawset(L, -3);
        lua_pop(L, 2);
      } else {                                           /* a parameter: its whole state */
        lua_pushnil(L);
        lua_rawset(L, 2);
      }
    }
  }
  return lbind_rt_error(L);
}

/* core.sgd_step(params, state, {lr=, momentum=, dampening=, weight_decay=, nesterov=, maximize=}) */
static int l_sgd_step(lua_State *L) {
  static const char *const names[] = {"momentum_buffer"};
  pr_SgdArgs a;
  a.lr = lbind_opt_num(L, 3, "lr", 0);
  a.momentum = lbind_opt_num(L, 3, "momentum", 0);
  a.dampening = lbind_opt_num(L, 3, "dampening", 0);
  a.weight_decay = lbind_opt_num(L, 3, "weight_decay", 0);
  a.nesterov = lbind_opt_bool(L, 3, "nesterov", 0);
  a.maximize = lbind_opt_bool(L, 3, "maximize", 0);
  int n = gather(L, names, a.momentum != 0 ? 1 : 0, 0);
  const pr_OptimSlot *slots = lua_touserdata(L, lua_upvalueindex(2));
  if (pr_sgd_step(lbind_rt(L), n, slots, &a) != 0) return fail(L);
  return 0;
}

/* core.adam_step(params, state, {lr=, betas={b1, b2}, eps=, weight_decay=, amsgrad=, maximize=,
   bias_correction=}, decoupled): Adam, or AdamW when decoupled is true. */
static int l_adam_step(lua_State *L) {
  static const char *const names[] = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  pr_AdamArgs a;
  a.decoupled = lua_toboolean(L, 4);
  lua_settop(L, 3);
  a.lr = lbind_opt_num(L, 3, "lr", 1e-3);
  a.beta1 = 0.9;
  a.beta2 = 0.999;
  if (lua_type(L, 3) == LUA_TTABLE && lua_getfield(L, 3, "betas") != LUA_TNIL) {
    luaL_checktype(L, -1, LUA_TTABLE);
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    a.beta1 = luaL_checknumber(L, -2);
    a.beta2 = luaL_checknumber(L, -1);
  }
  lua_settop(L, 3);
  a.eps = lbind_opt_num(L, 3, "eps", 1e-8);
  a.weight_decay = lbind_opt_num(L, 3, "weight_decay", 0);
  a.amsgrad = lbind_opt_bool(L, 3, "amsgrad", 0);
  a.maximize = lbind_opt_bool(L, 3, "maximize", 0);
  a.bias_correction = lbind_opt_bool(L, 3, "bias_correction", 1);
  int n = gather(L, names, a.amsgrad ? 3 : 2, 1);
  const pr_OptimSlot *slots = lua_touserdata(L, lua_upvalueindex(2));
  if (pr_adam_step(lbind_rt(L), n, slots, &a) != 0) return fail(L);
  /* the counts advance only once the step happened (slots follow the parameters' order) */
  for (lua_Integer j = 1, len = luaL_len(L, 1), k = 0; j <= len && k < n; j++) {
    lua_geti(L, 1, j);
    if (lbind_check_tensor(L, -1) == slots[k].param) {
      lua_rawget(L, 2);
      lua_pushinteger(L, slots[k].step);
      lua_setfield(L, -2, "step");
      k++;
    }
    lua_pop(L, 1);
  }
  return 0;
}

void lbind_open_optim(lua_State *L) {
  static const luaL_Reg funcs[] = {{"sgd_step", l_sgd_step}, {"adam_step", l_adam_step}, {NULL, NULL}};
  for (const luaL_Reg *f = funcs; f->name != NULL; f++) {
    lua_pushvalue(L, -2);                /* upvalue 1: the context */
    lua_newuserdatauv(L, 0, 0);          /* upvalue 2: the slot buffer, grown on demand */
    lua_pushcclosure(L, f->func, 2);
    lua_setfield(L, -2, f->name);
  }
}
