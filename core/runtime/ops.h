/* ops.h — the runtime's ops; included by runtime.h, never on its own. */
#ifndef PR_OPS_H
#define PR_OPS_H

/*
** Every op checks its operands (a mismatch names the op and both shapes), returns a new tensor
** (refs = 1) or NULL with rt->err set, and records itself when rt->rec is set. Dims are PyTorch's:
** 0-based, negatives count from the end.
*/

/* dense algebra (ops_dense.c) */
pr_Tensor *pr_linear(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b);

/* convolution and pooling (ops_conv.c); nsp = number of spatial dims (1, 2 or 3) */
typedef struct pr_ConvArgs {
  int nsp;
  int64_t stride[3], padding[3], dilation[3], output_padding[3];
  int64_t groups;
  int padding_same;            /* padding='same' (stride must be 1) */
} pr_ConvArgs;

typedef struct pr_PoolArgs {
  int nsp;
  int64_t kernel[3], stride[3], padding[3], dilation[3];
  int ceil_mode;
  int count_include_pad;       /* avg pool */
  int64_t divisor_override;    /* avg pool: every window's divisor instead of its count; 0: none
                                  (PyTorch rejects 0 as a divisor, so it cannot be meant) */
  int64_t output_size[3];      /* adaptive pools */
} pr_PoolArgs;

pr_Tensor *pr_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                   const pr_ConvArgs *a);
pr_Tensor *pr_conv_transpose(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                             const pr_Tensor *b, const pr_ConvArgs *a);
/* kind: PROF_OP_MAX_POOL, _AVG_POOL, _ADAPTIVE_AVG_POOL or _ADAPTIVE_MAX_POOL */
pr_Tensor *pr_pool(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolArgs *a);

/* pointwise (ops_pointwise.c) */
/* Unary ops of one input: activations (RELU … MISH) and math (NEG … CLAMP). alpha: the slope of
   leaky_relu, elu's alpha, softplus's beta; gelu's form (0: erf, otherwise tanh); clamp uses
   lo/hi. */
pr_Tensor *pr_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double alpha);
pr_Tensor *pr_clamp(pr_Runtime *rt, const pr_Tensor *x, double lo, double hi);
pr_Tensor *pr_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w);
/* SOFTMAX or LOG_SOFTMAX along dim */
pr_Tensor *pr_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int dim);
/* Binary elementwise ops with right-aligned broadcasting; b == NULL: the scalar s instead
   (scalar_first: s op a). flags: PROF_OPF_OPERATOR for the operator forms. */
pr_Tensor *pr_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                     double s, int scalar_first, uint32_t flags);

/* shapes and views (ops_shape.c) */
pr_Tensor *pr_reshape(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int64_t *shape,
                      int require_view);
pr_Tensor *pr_flatten(pr_Runtime *rt, const pr_Tensor *x, int start, int end);
pr_Tensor *pr_transpose(pr_Runtime *rt, const pr_Tensor *x, int d0, int d1);
pr_Tensor *pr_permute(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int *dims);
pr_Tensor *pr_unsqueeze(pr_Runtime *rt, const pr_Tensor *x, int dim);
pr_Tensor *pr_squeeze(pr_Runtime *rt, const pr_Tensor *x, int dim, int all);
pr_Tensor *pr_expand(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int64_t *shape);
pr_Tensor *pr_select(pr_Runtime *rt, const pr_Tensor *x, int dim, int64_t index);
pr_Tensor *pr_narrow(pr_Runtime *rt, const pr_Tensor *x, int dim, int64_t start, int64_t len);
pr_Tensor *pr_contiguous(pr_Runtime *rt, const pr_Tensor *x);
pr_Tensor *pr_cat(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int dim);
/* A copy with another dtype and/or device (-1: keep); the same tensor's view when nothing changes. */
pr_Tensor *pr_to(pr_Runtime *rt, const pr_Tensor *x, int dtype, int device);

/* {====================== linear algebra (ops_linalg.c) ======================} */

/* torch.matmul: a 1-D operand is promoted to a matrix and the added dim removed afterwards;
   batch dims broadcast right-aligned. */
pr_Tensor *pr_matmul(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b);
pr_Tensor *pr_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b);
pr_Tensor *pr_bmm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b);
/* beta·c + alpha·(a @ b); c broadcasts to the product's shape */
pr_Tensor *pr_addmm(pr_Runtime *rt, const pr_Tensor *c, const pr_Tensor *a, const pr_Tensor *b,
                    double beta, double alpha);
