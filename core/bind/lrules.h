/* lrules.h — Lua flop rules registered into the core's one rule registry (methods of prof.State). */
#ifndef LRULES_H
#define LRULES_H

#include <lua.h>

/* S:register_rule(type, fn | nil): fn(module, inputs, output, conventions) -> macs, flops, br, bw */
int lrules_register(lua_State *L);
/* S:apply_rule(id, module, inputs, output): runs id's rule for the current call (inside its frame) */
int lrules_apply(lua_State *L);

#endif
