/* ops_rnn_backward.c — the recurrent ops' gradients: BPTT, and the packed results' and flat
   weights' links (autograd_table.c). */
#include <stdio.h>
#include <string.h>

#include "backward.h"

/* A view's gradient as R's: zeros elsewhere. */
int pr_rnn_unpack_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *R = n->inputs[0];
  if ((gin[0] = pr_tensor_new(rt, 1, R->shape, pr_grad_dtype(R), R->device)) == NULL)
    return PR_ERR;
  if (!pr_holds_values(R)) return 0;
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  int rc = R->be->copy(R->be, rt, pr_f32(gin[0]) + n->args.i[0], pr_f32(gc),
                       sizeof(float) * (size_t)pr_numel(gc));
  pr_tensor_release(gc);
  return rc;
}

/* A link of the weights' chain: its weights' gradients (copies), then the rest (a view). */
int pr_rnn_pack_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  pr_Tensor *gc = pr_contiguous_data(rt, g);
  if (gc == NULL) return PR_ERR;
  int rc = 0;
  for (int i = 0; i < 3 && rc == 0; i++) {
    const pr_Tensor *w = n->inputs[i];
    if (w == NULL) continue;
    gin[i] = pr_tensor_new(rt, w->ndim, w->shape, pr_grad_dtype(w), w->device);
    if (gin[i] == NULL) rc = PR_ERR;
    else if (pr_holds_values(w))
      rc = w->be->copy(w->be, rt, pr_f32(gin[i]), pr_f32(gc) + n->args.i[i],
                       sizeof(float) * (size_t)pr_numel(w));
  }
  if (rc == 0 && n->inputs[3] != NULL) {
    int64_t rest = pr_numel(gc) - n->args.i[3], one = 1;
    gin[3] = pr_tensor_view(rt, gc, 1, &rest, &one, gc->offset + n->args.i[3]);
    if (gin[3] == NULL) rc = PR_ERR;
  }
  pr_tensor_release(gc);
  return rc;
}

/* The counts of an MM op a[m, k]·b[k, n] of dtype dt that a kernel ran itself, recorded as such. */
static int record_mm(pr_Runtime *rt, int dt, int64_t m, int64_t k, int64_t n) {
  if (rt->rec == NULL) return 0;
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = PROF_OP_MM;
  op.ninputs = 2;
  op.in[0].ndim = op.in[1].ndim = op.out.ndim = 2;
  op.in[0].dtype = op.in[1].dtype = op.out.dtype = dt;
  op.in[0].dim[0] = m, op.in[0].dim[1] = k;
  op.in[1].dim[0] = k, op.in[1].dim[1] = n;
  op.out.dim[0] = m, op.out.dim[1] = n;
  return pr_record(rt, &op, NULL);
}

/*
** BPTT's work, opened as work (the caller closes it after the kernel): per layer and direction
** the recurrence dh·W_hh over all steps, the input gradient
** dxi·W_ih and the weight gradients dxiᵀ·x, dhhᵀ·h as matrix products; the gates' derivatives
** about twice the forward's elementwise work (RNN 2H, GRU 17H, LSTM 22H per step and sample, as
** flops_sequence.c counts it), plus the bias sums.
*/
static int record_bptt(pr_Runtime *rt, prof_Op *work, const pr_RnnPlan *p, const char *name,
                       int dt, int want_x, int want_w, int64_t bytes_read,
                       int64_t bytes_written) {
  int64_t G = pr_rnn_gates(p) * p->H, rows = p->T * p->N;
  int64_t cell = p->cell == 0 ? 2 : p->cell == 1 ? 17 : 22, flops = 0;
  for (int64_t l = 0; l < p->L; l++)
    for (int64_t d = 0; d < p->D; d++) {
      int64_t in = pr_rnn_in_size(p, l);
      if (record_mm(rt, dt, rows, G, p->H) != 0) return PR_ERR;
      if ((l > 0 || want_x) && record_mm(rt, dt, rows, G, in) != 0) return PR_ERR;
      if (want_w && (record_mm(rt, dt, G, rows, in) != 0 || record_mm(rt, dt, G, rows, p->H) != 0))
        return PR_ERR;
      flops += rows * (2 * cell * p->H + (want_w && p->bias ? 2 * G : 0));
    }
  return pr_work_begin(rt, work, pr_backward_name(rt, name), 0, flops, bytes_read, bytes_written,
                       NULL, NULL, NULL);
}

static int64_t tensor_bytes(const pr_Tensor *t) {
  return pr_numel(t) * (int64_t)prof_dtype_size(t->dtype);
}

static pr_RnnPlan plan_of(const pr_Node *n) {
  pr_RnnPlan p = {(int)n->args.i[0], (int)n->args.i[1], (int)n->args.i[2], n->args.i[3],
                  n->args.i[4], n->args.i[5], n->args.i[6], n->args.i[7], n->args.i[8],
                  n->args.f[0]};
  return p;
}

/* R's gradient [out | h_n | c_n] back through time to x, h0, c0 and W. */
int pr_rnn_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  pr_RnnPlan p = plan_of(n);
  int batch_first = (int)n->args.i[9];
  const pr_Tensor *ws = n->saved[0], *W = n->saved[1];
  for (int i = 0; i < 4; i++) {
    const pr_Tensor *t = n->inputs[i];
    if (t != NULL &&
        (gin[i] = pr_tensor_new(rt, t->ndim, t->shape, pr_grad_dtype(t), t->device)) == NULL)
      return PR_ERR;
  }
  /* each in its own dtype: float32 on the cpu, a float16 model's 2 bytes on meta (pr_grad_dtype) */
  int64_t wrote = 0;
  for (int i = 0; i < 4; i++) wrote += gin[i] ? tensor_bytes(gin[i]) : 0;
  prof_Op work;
  if (record_bptt(rt, &work, &p, n->name, W->dtype, gin[0] != NULL, gin[3] != NULL,
                  tensor_bytes(ws) + tensor_bytes(W) + tensor_bytes(g), wrote) != 0)
    return PR_ERR;
  return pr_op_close(rt, &work, PR_K(W)->rnn_backward(rt, &p, batch_first, W, ws, g, gin[0], gin[1],
                                                      gin[2], gin[3]));
}
