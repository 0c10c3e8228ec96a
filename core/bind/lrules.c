/* lrules.c — Lua flop rules as trampolines in the core's rule registry: the Lua function sees the module and its values. */
#include <math.h>

#include "lbind.h"
#include "lrules.h"

#define MAX_OPERANDS 16

/* What the trampoline needs of the Lua call that asked for the rule (prof_RuleCall.host). */
typedef struct LRuleCall {
  lua_State *L;
  int state, module, inputs, output;   /* stack indices */
  int failed;                           /* the Lua function raised: its message is on the stack */
} LRuleCall;

static LState *check_state(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  if (s->S == NULL) luaL_argerror(L, 1, "the profiler state is closed");
  return s;
}

/* The Lua rule functions live in the State userdata's user value, by module type. */
static void push_rule_table(lua_State *L, int state) {
  if (lua_getiuservalue(L, state, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, state, 1);
  }
}

static int trampoline(void *ud, prof_State *S, const prof_RuleCall *call, prof_RuleCounts *out) {
  (void)ud;
  (void)S;
  LRuleCall *c = call->host;
  if (c == NULL) return 1;   /* a Lua rule needs the call's values: only apply_rule has them */
  lua_State *L = c->L;
  push_rule_table(L, c->state);
  lua_getfield(L, -1, call->type);
  lua_remove(L, -2);
  lua_Debug ar;
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">S", &ar);   /* where the rule is written, for the messages below */
  lua_pushvalue(L, c->module);
  lua_pushvalue(L, c->inputs);
  lua_pushvalue(L, c->output);
  lua_pushstring(L, prof_conventions_name(call->conventions));
  if (lua_pcall(L, 4, 4, 0) != LUA_OK) {
    c->failed = 1;             /* the message stays on top for lrules_apply to raise */
    return 1;
  }
  /* A count is an integer from 0 to 2^63 - 1, or nil for 0. A float with an exact integer value
     is taken; 1.5 is refused (never rounded), and 2^63 or more does not fit. */
  static const char *const keys[4] = {"macs", "flops", "bytes_read", "bytes_written"};
  int64_t *dst[4] = {&out->macs, &out->flops, &out->bytes_read, &out->bytes_written};
  for (int i = 0; i < 4; i++) {
    int idx = -4 + i, isnum;
    lua_Integer v = lua_isnil(L, idx) ? 0 : lua_tointegerx(L, idx, &isnum);
    if (lua_isnil(L, idx)) isnum = 1;
    if (!isnum || v < 0) {
      const char *why = !lua_isnumber(L, idx) ? "expected a count"
                        : !isnum && lua_tonumber(L, idx) == floor(lua_tonumber(L, idx))
                            ? "more than a count holds: at most 2^63 - 1"
                        : !isnum ? "expected a whole number: counts are not rounded"
                                 : "expected a non-negative count";
      luaL_tolstring(L, idx, NULL);
      lua_pushfstring(L, "flop rule %s:%d for %s returned %s = %s (%s)", ar.short_src,
                      ar.linedefined, call->type, keys[i], lua_tostring(L, -1), why);
      lua_replace(L, -6);      /* the message replaces the first result; the rest is dropped */
      lua_pop(L, 4);
      c->failed = 1;
      return 1;
    }
    *dst[i] = (int64_t)v;
  }
  lua_pop(L, 4);
  return 0;
}

int lrules_register(lua_State *L) {
  LState *s = check_state(L);
  const char *type = luaL_checkstring(L, 2);
  int remove = lua_isnoneornil(L, 3);
  if (!remove) luaL_checktype(L, 3, LUA_TFUNCTION);
  push_rule_table(L, 1);
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, type);
  if (prof_rule_register(s->S, type, remove ? NULL : trampoline, NULL) != PROF_OK) {
    lua_pushstring(L, prof_errmsg(s->S));
    return lua_error(L);
  }
  return 0;
}

/* Operands of the tensors among a call's values: a tensor, or a list holding tensors. */
static int32_t operands_of(lua_State *L, int idx, prof_Operand *ops, int32_t n) {
  if (lbind_is_tensor(L, idx)) {
    if (n < MAX_OPERANDS) pr_operand(lbind_check_tensor(L, idx), &ops[n++]);
    return n;
  }
  if (lua_type(L, idx) != LUA_TTABLE) return n;
  for (lua_Integer i = 1; n < MAX_OPERANDS; i++) {
    if (lua_rawgeti(L, idx, i) == LUA_TNIL) {
      lua_pop(L, 1);
      break;
    }
    if (lbind_is_tensor(L, -1)) pr_operand(lbind_check_tensor(L, -1), &ops[n++]);
    lua_pop(L, 1);
  }
  return n;
}

int lrules_apply(lua_State *L) {
  LState *s = check_state(L);
  prof_ModuleId id = (prof_ModuleId)luaL_checkinteger(L, 2);
  lua_settop(L, 5);
  prof_Operand in[MAX_OPERANDS], out[MAX_OPERANDS];
  int32_t nin = operands_of(L, 4, in, 0);
  int32_t nout = operands_of(L, 5, out, 0);
  LRuleCall c = {L, 1, 3, 4, 5, 0};
  if (prof_module_apply_rule(s->S, id, in, nin, out, nout, &c) == PROF_OK) return 0;
  if (c.failed) return lua_error(L);   /* the rule's own message, already on top */
  lua_pushstring(L, prof_errmsg(s->S));
  return lua_error(L);
}
