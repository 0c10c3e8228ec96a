/* lstack.c — with_stack for Lua: the core's stack hook walks the script's frames and names each op's source location. */
#include <string.h>

#include "lbind.h"
#include "lstack.h"

#define LSTACK_MAX_FRAMES 16     /* the most frames one location keeps */
#define LSTACK_MAX_LEVELS 64     /* frames looked at per event: bounded whatever the recursion */
#define LSTACK_CACHE 256         /* direct-mapped: location text -> interned copy */
#define LSTACK_TEXT 1024
#define LSTACK_SKIPS 8           /* source prefixes left out */

typedef struct Walker {
  lua_State *L;                  /* the main thread: its frames are the script's */
  int depth;                     /* frames kept per location */
  char skip[LSTACK_SKIPS][256];  /* sources under these prefixes are left out: profrun's own */
  size_t skip_len[LSTACK_SKIPS];  /* (lua/prof/), and the host's (a test runner's) */
  int n_skip;
  struct {
    uint64_t hash;
    const char *interned;
  } cache[LSTACK_CACHE];
} Walker;

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int skipped(const Walker *w, const char *source) {
  for (int i = 0; i < w->n_skip; i++)
    if (strncmp(source, w->skip[i], w->skip_len[i]) == 0) return 1;
  return 0;
}

/* "train.lua(12);model.lua(40)": the innermost user frames first, torch's file(line) form. */
static const char *walk(void *ud, prof_State *S) {
  Walker *w = ud;
  lua_Debug ar;
  char text[LSTACK_TEXT];
  size_t len = 0;
  int kept = 0;
  for (int level = 0; level < LSTACK_MAX_LEVELS && kept < w->depth; level++) {
    if (!lua_getstack(w->L, level, &ar)) break;
    if (!lua_getinfo(w->L, "Sl", &ar) || ar.currentline < 0) continue;   /* a C function */
    if (skipped(w, ar.source)) continue;
    size_t room = sizeof text - len;
    int n = snprintf(text + len, room, "%s%s(%d)", kept > 0 ? ";" : "", ar.short_src, ar.currentline);
    if (n < 0 || (size_t)n >= room) break;
    len += (size_t)n;
    kept++;
  }
  if (kept == 0) return NULL;
  uint64_t h = fnv1a(text, len);
  size_t slot = (size_t)(h % LSTACK_CACHE);
  const char *hit = w->cache[slot].interned;
  if (hit != NULL && w->cache[slot].hash == h && strcmp(hit, text) == 0) return hit;
  const char *p = prof_intern(S, text);   /* the lock: once per distinct location and slot */
  if (p != NULL) {
    w->cache[slot].hash = h;
    w->cache[slot].interned = p;
  }
  return p;
}

/* S:set_with_stack(on[, skip_prefixes[, depth]]): while on, every buffered op and range carries
   the source location of the main thread's innermost `depth` (default 16) Lua frames whose
   source starts with none of skip_prefixes (a list of chunk sources as debug.getinfo gives
   them, e.g. {"@./lua/prof/"}). */
int lstack_set_with_stack(lua_State *L) {
  LState *s = luaL_checkudata(L, 1, LBIND_STATE);
  if (s->S == NULL) return luaL_argerror(L, 1, "the profiler state is closed");
  int on = lua_toboolean(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  lua_Integer n_skip = lua_isnoneornil(L, 3) ? 0 : (lua_Integer)lua_rawlen(L, 3);
  luaL_argcheck(L, n_skip <= LSTACK_SKIPS, 3, "at most 8 source prefixes");
  lua_Integer depth = luaL_optinteger(L, 4, LSTACK_MAX_FRAMES);
  luaL_argcheck(L, depth >= 1 && depth <= LSTACK_MAX_FRAMES, 4, "expected a depth of 1 to 16 frames");
  if (!on) {
    if (prof_set_stack_hook(s->S, NULL, NULL) != PROF_OK) return luaL_error(L, "%s", prof_errmsg(s->S));
    lua_pushnil(L);
    lua_setiuservalue(L, 1, LSTACK_UVALUE);
    return 0;
  }
  Walker *w = lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  w->L = lua_tothread(L, -1);
  lua_pop(L, 1);
  w->depth = (int)depth;
  for (int i = 0; i < (int)n_skip; i++) {
    lua_rawgeti(L, 3, i + 1);
    size_t len = 0;
    const char *p = lua_tolstring(L, -1, &len);
    if (p == NULL || len >= sizeof w->skip[0]) return luaL_argerror(L, 3, "expected prefixes of < 256 bytes");
    memcpy(w->skip[i], p, len);
    w->skip_len[i] = len;
    lua_pop(L, 1);
  }
  w->n_skip = (int)n_skip;
  if (prof_set_stack_hook(s->S, walk, w) != PROF_OK) return luaL_error(L, "%s", prof_errmsg(s->S));
  lua_setiuservalue(L, 1, LSTACK_UVALUE);   /* the walker lives as long as the state holds it */
  return 0;
}
