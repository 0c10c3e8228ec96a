/* lstate.c — the prof.State userdata: a profiler session driven from Lua. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "lbind.h"
#include "lcapture.h"
#include "lnvtx.h"
#include "levents.h"
#include "lrules.h"
#include "lstack.h"
#include "ltrace.h"

static LState *check_open(lua_State *L, int idx) {
  LState *s = luaL_checkudata(L, idx, LBIND_STATE);
  if (s->S == NULL) luaL_argerror(L, idx, "the profiler state is closed");
  return s;
}

static prof_State *check_S(lua_State *L) { return check_open(L, 1)->S; }

static int fail(lua_State *L, prof_State *S) {
  lua_pushstring(L, prof_errmsg(S));
  return lua_error(L);
}

/* Uses Lua's allocator (through the main thread, which lives as long as any state), so the
   core's memory shows up in collectgarbage("count"). */
static void *lua_alloc_adapter(void *ud, void *ptr, size_t osize, size_t nsize) {
  void *aud;
  lua_Alloc f = lua_getallocf((lua_State *)ud, &aud);
  return f(aud, ptr, osize, nsize);
}

static lua_State *main_thread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *M = lua_tothread(L, -1);
  lua_pop(L, 1);
  return M;
}

static int s_new(lua_State *L) {
  /* Userdata first, resource second: a failed prof_new leaves a closed, collectable handle. */
  LState *s = lua_newuserdatauv(L, sizeof *s, 2);   /* user values: its Lua rules, its stack walker */
  s->S = NULL;
  s->borrowed = 0;
  luaL_setmetatable(L, LBIND_STATE);
  s->S = prof_new(lua_alloc_adapter, main_thread(L));
  if (s->S == NULL) return luaL_error(L, "out of memory creating a profiler state");
  prof_set_output_watch(s->S, &lbind_ctx(L)->watch);
  return 1;
}

/* core.borrow(ptr): a prof.State over a C host's prof_State *, pushed as a light userdata: the
   host records through C, Lua reads and reports the same session. The host keeps ownership:
   close and __gc only forget the pointer, so the host closes its lua_State (or the handle)
   before prof_close. */
static int s_borrow(lua_State *L) {
  luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
  prof_State *S = lua_touserdata(L, 1);
  if (S == NULL) return luaL_argerror(L, 1, "a NULL prof_State");
  LState *s = lua_newuserdatauv(L, sizeof *s, 2);
  s->S = S;
  s->borrowed = 1;
  luaL_setmetatable(L, LBIND_STATE);
  return 1;
}

static int s_close(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  LCtx *ctx = lbind_ctx(L);
  if (s->S != NULL) {
    if (ctx->rt.rec == s->S) ctx->rt.rec = NULL;
    if (!s->borrowed) prof_close(s->S);
    s->S = NULL;
  }
  return 0;
}

static int s_tostring(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  if (s->S == NULL) lua_pushliteral(L, "prof.State (closed)");
  else lua_pushfstring(L, "prof.State (%s, %d modules)", prof_is_active(s->S) ? "active" : "idle",
                       (int)prof_module_count(s->S));
  return 1;
}

static int s_start(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_start(S) != PROF_OK) return fail(L, S);
  return 0;
}

static int s_stop(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_stop(S) != PROF_OK) return fail(L, S);
  return 0;
}

/* S:trim(): frees the recorders' per-module counters after a window (prof_trim); the snapshot
   stays. */
static int s_trim(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_trim(S) != PROF_OK) return fail(L, S);
  return 0;
}

static int s_reset(lua_State *L) {
  prof_reset(check_S(L));
  return 0;
}

static int s_clear(lua_State *L) {
  prof_clear(check_S(L));
  return 0;
}

static int s_active(lua_State *L) {
  lua_pushboolean(L, prof_is_active(check_S(L)));
  return 1;
}

static int s_set_conventions(lua_State *L) {
  prof_State *S = check_S(L);
  static const char *const names[] = {"exact", "deepspeed", NULL};
  prof_set_conventions(S, (prof_Conventions)luaL_checkoption(L, 2, NULL, names));
  return 0;
}

