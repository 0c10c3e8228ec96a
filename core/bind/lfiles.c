/* lfiles.c — staged output files for Lua (prof.util.output): stage, commit, discard, each told to the output watch. */
#include "lbind.h"

#include <stdlib.h>
#include <string.h>

/* A prof_Staged is 12 KB: on the heap, freed before any Lua error can skip the free. */
static void push_staged(lua_State *L, const prof_Staged *st) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, st->target);
  lua_setfield(L, -2, "target");
  lua_pushstring(L, st->tmp);
  lua_setfield(L, -2, "tmp");
  lua_pushstring(L, st->made);
  lua_setfield(L, -2, "made");
  lua_pushboolean(L, st->existed);
  lua_setfield(L, -2, "existed");
}

static void copy_field(lua_State *L, int idx, const char *key, char *dst) {
  lua_getfield(L, idx, key);
  size_t n;
  const char *s = lua_tolstring(L, -1, &n);
  if (s == NULL || n >= PROF_PATH_SIZE) n = 0;
  if (n > 0) memcpy(dst, s, n);
  dst[n] = '\0';
  lua_pop(L, 1);
}

/* The staged table at idx (from stage_file) as a prof_Staged on the heap; NULL: out of memory. */
static prof_Staged *to_staged(lua_State *L, int idx) {
  luaL_checktype(L, idx, LUA_TTABLE);
  prof_Staged *st = malloc(sizeof *st);
  if (st == NULL) return NULL;
  copy_field(L, idx, "target", st->target);
  copy_field(L, idx, "tmp", st->tmp);
  copy_field(L, idx, "made", st->made);
  lua_getfield(L, idx, "existed");
  st->existed = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return st;
}

/* Pushes nil, S's message (or "out of memory" without S) and closes S: 2 results. */
static int fail(lua_State *L, prof_State *S) {
  lua_pushnil(L);
  lua_pushstring(L, S ? prof_errmsg(S) : "out of memory");
  prof_close(S);
  return 2;
}

/* stage_file(path, text) -> staged | nil, message */
static int l_stage_file(lua_State *L) {
  size_t len;
  const char *path = luaL_checkstring(L, 1);
  const char *data = luaL_checklstring(L, 2, &len);
  if (strlen(path) != lua_rawlen(L, 1)) {   /* as write_atomic: nothing at the cut path */
    lua_pushnil(L);
    lua_pushfstring(L, "%s\\0...: a path cannot hold a NUL byte; nothing written", path);
    return 2;
  }
  prof_State *S = lbind_new_state(L);
  prof_Staged *st = malloc(sizeof *st);
  if (S == NULL || st == NULL) {
    free(st);
    return fail(L, S);
  }
  int rc = prof_stage_file(S, path, data, len, st);
  if (rc == PROF_OK) push_staged(L, st);
  free(st);
  if (rc != PROF_OK) return fail(L, S);
  prof_close(S);
  return 1;
}

/* commit_file(path, staged) -> true | nil, message (a failed commit discards staged) */
static int l_commit_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  prof_State *S = lbind_new_state(L);
  prof_Staged *st = to_staged(L, 2);
  if (S == NULL || st == NULL) {
    free(st);
    return fail(L, S);
  }
  int rc = prof_commit_file(S, path, st);
  free(st);
  if (rc != PROF_OK) return fail(L, S);
  prof_close(S);
  lua_pushboolean(L, 1);
  return 1;
}

/* discard_file(staged): removes its temporary and the directories made for it */
static int l_discard_file(lua_State *L) {
  prof_Staged *st = to_staged(L, 1);
  prof_State *S = st ? lbind_new_state(L) : NULL;
  if (S == NULL) {
    if (st) prof_discard_file(st);   /* the watch is not told: the exit guard removes it again */
    free(st);
    return luaL_error(L, "out of memory");
  }
  prof_abandon_file(S, st);
  prof_close(S);
  free(st);
  return 0;
}

/*
** core.set_output_watch(watch): watch is a light userdata, a host's const prof_OutputWatch *
** (profrun's exit guard) that outlives the binding; every state made from now on tells it of its
** output temporaries. nil: none.
*/
static int l_set_output_watch(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  if (lua_isnoneornil(L, 1)) {
    ctx->watch = (prof_OutputWatch){NULL, NULL};
    return 0;
  }
  luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
  const prof_OutputWatch *w = lua_touserdata(L, 1);
  ctx->watch = w != NULL ? *w : (prof_OutputWatch){NULL, NULL};
  return 0;
}

void lbind_open_files(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"stage_file", l_stage_file}, {"commit_file", l_commit_file},
      {"discard_file", l_discard_file}, {"set_output_watch", l_set_output_watch}, {NULL, NULL}};
  lbind_register(L, funcs);
}
