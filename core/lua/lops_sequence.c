/* lops_sequence.c — Lua bindings of attention, recurrent layers and cells, and the helpers
   sequence models use (chunk, split, stack, masked_fill, where, triu, tril, arange, full, ones,
   tensor). */
#include <math.h>
#include <string.h>

#include "lbind.h"

static pr_Runtime *rt_of(lua_State *L) { return &lbind_ctx(L)->rt; }

/* A plain table (not a tensor) at idx: an options table. */
static int is_options(lua_State *L, int idx) { return lua_type(L, idx) == LUA_TTABLE; }

/* {====================== attention ======================} */

/* core.scaled_dot_product_attention(q, k, v, {attn_mask=, dropout_p=0, is_causal=false,
                                              scale=}) */
static int l_sdpa(lua_State *L) {
  pr_Tensor *q = lbind_check_tensor(L, 1), *k = lbind_check_tensor(L, 2);
  pr_Tensor *v = lbind_check_tensor(L, 3);
  pr_SdpaArgs a;
  memset(&a, 0, sizeof a);
  a.dropout_p = lbind_opt_num(L, 4, "dropout_p", 0);
  a.is_causal = lbind_opt_bool(L, 4, "is_causal", 0);
  a.scale = lbind_opt_num(L, 4, "scale", NAN);
  if (is_options(L, 4)) {
    lua_getfield(L, 4, "attn_mask");
    if (!lua_isnil(L, -1)) {
      if (!lbind_is_tensor(L, -1))
        return luaL_error(L, "option 'attn_mask': expected a tensor, got %s",
                          luaL_typename(L, -1));
      a.attn_mask = lbind_check_tensor(L, -1);   /* the options table keeps it alive */
    }
    lua_pop(L, 1);
  }
  return lbind_push_tensor(L, pr_sdpa(rt_of(L), q, k, v, &a));
}

/* {====================== recurrent layers and cells ======================} */

static void read_rnn_args(lua_State *L, int idx, const char *kind, pr_RnnArgs *a,
                          const pr_Tensor *x) {
  if (!is_options(L, idx)) luaL_error(L, "%s: expected an options table with hidden_size", kind);
  a->hidden_size = lbind_opt_int(L, idx, "hidden_size", 0);
  if (a->hidden_size == 0) luaL_error(L, "%s: option 'hidden_size' is required", kind);
  /* without input_size the input's last dim is taken as it */
  a->input_size = lbind_opt_int(L, idx, "input_size", x->ndim > 0 ? x->shape[x->ndim - 1] : 0);
  a->num_layers = lbind_opt_int(L, idx, "num_layers", 1);
  a->bias = lbind_opt_bool(L, idx, "bias", 1);
  a->batch_first = lbind_opt_bool(L, idx, "batch_first", 0);
  a->bidirectional = lbind_opt_bool(L, idx, "bidirectional", 0);
  const char *nl = lbind_opt_str(L, idx, "nonlinearity", "tanh");
  if (strcmp(nl, "tanh") != 0 && strcmp(nl, "relu") != 0)
    luaL_error(L, "%s: unknown nonlinearity '%s' (expected tanh or relu)", kind, nl);
  a->relu = strcmp(nl, "relu") == 0;
}

static prof_OpKind check_kind(lua_State *L, int idx, int cell) {
  static const char *const names[] = {"rnn", "gru", "lstm", NULL};
  static const prof_OpKind layers[] = {PROF_OP_RNN, PROF_OP_GRU, PROF_OP_LSTM};
  static const prof_OpKind cells[] = {PROF_OP_RNN_CELL, PROF_OP_GRU_CELL, PROF_OP_LSTM_CELL};
  int i = luaL_checkoption(L, idx, NULL, names);
  return cell ? cells[i] : layers[i];
}

/* core.rnn(kind, x, {input_size=, hidden_size=, num_layers=1, bias=true, batch_first=false,
   bidirectional=false, nonlinearity="tanh"}, h0?, c0?) -> output, h_n[, c_n]; for an LSTM the
   states may also come as one list {h0, c0}, as PyTorch's tuple. */
static int l_rnn(lua_State *L) {
  pr_RnnArgs a;
  memset(&a, 0, sizeof a);
  a.kind = check_kind(L, 1, 0);
  pr_Tensor *x = lbind_check_tensor(L, 2);
  read_rnn_args(L, 3, prof_op_kind_name(a.kind), &a, x);
  if (is_options(L, 4)) {      /* {h0, c0} */
    lua_settop(L, 4);
    lua_geti(L, 4, 1);
    lua_geti(L, 4, 2);
    lua_remove(L, 4);          /* h0 at 4, c0 at 5 */
  }
  pr_Tensor *h0 = lbind_opt_tensor(L, 4), *c0 = lbind_opt_tensor(L, 5);
  pr_Tensor *hn, *cn;
  pr_Tensor *out = pr_rnn(rt_of(L), x, h0, c0, &a, &hn, &cn);
  if (out == NULL) return lbind_rt_error(L);
  lbind_push_tensor(L, out);
  lbind_push_tensor(L, hn);
  if (a.kind != PROF_OP_LSTM) return 2;
  lbind_push_tensor(L, cn);
  return 3;
}