static int s_conventions(lua_State *L) {
  lua_pushstring(L, prof_conventions_name(prof_get_conventions(check_S(L))));
  return 1;
}

static int s_set_phase(lua_State *L) {
  static const char *const names[] = {"forward", "backward", "step", NULL};
  prof_set_phase(check_S(L), (prof_Phase)luaL_checkoption(L, 2, NULL, names));
  return 0;
}

static int s_add_module(lua_State *L) {
  prof_State *S = check_S(L);
  prof_ModuleId parent = lua_isnoneornil(L, 2) ? PROF_NO_MODULE : (prof_ModuleId)luaL_checkinteger(L, 2);
  const char *name = luaL_checkstring(L, 3);
  const char *type = luaL_checkstring(L, 4);
  lua_Integer params = luaL_optinteger(L, 5, 0);
  prof_ModuleId id;
  if (prof_module_add(S, parent, name, type, params, &id) != PROF_OK) return fail(L, S);
  lua_pushinteger(L, id);
  return 1;
}

static int s_set_module_flags(lua_State *L) {
  prof_State *S = check_S(L);
  prof_ModuleId id = (prof_ModuleId)luaL_checkinteger(L, 2);
  /* the RULE flag follows the core's rule registry (S:register_rule), not the caller */
  uint32_t flags = lbind_opt_bool(L, 3, "ignored", 0) ? PROF_MODULE_IGNORED : 0;
  if (prof_module_set_flags(S, id, flags) != PROF_OK) return fail(L, S);
  return 0;
}

/* enter/exit are the per-module-call hot path: no checks beyond the userdata's type. */
static int s_enter(lua_State *L) {
  prof_module_enter(check_S(L), (prof_ModuleId)lua_tointeger(L, 2));
  return 0;
}

static int s_exit(lua_State *L) {
  prof_module_exit(check_S(L), (prof_ModuleId)lua_tointeger(L, 2));
  return 0;
}

/* core.module_enter(id) / core.module_exit(id): the same for the current recorder (no state
   argument to check), as nn modules call them on every call; nothing when none records. */
static int l_module_enter(lua_State *L) {
  LCtx *c = lbind_ctx(L);
  prof_State *S = c->rt.rec;
  if (S == NULL) return 0;
  prof_module_enter(S, (prof_ModuleId)lua_tointeger(L, 1));
  if (c->emit_nvtx) lnvtx_push(S, (prof_ModuleId)lua_tointeger(L, 1));
  return 0;
}

static int l_module_exit(lua_State *L) {
  LCtx *c = lbind_ctx(L);
  prof_State *S = c->rt.rec;
  if (S == NULL) return 0;
  if (c->emit_nvtx) lnvtx_pop();
  prof_module_exit(S, (prof_ModuleId)lua_tointeger(L, 1));
  return 0;
}

static int s_check(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_check(S) == PROF_OK) return 0;
  lua_pushstring(L, prof_errmsg(S));
  return 1;
}

static int s_path(lua_State *L) {
  prof_State *S = check_S(L);
  char buf[1024];
  int n = prof_module_path(S, (prof_ModuleId)luaL_checkinteger(L, 2), buf, sizeof buf);
  if (n < 0) return luaL_argerror(L, 2, "unknown module id");
  lua_pushstring(L, buf);
  return 1;
}

static int s_current(lua_State *L) {
  prof_ModuleId id = prof_module_current(check_S(L));
  if (id == PROF_NO_MODULE) lua_pushnil(L);
  else lua_pushinteger(L, id);
  return 1;
}

/* The state, its snapshot brought up to date when counts are read while it records. */
static prof_State *snapshot_S(lua_State *L) {
  prof_State *S = check_S(L);
  if (prof_is_active(S) && prof_snapshot(S) != PROF_OK) fail(L, S);
  return S;
}

static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void push_counts(lua_State *L, const prof_Counts *c) {
  lua_createtable(L, 0, 11);
  set_int(L, "calls", c->calls);
  set_int(L, "macs", c->macs);
  set_int(L, "flops", c->flops);
  set_int(L, "bytes_read", c->bytes_read);
  set_int(L, "bytes_written", c->bytes_written);
  set_int(L, "self_macs", c->self_macs);
  set_int(L, "self_flops", c->self_flops);
  set_int(L, "self_bytes_read", c->self_bytes_read);
  set_int(L, "self_bytes_written", c->self_bytes_written);
  set_int(L, "time_ns", c->time_ns);
}

