/* ltrace.h — the activity trace's methods of prof.State: event buffering and the Chrome trace export. */
#ifndef LTRACE_H
#define LTRACE_H

#include <lua.h>

/* S:set_event_capacity(n) -> S: events buffered per thread from the next start (0: none). */
int ltrace_set_event_capacity(lua_State *L);
/* S:export_chrome_trace(path, {rank=, world_size=, ...}) -> true | nil, message */
int ltrace_export(lua_State *L);

#endif