/* core.rnn_cell(kind, x, h?, c?, {input_size=, hidden_size=, bias=true}) -> h'[, c']; the
   options may follow x or h directly. */
static int l_rnn_cell(lua_State *L) {
  pr_RnnArgs a;
  memset(&a, 0, sizeof a);
  a.kind = check_kind(L, 1, 1);
  pr_Tensor *x = lbind_check_tensor(L, 2);
  int o = is_options(L, 3) ? 3 : is_options(L, 4) ? 4 : 5;
  read_rnn_args(L, o, prof_op_kind_name(a.kind), &a, x);
  pr_Tensor *h = o > 3 ? lbind_opt_tensor(L, 3) : NULL;
  pr_Tensor *c = o > 4 ? lbind_opt_tensor(L, 4) : NULL;
  pr_Tensor *cn;
  pr_Tensor *hn = pr_rnn_cell(rt_of(L), x, h, c, &a, &cn);
  if (hn == NULL) return lbind_rt_error(L);
  lbind_push_tensor(L, hn);
  if (a.kind != PROF_OP_LSTM_CELL) return 1;
  lbind_push_tensor(L, cn);
  return 2;
}

/* {====================== chunk, split, stack ======================} */

/* Pushes the views of x along dim with the sizes in the userdata at the top. */
static int push_pieces(lua_State *L, pr_Tensor *x, int dim, int64_t n) {
  const int64_t *sizes = lua_touserdata(L, -1);
  if (n > 100000) return luaL_error(L, "%I pieces are too many to return", (lua_Integer)n);
  luaL_checkstack(L, (int)n + 2, "too many pieces");
  pr_Tensor **out = lua_newuserdatauv(L, sizeof *out * (size_t)(n > 0 ? n : 1), 0);
  if (pr_split(rt_of(L), x, dim, n, sizes, out) != 0) return lbind_rt_error(L);
  for (int64_t i = 0; i < n; i++) lbind_push_tensor(L, out[i]);
  return (int)n;
}

/* core.chunk(x, chunks, dim=0) -> the pieces (views) */
static int l_chunk(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int64_t chunks = luaL_checkinteger(L, 2);
  int dim = (int)luaL_optinteger(L, 3, 0);
  int64_t n = pr_split_plan(rt_of(L), x, dim, 1, chunks, NULL, 0);
  if (n < 0) return lbind_rt_error(L);
  int64_t *sizes = lua_newuserdatauv(L, sizeof *sizes * (size_t)(n > 0 ? n : 1), 0);
  pr_split_plan(rt_of(L), x, dim, 1, chunks, sizes, n);
  return push_pieces(L, x, dim, n);
}

/* core.split(x, split_size or {sizes...}, dim=0) -> the pieces (views) */
static int l_split(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  int dim = (int)luaL_optinteger(L, 3, 0);
  int64_t n;
  if (lua_istable(L, 2)) {
    n = (int64_t)luaL_len(L, 2);
    int64_t *sizes = lua_newuserdatauv(L, sizeof *sizes * (size_t)(n > 0 ? n : 1), 0);
    for (int64_t i = 0; i < n; i++) {
      lua_geti(L, 2, i + 1);
      if (!lua_isinteger(L, -1)) return luaL_error(L, "split: sizes must be integers");
      sizes[i] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  } else {
    int64_t size = luaL_checkinteger(L, 2);
    n = pr_split_plan(rt_of(L), x, dim, 0, size, NULL, 0);
    if (n < 0) return lbind_rt_error(L);
    int64_t *sizes = lua_newuserdatauv(L, sizeof *sizes * (size_t)(n > 0 ? n : 1), 0);
    pr_split_plan(rt_of(L), x, dim, 0, size, sizes, n);
  }
  return push_pieces(L, x, dim, n);
}

/* core.stack({a, b, ...}, dim=0) */
static int l_stack(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int dim = (int)luaL_optinteger(L, 2, 0);
  int n = (int)luaL_len(L, 1);
  const pr_Tensor **xs = lua_newuserdatauv(L, sizeof *xs * (size_t)(n > 0 ? n : 1), 0);
  for (int i = 0; i < n; i++) {
    lua_geti(L, 1, i + 1);
    xs[i] = lbind_check_tensor(L, -1);
    lua_pop(L, 1);             /* still referenced by the list */
  }
  return lbind_push_tensor(L, pr_stack(rt_of(L), n, xs, dim));
}

/* {====================== masked_fill, where, triu, tril ======================} */

/* A fill value: a number or a boolean (true is 1). */
static double check_value(lua_State *L, int idx) {
  if (lua_isboolean(L, idx)) return lua_toboolean(L, idx);
  return luaL_checknumber(L, idx);
}

/* core.masked_fill(x, mask, value) */
static int l_masked_fill(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1), *mask = lbind_check_tensor(L, 2);
  return lbind_push_tensor(L, pr_masked_fill(rt_of(L), x, mask, check_value(L, 3)));
}

