/* levents.c — prof.State's events from Lua: user ranges, instants, counters, the event buffer. */
#include "levents.h"

#include "lbind.h"
#include "lcapture.h"

/* Registry key of the name caches: a weak-keyed table {[State userdata] = {[name] = interned}}.
   The core wants names that outlive the session; interning takes its lock, so each name is
   interned once per state and later pushes only look it up here (no lock on the hot path). */
static const char names_key = 'n';

static prof_State *check_S(lua_State *L, int idx) {
  LState *s = luaL_checkudata(L, idx, LBIND_STATE);
  if (s->S == NULL) luaL_argerror(L, idx, "the profiler state is closed");
  return s->S;
}

/* check_S for the per-call methods (record_function's push and pop): the metatable compared by
   pointer, where luaL_checkudata looks its name up in the registry (a fifth of a scope's cost) */
static prof_State *fast_S(lua_State *L) {
  LState *s = lua_touserdata(L, 1);
  if (s != NULL && s->S != NULL && lua_getmetatable(L, 1)) {
    const void *mt = lua_topointer(L, -1);
    lua_pop(L, 1);
    if (mt == lbind_ctx(L)->state_mt) return s->S;
  }
  return check_S(L, 1);   /* the error, with luaL's message */
}

static int fail(lua_State *L, prof_State *S) {
  lua_pushstring(L, prof_errmsg(S));
  return lua_error(L);
}

/* Pushes the name cache of the State userdata at idx (absolute), making it on first use. */
static void push_cache(lua_State *L, int idx) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &names_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &names_key);
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, -2) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, idx);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_remove(L, -2);
}

/* The interned copy of the string at name_idx for the state S whose userdata is at state_idx. */
static const char *interned(lua_State *L, prof_State *S, int state_idx, int name_idx) {
  push_cache(L, state_idx);
  const char *p = lbind_interned(L, S, -1, name_idx);
  lua_pop(L, 1);
  return p;
}

int levents_set_event_capacity(lua_State *L) {
  prof_State *S = check_S(L, 1);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0, 2, "expected a capacity >= 0");
  if (prof_set_event_capacity(S, (int64_t)n) != PROF_OK) return fail(L, S);
  lua_settop(L, 1);   /* S, so calls chain */
  return 1;
}

int levents_set_memory_events(lua_State *L) {
  prof_State *S = check_S(L, 1);
  if (prof_set_memory_events(S, lua_toboolean(L, 2)) != PROF_OK) return fail(L, S);
  return 0;
}

int levents_intern(lua_State *L) {
  prof_State *S = check_S(L, 1);
  luaL_checkstring(L, 2);
  lua_pushlightuserdata(L, (void *)interned(L, S, 1, 2));
  return 1;
}

/* S:range_push(name): name is a string or what S:intern(name) gave (then no lookup at all). */
int levents_range_push(lua_State *L) {
  prof_State *S = fast_S(L);
  if (lua_islightuserdata(L, 2)) {
    prof_range_push(S, lua_touserdata(L, 2));
    return 0;
  }
  luaL_checktype(L, 2, LUA_TSTRING);
  prof_range_push(S, interned(L, S, 1, 2));
  return 0;
}

/* S:range_push_numbered(name, n): the range "name#n" (ProfilerStep#N), one interned name for all n. */
int levents_range_push_numbered(lua_State *L) {
  prof_State *S = check_S(L, 1);
  lua_Integer n = luaL_checkinteger(L, 3);
  if (lua_islightuserdata(L, 2)) {
    prof_range_push_numbered(S, lua_touserdata(L, 2), (int64_t)n);
    return 0;
  }
  luaL_checktype(L, 2, LUA_TSTRING);
  prof_range_push_numbered(S, interned(L, S, 1, 2), (int64_t)n);
  return 0;
}

int levents_range_pop(lua_State *L) {
  prof_range_pop(fast_S(L));
  return 0;
}