static const char *const phase_keys[PROF_PHASE_COUNT] = {"fwd", "bwd", "step"};

/* S:modules([first [, count]]): the modules in pre-order as plain tables (copies: no core pointer
   escapes), all of them or count (default all) from position first (1-based): a caller reading a
   million modules takes them in slices, and the root alone is S:modules(1, 1). */
static int s_modules(lua_State *L) {
  prof_State *S = snapshot_S(L);
  int32_t n = prof_module_count(S);
  lua_Integer first = luaL_optinteger(L, 2, 1), count = luaL_optinteger(L, 3, n);
  luaL_argcheck(L, first >= 1, 2, "positions start at 1");
  luaL_argcheck(L, count >= 0, 3, "a count is not negative");
  int32_t lo = first - 1 < n ? (int32_t)(first - 1) : n;
  int32_t hi = count < n - lo ? lo + (int32_t)count : n;
  /* only the slice's ids: a million-module read in slices would otherwise allocate and walk the
     whole order once per slice */
  prof_ModuleId *ids = lua_newuserdatauv(L, sizeof *ids * (size_t)(hi > lo ? hi - lo : 1), 0);
  prof_module_preorder_from(S, lo, ids, hi - lo);
  lua_createtable(L, hi - lo, 0);
  for (int32_t i = lo; i < hi; i++) {
    prof_ModuleInfo info = {.size = sizeof info};
    prof_module_info(S, ids[i - lo], &info);
    lua_createtable(L, 0, 12);
    set_int(L, "id", info.id);
    if (info.parent != PROF_NO_MODULE) set_int(L, "parent", info.parent);
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, info.type);
    lua_setfield(L, -2, "type");
    set_int(L, "depth", info.depth);
    set_int(L, "params", info.params);
    lua_pushboolean(L, (info.flags & PROF_MODULE_IGNORED) != 0);
    lua_setfield(L, -2, "ignored");
    lua_pushboolean(L, (info.flags & PROF_MODULE_RULE) != 0);
    lua_setfield(L, -2, "rule");
    lua_pushboolean(L, info.hidden);
    lua_setfield(L, -2, "hidden");
    set_int(L, "params_counted", info.params_counted);
    for (int p = 0; p < PROF_PHASE_COUNT; p++) {
      push_counts(L, &info.phase[p]);
      /* GPU time (device capture): summed kernel, copy and memset durations */
      set_int(L, "device_time_ns", info.device_time_ns[p]);
      set_int(L, "self_device_time_ns", info.self_device_time_ns[p]);
      set_int(L, "device_ops", info.device_ops[p]);
      lua_setfield(L, -2, phase_keys[p]);
    }
    lua_rawseti(L, -2, i - lo + 1);
  }
  return 1;
}

/* One module field S:module_columns can give: a named field of prof_ModuleInfo, or a count of
   one phase ("fwd.macs"). */
typedef enum { COL_ID, COL_PARENT, COL_NAME, COL_TYPE, COL_DEPTH, COL_PARAMS, COL_PARAMS_COUNTED,
               COL_IGNORED, COL_RULE, COL_HIDDEN, COL_CHILDREN, COL_COUNT } ColumnField;
static const char *const column_fields[] = {"id", "parent", "name", "type", "depth", "params",
                                            "params_counted", "ignored", "rule", "hidden",
                                            "children", NULL};
static const char *const count_fields[] = {"calls", "macs", "flops", "bytes_read", "bytes_written",
                                           "self_macs", "self_flops", "self_bytes_read",
                                           "self_bytes_written", "time_ns", "device_time_ns",
                                           "self_device_time_ns", "device_ops", NULL};

/* count k of phase p of the module (count_fields' order; the device ones from the capture) */
static int64_t count_field(const prof_ModuleInfo *info, int p, int k) {
  const prof_Counts *c = &info->phase[p];
  const int64_t v[] = {c->calls, c->macs, c->flops, c->bytes_read, c->bytes_written,
                       c->self_macs, c->self_flops, c->self_bytes_read, c->self_bytes_written,
                       c->time_ns, info->device_time_ns[p], info->self_device_time_ns[p],
                       info->device_ops[p]};
  return v[k];
}

