/* lops_conv.c — Lua bindings of convolutions and pooling (conv2d, max_pool2d, ...). */
#include <string.h>

#include "lbind.h"

static int nsp_of(lua_State *L) { return (int)lua_tointeger(L, lua_upvalueindex(2)); }

static void read_conv_args(lua_State *L, int idx, int nsp, pr_ConvArgs *a) {
  memset(a, 0, sizeof *a);
  a->nsp = nsp;
  lbind_opt_ints(L, idx, "stride", nsp, 1, a->stride);
  lbind_opt_ints(L, idx, "dilation", nsp, 1, a->dilation);
  lbind_opt_ints(L, idx, "output_padding", nsp, 0, a->output_padding);
  a->groups = lbind_opt_int(L, idx, "groups", 1);
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_getfield(L, idx, "padding");
    int is_str = lua_type(L, -1) == LUA_TSTRING;
    const char *p = is_str ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    if (is_str) {
      if (strcmp(p, "same") == 0) a->padding_same = 1;
      else if (strcmp(p, "valid") != 0)
        luaL_error(L, "option 'padding': expected a number, a list, 'same' or 'valid', got '%s'", p);
      return;
    }
  }
  lbind_opt_ints(L, idx, "padding", nsp, 0, a->padding);
}

/* core.conv2d(x, weight, bias?, {stride=, padding=, dilation=, groups=}) */
static int l_conv(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1), *w = lbind_check_tensor(L, 2);
  pr_Tensor *b = lbind_opt_tensor(L, 3);
  pr_ConvArgs a;
  read_conv_args(L, 4, nsp_of(L), &a);
  return lbind_push_tensor(L, pr_conv(&ctx->rt, x, w, b, &a));
}

/* core.conv_transpose2d(x, weight, bias?, {stride=, padding=, output_padding=, groups=, dilation=}) */
static int l_conv_transpose(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1), *w = lbind_check_tensor(L, 2);
  pr_Tensor *b = lbind_opt_tensor(L, 3);
  pr_ConvArgs a;
  read_conv_args(L, 4, nsp_of(L), &a);
  if (a.padding_same) return luaL_error(L, "conv_transpose: padding='same' is not supported");
  return lbind_push_tensor(L, pr_conv_transpose(&ctx->rt, x, w, b, &a));
}

/* Reads an int or a list at a positional argument (kernel_size, output_size). */
static void arg_ints(lua_State *L, int idx, int n, int64_t *out, const char *what) {
  if (lua_isinteger(L, idx)) {
    for (int i = 0; i < n; i++) out[i] = lua_tointeger(L, idx);
    return;
  }
  luaL_argexpected(L, lua_istable(L, idx), idx, "integer or list of integers");
  lua_Integer len = luaL_len(L, idx);
  if (len != n && len != 1) luaL_error(L, "%s: expected %d values, got %d", what, n, (int)len);
  for (int i = 0; i < n; i++) {
    lua_geti(L, idx, len == 1 ? 1 : i + 1);
    /* adaptive pools accept None (nil cannot sit in a list, so 0 stands for "keep") */
    out[i] = luaL_checkinteger(L, -1);
    lua_pop(L, 1);
  }
}

/* core.max_pool2d(x, kernel_size, {stride=, padding=, dilation=, ceil_mode=}); avg_pool2d alike
   with count_include_pad=true and (2d, 3d: PyTorch's avg_pool1d has none) divisor_override= */
static int pool(lua_State *L, prof_OpKind kind) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1);
  pr_PoolArgs a;
  memset(&a, 0, sizeof a);
  a.nsp = nsp_of(L);
  arg_ints(L, 2, a.nsp, a.kernel, "kernel_size");
  if (!lbind_opt_ints(L, 3, "stride", a.nsp, 0, a.stride) || a.stride[0] == 0)
    for (int i = 0; i < a.nsp; i++) a.stride[i] = a.kernel[i];   /* PyTorch: stride defaults to kernel */
  lbind_opt_ints(L, 3, "padding", a.nsp, 0, a.padding);
  lbind_opt_ints(L, 3, "dilation", a.nsp, 1, a.dilation);
  a.ceil_mode = lbind_opt_bool(L, 3, "ceil_mode", 0);
  a.count_include_pad = lbind_opt_bool(L, 3, "count_include_pad", 1);
  int divisor_given = 0;
  if (kind == PROF_OP_AVG_POOL && lua_type(L, 3) == LUA_TTABLE) {
    divisor_given = lua_getfield(L, 3, "divisor_override") != LUA_TNIL;
    lua_pop(L, 1);
  }
  if (divisor_given) {
    if (a.nsp == 1)
      return luaL_error(L, "avg_pool1d: unexpected option 'divisor_override'");
    a.divisor_override = lbind_opt_int(L, 3, "divisor_override", 0);
    /* 0 stands for none in pr_PoolArgs, so PyTorch's check is made here */
    if (a.divisor_override == 0)
      return luaL_error(L, "avg_pool%dd: divisor must be not zero", a.nsp);
  }
  return lbind_push_tensor(L, pr_pool(&ctx->rt, kind, x, &a));
}

static int l_max_pool(lua_State *L) { return pool(L, PROF_OP_MAX_POOL); }
static int l_avg_pool(lua_State *L) { return pool(L, PROF_OP_AVG_POOL); }

/* core.adaptive_avg_pool2d(x, output_size) */
static int adaptive(lua_State *L, prof_OpKind kind) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1);
  pr_PoolArgs a;
  memset(&a, 0, sizeof a);
  a.nsp = nsp_of(L);
  arg_ints(L, 2, a.nsp, a.output_size, "output_size");
  return lbind_push_tensor(L, pr_pool(&ctx->rt, kind, x, &a));
}

static int l_adaptive_avg_pool(lua_State *L) { return adaptive(L, PROF_OP_ADAPTIVE_AVG_POOL); }
static int l_adaptive_max_pool(lua_State *L) { return adaptive(L, PROF_OP_ADAPTIVE_MAX_POOL); }

void lbind_open_ops_conv(lua_State *L) {
  static const struct { const char *name; lua_CFunction f; } fam[] = {
      {"conv", l_conv}, {"conv_transpose", l_conv_transpose}, {"max_pool", l_max_pool},
      {"avg_pool", l_avg_pool}, {"adaptive_avg_pool", l_adaptive_avg_pool},
      {"adaptive_max_pool", l_adaptive_max_pool}};
  for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++)
    for (int nsp = 1; nsp <= 3; nsp++) {
      const char *name = lua_pushfstring(L, "%s%dd", fam[i].name, nsp);   /* ctx mod name */
      lua_pushvalue(L, -3);
      lua_pushinteger(L, nsp);
      lua_pushcclosure(L, fam[i].f, 2);
      lua_setfield(L, -3, name);
      lua_pop(L, 1);
    }
}