/* core.where(cond, a, b): a and b tensors or numbers */
static int l_where(lua_State *L) {
  pr_Tensor *cond = lbind_check_tensor(L, 1);
  pr_Tensor *a = lbind_is_tensor(L, 2) ? lbind_check_tensor(L, 2) : NULL;
  pr_Tensor *b = lbind_is_tensor(L, 3) ? lbind_check_tensor(L, 3) : NULL;
  double sa = a == NULL ? check_value(L, 2) : 0, sb = b == NULL ? check_value(L, 3) : 0;
  return lbind_push_tensor(L, pr_where(rt_of(L), cond, a, b, sa, sb));
}

/* core.triu(x, diagonal=0), core.tril(x, diagonal=0) */
static int l_triu(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_triangle(rt_of(L), x, luaL_optinteger(L, 2, 0), 1));
}

static int l_tril(lua_State *L) {
  pr_Tensor *x = lbind_check_tensor(L, 1);
  return lbind_push_tensor(L, pr_triangle(rt_of(L), x, luaL_optinteger(L, 2, 0), 0));
}

/* {====================== constructors ======================} */

/* dtype= and device= of the options at idx (defaults: def and the runtime's device). */
static void read_dd(lua_State *L, int idx, int def, int *dtype, int *device) {
  const char *dt = lbind_opt_str(L, idx, "dtype", NULL);
  const char *dev = lbind_opt_str(L, idx, "device", NULL);
  *dtype = def;
  *device = rt_of(L)->default_device;
  if (dt != NULL && (*dtype = prof_dtype_parse(dt)) < 0)
    luaL_error(L, "unknown dtype '%s'", dt);
  if (dev != NULL && (*device = pr_device_parse(dev)) < 0)
    luaL_error(L, "unknown device '%s' (expected meta, cpu or cuda)", dev);
}

/* core.arange(end) or core.arange(start, end, step=1), then {dtype=, device=}: int64 when every
   bound is an integer, else the default dtype (as torch.arange) */
static int l_arange(lua_State *L) {
  int nums = 0, all_int = 1;
  while (nums < 3 && lua_type(L, nums + 1) == LUA_TNUMBER) {
    all_int = all_int && lua_isinteger(L, nums + 1);
    nums++;
  }
  if (nums == 0) return luaL_argerror(L, 1, "expected a number");
  double start = nums >= 2 ? lua_tonumber(L, 1) : 0;
  double end = nums >= 2 ? lua_tonumber(L, 2) : lua_tonumber(L, 1);
  double step = nums == 3 ? lua_tonumber(L, 3) : 1;
  int dtype, device;
  read_dd(L, nums + 1, all_int ? PROF_I64 : rt_of(L)->default_dtype, &dtype, &device);
  return lbind_push_tensor(L, pr_arange(rt_of(L), start, end, step, dtype, device));
}

/* A shape as a table or as integers from idx on; returns the index after it. */
static int read_shape(lua_State *L, int idx, int *ndim, int64_t *shape) {
  *ndim = lbind_check_shape(L, idx, shape);
  if (lua_istable(L, idx)) return idx + 1;
  return idx + *ndim;
}

/* core.full(shape, value, {dtype=, device=}): int64 for an integer value, bool for a boolean,
   else the default dtype (as torch.full) */
static int l_full(lua_State *L) {
  int ndim, dtype, device;
  int64_t shape[PR_MAX_DIMS];
  luaL_checktype(L, 1, LUA_TTABLE);
  read_shape(L, 1, &ndim, shape);
  double v = check_value(L, 2);
  int def = lua_isboolean(L, 2) ? PROF_BOOL : lua_isinteger(L, 2) ? PROF_I64
                                                                  : rt_of(L)->default_dtype;
  read_dd(L, 3, def, &dtype, &device);
  return lbind_push_tensor(L, pr_full(rt_of(L), ndim, shape, v, dtype, device));
}