/* The column of name: field (ColumnField) or, for "phase.count", COL_COUNT with phase and count;
   0 when it names nothing. */
static int parse_column(const char *name, int *field, int *phase, int *count) {
  for (int i = 0; column_fields[i] != NULL; i++)
    if (strcmp(name, column_fields[i]) == 0) return *field = i, 1;
  const char *dot = strchr(name, '.');
  if (dot == NULL) return 0;
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    size_t n = strlen(phase_keys[p]);
    if ((size_t)(dot - name) != n || strncmp(name, phase_keys[p], n) != 0) continue;
    for (int c = 0; count_fields[c] != NULL; c++)
      if (strcmp(dot + 1, count_fields[c]) == 0) return *field = COL_COUNT, *phase = p, *count = c, 1;
  }
  return 0;
}

/* S:module_columns{name, ...}: {name = array over the modules in pre-order} for each name ("id",
   "parent" (false for a root), "name", "type", "depth", "params", "params_counted", "ignored",
   "rule", "hidden", "children" (how many), or "fwd.macs"-style counts of a phase): the fields a reader needs from a
   million modules as a few arrays, 16 bytes a value, instead of S:modules' four tables a row.
   S:module_columns(names, first, count): only pre-order positions first .. first + count - 1
   (1-based; the arrays start at 1), so that a reader can hold a slice at a time. */
#define MAX_COLUMNS 64   /* more than every field and count there is (49) */
static int s_module_columns(lua_State *L) {
  prof_State *S = snapshot_S(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  int ncol = (int)luaL_len(L, 2);
  luaL_argcheck(L, ncol <= MAX_COLUMNS, 2, "too many columns");
  luaL_checkstack(L, ncol + 4, "module_columns");
  int field[MAX_COLUMNS], phase[MAX_COLUMNS], count[MAX_COLUMNS];
  int32_t total = prof_module_count(S);
  lua_Integer first = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, first >= 1, 3, "positions start at 1");
  lua_Integer want = luaL_optinteger(L, 4, total);
  luaL_argcheck(L, want >= 0, 4, "negative count");
  int32_t base = first - 1 < total ? (int32_t)(first - 1) : total;   /* 0-based */
  int32_t n = want < total - base ? (int32_t)want : total - base;
  lua_createtable(L, 0, ncol);
  int out = lua_gettop(L);
  for (int j = 0; j < ncol; j++) {
    lua_rawgeti(L, 2, j + 1);
    const char *name = lua_tostring(L, -1);
    if (name == NULL || !parse_column(name, &field[j], &phase[j], &count[j]))
      return luaL_error(L, "module_columns: unknown column '%s'", name ? name : "?");
    lua_createtable(L, n, 0);
    lua_setfield(L, out, name);   /* pops the array; the name stays at -1 */
    lua_pop(L, 1);
  }
  /* the arrays, in column order, from stack slot out + 1 on */
  for (int j = 0; j < ncol; j++) {
    lua_rawgeti(L, 2, j + 1);
    lua_rawget(L, out);
  }
  enum { SLICE = 4096 };
  prof_ModuleId ids[SLICE];
  for (int32_t lo = 0; lo < n; lo += SLICE) {
    int32_t got = prof_module_preorder_from(S, base + lo, ids, n - lo < SLICE ? n - lo : SLICE);
    for (int32_t k = 0; k < got; k++) {
      prof_ModuleInfo info = {.size = sizeof info};
      prof_module_info(S, ids[k], &info);
      for (int j = 0; j < ncol; j++) {
        switch (field[j]) {
          case COL_ID: lua_pushinteger(L, info.id); break;
          case COL_PARENT:
            if (info.parent == PROF_NO_MODULE) lua_pushboolean(L, 0);
            else lua_pushinteger(L, info.parent);
            break;
          case COL_NAME: lua_pushstring(L, info.name); break;
          case COL_TYPE: lua_pushstring(L, info.type); break;
          case COL_DEPTH: lua_pushinteger(L, info.depth); break;
          case COL_PARAMS: lua_pushinteger(L, (lua_Integer)info.params); break;
          case COL_PARAMS_COUNTED: lua_pushinteger(L, (lua_Integer)info.params_counted); break;
          case COL_IGNORED: lua_pushboolean(L, (info.flags & PROF_MODULE_IGNORED) != 0); break;
          case COL_RULE: lua_pushboolean(L, (info.flags & PROF_MODULE_RULE) != 0); break;
          case COL_HIDDEN: lua_pushboolean(L, info.hidden); break;
          case COL_CHILDREN: lua_pushinteger(L, prof_module_children(S, info.id, NULL, 0)); break;
          default: lua_pushinteger(L, (lua_Integer)count_field(&info, phase[j], count[j]));
        }
        lua_rawseti(L, out + 1 + j, lo + k + 1);
      }
    }
  }
  lua_settop(L, out);
  return 1;
}

