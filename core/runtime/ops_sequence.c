/* ops_sequence.c — scaled dot-product attention, recurrent layers and cells: shapes, checks, records. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "runtime.h"

/* Values: attention and the recurrent layers only produce correctly shaped outputs (zero-filled
   on cpu); the cpu kernels that compute them come later. */

/* {====================== scaled dot-product attention ======================} */

/* Writes the operand of a tensor whose batch dims are batch[0..nb) and last two r0, r1. */
static void attn_operand(prof_Operand *o, int dtype, int nb, const int64_t *batch, int64_t r0,
                         int64_t r1) {
  memset(o, 0, sizeof *o);
  o->ndim = nb + 2;
  o->dtype = dtype;
  for (int i = 0; i < nb; i++) o->dim[i] = batch[i];
  o->dim[nb] = r0;
  o->dim[nb + 1] = r1;
}

/*
** The batch dims of q against those of k and v: right-aligned broadcasting, except that the
** head dim (dim -3 of the tensors) may also be a multiple: grouped-query attention.
*/
static int attn_batch(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *k, int nq,
                      int nkv, const int64_t *kv, int *nb, int64_t *out) {
  char sq[96], sk[96];
  int n = nq > nkv ? nq : nkv;
  for (int i = 0; i < n; i++) {
    int iq = nq - n + i, ik = nkv - n + i;
    int64_t dq = iq >= 0 ? q->shape[iq] : 1, dk = ik >= 0 ? kv[ik] : 1;
    out[i] = dq == 1 ? dk : dq;
    if (dq == dk || dq == 1 || dk == 1) continue;
    if (i == n - 1 && dk > 0 && dq % dk == 0) continue;   /* the head dim */
    if (i == n - 1)
      return pr_error(rt, "scaled_dot_product_attention: query heads %lld are not a multiple "
                      "of key heads %lld (query %s, key %s)", (long long)dq, (long long)dk,
                      pr_shape_str(q, sq, sizeof sq), pr_shape_str(k, sk, sizeof sk));
    return pr_error(rt, "scaled_dot_product_attention: batch dims of query %s and key %s "
                    "cannot be broadcast together", pr_shape_str(q, sq, sizeof sq),
                    pr_shape_str(k, sk, sizeof sk));
  }
  *nb = n;
  return 0;
}

static int check_mask(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *m, int nd,
                      const int64_t *want) {
  char sm[96], sw[96];
  const char *name = "scaled_dot_product_attention";
  if (m->device != q->device)
    return pr_error(rt, "%s: attn_mask is on %s, query on %s", name, pr_device_name(m->device),
                    pr_device_name(q->device));
  if (m->dtype != PROF_BOOL && m->dtype != q->dtype)
    return pr_error(rt, "%s: attn_mask must be bool or %s (the query's dtype), got %s", name,
                    prof_dtype_name(q->dtype), prof_dtype_name(m->dtype));
  int ok = m->ndim <= nd;
  for (int i = 1; ok && i <= m->ndim; i++) {
    int64_t d = m->shape[m->ndim - i];
    ok = d == 1 || d == want[nd - i];
  }
  if (ok) return 0;
  return pr_error(rt, "%s: attn_mask %s does not broadcast to %s", name,
                  pr_shape_str(m, sm, sizeof sm), pr_dims_str(nd, want, sw, sizeof sw));
}