int levents_instant(lua_State *L) {
  prof_State *S = check_S(L, 1);
  luaL_checktype(L, 2, LUA_TSTRING);
  prof_instant(S, interned(L, S, 1, 2));
  return 0;
}

int levents_counter(lua_State *L) {
  prof_State *S = check_S(L, 1);
  luaL_checktype(L, 2, LUA_TSTRING);
  lua_Integer v = luaL_checkinteger(L, 3);
  prof_counter(S, interned(L, S, 1, 2), (int64_t)v);
  return 0;
}

/* core.range_push(name) / core.range_pop(): the current recorder's (core.set_recorder), nothing
   when none records. name is a string, or what the current recorder's S:intern(name) returned
   (it must be that state's: a pointer of a closed state would dangle). The recorder's userdata
   is the context's user value 1. */
int levents_cur_range_push(lua_State *L) {
  prof_State *S = lbind_rt(L)->rec;
  if (S == NULL) return 0;
  /* the hot path of prof.record_function: a name the caller interned with the recorder's
     S:intern (a light userdata), no lookup at all */
  if (lua_islightuserdata(L, 1)) {
    prof_range_push(S, lua_touserdata(L, 1));
    return 0;
  }
  luaL_checktype(L, 1, LUA_TSTRING);
  lua_getiuservalue(L, lua_upvalueindex(1), 1);
  prof_range_push(S, interned(L, S, lua_gettop(L), 1));
  return 0;
}

int levents_cur_range_pop(lua_State *L) {
  prof_State *S = lbind_rt(L)->rec;
  if (S != NULL) prof_range_pop(S);
  return 0;
}

static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static const char *const kind_names[] = {"module", "op",     "range",  "instant", "counter",
                                            "memory", "memory_tag", "kernel", "memcpy", "memset",
                                            "runtime", "gpu_memory", "overhead"};
static const char *const phase_names[PROF_PHASE_COUNT] = {"forward", "backward", "step"};

/* Pushes the dotted path of module id, cached in the table at paths (absolute index). */
static void push_path(lua_State *L, prof_State *S, prof_ModuleId id, int paths) {
  if (lua_rawgeti(L, paths, id) == LUA_TSTRING) return;
  lua_pop(L, 1);
  char buf[1024];
  if (prof_module_path(S, id, buf, sizeof buf) < 0) buf[0] = '\0';
  lua_pushstring(L, buf);
  lua_pushvalue(L, -1);
  lua_rawseti(L, paths, id);
}

/* record_shapes: input_shapes = {{8, 64}, {64, 64}}, input_types = {"float32", "float32"}. */
static void push_inputs(lua_State *L, const prof_Event *e) {
  lua_createtable(L, e->ninputs, 0);
  lua_createtable(L, e->ninputs, 0);
  for (int32_t i = 0; i < e->ninputs; i++) {
    const prof_Operand *o = &e->input[i];
    lua_createtable(L, o->ndim, 0);
    for (int32_t d = 0; d < o->ndim; d++) {
      lua_pushinteger(L, (lua_Integer)o->dim[d]);
      lua_rawseti(L, -2, d + 1);
    }
    lua_rawseti(L, -3, i + 1);
    lua_pushstring(L, prof_dtype_name((prof_DType)o->dtype));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -3, "input_types");
  lua_setfield(L, -2, "input_shapes");
}

/* S:events(): every buffered event as a plain table (copies; names are copied into Lua strings),
   threads in creation order, each thread's in the order they closed. */
