/* lreport.c — core.write_report: a Lua profile table written by the core's report writers (DeepSpeed's text, the JSON profile). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lbind.h"

/* The piece the writers' output is handed to emit in. */
#define PIECE (64 * 1024)

/* What the reader and the sink keep while the core writes. */
typedef struct Reader {
  lua_State *L;
  int profile, modules, emit, row;   /* stack slots: the profile, its modules, emit or nil, the row read last */
  int err_ref;                        /* the Lua error that stopped the writer (LUA_NOREF: none) */
  char num[5][48];                    /* a string field given as a number, as text */
  char *buf;                          /* the output: a piece for emit, or the whole text */
  size_t len, cap;
  int out_of_memory;
} Reader;

/* {====================== reading the profile ======================} */

/* t[key] at idx as a count: PROF_UNKNOWN for nil (and false), an error for a fraction. */
static int64_t count_field(lua_State *L, int idx, const char *key, const char *what) {
  int64_t v = PROF_UNKNOWN;
  int type = lua_getfield(L, idx, key);
  if (lua_isinteger(L, -1)) {
    v = (int64_t)lua_tointeger(L, -1);
  } else if (type == LUA_TNUMBER) {
    lua_Number x = lua_tonumber(L, -1);
    if (x != floor(x) || !(x > -9223372036854775808.0 && x < 9223372036854775808.0))
      luaL_error(L, "%s.%s is %f, not a count", what, key, (double)x);
    v = (int64_t)x;
  } else if (type != LUA_TNIL && !(type == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
    luaL_error(L, "%s.%s is a %s, not a count", what, key, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return v;
}

static double number_field(lua_State *L, int idx, const char *key, const char *what) {
  double v = NAN;
  int type = lua_getfield(L, idx, key);
  if (type == LUA_TNUMBER) v = (double)lua_tonumber(L, -1);
  else if (type != LUA_TNIL) luaL_error(L, "%s.%s is a %s, not a number", what, key, luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

/* t[key] as a string that lives as long as t holds it: a number is written into num. NULL: nil. */
static const char *string_field(lua_State *L, int idx, const char *key, const char *what, char *num) {
  const char *s = NULL;
  int type = lua_getfield(L, idx, key);
  if (type == LUA_TSTRING) {
    s = lua_tostring(L, -1);   /* t holds the string, so the pointer outlives the pop */
  } else if (type == LUA_TNUMBER) {
    lua_pushvalue(L, -1);
    size_t n;
    const char *t = lua_tolstring(L, -1, &n);
    if (n >= 48) n = 47;
    memcpy(num, t, n);
    num[n] = '\0';
    s = num;
    lua_pop(L, 1);
  } else if (type != LUA_TNIL) {
    luaL_error(L, "%s.%s is a %s, not a string", what, key, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return s;
}

static int bool_field(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  int v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Protected: (reader, module, index, modules) -> modules[index + 1], read into the module. */
static int fetch(lua_State *L) {
  Reader *r = lua_touserdata(L, 1);
  prof_ReportModule *m = lua_touserdata(L, 2);
  lua_Integer index = lua_tointeger(L, 3);
  lua_geti(L, 4, index + 1);
  if (!lua_istable(L, -1)) return luaL_error(L, "profile.modules[%d] is a %s, not a module row",
                                             (int)(index + 1), luaL_typename(L, -1));
  int row = lua_gettop(L);
  char what[48];
  snprintf(what, sizeof what, "profile.modules[%d]", (int)(index + 1));
  m->name = string_field(L, row, "name", what, r->num[0]);
  m->path = string_field(L, row, "path", what, r->num[1]);
  m->type = string_field(L, row, "type", what, r->num[2]);
  m->extra_repr = string_field(L, row, "extra_repr", what, r->num[3]);
  m->bound = string_field(L, row, "bound", what, r->num[4]);
  int64_t parent = count_field(L, row, "parent", what);   /* a position in modules, 1-based */
  m->parent = parent == PROF_UNKNOWN ? -1 : (int32_t)(parent - 1);
  int64_t depth = count_field(L, row, "depth", what);
  m->depth = depth == PROF_UNKNOWN ? -1 : (int32_t)depth;
  m->hidden = bool_field(L, row, "hidden");
  m->fold = bool_field(L, row, "fold");
  m->params = count_field(L, row, "params", what);
  m->macs = count_field(L, row, "macs", what);
  m->flops = count_field(L, row, "flops", what);
  m->bytes = count_field(L, row, "bytes", what);
  m->calls = count_field(L, row, "calls", what);
  m->bwd_flops = count_field(L, row, "bwd_flops", what);
  m->exact_flops = count_field(L, row, "exact_flops", what);   /* false: not measured */
  m->fwd_latency_s = number_field(L, row, "fwd_latency_s", what);
  m->bwd_latency_s = number_field(L, row, "bwd_latency_s", what);
  m->intensity = number_field(L, row, "intensity", what);
  m->achieved_flops = number_field(L, row, "achieved_flops", what);
  m->achieved_bytes_per_s = number_field(L, row, "achieved_bytes_per_s", what);
  m->mfu = number_field(L, row, "mfu", what);
  lua_getfield(L, row, "bound_expected");
  m->bound_expected = lua_isnil(L, -1) ? -1 : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return 1;                    /* the row: the caller keeps it while the writer reads its strings */
}

/* Keeps the error on top of the stack for write_report to raise once the writer is out (the
   first one: what follows it is a consequence). */
static void keep_error(Reader *r) {
  if (r->err_ref == LUA_NOREF) r->err_ref = luaL_ref(r->L, LUA_REGISTRYINDEX);
  else lua_pop(r->L, 1);
}

/* The writers' reader: modules[index + 1], read in protected mode. */
static int read_module(void *ud, int32_t index, prof_ReportModule *m) {
  Reader *r = ud;
  lua_State *L = r->L;
  lua_pushcfunction(L, fetch);
  lua_pushlightuserdata(L, r);
  lua_pushlightuserdata(L, m);
  lua_pushinteger(L, index);
  lua_pushvalue(L, r->modules);
  if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
    keep_error(r);
    return -1;
  }
  lua_replace(L, r->row);
  return 0;
}

/* The summary: the profile's keys as the reports name them (nil: unknown). */
static int fetch_summary(lua_State *L) {
  prof_ReportSummary *p = lua_touserdata(L, 1);
  int t = 2;
  static const char *const what = "profile";
  char unused[48];
  p->device = string_field(L, t, "device", what, unused);
  if (p->device == unused) p->device = NULL;
  p->conventions = string_field(L, t, "conventions", what, unused);
  if (p->conventions == unused) p->conventions = NULL;
  p->peaks_machine = string_field(L, t, "peaks_machine", what, unused);
  if (p->peaks_machine == unused) p->peaks_machine = NULL;
  p->world_size = count_field(L, t, "world_size", what);
  p->dp_size = count_field(L, t, "dp_size", what);
  p->mp_size = count_field(L, t, "mp_size", what);
  p->batch_size = count_field(L, t, "batch_size", what);
  p->params = count_field(L, t, "params", what);
  p->params_model = count_field(L, t, "params_model", what);
  p->fwd_macs = count_field(L, t, "fwd_macs", what);
  p->fwd_flops = count_field(L, t, "fwd_flops", what);
  p->fwd_flops_model = count_field(L, t, "fwd_flops_model", what);
  p->bwd_flops = count_field(L, t, "bwd_flops", what);
  p->gradient_accumulation_steps = count_field(L, t, "gradient_accumulation_steps", what);
  p->fwd_latency_s = number_field(L, t, "fwd_latency_s", what);
  p->bwd_latency_s = number_field(L, t, "bwd_latency_s", what);
  p->step_latency_s = number_field(L, t, "step_latency_s", what);
  p->iter_latency_s = number_field(L, t, "iter_latency_s", what);
  p->samples_per_s = number_field(L, t, "samples_per_s", what);
  p->peak_flops = number_field(L, t, "peak_flops", what);
  p->peak_bytes_per_s = number_field(L, t, "peak_bytes_per_s", what);
  p->ridge_intensity = number_field(L, t, "ridge_intensity", what);
  p->mfu = number_field(L, t, "mfu", what);
  p->fwd_mfu = number_field(L, t, "fwd_mfu", what);
  p->iter_mfu = number_field(L, t, "iter_mfu", what);
  p->recompute_fwd_factor = number_field(L, t, "recompute_fwd_factor", what);
  p->saturated = bool_field(L, t, "saturated");
  p->engine = bool_field(L, t, "engine");
  return 0;
}

/* {====================== the output ======================} */

/* Protected: (reader, emit) -> emit(the pending piece). */
static int call_emit(lua_State *L) {
  Reader *r = lua_touserdata(L, 1);
  lua_pushvalue(L, 2);
  lua_pushlstring(L, r->buf, r->len);
  lua_call(L, 1, 0);
  return 0;
}

static int flush(Reader *r) {
  lua_State *L = r->L;
  if (r->len == 0) return 0;
  lua_pushcfunction(L, call_emit);
  lua_pushlightuserdata(L, r);
  lua_pushvalue(L, r->emit);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    keep_error(r);
    return -1;
  }
  r->len = 0;
  return 0;
}

static int sink(void *ud, const char *data, size_t len) {
  Reader *r = ud;
  if (r->len + len > r->cap) {
    if (!lua_isnil(r->L, r->emit) && r->len > 0 && flush(r) != 0) return -1;
    if (r->len + len > r->cap) {
      size_t cap = r->cap ? r->cap : PIECE;
      while (cap < r->len + len) cap *= 2;
      char *p = realloc(r->buf, cap);
      if (p == NULL) {
        r->out_of_memory = 1;
        return -1;
      }
      r->buf = p;
      r->cap = cap;
    }
  }
  memcpy(r->buf + r->len, data, len);
  r->len += len;
  return 0;
}

/* {====================== core.write_report ======================} */

/* Raises, after the writer is out and what it held is freed: the Lua error that stopped it
   first, else the core's message. */
static int fail(lua_State *L, Reader *r, prof_State *S) {
  free(r->buf);
  r->buf = NULL;
  if (r->err_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->err_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, r->err_ref);
    prof_close(S);
    return lua_error(L);
  }
  lua_pushstring(L, r->out_of_memory ? "write_report: out of memory for the text" : prof_errmsg(S));
  prof_close(S);
  return lua_error(L);
}

/*
** core.write_report(format, profile[, opts]) -> text: "deepspeed" or "json" of a profile table
** (the report scripts' contract: summary keys and profile.modules, rows in pre-order with their
** parent's position). opts: module_depth, top_modules, detailed, detailed_backward, profile_step
** (else profile.profile_step, else 1); opts.emit(piece): the text goes there in pieces and ""
** is returned.
*/
static int l_write_report(lua_State *L) {
  static const char *const formats[] = {"deepspeed", "json", NULL};
  int fmt = luaL_checkoption(L, 1, NULL, formats);
  luaL_checktype(L, 2, LUA_TTABLE);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);
  prof_ReportOptions opts;
  prof_report_options_init(&opts);
  if (!lua_isnil(L, 3)) {
    opts.module_depth = lbind_opt_int(L, 3, "module_depth", -1);
    opts.top_modules = lbind_opt_int(L, 3, "top_modules", 1);
    opts.detailed = lbind_opt_bool(L, 3, "detailed", 1);
    opts.detailed_backward = lbind_opt_bool(L, 3, "detailed_backward", 0);
  }
  lua_getfield(L, 3 - lua_isnil(L, 3), "profile_step");     /* opts', else the profile's */
  if (lua_isnil(L, -1) && !lua_isnil(L, 3)) {
    lua_pop(L, 1);
    lua_getfield(L, 2, "profile_step");
  }
  opts.profile_step = lua_isinteger(L, -1) ? (int64_t)lua_tointeger(L, -1) : 1;
  lua_pop(L, 1);
  Reader r = {L, 2, 0, 0, 0, LUA_NOREF, {{0}}, NULL, 0, 0, 0};
  if (!lua_isnil(L, 3)) lua_getfield(L, 3, "emit");
  else lua_pushnil(L);
  r.emit = lua_gettop(L);
  if (!lua_isnil(L, r.emit)) luaL_checktype(L, r.emit, LUA_TFUNCTION);
  lua_getfield(L, 2, "modules");
  r.modules = lua_gettop(L);
  int32_t count = 0;
  if (!lua_isnil(L, r.modules)) {
    if (!lua_istable(L, r.modules)) return luaL_error(L, "profile.modules is a %s, not a list",
                                                      luaL_typename(L, r.modules));
    lua_len(L, r.modules);
    count = (int32_t)luaL_checkinteger(L, -1);
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  r.row = lua_gettop(L);
  prof_ReportDoc doc;
  prof_report_doc_init(&doc);
  doc.count = count;
  doc.module = read_module;
  doc.ud = &r;
  lua_pushcfunction(L, fetch_summary);
  lua_pushlightuserdata(L, &doc.summary);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 0);            /* nothing is held yet: its errors may unwind */
  prof_State *S = prof_new(NULL, NULL);
  if (S == NULL) return luaL_error(L, "write_report: out of memory");
  int rc = prof_write_report(S, fmt == 0 ? PROF_REPORT_DEEPSPEED : PROF_REPORT_JSON, &doc, &opts,
                             sink, &r);
  if (rc == PROF_OK && !lua_isnil(L, r.emit) && flush(&r) != 0) rc = PROF_ERRIO;
  if (rc != PROF_OK) return fail(L, &r, S);
  prof_close(S);
  if (lua_isnil(L, r.emit)) lua_pushlstring(L, r.buf ? r.buf : "", r.len);
  else lua_pushliteral(L, "");
  free(r.buf);
  return 1;
}

void lbind_open_report(lua_State *L) {
  static const luaL_Reg funcs[] = {{"write_report", l_write_report}, {NULL, NULL}};
  lbind_register(L, funcs);
}
