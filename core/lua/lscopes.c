/* lscopes.c — record_function's scopes in C: torch.profiler's ranges from Lua at a C call a side. */
#include "lbind.h"

/*
** Ranges reach the core only inside a recording window, and a scope opened outside the window
** (or in an earlier one) must not pop a range of this one. Scopes close in LIFO order, so the
** scopes deeper than those already open at the window's start (base, which falls as they
** close) are exactly the window's own: two counters answer it, nothing is stored per scope. One shared closer (a table whose
** __close is pop) serves every `local _ <close> = prof.record_function(name)`.
**
** In Lua the same scope cost about two function calls, three table accesses and a method
** lookup a side (250-400 ns on a slow machine); here it is a C call each way.
*/
typedef struct LScopes {
  int recording;               /* a window of S records */
  lua_Integer depth;           /* open scopes, in a window or not */
  lua_Integer base;            /* open scopes older than the window: deeper ones are its own */
  prof_State *S;               /* the window's state; NULL outside a window */
} LScopes;

/* The closures' upvalues; the scopes userdata's user values. */
enum { UP_SCOPES = 1, UP_CLOSER, UP_RUN };
enum { UV_STATE = 1, UV_NAMES };

static LScopes *scopes(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(UP_SCOPES)); }

/* The interned copy of the string at idx, from the window's name table (name -> light
   userdata), interned once per name and profile: later pushes take no lock. */
static const char *interned(lua_State *L, LScopes *sc, int idx) {
  lua_getiuservalue(L, lua_upvalueindex(UP_SCOPES), UV_NAMES);
  const char *p = lbind_interned(L, sc->S, -1, idx);
  lua_pop(L, 1);
  return p;
}

static void check_name(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    luaL_error(L, "record_function: name must be a string, got %s",
               lua_isnone(L, 1) ? "nil" : luaL_typename(L, 1));
}

static int finish(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  return lua_gettop(L);
}

/*
** record_function(name): the closer, for `local _ <close> = ...` (torch's `with`);
** record_function(name, fn, ...): fn(...) inside the range, its results returned, the range
** closed on errors too (run, a Lua function, holds the closer as its to-be-closed variable).
*/
static int l_push(lua_State *L) {
  check_name(L);
  LScopes *sc = scopes(L);
  sc->depth++;
  if (sc->recording) prof_range_push(sc->S, interned(L, sc, 1));
  if (lua_isnoneornil(L, 2)) {
    lua_pushvalue(L, lua_upvalueindex(UP_CLOSER));
    return 1;
  }
  /* name fn args... -> run closer fn args... */
  lua_pushvalue(L, lua_upvalueindex(UP_RUN));
  lua_replace(L, 1);
  lua_pushvalue(L, lua_upvalueindex(UP_CLOSER));
  lua_insert(L, 2);
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, finish);
  return finish(L, LUA_OK, 0);
}

/* push_numbered(name, n): the range "name#n" (ProfilerStep#N), one interned name for every n. */
static int l_push_numbered(lua_State *L) {
  check_name(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  LScopes *sc = scopes(L);
  sc->depth++;
  if (sc->recording) prof_range_push_numbered(sc->S, interned(L, sc, 1), (int64_t)n);
  return 0;
}

/* The closer's __close, and pop() for the step ranges: closes the innermost scope. */
static int l_pop(lua_State *L) {
  LScopes *sc = scopes(L);
  if (sc->depth <= 0) return 0;   /* a closer closed twice by hand: nothing of ours is open */
  if (sc->depth > sc->base) {
    if (sc->recording) prof_range_pop(sc->S);
  } else {
    sc->base--;                   /* one of the scopes older than the window */
  }
  sc->depth--;
  return 0;
}

/* start(state, names): the window of state records from now; names caches its interned names. */
static int l_start(lua_State *L) {
  LState *st = luaL_checkudata(L, 1, LBIND_STATE);
  luaL_argcheck(L, st->S != NULL, 1, "the profiler state is closed");
  luaL_checktype(L, 2, LUA_TTABLE);
  LScopes *sc = scopes(L);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, lua_upvalueindex(UP_SCOPES), UV_STATE);   /* kept alive while it records */
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, lua_upvalueindex(UP_SCOPES), UV_NAMES);
  sc->S = st->S;
  sc->base = sc->depth;
  sc->recording = 1;
  return 0;
}

/* stop(): the window is over; scopes still open close without reaching the core. */
static int l_stop(lua_State *L) {
  LScopes *sc = scopes(L);
  sc->recording = 0;
  sc->S = NULL;
  for (int uv = UV_STATE; uv <= UV_NAMES; uv++) {
    lua_pushnil(L);
    lua_setiuservalue(L, lua_upvalueindex(UP_SCOPES), uv);
  }
  return 0;
}

/* depth(): the open scopes (for specs and the profile's own checks). */
static int l_depth(lua_State *L) {
  lua_pushinteger(L, scopes(L)->depth);
  return 1;
}

/*
** core.new_scopes(run) -> {push=, push_numbered=, pop=, start=, stop=, depth=}: one scope stack,
** profiler.lua's. run(closer, fn, ...) must hold closer as a to-be-closed variable and return
** fn(...)'s results.
*/
static int l_new_scopes(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  LScopes *sc = lua_newuserdatauv(L, sizeof *sc, 2);
  sc->recording = 0;
  sc->depth = sc->base = 0;
  sc->S = NULL;
  int ud = lua_gettop(L);
  /* the closer: {} with __name and __close = pop */
  lua_newtable(L);
  lua_createtable(L, 0, 2);
  lua_pushliteral(L, "prof.record_function");
  lua_setfield(L, -2, "__name");
  lua_pushvalue(L, ud);
  lua_pushcclosure(L, l_pop, 1);
  lua_setfield(L, -2, "__close");
  lua_setmetatable(L, -2);
  int closer = lua_gettop(L);
  static const luaL_Reg fns[] = {{"push", l_push},   {"push_numbered", l_push_numbered},
                                 {"pop", l_pop},     {"start", l_start},
                                 {"stop", l_stop},   {"depth", l_depth},
                                 {NULL, NULL}};
  lua_createtable(L, 0, 6);
  for (const luaL_Reg *f = fns; f->name != NULL; f++) {
    lua_pushvalue(L, ud);
    lua_pushvalue(L, closer);
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, f->func, 3);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}

void lbind_open_scopes(lua_State *L) {
  static const luaL_Reg funcs[] = {{"new_scopes", l_new_scopes}, {NULL, NULL}};
  lbind_register(L, funcs);
}