pr_Tensor *pr_sdpa(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *k, const pr_Tensor *v,
                   const pr_SdpaArgs *a) {
  char sq[96], sk[96], sv[96];
  const char *name = "scaled_dot_product_attention";
  if (pr_check_float(rt, name, "query", q) != 0) return NULL;
  if (pr_check_same(rt, name, q, k, v) != 0) return NULL;
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
    return pr_fail(rt, "%s: query %s, key %s and value %s need at least 2 dims", name,
                   pr_shape_str(q, sq, sizeof sq), pr_shape_str(k, sk, sizeof sk),
                   pr_shape_str(v, sv, sizeof sv));
  int64_t L = q->shape[q->ndim - 2], E = q->shape[q->ndim - 1];
  int64_t S = k->shape[k->ndim - 2], Ev = v->shape[v->ndim - 1];
  if (k->shape[k->ndim - 1] != E)
    return pr_fail(rt, "%s: query %s and key %s differ in the embedding size (%lld != %lld)",
                   name, pr_shape_str(q, sq, sizeof sq), pr_shape_str(k, sk, sizeof sk),
                   (long long)E, (long long)k->shape[k->ndim - 1]);
  if (v->shape[v->ndim - 2] != S)
    return pr_fail(rt, "%s: key %s and value %s differ in the sequence length (%lld != %lld)",
                   name, pr_shape_str(k, sk, sizeof sk), pr_shape_str(v, sv, sizeof sv),
                   (long long)S, (long long)v->shape[v->ndim - 2]);
  if (a->is_causal && a->attn_mask != NULL)
    return pr_fail(rt, "%s: is_causal and attn_mask cannot both be set", name);
  if (!(a->dropout_p >= 0.0 && a->dropout_p <= 1.0))
    return pr_fail(rt, "%s: dropout_p must be between 0 and 1, got %g", name, a->dropout_p);
  int nkv = 0, nb = 0;
  int64_t kv[PR_MAX_DIMS], batch[PR_MAX_DIMS + 2];
  if (pr_broadcast_shapes(rt, name, k->ndim - 2, k->shape, v->ndim - 2, v->shape, &nkv, kv) != 0)
    return pr_fail(rt, "%s: batch dims of key %s and value %s cannot be broadcast together",
                   name, pr_shape_str(k, sk, sizeof sk), pr_shape_str(v, sv, sizeof sv));
  if (attn_batch(rt, q, k, q->ndim - 2, nkv, kv, &nb, batch) != 0) return NULL;
  if (nb + 2 > PR_MAX_DIMS) return pr_fail(rt, "%s: too many batch dims", name);
  if (a->attn_mask != NULL) {
    batch[nb] = L;
    batch[nb + 1] = S;
    if (check_mask(rt, q, a->attn_mask, nb + 2, batch) != 0) return NULL;
  }
  /*
  ** The formula takes batch and heads from the query and wants key and value of the query's rank
  ** with equal batch dims: record q at the broadcast batch (heads from q, so grouped-query
  ** attention counts right) and k, v at their joint batch padded to that rank. A broadcast
  ** operand is then counted as read at its broadcast size.
  */
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = PROF_OP_SDPA;
  int64_t kvpad[PR_MAX_DIMS];
  for (int i = 0; i < nb; i++) kvpad[i] = i < nb - nkv ? 1 : kv[i - (nb - nkv)];
  attn_operand(&op.in[0], q->dtype, nb, batch, L, E);
  attn_operand(&op.in[1], k->dtype, nb, kvpad, S, E);
  attn_operand(&op.in[2], v->dtype, nb, kvpad, S, Ev);
  op.ninputs = 3;
  if (a->attn_mask != NULL) {
    pr_operand(a->attn_mask, &op.in[op.ninputs++]);
    op.flags |= PROF_OPF_MASK;
  }
  if (a->is_causal) op.flags |= PROF_OPF_CAUSAL;
  if (a->dropout_p > 0.0) op.flags |= PROF_OPF_TRAINING;
  batch[nb] = L;
  batch[nb + 1] = Ev;
  return pr_op_finish(rt, &op, pr_tensor_new(rt, nb + 2, batch, q->dtype, q->device));
}

/* {====================== recurrent layers and cells ======================} */

/* NULL, or a float state of exactly shape (dtype and device of x). */
static int check_state(pr_Runtime *rt, const char *name, const char *what, const pr_Tensor *x,
                       const pr_Tensor *h, int n, const int64_t *shape) {
  char sh[96], sw[96];
  if (h == NULL) return 0;
  if (pr_check_same(rt, name, x, h, NULL) != 0) return PR_ERR;
  int ok = h->ndim == n;
  for (int i = 0; ok && i < n; i++) ok = h->shape[i] == shape[i];
  if (ok) return 0;
  return pr_error(rt, "%s: %s %s does not match the expected %s", name, what,
                  pr_shape_str(h, sh, sizeof sh), pr_dims_str(n, shape, sw, sizeof sw));
}

/* What layers and cells share: sizes, input dtype and last dim, which states are given. */
static int check_recurrent(pr_Runtime *rt, const char *name, const pr_Tensor *x,
                           const pr_Tensor *h, const pr_Tensor *c, int lstm,
                           const pr_RnnArgs *a) {
  char sx[96];
  if (a->input_size <= 0 || a->hidden_size <= 0)
    return pr_error(rt, "%s: input_size and hidden_size must be positive, got %lld and %lld",
                    name, (long long)a->input_size, (long long)a->hidden_size);
  if (pr_check_float(rt, name, "input", x) != 0) return PR_ERR;
  if (x->ndim > 0 && x->shape[x->ndim - 1] != a->input_size)
    return pr_error(rt, "%s: input %s does not match input_size %lld", name,
                    pr_shape_str(x, sx, sizeof sx), (long long)a->input_size);
  if (lstm && (h == NULL) != (c == NULL))
    return pr_error(rt, "%s: give both the hidden and the cell state, or neither", name);
  if (!lstm && c != NULL) return pr_error(rt, "%s: only an LSTM takes a cell state", name);
  return 0;
}