/* S:module_children(id): the ids of id's children in insertion order, as an array. */
static int s_module_children(lua_State *L) {
  prof_State *S = check_S(L);
  prof_ModuleId id = (prof_ModuleId)luaL_checkinteger(L, 2);
  luaL_argcheck(L, id >= 0 && id < prof_module_count(S), 2, "unknown module id");
  prof_ModuleId some[256];
  int32_t n = prof_module_children(S, id, some, 256);
  prof_ModuleId *ids = some;
  if (n > 256) {   /* a wide container: its ids in a block Lua owns (freed with the stack) */
    ids = lua_newuserdatauv(L, sizeof *ids * (size_t)n, 0);
    prof_module_children(S, id, ids, n);
  }
  lua_createtable(L, n, 0);
  for (int32_t k = 0; k < n; k++) {
    lua_pushinteger(L, ids[k]);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/* S:module_count(): how many modules are registered (S:modules' positions run 1 .. this). */
static int s_module_count(lua_State *L) {
  lua_pushinteger(L, prof_module_count(check_S(L)));
  return 1;
}

/* S:counts_saturated(): true when some count of the snapshot stopped at INT64_MAX. */
static int s_counts_saturated(lua_State *L) {
  lua_pushboolean(L, prof_counts_saturated(snapshot_S(L)));
  return 1;
}

static int s_totals(lua_State *L) {
  prof_State *S = snapshot_S(L);
  static const char *const names[] = {"forward", "backward", "step", NULL};
  prof_Counts c;
  prof_totals(S, (prof_Phase)luaL_checkoption(L, 2, "forward", names), &c);
  push_counts(L, &c);
  return 1;
}

/* Buffers the C JSON writer's output into a luaL_Buffer. */
static int buffer_write(void *ud, const char *data, size_t len) {
  luaL_addlstring((luaL_Buffer *)ud, data, len);
  return 0;
}

static double opt_seconds(lua_State *L, int idx, const char *k) {
  return lbind_opt_num(L, idx, k, NAN);
}

/* S:profile_json{device=, mp_size=, ...}: the core's own JSON document, for parity checks. */
static int s_profile_json(lua_State *L) {
  prof_State *S = snapshot_S(L);
  prof_RunInfo info;
  prof_runinfo_init(&info);
  info.device = lbind_opt_str(L, 2, "device", NULL);
  info.world_size = lbind_opt_int(L, 2, "world_size", 1);
  info.dp_size = lbind_opt_int(L, 2, "dp_size", 1);
  info.mp_size = lbind_opt_int(L, 2, "mp_size", 1);
  info.batch_size = lbind_opt_int(L, 2, "batch_size", -1);
  info.bwd_flops = lbind_opt_int(L, 2, "bwd_flops", -1);
  info.fwd_latency_s = opt_seconds(L, 2, "fwd_latency_s");
  info.bwd_latency_s = opt_seconds(L, 2, "bwd_latency_s");
  info.step_latency_s = opt_seconds(L, 2, "step_latency_s");
  info.iter_latency_s = opt_seconds(L, 2, "iter_latency_s");
  info.samples_per_s = opt_seconds(L, 2, "samples_per_s");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (prof_write_profile_json(S, &info, buffer_write, &b) != PROF_OK) return fail(L, S);
  luaL_pushresult(&b);
  return 1;
}

static int l_set_recorder(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  if (lua_isnoneornil(L, 1)) {
    ctx->rt.rec = NULL;
    lua_pushnil(L);
  } else {
    ctx->rt.rec = check_open(L, 1)->S;
    lua_pushvalue(L, 1);
  }
  /* The context keeps the recorder's userdata alive while ops may reach it. */
  lua_setiuservalue(L, lua_upvalueindex(1), 1);
  return 0;
}

static int l_recorder(lua_State *L) {
  lua_getiuservalue(L, lua_upvalueindex(1), 1);
  return 1;
}

static int l_write_atomic(lua_State *L) {
  size_t len, path_len;
  const char *path = luaL_checklstring(L, 1, &path_len);
  const char *data = luaL_checklstring(L, 2, &len);
  /* C would cut "out\0x.json" to "out" and write there: refused, nothing written */
  if (strlen(path) != path_len) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s\\0...: a path cannot hold a NUL byte; nothing written", path);
    return 2;
  }
  prof_State *S = lbind_new_state(L);
  if (S == NULL) return luaL_error(L, "out of memory");
  int rc = prof_write_file_atomic(S, path, data, len);
  if (rc != PROF_OK) {
    lua_pushnil(L);
    lua_pushstring(L, prof_errmsg(S));
    prof_close(S);
    return 2;
  }
  prof_close(S);
  lua_pushboolean(L, 1);
  return 1;
}

static int l_now_ns(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)prof_now_ns());
  return 1;
}