pr_Tensor *pr_baddbmm(pr_Runtime *rt, const pr_Tensor *c, const pr_Tensor *a,
                      const pr_Tensor *b, double beta, double alpha);
/* einsum of one or two operands (b NULL: one); equation as torch.einsum takes it */
pr_Tensor *pr_einsum(pr_Runtime *rt, const char *equation, const pr_Tensor *a,
                     const pr_Tensor *b);

/* {====================== normalisation, embedding, dropout (ops_norm.c) ======================} */

/* training: batch_norm uses batch statistics; instance_norm's use_input_stats. */
typedef struct pr_NormArgs {
  int training;
  double momentum, eps;
} pr_NormArgs;

/* running_mean/var, weight and bias may be NULL (running stats only while training). */
pr_Tensor *pr_batch_norm(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *running_mean,
                         const pr_Tensor *running_var, const pr_Tensor *w, const pr_Tensor *b,
                         const pr_NormArgs *a);
pr_Tensor *pr_instance_norm(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *running_mean,
                            const pr_Tensor *running_var, const pr_Tensor *w,
                            const pr_Tensor *b, const pr_NormArgs *a);
/* normalized_shape: the nshape trailing dims of x */
pr_Tensor *pr_layer_norm(pr_Runtime *rt, const pr_Tensor *x, int nshape, const int64_t *shape,
                         const pr_Tensor *w, const pr_Tensor *b, double eps);
pr_Tensor *pr_rms_norm(pr_Runtime *rt, const pr_Tensor *x, int nshape, const int64_t *shape,
                       const pr_Tensor *w, double eps);
pr_Tensor *pr_group_norm(pr_Runtime *rt, const pr_Tensor *x, int64_t groups, const pr_Tensor *w,
                         const pr_Tensor *b, double eps);
/* indices int64 or int32, weight [V, D]; padding_idx NULL: none */
pr_Tensor *pr_embedding(pr_Runtime *rt, const pr_Tensor *indices, const pr_Tensor *w,
                        const int64_t *padding_idx);
/* p in [0, 1]; without training (or p = 0) the result is x itself (retained), as in PyTorch */
pr_Tensor *pr_dropout(pr_Runtime *rt, const pr_Tensor *x, double p, int training);

/* {====================== reductions (ops_reduce.c) and losses (ops_loss.c) ======================} */

/*
** kind: PROF_OP_SUM, _MEAN, _AMAX or _VAR over ndims dims (ndims <= 0: every dim, as PyTorch
** does for dim=None and dim=[]). correction: var's (Bessel's 1 by default).
*/
pr_Tensor *pr_reduce(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int ndims,
                     const int *dims, int keepdim, double correction);

typedef struct pr_LossArgs {
  int32_t reduction;           /* prof_Reduction */
  int64_t ignore_index;        /* -100 */
  double label_smoothing;      /* cross_entropy, 0 */
} pr_LossArgs;

/* input [C], [N, C] or [N, C, d...]; target class indices (int64) of input's shape without C,
   or (cross_entropy) probabilities of input's shape; weight [C] or NULL */
pr_Tensor *pr_cross_entropy(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                            const pr_Tensor *weight, const pr_LossArgs *a);
pr_Tensor *pr_nll_loss(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                       const pr_Tensor *weight, const pr_LossArgs *a);
pr_Tensor *pr_mse_loss(pr_Runtime *rt, const pr_Tensor *input, const pr_Tensor *target,
                       int reduction);

/* {====================== resampling (ops_resample.c) ======================} */

typedef struct pr_InterpArgs {
  int32_t mode;                /* prof_InterpMode */
  int nsize;                   /* sizes given: 1 (an int) or one per spatial dim; 0: none */
  int size_scalar;             /* size was an int */
  int64_t size[3];
  int nscale;                  /* scale factors given: 1 (a number) or one per spatial dim */
  int scale_scalar;            /* scale_factor was a number */
  double scale[3];
  int align_corners;           /* -1: not given */
} pr_InterpArgs;

pr_Tensor *pr_interpolate(pr_Runtime *rt, const pr_Tensor *x, const pr_InterpArgs *a);

/* {====================== attention and recurrent layers (ops_sequence.c) ===================} */

