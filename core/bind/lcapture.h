/* lcapture.h — prof.State's device-capture methods (CUPTI or replay), for lstate.c and levents.c. */
#ifndef LCAPTURE_H
#define LCAPTURE_H

#include <lauxlib.h>
#include <lua.h>

#include "prof.h"

int lcapture_open(lua_State *L);
int lcapture_kind(lua_State *L);
int lcapture_drain(lua_State *L);
int lcapture_close(lua_State *L);
int lcapture_stats(lua_State *L);
int lcapture_replay(lua_State *L);
int lcapture_replay_clock(lua_State *L);
int lcapture_replay_window(lua_State *L);
int lcapture_replay_launch(lua_State *L);
int lcapture_available(lua_State *L);

/* Sets a device event's fields (kind PROF_EVENT_KERNEL ..) on the event row at the top. */
void lcapture_push_device_fields(lua_State *L, const prof_Event *e);

/* Entries for lstate.c's tables: the State's methods, and prof.core's capture_available. */
#define LCAPTURE_METHODS                                                                       \
  {"capture_open", lcapture_open}, {"capture_kind", lcapture_kind},                            \
      {"capture_drain", lcapture_drain}, {"capture_close", lcapture_close},                    \
      {"capture_stats", lcapture_stats}, {"capture_replay", lcapture_replay},                  \
      {"capture_replay_clock", lcapture_replay_clock},                                         \
      {"capture_replay_window", lcapture_replay_window},                                       \
      {"capture_replay_launch", lcapture_replay_launch}
#define LCAPTURE_FUNCS {"capture_available", lcapture_available}

#endif
