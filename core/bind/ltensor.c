/* ltensor.c — the prof.Tensor userdata: constructors, properties and metadata methods. */
#include <string.h>

#include "lbind.h"

pr_Tensor *lbind_check_tensor(lua_State *L, int idx) {
  pr_Tensor **box = luaL_checkudata(L, idx, LBIND_TENSOR);
  if (*box == NULL) luaL_argerror(L, idx, "released tensor");
  return *box;
}

int lbind_is_tensor(lua_State *L, int idx) {
  return luaL_testudata(L, idx, LBIND_TENSOR) != NULL;
}

pr_Tensor *lbind_opt_tensor(lua_State *L, int idx) {
  return lua_isnoneornil(L, idx) ? NULL : lbind_check_tensor(L, idx);
}

/* Lua sees a tensor as a few bytes and would let big cpu buffers wait for a distant collection:
   after every GC_BYTES of new storage, a full collection returns what is unreachable. */
#define GC_BYTES ((int64_t)64 << 20)

/* Each tensor's header (shape, strides: a few hundred bytes of C memory) is invisible to Lua too:
   a model of a million modules on meta made a million headers per forward that waited for a
   collection paced by the small boxes alone (GBs). Every HEADERS_STEP tensors pay for an
   incremental step as large as their headers: the collector keeps pace, at one call per 1,024. */
#define HEADERS_STEP 1024

int lbind_push_tensor(lua_State *L, pr_Tensor *t) {
  if (t == NULL) return lbind_rt_error(L);
  pr_Tensor **box = lua_newuserdatauv(L, sizeof *box, 1);
  *box = t;
  luaL_setmetatable(L, LBIND_TENSOR);
  LCtx *ctx = lbind_ctx(L);
  if (++ctx->new_tensors >= HEADERS_STEP) {
    ctx->new_tensors = 0;
    lua_gc(L, LUA_GCSTEP, (int)(HEADERS_STEP * (sizeof *t + 64) / 1024));
  }
  pr_Runtime *rt = &ctx->rt;
  if (rt->allocated > GC_BYTES) {
    rt->allocated = 0;
    lua_gc(L, LUA_GCCOLLECT);
  }
  return 1;
}

static int t_gc(lua_State *L) {
  pr_Tensor **box = luaL_checkudata(L, 1, LBIND_TENSOR);
  pr_tensor_release(*box);
  *box = NULL;
  return 0;
}

static int opt_dtype(lua_State *L, int idx, int def) {
  if (lua_isnoneornil(L, idx)) return def;
  const char *name = luaL_checkstring(L, idx);
  int dt = prof_dtype_parse(name);
  if (dt < 0) return luaL_error(L, "unknown dtype '%s'", name);
  return dt;
}

static int opt_device(lua_State *L, int idx, int def) {
  if (lua_isnoneornil(L, idx)) return def;
  const char *name = luaL_checkstring(L, idx);
  char list[128];
  pr_Runtime *rt = lbind_rt(L);
  int dev = pr_device_parse(rt, name);
  if (dev < 0)
    return luaL_error(L, "unknown device '%s' (expected %s)", name,
                      pr_device_list(rt, list, sizeof list));
  return dev;
}

/* core.empty(shape, dtype?, device?), core.zeros(...): a new tensor (zero-filled on cpu: zeros
   records torch's aten::zero_ as it does no more). */
static int made(lua_State *L, int zeros) {
  LCtx *ctx = lbind_ctx(L);
  int64_t shape[PR_MAX_DIMS];
  luaL_checktype(L, 1, LUA_TTABLE);
  int ndim = lbind_check_shape(L, 1, shape);
  int dtype = opt_dtype(L, 2, ctx->rt.default_dtype);
  int device = opt_device(L, 3, ctx->rt.default_device);
  if (ctx->forced_device >= 0) device = ctx->forced_device;
  pr_Factory f;
  pr_Tensor *t = pr_factory_new(&ctx->rt, &f, zeros ? "zeros" : "empty", NULL, ndim, shape, dtype,
                                device);
  if (t != NULL && zeros) pr_factory_fill(&ctx->rt, &f, "zero_");
  if (t != NULL) pr_factory_end(&ctx->rt, &f);
  return lbind_push_tensor(L, t);
}

static int l_empty(lua_State *L) { return made(L, 0); }
static int l_zeros(lua_State *L) { return made(L, 1); }

static int l_set_default_device(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  ctx->rt.default_device = opt_device(L, 1, PR_SHAPES_DEVICE);
  return 0;
}

/* core.set_forced_device(name|nil): profrun's --device, redirecting every tensor a script makes. */
static int l_set_forced_device(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  ctx->forced_device = opt_device(L, 1, -1);
  return 0;
}

/* core.device_status(name) -> true | false, why: whether the registry has a usable backend
   of that name (a build without CUDA registers cuda as unavailable, with its reason). */