/* core.ones(shape, {dtype=, device=}) or core.ones(2, 3, {...}) */
static int l_ones(lua_State *L) {
  int ndim, dtype, device;
  int64_t shape[PR_MAX_DIMS];
  int o = read_shape(L, 1, &ndim, shape);
  read_dd(L, o, rt_of(L)->default_dtype, &dtype, &device);
  return lbind_push_tensor(L, pr_full(rt_of(L), ndim, shape, 1, dtype, device));
}

/* What core.tensor learns from a nested list: its shape, then its values and their kinds. */
typedef struct Nested {
  int ndim;
  int64_t shape[PR_MAX_DIMS];
  int64_t n;                   /* values written so far */
  double *f;
  int64_t *i;
  int any_float, all_bool;
} Nested;

/* The shape, from the first element at each depth. */
static void nested_shape(lua_State *L, int idx, Nested *t) {
  lua_pushvalue(L, idx);
  while (lua_istable(L, -1)) {
    if (t->ndim == PR_MAX_DIMS) luaL_error(L, "tensor: at most %d dims", PR_MAX_DIMS);
    lua_Integer n = luaL_len(L, -1);
    t->shape[t->ndim++] = n;
    if (n == 0) break;
    lua_geti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

/* Walks the value at the top against the shape from depth on, writing leaves (f, i may be NULL). */
static void nested_values(lua_State *L, Nested *t, int depth) {
  if (depth == t->ndim) {
    int isnum = lua_type(L, -1) == LUA_TNUMBER, isbool = lua_isboolean(L, -1);
    if (!isnum && !isbool)
      luaL_error(L, "tensor: elements must be numbers or booleans, got %s", luaL_typename(L, -1));
    if (isnum && !lua_isinteger(L, -1)) t->any_float = 1;
    if (!isbool) t->all_bool = 0;
    if (t->f != NULL) {
      double f = isbool ? lua_toboolean(L, -1) : lua_tonumber(L, -1);
      t->f[t->n] = f;
      t->i[t->n] = isbool ? lua_toboolean(L, -1)
                   : lua_isinteger(L, -1) ? lua_tointeger(L, -1)
                   : (isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : 0);
    }
    t->n++;
    return;
  }
  if (!lua_istable(L, -1))
    luaL_error(L, "tensor: expected a list of length %d at dim %d, got a %s",
               (int)t->shape[depth], depth, luaL_typename(L, -1));
  if (luaL_len(L, -1) != t->shape[depth])
    luaL_error(L, "tensor: expected a list of length %d at dim %d (got %d)",
               (int)t->shape[depth], depth, (int)luaL_len(L, -1));
  for (lua_Integer k = 1; k <= t->shape[depth]; k++) {
    lua_geti(L, -1, k);
    nested_values(L, t, depth + 1);
    lua_pop(L, 1);
  }
}

/* core.tensor(list_or_number, {dtype=, device=}): meta keeps the shape, cpu the values too.
   dtype: bool for booleans, int64 for integers, else the default dtype (as torch.tensor). */
static int l_tensor(lua_State *L) {
  Nested t;
  memset(&t, 0, sizeof t);
  t.all_bool = 1;
  luaL_argexpected(L, lua_istable(L, 1) || lua_type(L, 1) == LUA_TNUMBER ||
                   lua_isboolean(L, 1), 1, "number, boolean or list");
  nested_shape(L, 1, &t);
  int64_t numel = 1;
  for (int d = 0; d < t.ndim; d++) numel *= t.shape[d];
  lua_pushvalue(L, 1);
  nested_values(L, &t, 0);     /* checks the shape and learns the kinds */
  t.f = lua_newuserdatauv(L, sizeof *t.f * (size_t)(numel > 0 ? numel : 1), 0);
  t.i = lua_newuserdatauv(L, sizeof *t.i * (size_t)(numel > 0 ? numel : 1), 0);
  t.n = 0;
  lua_pushvalue(L, 1);
  nested_values(L, &t, 0);
  int def = numel == 0 ? rt_of(L)->default_dtype
            : t.all_bool ? PROF_BOOL : t.any_float ? rt_of(L)->default_dtype : PROF_I64;
  int dtype, device;
  read_dd(L, 2, def, &dtype, &device);
  return lbind_push_tensor(L, pr_tensor_from(rt_of(L), t.ndim, t.shape, t.f, t.i, dtype,
                                             device));
}

void lbind_open_ops_sequence(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"scaled_dot_product_attention", l_sdpa}, {"rnn", l_rnn}, {"rnn_cell", l_rnn_cell},
      {"chunk", l_chunk}, {"split", l_split}, {"stack", l_stack},
      {"masked_fill", l_masked_fill}, {"where", l_where}, {"triu", l_triu}, {"tril", l_tril},
      {"arange", l_arange}, {"full", l_full}, {"ones", l_ones}, {"tensor", l_tensor},
      {NULL, NULL}};
  lbind_register(L, funcs);
}
