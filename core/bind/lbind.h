/* lbind.h — helpers shared by the files of the prof.core Lua binding. */
#ifndef LBIND_H
#define LBIND_H

#include <lauxlib.h>
#include <lua.h>

#include "runtime.h"

#define LBIND_STATE "prof.State"
#define LBIND_TENSOR "prof.Tensor"

/* The per-lua_State binding context; it is upvalue 1 of every function of prof.core. */
typedef struct LCtx {
  pr_Runtime rt;
  int forced_device;           /* --device: wins over what a script asks for; -1 when unset */
  int32_t new_tensors;         /* tensors pushed since the last GC step they paid for */
  const void *state_mt;        /* prof.State's metatable: hot methods test it by pointer */
  int emit_nvtx;               /* profiler.emit_nvtx: module calls are NVTX ranges (lnvtx.c) */
  prof_OutputWatch watch;      /* core.set_output_watch: every state the binding makes gets it */
} LCtx;

typedef struct LState {
  prof_State *S;               /* NULL once closed */
  int borrowed;                /* core.borrow: the host owns S, close only forgets it */
} LState;

/* Context from upvalue 1 of the running C function. */
LCtx *lbind_ctx(lua_State *L);

/* The runtime of the running function's context. */
static inline pr_Runtime *lbind_rt(lua_State *L) { return &lbind_ctx(L)->rt; }

/* S's interned copy of the string at name_idx, through the table at cache_idx (name -> light
   userdata): S's lock is taken once per name and table, never again for it. Any index, upvalue
   pseudo-indices included. */
const char *lbind_interned(lua_State *L, prof_State *S, int cache_idx, int name_idx);

/* Registers funcs into the table at the top of the stack, each with the context as upvalue. */
void lbind_register(lua_State *L, const luaL_Reg *funcs);

/* Tensors: check an argument; push a new userdata owning t (takes the reference; t may be NULL,
   then the runtime's error is raised). */
pr_Tensor *lbind_check_tensor(lua_State *L, int idx);
pr_Tensor *lbind_opt_tensor(lua_State *L, int idx);
int lbind_is_tensor(lua_State *L, int idx);
int lbind_push_tensor(lua_State *L, pr_Tensor *t);

/* A session for one call that writes files (stage, commit, write): the context's output watch
   set on it. NULL when out of memory. */
prof_State *lbind_new_state(lua_State *L);

/* Raises the runtime's last error as a Lua error at level 1 (no position prefix). */
int lbind_rt_error(lua_State *L);

/* Option-table readers: arg idx is a table or nil/none; name is the key. */
lua_Integer lbind_opt_int(lua_State *L, int idx, const char *name, lua_Integer def);
lua_Number lbind_opt_num(lua_State *L, int idx, const char *name, lua_Number def);
int lbind_opt_bool(lua_State *L, int idx, const char *name, int def);
const char *lbind_opt_str(lua_State *L, int idx, const char *name, const char *def);

/*
** Reads an int or a list of n ints (Python's `2` or `(2, 2)`) under key name into out[0..n);
** absent: def everywhere. Returns 1 if present.
*/
int lbind_opt_ints(lua_State *L, int idx, const char *name, int n, int64_t def, int64_t *out);

/* A fill value: a number, or a boolean (true is 1). */
lua_Number lbind_check_value(lua_State *L, int idx);

/* Reads a shape given as a table {2, 3} or as varargs from idx on; returns ndim. */
int lbind_check_shape(lua_State *L, int idx, int64_t *shape);

/* Opening functions of the binding's files (each adds its functions to the table on top). */
void lbind_open_state(lua_State *L);
void lbind_open_tensor(lua_State *L);
void lbind_open_ops(lua_State *L);
void lbind_open_config(lua_State *L);
void lbind_open_autograd(lua_State *L);
void lbind_open_ops_dense(lua_State *L);
void lbind_open_ops_conv(lua_State *L);
void lbind_open_ops_pointwise(lua_State *L);
void lbind_open_ops_shape(lua_State *L);
void lbind_open_ops_linalg(lua_State *L);
void lbind_open_ops_norm(lua_State *L);
void lbind_open_ops_reduce(lua_State *L);
void lbind_open_ops_sequence(lua_State *L);
void lbind_open_ops_select(lua_State *L);
void lbind_open_ops_factory(lua_State *L);
void lbind_open_ops_resample(lua_State *L);
void lbind_open_optim(lua_State *L);
void lbind_open_peaks(lua_State *L);
void lbind_open_term(lua_State *L);
void lbind_open_report(lua_State *L);
void lbind_open_files(lua_State *L);
void lbind_open_hooks(lua_State *L);
void lbind_open_scopes(lua_State *L);

/* S:apply_ignore(fn): prof_ignore_apply with fn(id, path, type) -> truthy (lhooks.c). */
int lhooks_apply_ignore(lua_State *L);

#endif
