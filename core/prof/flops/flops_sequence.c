/* flops_sequence.c — flop formulas of attention and of the recurrent layers and cells. */
#include "flops_internal.h"

/* {====================== attention ======================} */

/*
** Score entries computed per head. With is_causal PyTorch keeps (i, j) iff j <= i (the mask is
** ones(L, S).tril(), aligned top-left), so row i keeps min(i + 1, S) entries.
*/
static int64_t kept_scores(int64_t L, int64_t S, int causal) {
  if (!causal) return profF_mul(L, S);
  if (L <= S) return profF_mul(L, profF_add(L, 1)) / 2;
  return profF_add(profF_mul(S, profF_add(S, 1)) / 2, profF_mul(L - S, S));
}

/*
** exact, with B·H = prod(q.shape[:-2]) (heads from q, so grouped-query attention is right) and
** k kept scores per head: MACs = B·H·k·(E + Ev) (QKᵀ and AV over the kept entries only);
** FLOPs = 2·MACs + B·H·k (scale) + softmax over the kept scores (5 per score - 2 per row)
** + B·H·k (mask add, with PROF_OPF_MASK) + 2·B·H·k (dropout, with PROF_OPF_TRAINING).
** deepspeed: prod(q)·S + prod(q[:-1])·S·Ev MACs, 2·MACs; causality, softmax, scale ignored.
*/
int profF_sdpa(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 3, 4);
  if (rc != PROF_OK) return rc;
  const prof_Operand *q = &op->in[0], *k = &op->in[1], *v = &op->in[2];
  if ((rc = profF_need_ndim(c, op, q, "query", 2, PROF_MAX_DIMS)) != PROF_OK) return rc;
  int nd = q->ndim;
  if (k->ndim != nd || v->ndim != nd)
    return profF_fail(c, op, "query %s, key %s and value %s differ in rank", PROFF_SHAPE(q),
                      PROFF_SHAPE(k), PROFF_SHAPE(v));
  int64_t L = q->dim[nd - 2], E = q->dim[nd - 1], S = k->dim[nd - 2], Ev = v->dim[nd - 1];
  int bad = k->dim[nd - 1] != E || v->dim[nd - 2] != S;
  if (nd >= 3) {
    int64_t hq = q->dim[nd - 3], hk = k->dim[nd - 3];
    bad |= v->dim[nd - 3] != hk || (hq != hk && (hk == 0 || hq % hk != 0));
    for (int i = 0; i < nd - 3; i++) {
      bad |= k->dim[i] != q->dim[i] && k->dim[i] != 1;
      bad |= v->dim[i] != k->dim[i];
    }
  }
  if (bad)
    return profF_fail(c, op, "query %s does not match key %s and value %s", PROFF_SHAPE(q),
                      PROFF_SHAPE(k), PROFF_SHAPE(v));
  if (PROFF_DS(c)) {
    op->macs = profF_add(profF_mul(profF_numel(q), S),
                         profF_mul(profF_prod(q->dim, nd - 1), profF_mul(S, Ev)));
    op->flops = profF_mul(2, op->macs);
    return PROF_OK;
  }
  int64_t bh = profF_prod(q->dim, nd - 2);
  int64_t kept = profF_mul(bh, kept_scores(L, S, (op->flags & PROF_OPF_CAUSAL) != 0));
  int64_t rows = S > 0 ? profF_mul(bh, L) : 0;
  op->macs = profF_mul(kept, profF_add(E, Ev));
  int64_t f = profF_mul(2, op->macs);
  f = profF_add(f, kept);                                             /* scale */
  f = profF_add(f, profF_sub(profF_mul(5, kept), profF_mul(2, rows)));  /* softmax */
  if (op->flags & PROF_OPF_MASK) f = profF_add(f, kept);
  if (op->flags & PROF_OPF_TRAINING) f = profF_add(f, profF_mul(2, kept));
  op->flops = f;
  return PROF_OK;
}

/* {====================== recurrent layers ======================} */

typedef struct RnnShape {
  int64_t H, G;                /* hidden size, gate rows (gates·H) */
  int64_t ds_cell, exact_cell; /* the non-matmul work of one step of one cell */
} RnnShape;

/*
** Elementwise work of one step of one cell, exact: RNN: add the two projections (H), tanh (H);
** GRU: add r, z projections (2H), two sigmoids (8H), r⊙(W_hn h) (H), add (H), tanh (H),
** (1 - z)⊙n + z⊙h (4H) = 17H; LSTM: add projections (4H), three sigmoids (12H), tanh g (H),
** c = f⊙c + i⊙g (3H), tanh c (H), o⊙tanh c (H) = 22H. deepspeed (_rnn_flops): H, 7H, 10H.
*/
static int rnn_shape(const profF_Ctx *c, const prof_Op *op, RnnShape *r) {
  if (op->hidden_size <= 0)
    return profF_fail(c, op, "hidden_size %lld", (long long)op->hidden_size);
  r->H = op->hidden_size;
  int64_t gates, exact, ds;
  switch (op->kind) {
    case PROF_OP_GRU: case PROF_OP_GRU_CELL: gates = 3, exact = 17, ds = 7; break;
    case PROF_OP_LSTM: case PROF_OP_LSTM_CELL: gates = 4, exact = 22, ds = 10; break;
    default: gates = 1, exact = 2, ds = 1; break;
  }
  r->G = profF_mul(gates, r->H);
  r->exact_cell = profF_mul(exact, r->H);
  r->ds_cell = profF_mul(ds, r->H);
  return PROF_OK;
}

