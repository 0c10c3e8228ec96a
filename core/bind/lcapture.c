/* lcapture.c — device capture from Lua: open CUPTI or a replay, feed fixtures and synthetic launches, read the counts. */
#include "lcapture.h"

#include <string.h>

#include "lbind.h"

static prof_State *check_S(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  if (s->S == NULL) luaL_argerror(L, 1, "the profiler state is closed");
  return s->S;
}

/* An environmental failure: nil, message (a programmer's error raises instead). */
static int nil_msg(lua_State *L, prof_State *S) {
  lua_pushnil(L);
  lua_pushstring(L, prof_errmsg(S));
  return 2;
}

static const char *const kinds[] = {"null", "replay", "cupti", NULL};
static const char *const activity_names[] = {"kernel", "memcpy", "memset", "runtime", "memory",
                                             "overhead", NULL};

/* opts.activities = {"kernel", ...} -> PROF_CAPTURE_* bits */
static unsigned activities(lua_State *L, int opts) {
  if (lua_getfield(L, opts, "activities") == LUA_TNIL) {
    lua_pop(L, 1);
    return PROF_CAPTURE_ALL;
  }
  luaL_argcheck(L, lua_istable(L, -1), 3, "activities must be a list of names");
  unsigned bits = 0;
  for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
    const char *name = lua_tostring(L, -1);
    int k = -1;
    for (int j = 0; name != NULL && activity_names[j] != NULL; j++)
      if (strcmp(activity_names[j], name) == 0) k = j;
    if (k < 0)
      luaL_argerror(L, 3, lua_pushfstring(L, "unknown activity '%s' (kernel, memcpy, memset, "
                                          "runtime, memory, overhead)", name ? name : "?"));
    bits |= 1u << k;
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  return bits;
}

/* S:capture_open(kind [, opts]) -> S | nil, msg */
int lcapture_open(lua_State *L) {
  prof_State *S = check_S(L);
  int kind = luaL_checkoption(L, 2, NULL, kinds);
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    o.activities = activities(L, 3);
    o.buffer_bytes = (int64_t)lbind_opt_int(L, 3, "buffer_bytes", o.buffer_bytes);
    o.buffers = (int32_t)lbind_opt_int(L, 3, "buffers", o.buffers);
    o.device_events = (int64_t)lbind_opt_int(L, 3, "device_events", o.device_events);
    o.correlations = (int64_t)lbind_opt_int(L, 3, "correlations", o.correlations);
    o.save_path = lbind_opt_str(L, 3, "save_path", NULL);   /* copied by the core */
  }
  int rc = prof_capture_open(S, (prof_CaptureKind)kind, &o);
  if (rc == PROF_ERRDEVICE || rc == PROF_ERRMEM || rc == PROF_ERRIO) return nil_msg(L, S);
  if (rc != PROF_OK) {
    lua_pushstring(L, prof_errmsg(S));
    return lua_error(L);
  }
  lua_settop(L, 1);
  return 1;
}

int lcapture_kind(lua_State *L) {
  prof_CaptureKind k = prof_capture_kind(check_S(L));
  if (k == PROF_CAPTURE_NONE) lua_pushnil(L);
  else lua_pushstring(L, kinds[k]);
  return 1;
}

int lcapture_drain(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_capture_drain(S) != PROF_OK) return nil_msg(L, S);
  lua_pushboolean(L, 1);
  return 1;
}

int lcapture_close(lua_State *L) {
  prof_capture_close(check_S(L));
  return 0;
}

static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* S:capture_stats() -> {kernels = , ..., attribution_rate = attributed_op / device_ops} */
int lcapture_stats(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_is_active(S) && prof_snapshot(S) != PROF_OK) {
    lua_pushstring(L, prof_errmsg(S));
    return lua_error(L);
  }
  prof_CaptureStats st = {.size = sizeof st};
  prof_capture_stats(S, &st);
  lua_createtable(L, 0, 24);
#define F(name) set_int(L, #name, st.name)
  F(buffers), F(records), F(kernels), F(memcpys), F(memsets), F(runtime_calls);
  F(memory_records), F(overheads), F(external_correlations), F(dropped_cupti), F(dropped_pool);
  F(dropped_events), F(out_of_window), F(bad_timestamps), F(unknown_records), F(device_ops);
  F(attributed_op), F(attributed_range), F(attributed_module), F(device_time_ns), F(clock_pairs);