int levents_events(lua_State *L) {
  prof_State *S = check_S(L, 1);
  if (prof_is_active(S) && prof_snapshot(S) != PROF_OK) return fail(L, S);
  int64_t n = prof_event_count(S);
  lua_newtable(L);
  int paths = lua_gettop(L);
  lua_createtable(L, n > 0 && n < 1 << 30 ? (int)n : 0, 0);
  for (int64_t i = 0; i < n; i++) {
    prof_Event e;   /* prof_event_at sets every field but the unused operands */
    e.size = sizeof e;
    if (prof_event_at(S, i, &e) != PROF_OK) return fail(L, S);
    lua_createtable(L, 0, 20);
    lua_pushstring(L, (unsigned)e.kind < sizeof kind_names / sizeof *kind_names ? kind_names[e.kind] : "?");
    lua_setfield(L, -2, "kind");
    if (e.kind == PROF_EVENT_RANGE && e.value >= 0)
      lua_pushfstring(L, "%s#%I", e.name != NULL ? e.name : "", (lua_Integer)e.value);
    else
      lua_pushstring(L, e.name != NULL ? e.name : "");
    lua_setfield(L, -2, "name");
    if (e.ninputs > 0) push_inputs(L, &e);
    if (e.stack != NULL) {
      lua_pushstring(L, e.stack);
      lua_setfield(L, -2, "stack");
    }
    set_int(L, "thread", e.thread);
    if (e.module != PROF_NO_MODULE) {
      set_int(L, "module", e.module);
      push_path(L, S, e.module, paths);
      lua_setfield(L, -2, "module_path");
    }
    lua_pushstring(L, (unsigned)e.phase < PROF_PHASE_COUNT ? phase_names[e.phase] : "?");
    lua_setfield(L, -2, "phase");
    lua_pushstring(L, prof_device_name(e.device));
    lua_setfield(L, -2, "device");
    set_int(L, "correlation", (int64_t)e.correlation);
    set_int(L, "t_begin_ns", e.t_begin_ns);
    set_int(L, "t_end_ns", e.t_end_ns);
    set_int(L, "macs", e.macs);
    set_int(L, "flops", e.flops);
    set_int(L, "bytes_read", e.bytes_read);
    set_int(L, "bytes_written", e.bytes_written);
    set_int(L, "bytes_allocated", e.bytes_allocated);
    set_int(L, "bytes_freed", e.bytes_freed);
    set_int(L, "value", e.value);
    set_int(L, "total", e.total);
    if (e.kind == PROF_EVENT_MEMORY || e.kind == PROF_EVENT_MEMORY_TAG) {
      set_int(L, "address", (int64_t)e.address);
      if (e.kind == PROF_EVENT_MEMORY_TAG) {
        lua_pushstring(L, prof_mem_category_name((prof_MemCategory)e.value));
        lua_setfield(L, -2, "category");
      }
    }
    if (e.kind >= PROF_EVENT_KERNEL) lcapture_push_device_fields(L, &e);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

int levents_events_dropped(lua_State *L) {
  prof_State *S = check_S(L, 1);
  if (prof_is_active(S) && prof_snapshot(S) != PROF_OK) return fail(L, S);
  lua_pushinteger(L, (lua_Integer)prof_events_dropped(S));
  return 1;
}

int levents_set_record_shapes(lua_State *L) {
  prof_State *S = check_S(L, 1);
  if (prof_set_record_shapes(S, lua_toboolean(L, 2)) != PROF_OK) return fail(L, S);
  return 0;
}

int levents_shapes_dropped(lua_State *L) {
  prof_State *S = check_S(L, 1);
  if (prof_is_active(S) && prof_snapshot(S) != PROF_OK) return fail(L, S);
  lua_pushinteger(L, (lua_Integer)prof_shapes_dropped(S));
  return 1;
}

int levents_memory_peak(lua_State *L) {
  prof_State *S = check_S(L, 1);
  int d = prof_device_parse(luaL_optstring(L, 2, NULL));
  if (d < 0) return luaL_argerror(L, 2, "expected a device kind of the profiler's events: cpu or cuda");
  if (prof_is_active(S) && prof_snapshot(S) != PROF_OK) return fail(L, S);
  lua_pushinteger(L, (lua_Integer)prof_memory_peak(S, d));
  return 1;
}
