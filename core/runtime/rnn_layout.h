/* rnn_layout.h — where RNN, GRU and LSTM weights and workspace values live: the one layout the cpu and cuda kernels both read. */
#ifndef PR_RNN_LAYOUT_H
#define PR_RNN_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "plans.h"

/*
** Weights: PyTorch's _flat_weights order, per layer and direction w_ih [G, in], w_hh [G, H],
** then b_ih [G], b_hh [G] with bias (G = gates·H; in = I for layer 0, D·H after).
** Workspace: x [T, N, I], each layer's output [T, N, D·H], then per layer and direction the
** states h [T + 1, N, H] in processing order (h[0] the initial state), c alike for an LSTM, and
** the activations each step's backward reads [T, N, A] (GRU r, z, n and W_hn·h + b_hn; LSTM
** i, f, g, o), and with dropout the masks of layers 0 … L − 2 [T, N, D·H]. A layer's output is
** kept already dropped: it is only read as the next layer's input (forward and weight gradient),
** while h_n comes from the states, which PyTorch leaves undropped too. Everything is time-major;
** the caller converts batch-first tensors. The workspace is saved by the op layer for the
** backward, so a kernel on either device reads what the other would have written.
*/

static inline int64_t pr_rnnl_gates(const pr_RnnPlan *p) {
  return p->cell == 0 ? 1 : p->cell == 1 ? 3 : 4;
}
static inline int64_t pr_rnnl_in_size(const pr_RnnPlan *p, int64_t l) {
  return l == 0 ? p->In : p->D * p->H;
}
static inline int64_t pr_rnnl_acts(const pr_RnnPlan *p) { return p->cell == 0 ? 0 : 4 * p->H; }

static inline int64_t pr_rnnl_block_size(const pr_RnnPlan *p, int64_t l) {
  int64_t G = pr_rnnl_gates(p) * p->H;
  return G * pr_rnnl_in_size(p, l) + G * p->H + (p->bias ? 2 * G : 0);
}

static inline int64_t pr_rnnl_weight_offset(const pr_RnnPlan *p, int64_t l, int64_t d) {
  int64_t off = 0;
  for (int64_t k = 0; k < l; k++) off += p->D * pr_rnnl_block_size(p, k);
  return off + d * pr_rnnl_block_size(p, l);
}

static inline int64_t pr_rnnl_state_size(const pr_RnnPlan *p) {
  int64_t hs = (p->T + 1) * p->N * p->H;
  return hs * (p->cell == 2 ? 2 : 1) + p->T * p->N * pr_rnnl_acts(p);
}

static inline int64_t pr_rnnl_out_offset(const pr_RnnPlan *p, int64_t l) {
  return p->T * p->N * p->In + l * p->T * p->N * p->D * p->H;
}

static inline int64_t pr_rnnl_state_offset(const pr_RnnPlan *p, int64_t l, int64_t d) {
  return pr_rnnl_out_offset(p, p->L) + (l * p->D + d) * pr_rnnl_state_size(p);
}

/* One layer and direction's views into the weights and the workspace. */
typedef struct pr_RnnDir {
  const float *wih, *whh, *bih, *bhh;
  float *hs, *cs, *act;        /* cs NULL but for an LSTM */
  int64_t in, G;
} pr_RnnDir;

static inline pr_RnnDir pr_rnnl_dir(const pr_RnnPlan *p, const float *w, float *ws, int64_t l,
                                    int64_t d) {
  pr_RnnDir r;
  r.in = pr_rnnl_in_size(p, l);
  r.G = pr_rnnl_gates(p) * p->H;
  r.wih = w + pr_rnnl_weight_offset(p, l, d);
  r.whh = r.wih + r.G * r.in;
  r.bih = p->bias ? r.whh + r.G * p->H : NULL;
  r.bhh = p->bias ? r.bih + r.G : NULL;
  r.hs = ws + pr_rnnl_state_offset(p, l, d);
  int64_t hsz = (p->T + 1) * p->N * p->H;
  r.cs = p->cell == 2 ? r.hs + hsz : NULL;
  r.act = r.hs + hsz * (p->cell == 2 ? 2 : 1);
  return r;
}

#endif
