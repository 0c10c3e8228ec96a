/* profrun.c — the profrun command: a Lua 5.4 host that finds its package and hands over to prof.cli. */
#define _DEFAULT_SOURCE   /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int luaopen_prof_core(lua_State *L);

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/*
** The package lives beside the binary: <prefix>/share/profrun/lua once installed, or <repo>/lua
** when run from the build tree (<repo>/build/bin/profrun). No environment variable is needed.
*/
static int find_root(char *root, size_t size) {
  char exe[PATH_MAX], probe[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return -1;
  *slash = '\0';   /* exe is now the binary's directory */
  static const char *const suffixes[] = {"/../share/profrun", "/../.."};
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    if (snprintf(root, size, "%s%s", exe, suffixes[i]) >= (int)size) continue;
    if (snprintf(probe, sizeof probe, "%s/lua/prof/init.lua", root) >= (int)sizeof probe) continue;
    if (!file_exists(probe)) continue;
    /* tracebacks read better without "bin/../.." in every path */
    char resolved[PATH_MAX];
    if (realpath(root, resolved) != NULL && strlen(resolved) < size) strcpy(root, resolved);
    return 0;
  }
  return -1;
}

static void set_paths(lua_State *L, const char *root) {
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", root, root);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  /* the binding is linked in; require "prof.core" must not load a second copy from disk */
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_prof_core);
  lua_setfield(L, -2, "prof.core");
  lua_pop(L, 2);
}

static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
  return 1;
}

/* Runs require("prof.cli").main(argv) and returns its exit status. */
static int run(lua_State *L, int argc, char **argv) {
  lua_pushcfunction(L, traceback);
  int h = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "prof.cli");
  if (lua_pcall(L, 1, 1, h) != LUA_OK) goto fail;
  lua_getfield(L, -1, "main");
  lua_createtable(L, argc, 0);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  if (lua_pcall(L, 1, 1, h) != LUA_OK) goto fail;
  return (int)luaL_optinteger(L, -1, 0);
fail:
  fprintf(stderr, "profrun: internal error: %s\n", lua_tostring(L, -1));
  return 1;
}

int main(int argc, char **argv) {
  char root[PATH_MAX];
  if (find_root(root, sizeof root) != 0) {
    fprintf(stderr, "profrun: cannot find the prof Lua package next to the executable\n");
    return 2;
  }
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "profrun: out of memory\n");
    return 1;
  }
  luaL_openlibs(L);
  set_paths(L, root);
  int status = run(L, argc, argv);
  lua_close(L);
  fflush(stdout);
  return status;
}
