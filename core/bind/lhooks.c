/* lhooks.c — the core's C twins of the Lua hooks, for the Lua face: ignore filters, the schedule machine and table. */
#include "lbind.h"

static const char *const ITEM_NAMES[] = {
    [PROF_ITEM_PREPARE] = "prepare", [PROF_ITEM_START] = "start", [PROF_ITEM_STOP] = "stop",
    [PROF_ITEM_TRACE_READY] = "trace_ready", [PROF_ITEM_WARN] = "warn"};

/* core.schedule_action(step, wait, warmup, active, repeat, skip_first, skip_first_wait) -> name:
   prof_schedule_torch (the Lua side checks the arguments first, with its own messages). */
static int l_schedule_action(lua_State *L) {
  lua_Integer step = luaL_checkinteger(L, 1);
  prof_Schedule s = {luaL_checkinteger(L, 2), luaL_checkinteger(L, 3), luaL_checkinteger(L, 4),
                     luaL_checkinteger(L, 5), luaL_checkinteger(L, 6), luaL_checkinteger(L, 7)};
  lua_pushstring(L, prof_action_name(prof_schedule_torch(&s, step, -1)));
  return 1;
}

/* core.schedule_transitions() -> {[prev] = {[cur] = {item, ...}, exit = {...}}}, action names as
   torch prints them: prof_schedule_transition's table. */
static int l_schedule_transitions(lua_State *L) {
  lua_createtable(L, 0, 4);
  for (int prev = PROF_ACTION_NONE; prev <= PROF_ACTION_RECORD_AND_SAVE; prev++) {
    lua_createtable(L, 0, 5);
    for (int cur = -1; cur <= PROF_ACTION_RECORD_AND_SAVE; cur++) {
      lua_newtable(L);
      int i = 0;
      for (const prof_ScheduleItem *it = prof_schedule_transition(prev, cur); *it != PROF_ITEM_END; it++) {
        lua_pushstring(L, ITEM_NAMES[*it]);
        lua_rawseti(L, -2, ++i);
      }
      lua_setfield(L, -2, cur < 0 ? "exit" : prof_action_name((prof_Action)cur));
    }
    lua_setfield(L, -2, prof_action_name((prof_Action)prev));
  }
  return 1;
}

/* The Lua filter of one prof_ignore_apply: the core must not be unwound by a Lua error, so the
   first error is kept (later modules are not asked) and raised once the core has returned. */
typedef struct IgnoreCall {
  lua_State *L;
  int fn;                      /* stack index of the Lua function */
  int failed;
} IgnoreCall;

static int ignore_tramp(void *ud, prof_State *S, prof_ModuleId id, const char *path, const char *type) {
  IgnoreCall *c = ud;
  (void)S;
  if (c->failed) return 0;
  lua_State *L = c->L;
  lua_pushvalue(L, c->fn);
  lua_pushinteger(L, id);
  lua_pushstring(L, path);
  lua_pushstring(L, type);
  if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
    c->failed = 1;             /* the message stays on the stack */
    return 0;
  }
  int yes = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return yes;
}

int lhooks_apply_ignore(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  if (s->S == NULL) return luaL_argerror(L, 1, "the profiler state is closed");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  IgnoreCall c = {L, 2, 0};
  int32_t n = prof_ignore_apply(s->S, ignore_tramp, &c);
  if (c.failed) return lua_error(L);
  if (n < 0) {
    lua_pushstring(L, prof_errmsg(s->S));
    return lua_error(L);
  }
  lua_pushinteger(L, n);
  return 1;
}

void lbind_open_hooks(lua_State *L) {
  static const luaL_Reg funcs[] = {{"schedule_action", l_schedule_action},
                                   {"schedule_transitions", l_schedule_transitions},
                                   {NULL, NULL}};
  lbind_register(L, funcs);
}
