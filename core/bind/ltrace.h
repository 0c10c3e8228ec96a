/* ltrace.h — prof.State's Chrome trace export (event buffering is levents.h's). */
#ifndef LTRACE_H
#define LTRACE_H

#include <lua.h>

/* S:export_chrome_trace(path, {rank=, world_size=, ...}) -> true | nil, message */
int ltrace_export(lua_State *L);

#endif
