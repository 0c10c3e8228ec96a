/* ops_sequence.c — scaled dot-product attention, recurrent layers and cells: shapes, checks, records. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backward.h"

/* Values: attention computes on the cpu through sgemm (cpu_attn.c has its softmax), the
   recurrent layers and cells through cpu_rnn.c; all attach their gradients. */

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
    return pr_error(rt, "%s: attn_mask is on %s, query on %s", name, m->be->name,
                    q->be->name);
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

/* A contiguous view of base's storage from offset, of the given shape. */
pr_Tensor *pr_contig_view(pr_Runtime *rt, const pr_Tensor *base, int nd, const int64_t *shape,
                          int64_t offset) {
  int64_t stride[PR_MAX_DIMS], s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    stride[i] = s;
    s *= shape[i];
  }
  return pr_tensor_view(rt, base, nd, shape, stride, base->offset + offset);
}

/* [batch..., H, X, Y] (nb batch dims, heads last) as [batch..., H / group, group, X, Y]. */
int pr_split_heads(int nb, const int64_t *shape, int64_t group, int64_t *out) {
  for (int i = 0; i < nb - 1; i++) out[i] = shape[i];
  out[nb - 1] = shape[nb - 1] / group;
  out[nb] = group;
  out[nb + 1] = shape[nb];
  out[nb + 2] = shape[nb + 1];
  return nb + 3;
}

/*
** How the batched products see q, k and v. Under grouped-query attention q's head dim splits
** into [Hk, group] and k, v gain a size-1 group dim, so that broadcasting serves each key head
** to the group of query heads after it (torch's repeat_interleave of k and v).
*/
int pr_attn_views(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *k, const pr_Tensor *v,
                  int64_t group, pr_Tensor **qv, pr_Tensor **kv, pr_Tensor **vv) {
  if (group <= 1) {
    *qv = pr_tensor_retain((pr_Tensor *)q);
    *kv = pr_tensor_retain((pr_Tensor *)k);
    *vv = pr_tensor_retain((pr_Tensor *)v);
    return 0;
  }
  int64_t shape[PR_MAX_DIMS + 1];
  int nd = pr_split_heads(q->ndim - 2, q->shape, group, shape);
  *qv = pr_reshape(rt, q, nd, shape, 0);
  *kv = *qv ? pr_unsqueeze(rt, k, k->ndim - 2) : NULL;
  *vv = *kv ? pr_unsqueeze(rt, v, v->ndim - 2) : NULL;
  return *vv != NULL ? 0 : PR_ERR;
}

void pr_release3(pr_Tensor *a, pr_Tensor *b, pr_Tensor *c) {
  pr_tensor_release(a);
  pr_tensor_release(b);
  pr_tensor_release(c);
}

/*
** The values on the cpu: S = scale·Q·Kᵀ by sgemm into the scores, masked and softmaxed in place,
** dropped into A, then O = A·V by sgemm. The scores (and A) are kept for the backward.
*/
static int sdpa_cpu(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *k, const pr_Tensor *v,
                    const pr_SdpaArgs *a, double scale, int nb, const int64_t *sshape,
                    int64_t group, pr_Tensor *pa, pr_Tensor *out) {
  pr_Runtime quiet = *rt;     /* the kernel's views are not the model's ops */
  quiet.rec = NULL;
  quiet.grad_enabled = 0;
  int drop = a->dropout_p > 0, nd = nb + 2;
  int64_t split[PR_MAX_DIMS + 1], osplit[PR_MAX_DIMS + 1];
  if (group > 1) {
    nd = pr_split_heads(nb, sshape, group, split);
    pr_split_heads(nb, out->shape, group, osplit);
  } else {
    memcpy(split, sshape, sizeof(int64_t) * (size_t)nd);
    memcpy(osplit, out->shape, sizeof(int64_t) * (size_t)nd);
  }
  int64_t numel = pr_numel(pa) / (drop ? 2 : 1);
  pr_Tensor *qv = NULL, *kv = NULL, *vv = NULL, *kt = NULL, *me = NULL;
  pr_Tensor *P = pr_contig_view(&quiet, pa, nb + 2, sshape, 0);
  pr_Tensor *Ps = P ? pr_contig_view(&quiet, pa, nd, split, 0) : NULL;
  pr_Tensor *As = Ps ? pr_contig_view(&quiet, pa, nd, split, drop ? numel : 0) : NULL;
  pr_Tensor *os = As ? pr_contig_view(&quiet, out, nd, osplit, 0) : NULL;
  int rc = PR_ERR;
  if (os == NULL || pr_attn_views(&quiet, q, k, v, group, &qv, &kv, &vv) != 0) goto end;
  if ((kt = pr_transpose(&quiet, kv, -2, -1)) == NULL) goto end;
  if (a->attn_mask != NULL && (me = pr_expand(&quiet, a->attn_mask, nb + 2, sshape)) == NULL)
    goto end;
  if (PR_K(Ps)->batched_mm(rt, qv, kt, Ps, (float)scale, 0.0f) != 0) goto end;
  if (PR_K(P)->attn_softmax(rt, P, me, a->is_causal, a->dropout_p, drop ? As : NULL) != 0) goto end;
  rc = PR_K(os)->batched_mm(rt, As, vv, os, 1.0f, 0.0f);
end:
  if (rc != 0 && quiet.err[0] != '\0' && rt->err[0] == '\0') pr_error(rt, "%s", quiet.err);
  pr_release3(qv, kv, vv);
  pr_release3(kt, me, P);
  pr_release3(Ps, As, os);
  return rc;
}

