/* lterm.c — core.is_terminal(fd): whether stdout/stderr is a terminal (progress lines need one). */
#include <unistd.h>

#include "lbind.h"

/* core.is_terminal(fd) -> boolean: fd 1 or 2; a pipe or file is not a terminal. */
static int l_is_terminal(lua_State *L) {
  lua_Integer fd = luaL_checkinteger(L, 1);
  luaL_argcheck(L, fd == 1 || fd == 2, 1, "expected 1 (stdout) or 2 (stderr)");
  lua_pushboolean(L, isatty((int)fd) == 1);
  return 1;
}

void lbind_open_term(lua_State *L) {
  static const luaL_Reg funcs[] = {{"is_terminal", l_is_terminal}, {NULL, NULL}};
  lbind_register(L, funcs);
}