#undef F
  if (st.device_ops > 0) {
    lua_pushnumber(L, (lua_Number)st.attributed_op / (lua_Number)st.device_ops);
    lua_setfield(L, -2, "attribution_rate");
  }
  return 1;
}

/* {====================== a Lua table as fixture JSON ======================} */

static void json_string(luaL_Buffer *b, const char *s, size_t n) {
  luaL_addchar(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      luaL_addchar(b, '\\');
      luaL_addchar(b, (char)c);
    } else if (c < 0x20) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\u%04x", c);
      luaL_addstring(b, esc);
    } else {
      luaL_addchar(b, (char)c);
    }
  }
  luaL_addchar(b, '"');
}

/* The value at idx (absolute) as JSON into b: a sequence is an array, other tables objects. */
static void json_value(lua_State *L, luaL_Buffer *b, int idx, int depth) {
  if (depth > 32) luaL_error(L, "capture_replay: the fixture table nests too deep");
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, idx));
      } else {
        char num[64];
        snprintf(num, sizeof num, "%.17g", (double)lua_tonumber(L, idx));
        lua_pushstring(L, num);
      }
      luaL_addvalue(b);
      break;
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, idx, &n);
      json_string(b, s, n);
      break;
    }
    case LUA_TBOOLEAN: luaL_addstring(b, lua_toboolean(L, idx) ? "true" : "false"); break;
    case LUA_TTABLE: {
      lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
      if (n > 0) {
        luaL_addchar(b, '[');
        for (lua_Integer i = 1; i <= n; i++) {
          if (i > 1) luaL_addchar(b, ',');
          lua_rawgeti(L, idx, i);
          json_value(L, b, lua_gettop(L), depth + 1);
          lua_pop(L, 1);
        }
        luaL_addchar(b, ']');
        break;
      }
      luaL_addchar(b, '{');
      int first = 1;
      lua_pushnil(L);
      while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING)
          luaL_error(L, "capture_replay: fixture tables have string keys or are sequences");
        if (!first) luaL_addchar(b, ',');
        first = 0;
        size_t kn;
        const char *k = lua_tolstring(L, -2, &kn);
        json_string(b, k, kn);
        luaL_addchar(b, ':');
        json_value(L, b, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
      }
      luaL_addchar(b, '}');
      break;
    }
    default: luaL_error(L, "capture_replay: a fixture holds no %s", luaL_typename(L, idx));
  }
}

/* S:capture_replay(path | json text | table) -> true | nil, msg */
int lcapture_replay(lua_State *L) {
  prof_State *S = check_S(L);
  int rc;
  if (lua_istable(L, 2)) {
    /* the buffer sits above the table on the stack: json_value pushes and pops above it */
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    json_value(L, &b, 2, 0);
    luaL_pushresult(&b);
    size_t n;
    const char *text = lua_tolstring(L, -1, &n);
    rc = prof_capture_replay_json(S, text, n, "fixture table");
  } else {
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    const char *p = s;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    rc = *p == '{' ? prof_capture_replay_json(S, s, n, "fixture text") : prof_capture_replay_file(S, s);
  }
  if (rc == PROF_ERRSTATE) {
    lua_pushstring(L, prof_errmsg(S));
    return lua_error(L);
  }
  if (rc != PROF_OK) return nil_msg(L, S);
  lua_pushboolean(L, 1);
  return 1;
}

int lcapture_replay_clock(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_capture_replay_clock(S, (int64_t)luaL_checkinteger(L, 2), (int64_t)luaL_checkinteger(L, 3)) != PROF_OK) {
    lua_pushstring(L, prof_errmsg(S));
    return lua_error(L);
  }
  return 0;
}

int lcapture_replay_window(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_capture_replay_window(S, (int64_t)luaL_checkinteger(L, 2), (int64_t)luaL_checkinteger(L, 3)) != PROF_OK) {
    lua_pushstring(L, prof_errmsg(S));
    return lua_error(L);
  }
  return 0;
}

/* S:capture_replay_launch{kind=, name=, launch_ns=, delay_ns=, duration_ns=, device=, stream=,
   bytes=, copy_kind=, grid=, block=} -> the launch's flow (CUPTI correlation) id */
