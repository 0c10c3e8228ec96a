/* lstack.h — with_stack's Lua frame walker, a method of prof.State (lstate.c). */
#ifndef LSTACK_H
#define LSTACK_H

#include <lua.h>

/* The State userdata's user value that keeps the walker alive (1 holds its Lua rules). */
#define LSTACK_UVALUE 2

int lstack_set_with_stack(lua_State *L);

#endif
