/* lops_sequence.c — Lua bindings of attention, recurrent layers and cells. */
#include <math.h>
#include <string.h>

#include "lbind.h"


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
  return lbind_push_tensor(L, pr_sdpa(lbind_rt(L), q, k, v, &a));
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

#define MAX_WEIGHTS 256        /* 4 per layer and direction: 32 bidirectional layers */

/* A list of tensors at idx (the weights), told from an options table by its first element. */
static int is_tensor_list(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return 0;
  lua_geti(L, idx, 1);
  int yes = lbind_is_tensor(L, -1);
  lua_pop(L, 1);
  return yes;
}

/* The weights list at idx into w; the list keeps them alive. Returns their number. */
static int read_weights(lua_State *L, int idx, const pr_Tensor **w) {
  lua_Integer n = luaL_len(L, idx);
  if (n > MAX_WEIGHTS) return luaL_argerror(L, idx, "too many weights");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    if (!lbind_is_tensor(L, -1))
      return luaL_error(L, "weights: element %d is a %s, not a tensor", (int)i,
                        luaL_typename(L, -1));
    w[i - 1] = lbind_check_tensor(L, -1);
    lua_pop(L, 1);
  }
  return (int)n;
}

/* core.rnn(kind, x, {input_size=, hidden_size=, num_layers=1, bias=true, batch_first=false,
   bidirectional=false, nonlinearity="tanh", dropout=0}, h0?, c0?, weights?) -> output, h_n[, c_n];
   dropout applies to every layer's output but the last (pass 0 out of training); for an
   LSTM the states may also come as one list {h0, c0}, as PyTorch's tuple (c0 then nil).
   weights: per layer and direction w_ih, w_hh[, b_ih, b_hh] (PyTorch's _flat_weights), needed
   by cpu inputs; they come last so that the options keep their place. */
static int l_rnn(lua_State *L) {
  pr_RnnArgs a;
  const pr_Tensor *w[MAX_WEIGHTS];
  memset(&a, 0, sizeof a);
  a.kind = check_kind(L, 1, 0);
  pr_Tensor *x = lbind_check_tensor(L, 2);
  read_rnn_args(L, 3, prof_op_kind_name(a.kind), &a, x);
  a.dropout = lbind_opt_num(L, 3, "dropout", 0);
  int nw = is_tensor_list(L, 6) ? read_weights(L, 6, w) : 0;
  pr_Tensor *h0, *c0;
  if (is_options(L, 4)) {      /* {h0, c0}: both stay on the stack while the op runs */
    lua_geti(L, 4, 1);
    lua_geti(L, 4, 2);
    h0 = lbind_opt_tensor(L, lua_gettop(L) - 1);
    c0 = lbind_opt_tensor(L, lua_gettop(L));
  } else {
    h0 = lbind_opt_tensor(L, 4);
    c0 = lbind_opt_tensor(L, 5);
  }
  pr_Tensor *hn, *cn;
  pr_Tensor *out = pr_rnn_weighted(lbind_rt(L), x, h0, c0, nw, w, &a, &hn, &cn);
  if (out == NULL) return lbind_rt_error(L);
  lbind_push_tensor(L, out);
  lbind_push_tensor(L, hn);
  if (a.kind != PROF_OP_LSTM) return 2;
  lbind_push_tensor(L, cn);
  return 3;
}

/* core.rnn_cell(kind, x, h?, c?, {input_size=, hidden_size=, bias=true}, weights?) -> h'[, c'];
   the options may follow x or h directly, the weights {w_ih, w_hh[, b_ih, b_hh]} (needed by cpu
   inputs) follow the options. */
static int l_rnn_cell(lua_State *L) {
  pr_RnnArgs a;
  const pr_Tensor *w[MAX_WEIGHTS];
  memset(&a, 0, sizeof a);
  a.kind = check_kind(L, 1, 1);
  pr_Tensor *x = lbind_check_tensor(L, 2);
  int o = is_options(L, 3) ? 3 : is_options(L, 4) ? 4 : 5;
  read_rnn_args(L, o, prof_op_kind_name(a.kind), &a, x);
  int nw = is_tensor_list(L, o + 1) ? read_weights(L, o + 1, w) : 0;
  pr_Tensor *h = o > 3 ? lbind_opt_tensor(L, 3) : NULL;
  pr_Tensor *c = o > 4 ? lbind_opt_tensor(L, 4) : NULL;
  pr_Tensor *cn;
  pr_Tensor *hn = pr_rnn_cell_weighted(lbind_rt(L), x, h, c, nw, w, &a, &cn);
  if (hn == NULL) return lbind_rt_error(L);
  lbind_push_tensor(L, hn);
  if (a.kind != PROF_OP_LSTM_CELL) return 1;
  lbind_push_tensor(L, cn);
  return 2;
}

void lbind_open_ops_sequence(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"scaled_dot_product_attention", l_sdpa}, {"rnn", l_rnn}, {"rnn_cell", l_rnn_cell},
      {NULL, NULL}};
  lbind_register(L, funcs);
}
