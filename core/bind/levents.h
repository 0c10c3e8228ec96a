/* levents.h — prof.State's event methods (ranges, instants, buffered events, memory), for lstate.c. */
#ifndef LEVENTS_H
#define LEVENTS_H

#include <lauxlib.h>
#include <lua.h>

int levents_set_event_capacity(lua_State *L);
int levents_set_memory_events(lua_State *L);
int levents_range_push(lua_State *L);
int levents_range_pop(lua_State *L);
int levents_instant(lua_State *L);
int levents_counter(lua_State *L);
int levents_events(lua_State *L);
int levents_events_dropped(lua_State *L);
int levents_memory_peak(lua_State *L);
int levents_set_record_shapes(lua_State *L);
int levents_shapes_dropped(lua_State *L);
int levents_range_push_numbered(lua_State *L);
int levents_intern(lua_State *L);
int levents_cur_range_push(lua_State *L);
int levents_cur_range_pop(lua_State *L);

/* Entries for lstate.c's tables: the State's methods, and prof.core's functions (the current
   recorder's ranges, as core.module_enter is the current recorder's module frame). */
#define LEVENTS_METHODS                                                                        \
  {"set_event_capacity", levents_set_event_capacity},                                          \
      {"set_memory_events", levents_set_memory_events}, {"range_push", levents_range_push},    \
      {"range_pop", levents_range_pop}, {"instant", levents_instant},                          \
      {"counter", levents_counter}, {"events", levents_events},                                \
      {"events_dropped", levents_events_dropped}, {"memory_peak", levents_memory_peak},        \
      {"intern", levents_intern}, {"set_record_shapes", levents_set_record_shapes},           \
      {"shapes_dropped", levents_shapes_dropped},                                              \
      {"range_push_numbered", levents_range_push_numbered}
#define LEVENTS_FUNCS                                                                          \
  {"range_push", levents_cur_range_push}, { "range_pop", levents_cur_range_pop }

#endif
