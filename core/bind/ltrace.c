/* ltrace.c — the activity trace's methods of prof.State: event buffering and the Chrome trace export. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lbind.h"
#include "ltrace.h"

/* opts.op_name: the trace's op names from a Lua function, asked once per distinct op name
   before writing, then found by the core's name pointer (events share interned names). */
#define NAME_SLOTS 4096        /* distinct op names mapped; further ones keep their own */

typedef struct NameMap {
  const char *from[NAME_SLOTS];
  const char *to[NAME_SLOTS];
} NameMap;

static size_t slot_of(const char *p) { return (size_t)(((uintptr_t)p >> 3) * 2654435761u) % NAME_SLOTS; }

static const char *mapped_name(void *ud, const char *name) {
  const NameMap *m = ud;
  for (size_t k = slot_of(name), n = 0; n < NAME_SLOTS; k = (k + 1) % NAME_SLOTS, n++) {
    if (m->from[k] == name) return m->to[k];
    if (m->from[k] == NULL) return NULL;
  }
  return NULL;
}

/* Builds the map in a userdata pushed on the stack; the mapped strings are anchored in a table
   pushed under it. fn is at fn_idx. */
static NameMap *build_map(lua_State *L, prof_State *S, int fn_idx) {
  lua_newtable(L);   /* anchors */
  int anchors = lua_gettop(L);
  NameMap *m = lua_newuserdatauv(L, sizeof *m, 0);
  memset(m, 0, sizeof *m);
  int64_t n = prof_event_count(S), used = 0;
  for (int64_t i = 0; i < n && used < NAME_SLOTS / 2; i++) {
    prof_Event e;
    e.size = offsetof(prof_Event, stack);   /* the fixed part is enough */
    if (prof_event_at(S, i, &e) != PROF_OK || e.kind != PROF_EVENT_OP || e.name == NULL) continue;
    size_t k = slot_of(e.name);
    while (m->from[k] != NULL && m->from[k] != e.name) k = (k + 1) % NAME_SLOTS;
    if (m->from[k] != NULL) continue;
    lua_pushvalue(L, fn_idx);
    lua_pushstring(L, e.name);
    lua_call(L, 1, 1);
    const char *to = lua_tostring(L, -1);
    m->from[k] = e.name;
    m->to[k] = to;
    if (to != NULL) lua_rawseti(L, anchors, (lua_Integer)++used);
    else lua_pop(L, 1);
  }
  return m;
}

static prof_State *check_S(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  if (s->S == NULL) luaL_argerror(L, 1, "the profiler state is closed");
  return s->S;
}

/* Sizing the buffer is the caller's business (before start): a refusal is a programmer error. */
/* Wrong option types raise; what the file system or the options' contents refuse returns nil, msg
   (an export is an environmental act, like io.open). */
int ltrace_export(lua_State *L) {
  prof_State *S = check_S(L);
  const char *path = luaL_checkstring(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  prof_TraceInfo info;
  prof_traceinfo_init(&info);
  info.rank = lbind_opt_int(L, 3, "rank", 0);
  info.world_size = lbind_opt_int(L, 3, "world_size", 1);
  info.base_ns = lbind_opt_int(L, 3, "base_ns", 0);
  info.base_epoch_ns = lbind_opt_int(L, 3, "base_epoch_ns", 0);
  info.pid = lbind_opt_int(L, 3, "pid", 0);
  info.process_name = lbind_opt_str(L, 3, "process_name", NULL);
  info.trace_name = lbind_opt_str(L, 3, "trace_name", NULL);
  info.device_properties = lbind_opt_str(L, 3, "device_properties", NULL);
  info.keep_existing = lbind_opt_bool(L, 3, "keep_existing", 0);
  int rc = PROF_OK;
  if (prof_is_active(S)) rc = prof_snapshot(S);   /* the events recorded so far */
  if (rc == PROF_OK && lua_istable(L, 3) && lua_getfield(L, 3, "op_name") != LUA_TNIL) {
    luaL_argcheck(L, lua_isfunction(L, -1), 3, "op_name: expected a function(name) -> name");
    info.op_name = mapped_name;
    info.op_name_ud = build_map(L, S, lua_gettop(L));
  }
  if (rc == PROF_OK) rc = prof_write_chrome_trace_file(S, &info, path);
  if (rc != PROF_OK) {
    luaL_pushfail(L);
    lua_pushstring(L, prof_errmsg(S));
    if (rc == PROF_ERREXIST) lua_pushliteral(L, "exists");
    return rc == PROF_ERREXIST ? 3 : 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}
