/* ltrace.c — the activity trace's methods of prof.State: event buffering and the Chrome trace export. */
#include "lbind.h"
#include "ltrace.h"

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
  int rc = PROF_OK;
  if (prof_is_active(S)) rc = prof_snapshot(S);   /* the events recorded so far */
  if (rc == PROF_OK) rc = prof_write_chrome_trace_file(S, &info, path);
  if (rc != PROF_OK) {
    luaL_pushfail(L);
    lua_pushstring(L, prof_errmsg(S));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}