int lcapture_replay_launch(lua_State *L) {
  prof_State *S = check_S(L);
  static const char *const launch_kinds[] = {"kernel", "memcpy", "memset", NULL};
  prof_ReplayLaunch l;
  memset(&l, 0, sizeof l);
  l.size = sizeof l;
  l.kind = PROF_EVENT_KERNEL;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *k = lbind_opt_str(L, 2, "kind", "kernel");
    int i = 0;
    while (launch_kinds[i] != NULL && strcmp(launch_kinds[i], k) != 0) i++;
    if (launch_kinds[i] == NULL) return luaL_argerror(L, 2, "kind must be kernel, memcpy or memset");
    l.kind = (prof_EventKind)(PROF_EVENT_KERNEL + i);
    l.name = lbind_opt_str(L, 2, "name", NULL);
    l.launch_ns = (int64_t)lbind_opt_int(L, 2, "launch_ns", 0);
    l.delay_ns = (int64_t)lbind_opt_int(L, 2, "delay_ns", 0);
    l.duration_ns = (int64_t)lbind_opt_int(L, 2, "duration_ns", 0);
    l.device = (int32_t)lbind_opt_int(L, 2, "device", 0);
    l.stream = (int32_t)lbind_opt_int(L, 2, "stream", 0);
    l.bytes = (int64_t)lbind_opt_int(L, 2, "bytes", 0);
    const char *ck = lbind_opt_str(L, 2, "copy_kind", "HtoD");
    l.copy_kind = -1;
    for (int32_t c = 1; c <= PROF_COPY_PTOP; c++)
      if (strcmp(prof_copy_kind_name(c), ck) == 0) l.copy_kind = c;
    if (l.copy_kind < 0) return luaL_argerror(L, 2, "copy_kind must be HtoD, DtoH, DtoD, HtoH, ...");
    int64_t dims[3];
    lbind_opt_ints(L, 2, "grid", 3, 1, dims);
    for (int d = 0; d < 3; d++) l.grid[d] = (int32_t)dims[d];
    lbind_opt_ints(L, 2, "block", 3, 1, dims);
    for (int d = 0; d < 3; d++) l.block[d] = (int32_t)dims[d];
  }
  uint64_t flow = 0;
  int rc = prof_capture_replay_launch(S, &l, &flow);
  if (rc != PROF_OK) {
    lua_pushstring(L, prof_errmsg(S));
    return lua_error(L);
  }
  lua_pushinteger(L, (lua_Integer)flow);
  return 1;
}

/* core.capture_available() -> true | false, why */
int lcapture_available(lua_State *L) {
  char why[512];
  if (prof_capture_available(why, sizeof why)) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_pushstring(L, why);
  return 2;
}

/* {====================== device event rows ======================} */

static void set_dims(lua_State *L, const char *k, const int32_t d[3]) {
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; i++) {
    lua_pushinteger(L, d[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, k);
}

void lcapture_push_device_fields(lua_State *L, const prof_Event *e) {
  set_int(L, "device_index", e->device_index);
  set_int(L, "context", e->context);
  set_int(L, "stream", e->stream);
  set_int(L, "flow", (int64_t)e->flow);
  set_int(L, "range", (int64_t)e->range);
  switch (e->kind) {
    case PROF_EVENT_KERNEL:
      set_dims(L, "grid", e->grid);
      set_dims(L, "block", e->block);
      set_int(L, "registers", e->registers);
      set_int(L, "shared_memory", e->shared_memory);
      break;
    case PROF_EVENT_MEMCPY:
      set_int(L, "bytes", e->bytes);
      lua_pushstring(L, prof_copy_kind_name(e->copy_kind));
      lua_setfield(L, -2, "copy_kind");
      lua_pushstring(L, prof_mem_kind_name(e->src_kind));
      lua_setfield(L, -2, "src_kind");
      lua_pushstring(L, prof_mem_kind_name(e->dst_kind));
      lua_setfield(L, -2, "dst_kind");
      break;
    case PROF_EVENT_MEMSET:
      set_int(L, "bytes", e->bytes);
      lua_pushstring(L, prof_mem_kind_name(e->dst_kind));
      lua_setfield(L, -2, "dst_kind");
      break;
    case PROF_EVENT_RUNTIME:
      lua_pushstring(L, e->api ? "driver" : "runtime");
      lua_setfield(L, -2, "api");
      set_int(L, "cbid", e->cbid);
      break;
    case PROF_EVENT_GPU_MEMORY:
      set_int(L, "address", (int64_t)e->address);
      lua_pushstring(L, prof_mem_kind_name(e->dst_kind));
      lua_setfield(L, -2, "dst_kind");
      break;
    default: break;
  }
}