pr_Tensor *pr_rnn(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0,
                  const pr_RnnArgs *a, pr_Tensor **h_n, pr_Tensor **c_n) {
  char sx[96];
  *h_n = NULL;
  if (c_n != NULL) *c_n = NULL;
  if (a->kind != PROF_OP_RNN && a->kind != PROF_OP_GRU && a->kind != PROF_OP_LSTM)
    return pr_fail(rt, "rnn: unknown recurrent kind %d", (int)a->kind);
  const char *name = prof_op_kind_name(a->kind);
  int lstm = a->kind == PROF_OP_LSTM;
  if (check_recurrent(rt, name, x, h0, c0, lstm, a) != 0) return NULL;
  if (a->num_layers < 1)
    return pr_fail(rt, "%s: num_layers must be at least 1, got %lld", name,
                   (long long)a->num_layers);
  if (x->ndim != 2 && x->ndim != 3)
    return pr_fail(rt, "%s: expected a 2-D (unbatched) or 3-D input, got %s", name,
                   pr_shape_str(x, sx, sizeof sx));
  int batched = x->ndim == 3;
  int64_t dirs = a->bidirectional ? 2 : 1, H = a->hidden_size;
  int64_t T = batched && a->batch_first ? x->shape[1] : x->shape[0];
  int64_t N = !batched ? 1 : a->batch_first ? x->shape[0] : x->shape[1];
  int64_t hshape[3] = {dirs * a->num_layers, N, H}, oshape[3];
  int hn = batched ? 3 : 2;
  if (!batched) hshape[1] = H;
  if (check_state(rt, name, "h0", x, h0, hn, hshape) != 0 ||
      check_state(rt, name, "c0", x, c0, hn, hshape) != 0)
    return NULL;
  if (!batched) {
    oshape[0] = T, oshape[1] = dirs * H;
  } else if (a->batch_first) {
    oshape[0] = N, oshape[1] = T, oshape[2] = dirs * H;
  } else {
    oshape[0] = T, oshape[1] = N, oshape[2] = dirs * H;
  }
  prof_Op op;
  pr_op_begin(&op, a->kind, x, h0, c0);
  op.hidden_size = H;
  op.num_layers = a->num_layers;
  if (a->bias) op.flags |= PROF_OPF_BIAS;
  if (a->bidirectional) op.flags |= PROF_OPF_BIDIRECTIONAL;
  if (a->batch_first) op.flags |= PROF_OPF_BATCH_FIRST;
  pr_Tensor *out = pr_op_finish(rt, &op, pr_tensor_new(rt, x->ndim, oshape, x->dtype, x->device));
  if (out == NULL) return NULL;
  *h_n = pr_tensor_new(rt, hn, hshape, x->dtype, x->device);
  if (*h_n != NULL && lstm && c_n != NULL) {
    *c_n = pr_tensor_new(rt, hn, hshape, x->dtype, x->device);
    if (*c_n == NULL) {
      pr_tensor_release(*h_n);
      *h_n = NULL;
    }
  }
  if (*h_n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  return out;
}

pr_Tensor *pr_rnn_cell(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h,
                       const pr_Tensor *c, const pr_RnnArgs *a, pr_Tensor **c_out) {
  char sx[96];
  if (c_out != NULL) *c_out = NULL;
  if (a->kind != PROF_OP_RNN_CELL && a->kind != PROF_OP_GRU_CELL && a->kind != PROF_OP_LSTM_CELL)
    return pr_fail(rt, "rnn_cell: unknown cell kind %d", (int)a->kind);
  const char *name = prof_op_kind_name(a->kind);
  int lstm = a->kind == PROF_OP_LSTM_CELL;
  if (check_recurrent(rt, name, x, h, c, lstm, a) != 0) return NULL;
  if (x->ndim != 1 && x->ndim != 2)
    return pr_fail(rt, "%s: expected a 1-D or 2-D input, got %s", name,
                   pr_shape_str(x, sx, sizeof sx));
  int64_t shape[2] = {x->shape[0], a->hidden_size};
  int n = x->ndim;
  if (n == 1) shape[0] = a->hidden_size;
  if (check_state(rt, name, "h", x, h, n, shape) != 0 ||
      check_state(rt, name, "c", x, c, n, shape) != 0)
    return NULL;
  prof_Op op;
  pr_op_begin(&op, a->kind, x, h, c);
  op.hidden_size = a->hidden_size;
  op.num_layers = 1;
  if (a->bias) op.flags |= PROF_OPF_BIAS;
  pr_Tensor *out = pr_op_finish(rt, &op, pr_tensor_new(rt, n, shape, x->dtype, x->device));
  if (out == NULL || !lstm || c_out == NULL) return out;
  *c_out = pr_tensor_new(rt, n, shape, x->dtype, x->device);
  if (*c_out == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  return out;
}
