/* lautograd.c — Lua bindings of autograd and of tensor values: backward, no_grad, item, tolist, fill. */
#include <stdlib.h>
#include <string.h>

#include "lbind.h"

/* x:backward([grad], {retain_graph=}) */
static int t_backward(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  int opts = lbind_is_tensor(L, 2) ? 3 : 2;
  pr_Tensor *g = opts == 3 ? lbind_check_tensor(L, 2) : NULL;
  int retain = lbind_opt_bool(L, opts, "retain_graph", 0);
  if (pr_backward(lbind_rt(L), t, g, retain) != 0) return lbind_rt_error(L);
  return 0;
}

/* x:detach(): the same values, cut from the graph. */
static int t_detach(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  pr_Tensor *v = pr_tensor_view(lbind_rt(L), t, t->ndim, t->shape, t->stride, t->offset);
  return lbind_push_tensor(L, v);
}

static void need_values(lua_State *L, const pr_Tensor *t, const char *what) {
  if (!pr_holds_values(t))
    luaL_error(L, "%s: the tensor is on %s, which has no values (use device 'cpu')", what,
               t->be->name);
}

/*
** The bytes of t's view copied to the host through its backend (a userdata left on the stack,
** collected with it); *base is then the element offset that the copy's first element has.
*/
static const char *host_view(lua_State *L, const pr_Tensor *t, int64_t *base) {
  int64_t lo = t->offset, hi = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) { hi = lo - 1; break; }
    int64_t span = t->stride[d] * (t->shape[d] - 1);
    if (span < 0) lo += span;
    else hi += span;
  }
  size_t es = (size_t)prof_dtype_size(t->dtype), n = hi >= lo ? (size_t)(hi - lo + 1) * es : 0;
  char *host = lua_newuserdatauv(L, n ? n : 1, 0);
  pr_Runtime *rt = lbind_rt(L);
  if (n > 0 && t->be->to_host(t->be, rt, host, (const char *)t->storage->data + (size_t)lo * es, n) != 0) {
    pr_error_wrap(rt, "could not copy values from %s", t->be->name);
    lbind_rt_error(L);
  }
  *base = lo;
  return host;
}

static double value_at(const char *base, int dtype, int64_t off) {
  switch (dtype) {
    case PROF_F32: return ((const float *)base)[off];
    case PROF_F64: return ((const double *)base)[off];
    case PROF_I64: return (double)((const int64_t *)base)[off];
    case PROF_I32: return ((const int32_t *)base)[off];
    case PROF_I8: return ((const int8_t *)base)[off];
    case PROF_U8: case PROF_BOOL: return ((const uint8_t *)base)[off];
    default: return 0;
  }
}

static void push_value(lua_State *L, const char *base, int dtype, int64_t off) {
  if (dtype == PROF_I64) lua_pushinteger(L, ((const int64_t *)base)[off]);
  else if (dtype == PROF_BOOL) lua_pushboolean(L, value_at(base, dtype, off) != 0);
  else if (dtype >= PROF_I64) lua_pushinteger(L, (lua_Integer)value_at(base, dtype, off));
  else lua_pushnumber(L, value_at(base, dtype, off));
}

/* x:item(): the value of a one-element cpu tensor. */
static int t_item(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  need_values(L, t, "item");
  if (pr_numel(t) != 1) return luaL_error(L, "item: the tensor has %d elements, not 1", (int)pr_numel(t));
  if (t->dtype == PROF_F16 || t->dtype == PROF_BF16) return luaL_error(L, "item: half dtypes are meta-only");
  int64_t base;
  const char *host = host_view(L, t, &base);
  push_value(L, host, t->dtype, t->offset - base);
  return 1;
}

