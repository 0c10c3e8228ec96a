/* lops_pointwise.c — Lua bindings of activations, elementwise math, softmax and the operators. */
#include <math.h>
#include <string.h>

#include "lbind.h"

static prof_OpKind kind_of(lua_State *L) { return (prof_OpKind)lua_tointeger(L, lua_upvalueindex(2)); }

/* Argument idx as a number, or key of the keyword table at idx; def when absent. */
static double num_arg(lua_State *L, int idx, const char *key, double def) {
  if (lua_istable(L, idx)) return lbind_opt_num(L, idx, key, def);
  return luaL_optnumber(L, idx, def);
}

/*
** core.relu(x), core.leaky_relu(x, negative_slope=0.01), core.elu(x, alpha=1),
** core.softplus(x, beta=1, threshold=20), core.gelu(x, approximate='none'), ...: the parameters
** in PyTorch's order, or as a table of its keyword arguments.
*/
static int l_unary(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1);
  prof_OpKind kind = kind_of(L);
  double a = 0, b = 0;
  const char *approximate;
  switch (kind) {
    case PROF_OP_LEAKY_RELU: a = num_arg(L, 2, "negative_slope", 0.01); break;
    case PROF_OP_ELU: a = num_arg(L, 2, "alpha", 1.0); break;
    case PROF_OP_SOFTPLUS:
      a = num_arg(L, 2, "beta", 1.0);
      b = lua_istable(L, 2) ? lbind_opt_num(L, 2, "threshold", 20.0) : luaL_optnumber(L, 3, 20.0);
      break;
    case PROF_OP_GELU:
      approximate = lua_istable(L, 2) ? lbind_opt_str(L, 2, "approximate", "none")
                                      : luaL_optstring(L, 2, "none");
      if (strcmp(approximate, "none") != 0 && strcmp(approximate, "tanh") != 0)
        return luaL_error(L, "gelu: approximate argument must be either none or tanh, got '%s'",
                          approximate);
      a = approximate[0] == 't';
      break;
    default: break;
  }
  return lbind_push_tensor(L, pr_unary_ex(&ctx->rt, kind, x, a, b, 0));
}

static int l_clamp(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1);
  double lo = lua_isnoneornil(L, 2) ? -HUGE_VAL : luaL_checknumber(L, 2);
  double hi = lua_isnoneornil(L, 3) ? HUGE_VAL : luaL_checknumber(L, 3);
  return lbind_push_tensor(L, pr_clamp(&ctx->rt, x, lo, hi));
}

static int l_prelu(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  return lbind_push_tensor(L, pr_prelu(&ctx->rt, lbind_check_tensor(L, 1), lbind_check_tensor(L, 2)));
}

/* core.softmax(x, dim), core.log_softmax(x, dim) */
static int l_softmax(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int dim = (int)luaL_checkinteger(L, 2);
  return lbind_push_tensor(L, pr_softmax(&ctx->rt, kind_of(L), x, dim));
}

/* a op b where either side may be a number; flags mark the operator form. */
static int binary(lua_State *L, uint32_t flags) {
  LCtx *ctx = lbind_ctx(L);
  prof_OpKind kind = kind_of(L);
  int ta = lbind_is_tensor(L, 1), tb = lbind_is_tensor(L, 2);
  if (ta && tb)
    return lbind_push_tensor(L, pr_binary(&ctx->rt, kind, lbind_check_tensor(L, 1),
                                          lbind_check_tensor(L, 2), 0, 0, flags));
  if (ta)
    return lbind_push_tensor(L, pr_binary(&ctx->rt, kind, lbind_check_tensor(L, 1), NULL,
                                          luaL_checknumber(L, 2), 0, flags));
  if (tb)
    return lbind_push_tensor(L, pr_binary(&ctx->rt, kind, lbind_check_tensor(L, 2), NULL,
                                          luaL_checknumber(L, 1), 1, flags));
  return luaL_error(L, "%s: expected at least one tensor operand", prof_op_kind_name(kind));
}

static int l_binary(lua_State *L) { return binary(L, 0); }
static int l_operator(lua_State *L) { return binary(L, PROF_OPF_OPERATOR); }

/* -x: neg, marked as written with the operator. */
static int l_unm(lua_State *L) {
  LCtx *ctx = lbind_ctx(L);
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_unary_ex(&ctx->rt, PROF_OP_NEG, x, 0, 0, PROF_OPF_OPERATOR));
}

static void reg(lua_State *L, int tindex, const char *name, lua_CFunction f, prof_OpKind kind) {
  lua_pushvalue(L, -2);                  /* ctx (below the target table) */
  lua_pushinteger(L, kind);
  lua_pushcclosure(L, f, 2);
  lua_setfield(L, tindex < 0 ? tindex - 1 : tindex, name);
}

void lbind_open_ops_pointwise(lua_State *L) {
  static const struct { const char *name; prof_OpKind kind; } unary[] = {
      {"relu", PROF_OP_RELU}, {"relu6", PROF_OP_RELU6}, {"leaky_relu", PROF_OP_LEAKY_RELU},
      {"elu", PROF_OP_ELU}, {"gelu", PROF_OP_GELU}, {"silu", PROF_OP_SILU},
      {"tanh", PROF_OP_TANH}, {"sigmoid", PROF_OP_SIGMOID}, {"softplus", PROF_OP_SOFTPLUS},
      {"hardswish", PROF_OP_HARDSWISH}, {"mish", PROF_OP_MISH}, {"neg", PROF_OP_NEG},
      {"exp", PROF_OP_EXP}, {"log", PROF_OP_LOG}, {"sqrt", PROF_OP_SQRT},
      {"rsqrt", PROF_OP_RSQRT}, {"abs", PROF_OP_ABS}, {"sin", PROF_OP_SIN},
      {"cos", PROF_OP_COS}, {"erf", PROF_OP_ERF}, {"reciprocal", PROF_OP_RECIPROCAL}};
  static const struct { const char *name, *meta; prof_OpKind kind; } binaries[] = {
      {"add", "__add", PROF_OP_ADD}, {"sub", "__sub", PROF_OP_SUB}, {"mul", "__mul", PROF_OP_MUL},
      {"div", "__div", PROF_OP_DIV}, {"pow", "__pow", PROF_OP_POW},
      {"maximum", NULL, PROF_OP_MAXIMUM}, {"minimum", NULL, PROF_OP_MINIMUM}};
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
    reg(L, -1, unary[i].name, l_unary, unary[i].kind);
  reg(L, -1, "clamp", l_clamp, PROF_OP_CLAMP);
  reg(L, -1, "prelu", l_prelu, PROF_OP_PRELU);
  reg(L, -1, "softmax", l_softmax, PROF_OP_SOFTMAX);
  reg(L, -1, "log_softmax", l_softmax, PROF_OP_LOG_SOFTMAX);
  luaL_getmetatable(L, LBIND_TENSOR);    /* ctx mod mt */
  for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++) {
    lua_pushvalue(L, -3);
    lua_pushinteger(L, binaries[i].kind);
    lua_pushcclosure(L, l_binary, 2);
    lua_setfield(L, -3, binaries[i].name);
    if (binaries[i].meta == NULL) continue;
    lua_pushvalue(L, -3);
    lua_pushinteger(L, binaries[i].kind);
    lua_pushcclosure(L, l_operator, 2);
    lua_setfield(L, -2, binaries[i].meta);
  }
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, l_unm, 1);
  lua_setfield(L, -2, "__unm");
  lua_pop(L, 1);
}
