/* lscopes.c — record_function's scopes in C: torch.profiler's ranges from Lua at a C call a side. */
#include "lbind.h"

/*
** Ranges reach the core only inside a recording window, and a scope opened outside the window
** (or in an earlier one) must not pop a range of this one. Scopes close in LIFO order, so the
** scopes deeper than those already open at the window's start (base, which falls as they
** close) are exactly the window's own: two counters answer it, nothing is stored per scope.
** One shared closer (a table whose __close is pop) serves every
** `local _ <close> = prof.record_function(name)`.
**
** In Lua the same scope cost about two function calls, three table accesses and a method
** lookup a side (250-400 ns on a slow machine); here it is a C call each way behind
** prof.profiler's record_function.
*/
typedef struct LScopes {
  int recording;               /* a window of st records */
  lua_Integer depth;           /* open scopes, in a window or not */
  lua_Integer base;            /* open scopes older than the window: deeper ones are its own */
  LState *st;                  /* the window's state (its S is read at each use: S:close() may
                                  free it mid-window); NULL outside a window */
} LScopes;

/* The closures' upvalues; the scopes userdata's user values. */
enum { UP_SCOPES = 1, UP_CLOSER };
enum { UV_STATE = 1, UV_NAMES };

static LScopes *scopes(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(UP_SCOPES)); }

/* The interned copy of the string at idx, from the window's name table (name -> light
   userdata), interned once per name and profile: later pushes take no lock. */
static const char *interned(lua_State *L, prof_State *S, int idx) {
  lua_getiuservalue(L, lua_upvalueindex(UP_SCOPES), UV_NAMES);
  const char *p = lbind_interned(L, S, -1, idx);
  lua_pop(L, 1);
  return p;
}

/* An error at level 2: the line that called prof.profiler's record_function. */
static int caller_error(lua_State *L, const char *what, const char *detail) {
  luaL_where(L, 2);
  lua_pushfstring(L, "record_function: %s%s", what, detail);
  lua_concat(L, 2);
  return lua_error(L);
}

static void check_name(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    caller_error(L, "name must be a string, got ", lua_isnone(L, 1) ? "nil" : luaL_typename(L, 1));
}

/* The recording state, NULL outside a window; an error when it was closed inside one. */
static prof_State *window_S(lua_State *L, LScopes *sc) {
  if (!sc->recording) return NULL;
  if (sc->st->S == NULL) caller_error(L, "the profiler state is closed", "");
  return sc->st->S;
}

/* push(name) -> the closer, for `local _ <close> = ...` (torch's `with`). profiler.lua's
   record_function calls it for both forms: the fn form runs fn in Lua, so that a deep recursion
   of ranges takes no C stack. */
static int l_push(lua_State *L) {
  check_name(L);
  LScopes *sc = scopes(L);
  prof_State *S = window_S(L, sc);
  if (S != NULL) prof_range_push(S, interned(L, S, 1));
  sc->depth++;
  lua_pushvalue(L, lua_upvalueindex(UP_CLOSER));
  return 1;
}

/* push_numbered(name, n): the range "name#n" (ProfilerStep#N), one interned name for every n. */
static int l_push_numbered(lua_State *L) {
  check_name(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  LScopes *sc = scopes(L);
  prof_State *S = window_S(L, sc);
  if (S != NULL) prof_range_push_numbered(S, interned(L, S, 1), (int64_t)n);
  sc->depth++;
  return 0;
}

/* The closer's __close, and pop() for the step ranges: closes the innermost scope. */
static int l_pop(lua_State *L) {
  LScopes *sc = scopes(L);
  if (sc->depth <= 0) return 0;   /* a closer closed twice by hand: nothing of ours is open */
  if (sc->depth > sc->base) {
    /* a state closed mid-window has nothing left to pop (its push raised the error) */
    if (sc->recording && sc->st->S != NULL) prof_range_pop(sc->st->S);
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
  sc->st = st;
  sc->base = sc->depth;
  sc->recording = 1;
  return 0;
}

/* stop(): the window is over; scopes still open close without reaching the core. */
static int l_stop(lua_State *L) {
  LScopes *sc = scopes(L);
  sc->recording = 0;
  sc->st = NULL;
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

/* core.new_scopes() -> {push=, push_numbered=, pop=, start=, stop=, depth=}: one scope stack,
   prof.profiler's. */
static int l_new_scopes(lua_State *L) {
  LScopes *sc = lua_newuserdatauv(L, sizeof *sc, 2);
  sc->recording = 0;
  sc->depth = sc->base = 0;
  sc->st = NULL;
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
    lua_pushcclosure(L, f->func, 2);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}

void lbind_open_scopes(lua_State *L) {
  static const luaL_Reg funcs[] = {{"new_scopes", l_new_scopes}, {NULL, NULL}};
  lbind_register(L, funcs);
}