static void push_list(lua_State *L, const pr_Tensor *t, const char *host, int d, int64_t off) {
  if (d == t->ndim) {
    push_value(L, host, t->dtype, off);
    return;
  }
  lua_createtable(L, (int)t->shape[d], 0);
  for (int64_t i = 0; i < t->shape[d]; i++) {
    push_list(L, t, host, d + 1, off + i * t->stride[d]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* x:tolist(): nested tables of the values (a number for a 0-d tensor). */
static int t_tolist(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  need_values(L, t, "tolist");
  if (t->dtype == PROF_F16 || t->dtype == PROF_BF16) return luaL_error(L, "tolist: half dtypes are meta-only");
  luaL_checkstack(L, t->ndim + 4, "tolist");
  int64_t base;
  const char *host = host_view(L, t, &base);
  push_list(L, t, host, 0, t->offset - base);
  return 1;
}

/* x:fill_(v), x:uniform_(a, b), x:normal_(mean, std): writes values in place (no gradient). */
static int fill_with(lua_State *L, int kind) {
  pr_Tensor *t = lbind_check_tensor(L, 1);
  pr_Runtime *rt = lbind_rt(L);
  double a = luaL_optnumber(L, 2, kind == 2 ? 0.0 : 0.0), b = luaL_optnumber(L, 3, 1.0);
  lua_settop(L, 1);
  if (!pr_holds_values(t)) return 1;
  if (t->dtype != PROF_F32 || !pr_is_contiguous(t))
    return luaL_error(L, "fill: in-place writes need a contiguous float32 tensor");
  int64_t n = pr_numel(t);
  float *p = lua_newuserdatauv(L, sizeof(float) * (size_t)(n ? n : 1), 0);
  for (int64_t i = 0; i < n; i++) {
    double v = kind == 0 ? a : kind == 1 ? a + (b - a) * pr_rand_uniform(rt)
                                         : a + b * pr_rand_normal(rt);
    p[i] = (float)v;
  }
  if (t->be->from_host(t->be, rt, pr_f32(t), p, sizeof(float) * (size_t)n) != 0) {
    pr_error_wrap(rt, "fill: could not copy values to %s", t->be->name);
    return lbind_rt_error(L);
  }
  lua_settop(L, 1);
  return 1;
}

static int t_fill(lua_State *L) { return fill_with(L, 0); }
static int t_uniform(lua_State *L) { return fill_with(L, 1); }
static int t_normal(lua_State *L) { return fill_with(L, 2); }

/* x:copy_(src): src's values into x (same shape; any layout); no gradient. */
static int t_copy(lua_State *L) {
  pr_Tensor *t = lbind_check_tensor(L, 1), *src = lbind_check_tensor(L, 2);
  char a[96], b[96];
  if (t->ndim != src->ndim || pr_numel(t) != pr_numel(src))
    return luaL_error(L, "copy_: shapes %s and %s differ", pr_shape_str(t, a, sizeof a),
                      pr_shape_str(src, b, sizeof b));
  lua_settop(L, 1);
  if (!pr_holds_values(t)) return 1;
  need_values(L, src, "copy_");
  if (t->dtype != PROF_F32 || src->dtype != PROF_F32 || !pr_is_contiguous(t))
    return luaL_error(L, "copy_: needs contiguous float32 tensors");
  pr_Runtime *rt = lbind_rt(L);
  pr_Tensor *c = pr_contiguous_data(rt, src);
  if (c == NULL) return lbind_rt_error(L);
  size_t n = sizeof(float) * (size_t)pr_numel(t);
  int rc = 0;
  rt->err[0] = '\0';          /* a failed copy leaves its reason here; malloc leaves none */
  if (c->be == t->be) {
    rc = t->be->copy(t->be, rt, pr_f32(t), pr_f32(c), n);
  } else {                     /* between devices: through the host */
    void *host = malloc(n ? n : 1);
    rc = host == NULL || c->be->to_host(c->be, rt, host, pr_f32(c), n) != 0 ||
         t->be->from_host(t->be, rt, pr_f32(t), host, n) != 0;
    free(host);
  }
  pr_tensor_release(c);
  if (rc != 0) {
    pr_error_wrap(rt, "copy_: could not copy values from %s to %s", src->be->name, t->be->name);
    return lbind_rt_error(L);
  }
  return 1;
}

/* core.from_bytes(string, shape, dtype): a cpu tensor of raw little-endian values (fixtures). */
static int l_from_bytes(lua_State *L) {
  size_t len;
  const char *data = luaL_checklstring(L, 1, &len);
  int64_t shape[PR_MAX_DIMS];
  luaL_checktype(L, 2, LUA_TTABLE);
  int ndim = lbind_check_shape(L, 2, shape);
  int dtype = prof_dtype_parse(luaL_optstring(L, 3, "float32"));
  if (dtype < 0) return luaL_error(L, "from_bytes: unknown dtype '%s'", lua_tostring(L, 3));
  pr_Runtime *rt = lbind_rt(L);
  pr_Tensor *t = pr_tensor_new(rt, ndim, shape, dtype, rt->host_device);
  if (t == NULL) return lbind_rt_error(L);
  if (t->storage->nbytes != len) {
    size_t want = t->storage->nbytes;
    pr_tensor_release(t);
    return luaL_error(L, "from_bytes: %d bytes given, the shape needs %d", (int)len, (int)want);
  }
  if (t->be->from_host(t->be, rt, t->storage->data, data, len) != 0) {
    pr_error_wrap(rt, "from_bytes: could not copy values to %s", t->be->name);
    pr_tensor_release(t);
    return lbind_rt_error(L);
  }
  return lbind_push_tensor(L, t);
}

/* core.randn(shape, {dtype=, device=}), core.rand(...): normal or uniform values (cpu). */
static int random_tensor(lua_State *L, int normal) {
  int64_t shape[PR_MAX_DIMS];
  LCtx *ctx = lbind_ctx(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  int ndim = lbind_check_shape(L, 1, shape);
  const char *dt = lbind_opt_str(L, 2, "dtype", NULL), *dev = lbind_opt_str(L, 2, "device", NULL);
  int dtype = dt ? prof_dtype_parse(dt) : ctx->rt.default_dtype;
  int device = dev ? pr_device_parse(&ctx->rt, dev) : ctx->rt.default_device;
  if (dtype < 0 || device < 0) return luaL_error(L, "randn: unknown dtype or device");
  if (ctx->forced_device >= 0) device = ctx->forced_device;
  const pr_Backend *be = pr_device_backend(&ctx->rt, device);
  if (be != NULL && be->holds_values && dtype != PROF_F32)
    return luaL_error(L, "randn: %s tensors are float32", be->name);
  /* nothing raises while the factory's events are open: the values go through malloc */
  pr_Factory f;
  pr_Tensor *t = pr_factory_new(&ctx->rt, &f, normal ? "randn" : "rand", NULL, ndim, shape, dtype,
                                device);
  if (t == NULL) return lbind_rt_error(L);
  int rc = 0;
  if (pr_holds_values(t)) {
    pr_factory_fill(&ctx->rt, &f, normal ? "normal_" : "uniform_");
    int64_t n = pr_numel(t);
    float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (p == NULL) {
      rc = pr_error(&ctx->rt, "randn: out of memory for %lld values", (long long)n);
    } else {
      for (int64_t i = 0; i < n; i++)
        p[i] = (float)(normal ? pr_rand_normal(&ctx->rt) : pr_rand_uniform(&ctx->rt));
      if (t->be->from_host(t->be, &ctx->rt, pr_f32(t), p, sizeof(float) * (size_t)n) != 0)
        rc = pr_error_wrap(&ctx->rt, "randn: could not copy values to %s", t->be->name);
      free(p);
    }
  }
  pr_factory_end(&ctx->rt, &f);
  if (rc != 0) {
    pr_tensor_release(t);
    return lbind_rt_error(L);
  }
  return lbind_push_tensor(L, t);
}

static int l_randn(lua_State *L) { return random_tensor(L, 1); }
static int l_rand(lua_State *L) { return random_tensor(L, 0); }

static int l_manual_seed(lua_State *L) {
  pr_manual_seed(lbind_rt(L), (uint64_t)luaL_checkinteger(L, 1));
  return 0;
}

/* core.set_grad_enabled(bool) -> the previous mode; core.is_grad_enabled() */
static int l_set_grad_enabled(lua_State *L) {
  pr_Runtime *rt = lbind_rt(L);
  lua_pushboolean(L, rt->grad_enabled);
  rt->grad_enabled = lua_toboolean(L, 1);
  return 1;
}

static int l_is_grad_enabled(lua_State *L) {
  lua_pushboolean(L, lbind_rt(L)->grad_enabled);
  return 1;
}

/* core.allocated_bytes(reset?): cpu bytes allocated since the last reset (GC pressure). */
static int l_allocated(lua_State *L) {
  pr_Runtime *rt = lbind_rt(L);
  lua_pushinteger(L, rt->allocated);
  if (lua_toboolean(L, 1)) rt->allocated = 0;
  return 1;
}

/* core.live_bytes(): cpu storage bytes allocated and not yet freed (a leak shows as growth). */
static int l_live_bytes(lua_State *L) {
  lua_pushinteger(L, lbind_rt(L)->live_bytes);
  return 1;
}

void lbind_open_autograd(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"backward", t_backward}, {"detach", t_detach}, {"item", t_item}, {"tolist", t_tolist},
      {"fill_", t_fill}, {"uniform_", t_uniform}, {"normal_", t_normal}, {"copy_", t_copy},
      {NULL, NULL}};
  static const luaL_Reg funcs[] = {
      {"from_bytes", l_from_bytes}, {"randn", l_randn}, {"rand", l_rand},
      {"manual_seed", l_manual_seed}, {"set_grad_enabled", l_set_grad_enabled},
      {"is_grad_enabled", l_is_grad_enabled}, {"allocated_bytes", l_allocated},
      {"live_bytes", l_live_bytes}, {NULL, NULL}};
  luaL_getmetatable(L, LBIND_TENSOR);            /* ctx mod mt */
  lua_getfield(L, -1, "__methods");               /* ctx mod mt methods */
  lua_pushvalue(L, -4);
  luaL_setfuncs(L, methods, 1);
  lua_pop(L, 2);
  lbind_register(L, funcs);
}