/* One cell step with input size I: MACs, and flops under the context's convention. */
static void cell_step(const profF_Ctx *c, const RnnShape *r, int64_t I, int bias, int64_t *macs,
                      int64_t *flops, int64_t *weights) {
  int64_t gi = profF_mul(r->G, I), gh = profF_mul(r->G, r->H);
  int64_t b = bias ? profF_mul(2, r->G) : 0;
  *weights = profF_add(profF_add(gi, gh), b);
  *macs = profF_add(gi, gh);
  if (PROFF_DS(c))  /* DeepSpeed: 2·G·I - G + 2·G·H - G + cell + biases */
    *flops = profF_add(profF_sub(profF_sub(profF_mul(2, *macs), r->G), r->G),
                       profF_add(r->ds_cell, b));
  else
    *flops = profF_add(profF_add(profF_mul(2, *macs), b), r->exact_cell);
}

/*
** Per step, layer and direction: MACs G·I_l + G·H, I_l = input size for layer 0, H·directions
** after. exact: × T·N steps × directions, FLOPs 2·MACs + biases 2G + cell work.
** deepspeed: 0 MACs; FLOPs Σ_layers _rnn_flops × x.shape[0] × x.shape[1] × directions.
** Bytes also count the weights read (they are not operands): G·I_l + G·H (+ 2G) per layer and
** direction, in x's dtype.
*/
int profF_rnn(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 3);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0];
  if ((rc = profF_need_ndim(c, op, x, "input", 2, 3)) != PROF_OK) return rc;
  RnnShape r;
  if ((rc = rnn_shape(c, op, &r)) != PROF_OK) return rc;
  if (op->num_layers < 0) return profF_fail(c, op, "num_layers %lld", (long long)op->num_layers);
  int64_t layers = op->num_layers > 0 ? op->num_layers : 1;
  int64_t dirs = (op->flags & PROF_OPF_BIDIRECTIONAL) ? 2 : 1;
  int bias = (op->flags & PROF_OPF_BIAS) != 0;
  /* layer 0 reads the input; every later layer has the same shape (input H·dirs) */
  int64_t macs, flops, weights, m, f, w;
  cell_step(c, &r, x->dim[x->ndim - 1], bias, &macs, &flops, &weights);
  cell_step(c, &r, profF_mul(r.H, dirs), bias, &m, &f, &w);
  macs = profF_add(macs, profF_mul(layers - 1, m));
  flops = profF_add(flops, profF_mul(layers - 1, f));
  weights = profF_add(weights, profF_mul(layers - 1, w));
  /* DeepSpeed multiplies by shape[0]·shape[1] whatever the layout (for an unbatched [T, I]
     input that is T·I); the exact count takes T·N (N = 1 unbatched). */
  int64_t steps = profF_mul(x->dim[0], x->ndim == 3 || PROFF_DS(c) ? x->dim[1] : 1);
  op->macs = PROFF_DS(c) ? 0 : profF_mul(profF_mul(macs, steps), dirs);
  op->flops = profF_mul(profF_mul(flops, steps), dirs);
  op->bytes_read = profF_add(op->bytes_read, profF_mul(profF_mul(weights, dirs),
                                                       prof_dtype_size(x->dtype)));
  return PROF_OK;
}

/*
** One step of one cell over a batch: as profF_rnn with T = 1, one layer, one direction.
** deepspeed multiplies by x.shape[0] (for an unbatched [I] input that is I).
*/
int profF_rnn_cell(const profF_Ctx *c, prof_Op *op) {
  int rc = profF_need_inputs(c, op, 1, 3);
  if (rc != PROF_OK) return rc;
  const prof_Operand *x = &op->in[0];
  if ((rc = profF_need_ndim(c, op, x, "input", 1, 2)) != PROF_OK) return rc;
  RnnShape r;
  if ((rc = rnn_shape(c, op, &r)) != PROF_OK) return rc;
  int64_t m, f, w;
  cell_step(c, &r, x->dim[x->ndim - 1], (op->flags & PROF_OPF_BIAS) != 0, &m, &f, &w);
  int64_t batch = (x->ndim == 2 || PROFF_DS(c)) ? x->dim[0] : 1;
  op->macs = PROFF_DS(c) ? 0 : profF_mul(m, batch);
  op->flops = profF_mul(f, batch);
  op->bytes_read = profF_add(op->bytes_read, profF_mul(w, prof_dtype_size(x->dtype)));
  return PROF_OK;
}