/* Computes attention's values (cpu) and attaches its gradient; sshape: the scores' shape. */
static pr_Tensor *sdpa_result(pr_Runtime *rt, prof_Op *op, pr_Tensor *out, const pr_Tensor *q,
                              const pr_Tensor *k, const pr_Tensor *v, const pr_SdpaArgs *a,
                              int nb, const int64_t *sshape, int64_t group) {
  if (out == NULL) return NULL;
  const char *name = "scaled_dot_product_attention";
  double scale = a->scale == a->scale ? a->scale : 1.0 / sqrt((double)q->shape[q->ndim - 1]);
  int cpu = pr_holds_values(out), grad = pr_needs_grad(rt, q, k, v), drop = a->dropout_p > 0;
  if (!cpu && !grad) return pr_op_end(rt, op, out, 0);
  /* the host's kernels are float32 only; cuda's take the half dtypes too */
  if (cpu && q->dtype != PROF_F32 && out->device == rt->host_device)
    return pr_op_end(rt, op, out, pr_error(rt, "%s: %s kernels compute float32, got %s", name,
                                           out->be->name, prof_dtype_name(q->dtype)));
  if (group > 1 && nb + 3 > PR_MAX_DIMS)
    return pr_op_end(rt, op, out, pr_error(rt, "%s: grouped-query attention takes at most %d "
                                           "batch dims", name, PR_MAX_DIMS - 3));
  /* the probabilities, and after them the dropped ones: one buffer, one saved tensor */
  int64_t numel = 1;
  for (int i = 0; i < nb + 2; i++) numel *= sshape[i];
  numel *= drop ? 2 : 1;
  pr_Tensor *pa = pr_tensor_new(rt, 1, &numel, pr_grad_dtype(q), out->device);
  int rc = pa == NULL || (cpu && sdpa_cpu(rt, q, k, v, a, scale, nb, sshape, group, pa, out) != 0)
               ? PR_ERR : 0;
  if ((out = pr_op_end(rt, op, out, rc)) == NULL) {
    pr_tensor_release(pa);
    return NULL;
  }
  if (grad) {
    const pr_Tensor *in[3] = {q, k, v};
    pr_Node *n = pr_node_attach(rt, out, PR_BW_SDPA, name, 3, in);
    if (n == NULL) {
      pr_tensor_release(pa);
      pr_tensor_release(out);
      return NULL;
    }
    n->args.i[0] = group, n->args.i[1] = nb, n->args.i[2] = drop;
    for (int i = 0; i < nb + 2; i++) n->args.i[3 + i] = sshape[i];
    n->args.f[0] = scale, n->args.f[1] = a->dropout_p;
    pr_node_save(n, 0, (pr_Tensor *)q);
    pr_node_save(n, 1, (pr_Tensor *)k);
    pr_node_save(n, 2, (pr_Tensor *)v);
    pr_node_save(n, 3, pa);
  }
  pr_tensor_release(pa);
  return out;
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
  pr_Tensor *out = pr_op_alloc(rt, &op, nb + 2, batch, q->dtype, q->device);
  /* grouped-query attention: query heads over key heads, when neither broadcasts */
  int64_t hq = q->ndim >= 3 ? q->shape[q->ndim - 3] : 1, hk = nkv >= 1 ? kv[nkv - 1] : 1;
  int64_t group = hq > 1 && hk > 1 && hq != hk ? hq / hk : 1;
  batch[nb + 1] = S;          /* now the scores' shape */
  return sdpa_result(rt, &op, out, q, k, v, a, nb, batch, group);
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

/*
** The weights: per layer and direction w_ih [G, in], w_hh [G, H][, b_ih [G], b_hh [G]] with
** G = gates·H and in the input size (layer 0) or directions·H, on x's device and of its dtype.
*/
static int check_weights(pr_Runtime *rt, const char *name, const pr_Tensor *x, int nw,
                         const pr_Tensor *const *w, const pr_RnnArgs *a, int64_t layers,
                         int64_t dirs) {
  char sw[96], se[96];
  int64_t per = a->bias ? 4 : 2, G = a->hidden_size;
  G *= a->kind == PROF_OP_GRU || a->kind == PROF_OP_GRU_CELL   ? 3
       : a->kind == PROF_OP_LSTM || a->kind == PROF_OP_LSTM_CELL ? 4 : 1;
  if (nw != layers * dirs * per)
    return pr_error(rt, "%s: expected %lld weights (w_ih, w_hh%s per layer and direction), got %d",
                    name, (long long)(layers * dirs * per), a->bias ? ", b_ih, b_hh" : "", nw);
  for (int k = 0; k < nw; k++) {
    int64_t l = k / (dirs * per), role = k % per;
    int64_t want[2] = {G, role == 0 ? (l == 0 ? a->input_size : dirs * a->hidden_size)
                                    : a->hidden_size};
    int nd = role < 2 ? 2 : 1;
    if (pr_check_same(rt, name, x, w[k], NULL) != 0) return PR_ERR;
    int ok = w[k]->ndim == nd && w[k]->shape[0] == want[0] &&
             (nd == 1 || w[k]->shape[1] == want[1]);
    if (!ok)
      return pr_error(rt, "%s: weight %d %s does not match the expected %s", name, k,
                      pr_shape_str(w[k], sw, sizeof sw), pr_dims_str(nd, want, se, sizeof se));
  }
  return 0;
}

static pr_RnnPlan rnn_plan(const pr_RnnArgs *a, int64_t T, int64_t N, int64_t layers,
                           int64_t dirs) {
  pr_RnnPlan p = {0, a->relu, a->bias, T, N, a->input_size, a->hidden_size, layers, dirs,
                  a->dropout};
  if (a->kind == PROF_OP_GRU || a->kind == PROF_OP_GRU_CELL) p.cell = 1;
  if (a->kind == PROF_OP_LSTM || a->kind == PROF_OP_LSTM_CELL) p.cell = 2;
  return p;
}

/* The cpu computes with the weights; meta counts from the sizes alone. */
static int need_weights(pr_Runtime *rt, const char *name, const pr_Tensor *x, int nw) {
  if (nw > 0 || !pr_holds_values(x)) return 0;
  return pr_error(rt, "%s: the cpu kernel needs the weights (core.rnn(kind, x, options, h0, c0, "
                  "weights) with PyTorch's _flat_weights)", name);
}

/*
** Views of R = [out | h_n | c_n] (each n0, n1, n2 elements, c_n only for an LSTM) with the shapes
** given, allocated inside op, which is left open for the kernel (closed here on failure).
*/
static int packed_results(pr_Runtime *rt, prof_Op *op, const pr_Tensor *x, int on,
                          const int64_t *oshape, int hn, const int64_t *hshape, int lstm,
                          pr_Tensor **R, pr_Tensor **views) {
  int64_t n0 = 1, n1 = 1;
  for (int i = 0; i < on; i++) n0 *= oshape[i];
  for (int i = 0; i < hn; i++) n1 *= hshape[i];
  int64_t total = n0 + n1 * (lstm ? 2 : 1);
  views[0] = views[1] = views[2] = NULL;
  if (pr_op_open(rt, op, on, oshape, x->dtype) != 0) return PR_ERR;
  *R = pr_tensor_new(rt, 1, &total, x->dtype, x->device);
  if (*R == NULL) return pr_op_close(rt, op, PR_ERR);
  views[0] = pr_contig_view(rt, *R, on, oshape, 0);
  views[1] = views[0] ? pr_contig_view(rt, *R, hn, hshape, n0) : NULL;
  views[2] = views[1] && lstm ? pr_contig_view(rt, *R, hn, hshape, n0 + n1) : NULL;
  if (views[1] != NULL && (!lstm || views[2] != NULL)) return 0;
  pr_release3(views[0], views[1], views[2]);
  pr_tensor_release(*R);
  return pr_op_close(rt, op, PR_ERR);
}

pr_Tensor *pr_rnn_weighted(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h0,
                           const pr_Tensor *c0, int nw, const pr_Tensor *const *w,
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
  if (!(a->dropout >= 0.0 && a->dropout <= 1.0))
    return pr_fail(rt, "%s: dropout must be between 0 and 1, got %g", name, a->dropout);
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
  if (need_weights(rt, name, x, nw) != 0) return NULL;
  if (nw > 0 && check_weights(rt, name, x, nw, w, a, a->num_layers, dirs) != 0) return NULL;
  if (pr_holds_values(x) && x->dtype != PROF_F32)
    return pr_fail(rt, "%s: cpu kernels compute float32, got %s", name, prof_dtype_name(x->dtype));
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
  pr_Tensor *R, *v[3];
  if (packed_results(rt, &op, x, x->ndim, oshape, hn, hshape, lstm, &R, v) != 0) return NULL;
  pr_RnnPlan p = rnn_plan(a, T, N, a->num_layers, dirs);
  int rc = nw > 0 ? pr_rnn_values(rt, &p, name, batched && a->batch_first, x, h0, c0, nw, w, R, v)
                  : 0;
  pr_op_close(rt, &op, rc);
  pr_tensor_release(R);
  if (rc != 0) {
    pr_release3(v[0], v[1], v[2]);
    return NULL;
  }
  *h_n = v[1];
  if (c_n != NULL) *c_n = v[2];
  else pr_tensor_release(v[2]);
  return v[0];
}

pr_Tensor *pr_rnn(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0,
                  const pr_RnnArgs *a, pr_Tensor **h_n, pr_Tensor **c_n) {
  return pr_rnn_weighted(rt, x, h0, c0, 0, NULL, a, h_n, c_n);
}

pr_Tensor *pr_rnn_cell_weighted(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h,
                                const pr_Tensor *c, int nw, const pr_Tensor *const *w,
                                const pr_RnnArgs *a, pr_Tensor **c_out) {
  char sx[96];
  if (c_out != NULL) *c_out = NULL;
  if (a->dropout != 0.0) return pr_fail(rt, "rnn_cell: a cell has no dropout");
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
  if (need_weights(rt, name, x, nw) != 0) return NULL;
  if (nw > 0 && check_weights(rt, name, x, nw, w, a, 1, 1) != 0) return NULL;
  if (pr_holds_values(x) && x->dtype != PROF_F32)
    return pr_fail(rt, "%s: cpu kernels compute float32, got %s", name, prof_dtype_name(x->dtype));
  prof_Op op;
  pr_op_begin(&op, a->kind, x, h, c);
  op.hidden_size = a->hidden_size;
  op.num_layers = 1;
  if (a->bias) op.flags |= PROF_OPF_BIAS;
  /* one step of one layer: h' is both the output and h_n, whose part of R stays unused */
  pr_Tensor *R, *v[3];
  if (packed_results(rt, &op, x, n, shape, n, shape, lstm, &R, v) != 0) return NULL;
  pr_RnnPlan p = rnn_plan(a, 1, n == 2 ? x->shape[0] : 1, 1, 1);
  pr_Tensor *views[3] = {v[0], NULL, v[2]};
  int rc = nw > 0 ? pr_rnn_values(rt, &p, name, 0, x, h, c, nw, w, R, views) : 0;
  pr_op_close(rt, &op, rc);
  pr_tensor_release(R);
  pr_tensor_release(v[1]);
  if (rc != 0) {
    pr_tensor_release(v[0]);
    pr_tensor_release(v[2]);
    return NULL;
  }
  if (c_out != NULL) *c_out = v[2];
  else pr_tensor_release(v[2]);
  return v[0];
}

pr_Tensor *pr_rnn_cell(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h,
                       const pr_Tensor *c, const pr_RnnArgs *a, pr_Tensor **c_out) {
  return pr_rnn_cell_weighted(rt, x, h, c, 0, NULL, a, c_out);
}