static int l_device_status(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  char list[128];
  pr_Runtime *rt = lbind_rt(L);
  int dev = pr_device_parse(rt, name);
  const pr_Backend *be = pr_device_backend(rt, dev);
  if (be == NULL) {
    lua_pushboolean(L, 0);
    lua_pushfstring(L, "unknown device '%s' (expected %s)", name,
                    pr_device_list(rt, list, sizeof list));
    return 2;
  }
  lua_pushboolean(L, be->unavailable == NULL);
  if (be->unavailable == NULL) return 1;
  lua_pushstring(L, be->unavailable);
  return 2;
}

static int l_default_device(lua_State *L) {
  lua_pushstring(L, pr_device_name(lbind_rt(L), lbind_ctx(L)->rt.default_device));
  return 1;
}

static int l_set_default_dtype(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  ctx->rt.default_dtype = opt_dtype(L, 1, PROF_F32);
  return 0;
}

static int l_default_dtype(lua_State *L) {
  lua_pushstring(L, prof_dtype_name(lbind_ctx(L)->rt.default_dtype));
  return 1;
}

static void push_shape(lua_State *L, const pr_Tensor *t) {
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) {
    lua_pushinteger(L, t->shape[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* t:size() -> shape table; t:size(d) -> one dimension (PyTorch's 0-based d, negatives allowed). */
static int t_size(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  if (lua_isnoneornil(L, 2)) {
    push_shape(L, t);
    return 1;
  }
  int d = pr_dim((int)luaL_checkinteger(L, 2), t->ndim);
  if (d < 0 || t->ndim == 0)
    return luaL_error(L, "size: dimension %d out of range for a %d-d tensor",
                      (int)lua_tointeger(L, 2), t->ndim);
  lua_pushinteger(L, t->shape[d]);
  return 1;
}

static int t_dim(lua_State *L) {
  lua_pushinteger(L, lbind_check_tensor(L, 1)->ndim);
  return 1;
}

static int t_numel(lua_State *L) {
  lua_pushinteger(L, pr_numel(lbind_check_tensor(L, 1)));
  return 1;
}

static int t_element_size(lua_State *L) {
  lua_pushinteger(L, prof_dtype_size(lbind_check_tensor(L, 1)->dtype));
  return 1;
}

static int t_is_contiguous(lua_State *L) {
  lua_pushboolean(L, pr_is_contiguous(lbind_check_tensor(L, 1)));
  return 1;
}

static int t_stride(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) {
    lua_pushinteger(L, t->stride[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* t:set_flags{requires_grad=, parameter=}: flags the runtime keeps with the tensor. */
static int t_set_flags(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  uint32_t f = t->flags;
  f = lbind_opt_bool(L, 2, "requires_grad", (f & PR_T_REQUIRES_GRAD) != 0) ? f | PR_T_REQUIRES_GRAD
                                                                           : f & ~PR_T_REQUIRES_GRAD;
  f = lbind_opt_bool(L, 2, "parameter", (f & PR_T_PARAMETER) != 0) ? f | PR_T_PARAMETER
                                                                   : f & ~PR_T_PARAMETER;
  /* a new parameter's block, for a memory timeline recording now (one made before asks the model) */
  if ((f & PR_T_PARAMETER) && !(t->flags & PR_T_PARAMETER)) pr_tensor_tag(t, PROF_MEM_PARAMETER);
  t->flags = f;
  lua_settop(L, 1);
  return 1;
}

/* t:storage_address() -> the address of t's storage block (what the allocator reported to the
   profiler's memory events) and its bytes; nil on a shapes-only device. Views share both. */
static int t_storage_address(lua_State *L) {
  const pr_Storage *st = lbind_check_tensor(L, 1)->storage;
  if (st == NULL) return 0;
  lua_pushinteger(L, (lua_Integer)(uintptr_t)st->data);
  lua_pushinteger(L, (lua_Integer)st->nbytes);
  return 2;
}

/* t:tag_memory(category): tells a profile recording memory that t's block holds category
   ("input", "parameter", ... as prof_mem_category_name spells them), e.g. a batch made and freed
   inside the window. Returns t. */
static int t_tag_memory(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  const char *name = luaL_checkstring(L, 2);
  int c = PROF_MEM_GRADIENT;
  while (c > PROF_MEM_UNKNOWN && strcmp(prof_mem_category_name((prof_MemCategory)c), name) != 0) c--;
  if (c == PROF_MEM_UNKNOWN) return luaL_argerror(L, 2, "expected a memory category: input, parameter, "
                                                  "optimizer_state, gradient, activation or temporary");
  pr_tensor_tag(t, c);
  lua_settop(L, 1);
  return 1;
}

/* t:same(u): true when both userdata hold the same tensor object (views are different). */
static int t_same(lua_State *L) {
  lua_pushboolean(L, lbind_check_tensor(L, 1) == lbind_check_tensor(L, 2));
  return 1;
}

static int t_tostring(lua_State *L) {
  pr_Tensor **box = luaL_checkudata(L, 1, LBIND_TENSOR);
  if (*box == NULL) {
    lua_pushliteral(L, "tensor(released)");
    return 1;
  }
  char buf[256];
  lua_pushfstring(L, "tensor(shape=%s, dtype=%s, device=%s)", pr_shape_str(*box, buf, sizeof buf),
                  prof_dtype_name((*box)->dtype), (*box)->be->name);
  return 1;
}

/* Properties first (t.shape, t.dtype, ...), then the method table (upvalue 2). */
static int t_index(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  const char *k = lua_tostring(L, 2);
  if (k != NULL && lua_type(L, 2) == LUA_TSTRING) {
    switch (k[0]) {
      case 's':
        if (strcmp(k, "shape") == 0) return push_shape(L, t), 1;
        break;
      case 'd':
        if (strcmp(k, "dtype") == 0) return lua_pushstring(L, prof_dtype_name(t->dtype)), 1;
        if (strcmp(k, "device") == 0) return lua_pushstring(L, t->be->name), 1;
        break;
      case 'n':
        if (strcmp(k, "ndim") == 0) return lua_pushinteger(L, t->ndim), 1;
        break;
      case 'r':
        if (strcmp(k, "requires_grad") == 0)
          return lua_pushboolean(L, (t->flags & PR_T_REQUIRES_GRAD) != 0), 1;
        break;
      case 'i':
        if (strcmp(k, "is_parameter") == 0)
          return lua_pushboolean(L, (t->flags & PR_T_PARAMETER) != 0), 1;
        if (strcmp(k, "is_leaf") == 0) return lua_pushboolean(L, t->grad_fn == NULL), 1;
        break;
      case 'g':
        if (strcmp(k, "grad") == 0) {
          if (t->grad == NULL) lua_pushnil(L);
          else lbind_push_tensor(L, pr_tensor_retain(t->grad));
          return 1;
        }
        if (strcmp(k, "grad_fn") == 0) {
          if (t->grad_fn == NULL) lua_pushnil(L);
          else lua_pushstring(L, t->grad_fn->name);
          return 1;
        }
        break;
      default:
        break;
    }
  }
  lua_pushvalue(L, 2);
  lua_gettable(L, lua_upvalueindex(2));
  return 1;
}

/* t.grad = nil | tensor; t.requires_grad = bool (leaves only, as in PyTorch). */
static int t_newindex(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "grad") == 0) {
    pr_Tensor *g = lbind_opt_tensor(L, 3);
    if (g != NULL) pr_tensor_retain(g);
    pr_tensor_release(t->grad);
    t->grad = g;
    return 0;
  }
  if (strcmp(k, "requires_grad") == 0) {
    if (t->grad_fn != NULL)
      return luaL_error(L, "requires_grad can only be changed on leaf tensors (use detach())");
    if (lua_toboolean(L, 3)) t->flags |= PR_T_REQUIRES_GRAD;
    else t->flags &= ~PR_T_REQUIRES_GRAD;
    return 0;
  }
  return luaL_error(L, "tensor fields cannot be set (only grad and requires_grad), got '%s'", k);
}

/* core.tensor_methods(): the table tensor methods are looked up in; Lua adds op methods to it. */
static int l_tensor_methods(lua_State *L) {
  luaL_getmetatable(L, LBIND_TENSOR);
  lua_getfield(L, -1, "__methods");
  return 1;
}

static int l_tensor_metatable(lua_State *L) {
  luaL_getmetatable(L, LBIND_TENSOR);
  return 1;
}

static int l_is_tensor(lua_State *L) {
  lua_pushboolean(L, lbind_is_tensor(L, 1));
  return 1;
}

void lbind_open_tensor(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"size", t_size}, {"dim", t_dim}, {"numel", t_numel}, {"element_size", t_element_size},
      {"is_contiguous", t_is_contiguous}, {"stride", t_stride}, {"set_flags", t_set_flags},
      {"same", t_same}, {"storage_address", t_storage_address},
      {"tag_memory", t_tag_memory}, {NULL, NULL}};
  static const luaL_Reg funcs[] = {
      {"empty", l_empty}, {"zeros", l_zeros}, {"set_default_device", l_set_default_device},
      {"default_device", l_default_device}, {"device_status", l_device_status},
      {"set_forced_device", l_set_forced_device}, {"set_default_dtype", l_set_default_dtype},
      {"default_dtype", l_default_dtype}, {"tensor_methods", l_tensor_methods},
      {"tensor_metatable", l_tensor_metatable}, {"is_tensor", l_is_tensor}, {NULL, NULL}};
  luaL_newmetatable(L, LBIND_TENSOR);          /* ctx, module, mt */
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, t_gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, t_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, t_newindex, 1);
  lua_setfield(L, -2, "__newindex");
  lua_newtable(L);                             /* the method table */
  lua_pushvalue(L, -4);
  luaL_setfuncs(L, methods, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__methods");
  lua_pushvalue(L, -4);                        /* upvalues: ctx, methods */
  lua_insert(L, -2);
  lua_pushcclosure(L, t_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lbind_register(L, funcs);
}