/* core.wall_ms(): milliseconds since the Unix epoch, the realtime clock's (torch's int(time.time()
   * 1000) in tensorboard trace names; Lua's os.time has whole seconds only). */
static int l_wall_ms(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushinteger(L, (lua_Integer)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  return 1;
}

void lbind_open_state(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"close", s_close}, {"start", s_start}, {"stop", s_stop}, {"trim", s_trim}, {"reset", s_reset},
      {"clear", s_clear}, {"active", s_active}, {"set_conventions", s_set_conventions},
      {"conventions", s_conventions}, {"set_phase", s_set_phase}, {"add_module", s_add_module},
      {"set_module_flags", s_set_module_flags}, {"enter", s_enter}, {"exit", s_exit},
      {"check", s_check}, {"register_rule", lrules_register}, {"apply_rule", lrules_apply},
      {"path", s_path},
      {"current", s_current}, {"modules", s_modules}, {"module_columns", s_module_columns}, {"totals", s_totals},
      {"counts_saturated", s_counts_saturated}, {"module_count", s_module_count},
      {"module_children", s_module_children},
      {"export_chrome_trace", ltrace_export}, {"profile_json", s_profile_json}, LEVENTS_METHODS,
      {"set_with_stack", lstack_set_with_stack}, {"apply_ignore", lhooks_apply_ignore},
      LCAPTURE_METHODS,
      {NULL, NULL}};
  static const luaL_Reg metamethods[] = {
      {"__gc", s_close}, {"__close", s_close}, {"__tostring", s_tostring}, {"__index", NULL},
      {NULL, NULL}};
  static const luaL_Reg funcs[] = {
      {"new", s_new}, {"borrow", s_borrow}, {"enter", s_enter}, {"exit", s_exit}, {"module_enter", l_module_enter},
      {"module_exit", l_module_exit}, {"set_recorder", l_set_recorder},
      {"recorder", l_recorder}, {"write_atomic", l_write_atomic}, {"now_ns", l_now_ns},
      {"wall_ms", l_wall_ms},
      LEVENTS_FUNCS, LCAPTURE_FUNCS, LNVTX_FUNCS, {NULL, NULL}};
  luaL_newmetatable(L, LBIND_STATE);
  ((LCtx *)lua_touserdata(L, -3))->state_mt = lua_topointer(L, -1);
  lua_pushvalue(L, -3);          /* context as upvalue (close needs it) */
  luaL_setfuncs(L, metamethods, 1);
  lua_newtable(L);
  lua_pushvalue(L, -4);
  luaL_setfuncs(L, methods, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lbind_register(L, funcs);
}