typedef struct pr_SdpaArgs {
  const pr_Tensor *attn_mask;  /* NULL: none; bool or q's dtype, broadcast to [..., L, S] */
  double dropout_p;
  int is_causal;
  double scale;                /* NaN: 1/sqrt(E) */
} pr_SdpaArgs;

/* q [..., Hq, L, E], k [..., Hk, S, E], v [..., Hk, S, Ev] with Hq a multiple of Hk (grouped-query
   attention); other batch dims broadcast. Returns [..., Hq, L, Ev]. */
pr_Tensor *pr_sdpa(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *k, const pr_Tensor *v,
                   const pr_SdpaArgs *a);

typedef struct pr_RnnArgs {
  prof_OpKind kind;            /* PROF_OP_RNN, _GRU, _LSTM, or their _CELL kinds */
  int64_t input_size, hidden_size, num_layers;
  int bias, batch_first, bidirectional;
  int relu;                    /* RNN's nonlinearity: 0 tanh, 1 relu */
  double dropout;              /* on each layer's output but the last; the caller passes 0 out of
                                  training, as PyTorch's train flag does (layers only) */
} pr_RnnArgs;

/*
** A whole recurrent layer stack over x ([T, N, I], [N, T, I] batch first, or unbatched [T, I]);
** h0, c0 (LSTM only) may be NULL. Returns the output; *h_n and, for an LSTM, *c_n receive the
** final states (new references; NULL on failure). Records one op.
*/
pr_Tensor *pr_rnn(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0,
                  const pr_RnnArgs *a, pr_Tensor **h_n, pr_Tensor **c_n);

/* One cell step: x [N, I] or [I]; h, c (LSTM) may be NULL. Returns h'; *c_out gets c' (LSTM). */
pr_Tensor *pr_rnn_cell(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h,
                       const pr_Tensor *c, const pr_RnnArgs *a, pr_Tensor **c_out);

/* {====================== helpers model code needs (ops_sequence.c) ======================} */

/*
** The piece sizes along dim of chunk(x, n) (by_chunks) or split(x, n) (n: the split size).
** Writes at most max sizes and returns the number of pieces, or PR_ERR.
*/
int64_t pr_split_plan(pr_Runtime *rt, const pr_Tensor *x, int dim, int by_chunks, int64_t n,
                      int64_t *sizes, int64_t max);
/* n views of x along dim with the given sizes (summing to the dim's size), each recorded as a
   view, into out[0..n). Returns 0 or PR_ERR (then out holds nothing). */
int pr_split(pr_Runtime *rt, const pr_Tensor *x, int dim, int64_t n, const int64_t *sizes,
             pr_Tensor **out);
/* n tensors of one shape joined along a new dim (a copy, like cat) */
pr_Tensor *pr_stack(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int dim);
/* x where mask (bool, broadcast) is false, value where it is true; selects, computes nothing */
pr_Tensor *pr_masked_fill(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *mask, double value);
/* cond ? a : b, broadcast; a or b NULL: the number sa or sb instead */
pr_Tensor *pr_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b,
                    double sa, double sb);
/* triu (upper) or tril of the last two dims, a copy */
pr_Tensor *pr_triangle(pr_Runtime *rt, const pr_Tensor *x, int64_t diagonal, int upper);

/*
** Constructors, recorded as torch's factory ops (events only: they read nothing): pr_full is
** named name ("full", "ones", "ones_like"). On cpu the values are written in the tensor's dtype
** (integers truncated toward zero, floats rounded to nearest even); on meta only the shape
** exists.
*/
pr_Tensor *pr_arange(pr_Runtime *rt, double start, double end, double step, int dtype,
                     int device);
pr_Tensor *pr_full(pr_Runtime *rt, const char *name, int ndim, const int64_t *shape, double value,
                   int dtype, int device);

/*
** A factory op as torch records it: pr_factory_new opens name (aten::randn; "empty" alone is
** aten::empty) and makes the tensor inside its allocation part (aten::empty, or alloc's name:
** "empty_like"); pr_factory_fill opens the part that writes the values (aten::normal_, NULL:
** none); pr_factory_end closes what is open. On failure pr_factory_new has closed everything.
*/
typedef struct pr_Factory {
  prof_Op op, fill;
  int outer, filling;
} pr_Factory;
pr_Tensor *pr_factory_new(pr_Runtime *rt, pr_Factory *f, const char *name, const char *alloc,
                          int ndim, const int64_t *shape, int dtype, int device);
void pr_factory_fill(pr_Runtime *rt, pr_Factory *f, const char *fill);
void pr_factory_end(pr_Runtime *rt, pr_Factory *f);
/* numel(shape) values: fvals feed float dtypes and ivals the others; when one list is NULL the
   other feeds every dtype; both NULL: no values (meta tensors keep none anyway) */
pr_Tensor *pr_tensor_from(pr_Runtime *rt, int ndim, const int64_t *shape, const double *fvals,
                          const int64_t *ivals, int dtype, int device);

/* {====================== ops of several files ======================} */

/*
** pr_unary with both parameters (a, b as pr_cpu_unary reads them) and op flags
** (PROF_OPF_OPERATOR for -x). pr_unary(kind, x, alpha) is this with a = alpha and softplus's
** threshold 20; pr_clamp passes its bounds.
*/
pr_Tensor *pr_unary_ex(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,
                       uint32_t flags);

/* pr_rnn and pr_rnn_cell with their weights (ops_sequence.c): per layer and direction w_ih,
   w_hh[, b_ih, b_hh], as PyTorch's _flat_weights; a cpu input needs them, meta checks them
   when given (nw 0: none). */
pr_Tensor *pr_rnn_weighted(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h0,
                           const pr_Tensor *c0, int nw, const pr_Tensor *const *w,
                           const pr_RnnArgs *a, pr_Tensor **h_n, pr_Tensor **c_n);
pr_Tensor *pr_rnn_cell_weighted(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h,
                                const pr_Tensor *c, int nw, const pr_Tensor *const *w,
                                const pr_RnnArgs *a, pr_Tensor **c_out);


/*
** The values and gradients of a recurrent op (ops_rnn.c) whose results are views of one packed tensor
** R = [output | h_n | c_n] (views: those three or NULL, each gets a node handing its gradient to
** R). x [T, N, I] ([N, T, I] batch first), h0, c0 [L·D, N, H] or NULL, w the nw weights in
** PyTorch's order. 0 or PR_ERR with rt->err set.
*/
int pr_rnn_values(pr_Runtime *rt, const pr_RnnPlan *p, const char *name, int batch_first,
                  const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0, int nw,
                  const pr_Tensor *const *w, pr_Tensor *R, pr_Tensor *const *views);

/* {====================== optimizers (optim.c) ======================} */

/*
** One parameter of an optimizer step with its gradient and state, as torch.optim keeps them.
** state: SGD [0] momentum_buffer (momentum != 0 only); Adam/AdamW [0] exp_avg, [1] exp_avg_sq,
** [2] max_exp_avg_sq (amsgrad only); tensors of the parameter's shape, dtype and device, zeros
** when new. step: this update's count, from 1 (Adam's bias corrections; SGD's step 1 copies the
** gradient into the momentum buffer, as torch's clone does).
*/
typedef struct pr_OptimSlot {
  pr_Tensor *param;            /* updated in place */
  const pr_Tensor *grad;       /* NULL: the parameter is skipped, as torch skips grad None */
  pr_Tensor *state[3];
  int64_t step;
} pr_OptimSlot;

typedef struct pr_SgdArgs {
  double lr, momentum, dampening, weight_decay;
  int nesterov, maximize;
} pr_SgdArgs;

typedef struct pr_AdamArgs {
  double lr, beta1, beta2, eps, weight_decay;
  int amsgrad, maximize;
  int decoupled;               /* AdamW: p *= 1 - lr·weight_decay instead of g += weight_decay·p */
  int bias_correction;         /* m and v divided by 1 - beta^t (torch's; DeepSpeed's FusedAdam can
                                  turn it off) */
} pr_AdamArgs;

/*
** One step over n slots, in place and in float32 as torch 1.13's single-tensor loop computes it
** (cpu: contiguous float32 parameters and state; meta: nothing is computed). Records one
** PROF_OP_CUSTOM op, "sgd_step" or "adam_step", with the step's flops and bytes (optim.c derives
** them). Every slot is checked before any is updated: 0, or PR_ERR with rt->err set and nothing
** changed (except when copying a strided gradient runs out of memory halfway).
*/
int pr_sgd_step(pr_Runtime *rt, int n, const pr_OptimSlot *slots, const pr_SgdArgs *a);
int pr_adam_step(pr_Runtime *rt, int n, const pr_OptimSlot *slots, const pr_AdamArgs *a);

#endif
