/* runtime.h — the runtime's tensors and ops: shapes, dtypes, devices; every op records itself. */
#ifndef PR_RUNTIME_H
#define PR_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "prof.h"

#define PR_MAX_DIMS PROF_MAX_DIMS
#define PR_ERR (-1)

typedef enum pr_Device { PR_META = 0, PR_CPU = 1, PR_CUDA = 2, PR_DEVICE_COUNT } pr_Device;

/* Element storage of cpu tensors, shared by views; freed when the last tensor lets go. */
typedef struct pr_Storage {
  int64_t refs;
  size_t nbytes;
  void *data;
} pr_Storage;

/*
** A tensor: metadata owned by whoever holds a reference (pr_tensor_retain/release). Meta tensors
** have no storage: shapes and dtypes flow through ops, nothing is computed or allocated.
*/
typedef struct pr_Node pr_Node;

typedef struct pr_Tensor {
  int64_t refs;
  int32_t ndim;
  int32_t dtype;               /* prof_DType */
  int32_t device;              /* pr_Device */
  uint32_t flags;              /* PR_T_* */
  int64_t shape[PR_MAX_DIMS];
  int64_t stride[PR_MAX_DIMS]; /* in elements */
  int64_t offset;              /* in elements */
  pr_Storage *storage;         /* NULL on meta */
  pr_Node *grad_fn;            /* the op that made it, when it needs a gradient (owned ref) */
  struct pr_Tensor *grad;      /* accumulated gradient of a leaf that requires one (owned ref) */
} pr_Tensor;

#define PR_T_REQUIRES_GRAD 0x1u
#define PR_T_PARAMETER 0x2u

/*
** Runtime context: the recorder ops report to (NULL: not profiling) and the last error. One per
** Lua state (or host); no globals.
*/
typedef struct pr_Runtime {
  prof_State *rec;
  int32_t default_device;      /* pr_Device */
  int32_t default_dtype;       /* prof_DType */
  int32_t grad_enabled;        /* ops record their backward (torch's grad mode) */
  int32_t training;            /* unused by ops; modules carry their own mode */
  uint64_t rng[4];             /* xoshiro256** state of randn/rand/dropout */
  int64_t allocated;           /* cpu bytes allocated since the host last asked (GC pressure) */
  char err[512];
} pr_Runtime;

/* {====================== tensors (tensor.c) ======================} */

/* Sets the runtime's defaults: meta device, float32, no recorder. */
void pr_runtime_init(pr_Runtime *rt);

/* Formats rt->err and returns PR_ERR (or NULL through the pointer-returning ops). */
int pr_error(pr_Runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "meta" | "cpu" | "cuda" <-> pr_Device; parse returns -1 when unknown. */
const char *pr_device_name(int device);
int pr_device_parse(const char *name);

/*
** A new contiguous tensor with refs = 1 (cpu: storage of numel * dtype size bytes, zero-filled).
** NULL with rt->err set on a bad shape or out of memory.
*/
pr_Tensor *pr_tensor_new(pr_Runtime *rt, int ndim, const int64_t *shape, int dtype, int device);

/* A tensor with the same shape, dtype and device as like. */
pr_Tensor *pr_tensor_like(pr_Runtime *rt, const pr_Tensor *like);

/* A view of base (shares its storage) with its own shape, strides and offset. */
pr_Tensor *pr_tensor_view(pr_Runtime *rt, const pr_Tensor *base, int ndim, const int64_t *shape,
                          const int64_t *stride, int64_t offset);

pr_Tensor *pr_tensor_retain(pr_Tensor *t);
void pr_tensor_release(pr_Tensor *t);   /* NULL-safe */

int64_t pr_numel(const pr_Tensor *t);
int pr_is_contiguous(const pr_Tensor *t);

/* "[2, 3, 4]" into buf; returns buf. */
const char *pr_shape_str(const pr_Tensor *t, char *buf, size_t size);

/* Normalises a possibly negative dimension index against ndim; -1 when out of range. */
int pr_dim(int dim, int ndim);

/* {====================== recording ======================} */

/* Copies a tensor's shape and dtype into an op operand. */
void pr_operand(const pr_Tensor *t, prof_Operand *o);

/*
** Completes op (out from the result tensor) and hands it to the recorder, if any. Returns PR_ERR
** with rt->err set when the core rejects the op.
*/
int pr_record(pr_Runtime *rt, prof_Op *op, const pr_Tensor *out);

/* {====================== helpers for op implementations (op_util.c) ======================} */

/* Sets rt->err and returns NULL, for ops that return tensors. */
pr_Tensor *pr_fail(pr_Runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fails (PR_ERR) unless every non-NULL tensor shares a's device and dtype. */
int pr_check_same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b,
                  const pr_Tensor *c);

/* Starts an op: zeroes it, sets kind and copies the non-NULL inputs (in order) as operands. */
void pr_op_begin(prof_Op *op, prof_OpKind kind, const pr_Tensor *in0, const pr_Tensor *in1,
                 const pr_Tensor *in2);

/* Records op with out as its result; on failure releases out and returns NULL. */
pr_Tensor *pr_op_finish(pr_Runtime *rt, prof_Op *op, pr_Tensor *out);

/* {====================== helpers shared by the op files (op_util.c) ======================} */

/* 1 for float32, float64, float16 and bfloat16. */
int pr_is_float(int dtype);

/* Fails (PR_ERR) unless x has a floating-point dtype: "<op>: expected a floating-point <what>,
   got int64". */
int pr_check_float(pr_Runtime *rt, const char *op, const char *what, const pr_Tensor *x);

/* "[2, 3, 4]" of n dims into buf; returns buf. */
const char *pr_dims_str(int n, const int64_t *dims, char *buf, size_t size);

/*
** Right-aligned broadcasting of two shapes into shape (*n dims). Fails (PR_ERR) with
** "<op>: shapes [..] and [..] cannot be broadcast together".
*/
int pr_broadcast_shapes(pr_Runtime *rt, const char *op, int na, const int64_t *a, int nb,
                        const int64_t *b, int *n, int64_t *shape);

/* {====================== autograd (autograd.c) ======================} */

#define PR_NODE_MAX 4

/*
** The backward of one op: given g, the gradient of the node's output, sets gin[i] to a new tensor
** holding the gradient for inputs[i] (left NULL when inputs[i] needs none; shapes equal the
** inputs'). It runs with grad mode off and may use any op, which then records itself as
** backward work. Returns 0 or PR_ERR with rt->err set.
*/
typedef int (*pr_BackwardFn)(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);

/* Arguments an op keeps for its backward. */
typedef struct pr_NodeArgs {
  int64_t i[16];
  double f[8];
} pr_NodeArgs;

struct pr_Node {
  int64_t refs;
  pr_BackwardFn backward;
  const char *name;            /* "linear", for messages */
  int32_t module;              /* innermost profiled module when the forward ran, else -1 */
  int32_t n_inputs;
  pr_Tensor *inputs[PR_NODE_MAX];   /* owned refs; NULL where no gradient flows */
  pr_Tensor *saved[PR_NODE_MAX];    /* owned refs the backward reads (never the output itself) */
  pr_NodeArgs args;
  pr_Tensor *grad;             /* the output's gradient, gathered during backward */
  int32_t visit;               /* topological sort mark */
};

/* True when grad mode is on and some of the (up to 3, NULL allowed) inputs requires grad. */
int pr_needs_grad(const pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, const pr_Tensor *c);

/*
** Attaches a backward node to out: inputs that require grad are kept (others stored as NULL), out
** becomes a non-leaf that requires grad. Returns the node (owned by out) for saving tensors and
** arguments, or NULL when out of memory (rt->err set; out is then left without a gradient).
*/
pr_Node *pr_node_attach(pr_Runtime *rt, pr_Tensor *out, pr_BackwardFn backward, const char *name,
                        int n, const pr_Tensor *const *inputs);

/* Saves t for the backward (a new reference, or a storage-sharing view when t is out itself). */
void pr_node_save(pr_Node *n, int slot, pr_Tensor *t);

/* Saves only t's shape and dtype (a meta twin), for backwards that read no values. */
void pr_node_save_shape(pr_Runtime *rt, pr_Node *n, int slot, const pr_Tensor *t);

void pr_node_release(pr_Node *n);   /* NULL-safe */

/*
** Runs the backward from root: gradient g (NULL: ones, for a one-element root) flows through the
** graph in reverse topological order; leaves that require grad accumulate into ->grad. With a
** recorder, every node's backward runs inside the frames of the module that ran its forward,
** phase "backward". Unless retain_graph, the graph's saved tensors are released afterwards.
*/
int pr_backward(pr_Runtime *rt, pr_Tensor *root, const pr_Tensor *g, int retain_graph);

/* {====================== cpu helpers (cpu.c) ======================} */

/* The element pointer of a float32 cpu tensor's first element. */
float *pr_f32(const pr_Tensor *t);

/* A contiguous float32 copy of t when t is not contiguous, else t retained. */
pr_Tensor *pr_contiguous_data(pr_Runtime *rt, const pr_Tensor *t);

/* dst += src elementwise (same shape; any strides); meta: nothing. */
int pr_accumulate(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src);

/* Sum of t over the leading/broadcast dims so that it has shape like (for broadcast backward). */
pr_Tensor *pr_sum_to(pr_Runtime *rt, const pr_Tensor *t, const pr_Tensor *like);

/* out[m, n] = alpha · a[m, k] · b[k, n] + beta · out (2-D float32 views, any strides; out
   row-major). The batched form broadcasts leading dims right-aligned into a contiguous out. */
int pr_cpu_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out, float alpha,
              float beta);
int pr_cpu_batched_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,
                      float alpha, float beta);

/* out = a op b elementwise with broadcasting (b NULL: scalar s, scalar_first: s op a); out is
   contiguous of the broadcast shape, float32 or int64 (operands already of out's dtype). */
int pr_cpu_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                  double s, int scalar_first, pr_Tensor *out);

/* dst (a view of any strides) = src's values in logical order (same dtype and numel). */
int pr_cpu_copy_into(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src);

/* dst (contiguous, same numel) = src converted to dst's dtype. */
int pr_cpu_cast(pr_Runtime *rt, const pr_Tensor *src, pr_Tensor *dst);

/* Uniform doubles in [0, 1) and standard normals from the runtime's generator. */
double pr_rand_uniform(pr_Runtime *rt);
double pr_rand_normal(pr_Runtime *rt);
void pr_manual_seed(pr_Runtime *rt, uint64_t seed);

/* {========= cpu kernels of the nn ops (cpu_norm.c, cpu_loss.c, cpu_attn.c, cpu_rnn.c) ========} */

/*
** How a norm groups a contiguous x viewed as [N, C, S]: statistics per channel over the batch
** (groups 0: batch_norm) or per sample and group of C / groups channels (instance norm: groups
** C; group norm; layer and RMS norm: rows N, normalised elements C, S 1, groups 1).
*/
typedef struct pr_NormPlan {
  int64_t N, C, S, groups;
  int rms;                     /* x·rsqrt(mean(x²) + eps): no mean */
  double eps;
} pr_NormPlan;

/* The number of statistics cells (means and rstds) of a plan. */
int64_t pr_norm_cells(const pr_NormPlan *p);
/* mean and rstd per cell; var (NULL: not wanted) gets the biased variances. */
void pr_cpu_norm_stats(const pr_NormPlan *p, const float *x, float *mean, float *rstd, double *var);
/* y = (x − mean)·rstd·w[c] + b[c]; w, b NULL: none. */
void pr_cpu_norm_apply(const pr_NormPlan *p, const float *x, const float *mean, const float *rstd,
                       const float *w, const float *b, float *y);
/* gx (NULL: not wanted) by the statistics-from-input formula when input_stats, else g·w·rstd;
   gw_acc, gb_acc (double [C], NULL: not wanted) accumulate Σ g·x̂ and Σ g. */
void pr_cpu_norm_backward(const pr_NormPlan *p, const float *x, const float *g, const float *w,
                          const float *mean, const float *rstd, int input_stats, float *gx,
                          double *gw_acc, double *gb_acc);

/* Embedding rows: the check (PR_ERR naming the index and the vocabulary size), the gather into a
   contiguous out, and the scatter-add of g [numel(idx), d] into gw (idx contiguous; rows equal
   to pad skipped). */
int pr_cpu_embedding_check(pr_Runtime *rt, const pr_Tensor *idx, int64_t vocab);
int pr_cpu_embedding(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *w, pr_Tensor *out);
void pr_cpu_embedding_backward(const pr_Tensor *idx, const float *g, int64_t d, int64_t pad,
                               float *gw);

/* cross_entropy and nll_loss over a contiguous input viewed as [N, C, S] (rows N·S). */
typedef struct pr_ClassLoss {
  int64_t N, C, S;
  int32_t reduction;           /* prof_Reduction */
  int64_t ignore_index;
  double smoothing;            /* label smoothing, 0 for nll_loss */
  int soft;                    /* probability targets, shaped like the input */
  int nll;                     /* the input holds log-probabilities (nll_loss) */
} pr_ClassLoss;

/* PR_ERR naming the first class-index target outside [0, classes) that is not ignore. */
int pr_cpu_class_targets_check(pr_Runtime *rt, const char *name, const pr_Tensor *t,
                               int64_t classes, int64_t ignore);
/* out: one value per row (reduction none) or one; logp (cross_entropy) gets the log-softmax;
   *divisor what mean divides the nll term by. ti class indices (N·S) or tp probabilities. */
void pr_cpu_class_loss(const pr_ClassLoss *p, const float *x, const int64_t *ti, const float *tp,
                       const float *w, float *logp, float *out, double *divisor);
/* gx (input-shaped) and, for probabilities, gt (NULL: not wanted) from g (N·S values for none,
   else one) and the forward's logp and divisor. */
void pr_cpu_class_loss_backward(const pr_ClassLoss *p, const float *logp, const int64_t *ti,
                                const float *tp, const float *w, const float *g, double divisor,
                                float *gx, float *gt);

/* Attention scores [..., L, S] (contiguous, scaled) to probabilities in place: mask (a view
   expanded to the scores' shape, bool keep or additive float; NULL: none), is_causal, softmax;
   dropout_p > 0 writes the dropped and rescaled probabilities into A (cpu_attn.c). */
void pr_cpu_attn_softmax(pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask, int causal,
                         double dropout_p, float *A);
/* The scores' gradient gS [rows, S] from the probabilities P, the dropped A (NULL: no dropout)
   and their gradient gA. */
void pr_cpu_attn_softmax_backward(const float *P, const float *A, const float *gA, int64_t rows,
                                  int64_t S, double dropout_p, double scale, float *gS);

/* A stack of recurrent layers on the cpu (cpu_rnn.c); cells are T = L = D = 1. */
typedef struct pr_RnnPlan {
  int cell;                    /* 0 RNN, 1 GRU (r, z, n), 2 LSTM (i, f, g, o) */
  int relu;                    /* RNN's nonlinearity */
  int bias;
  int64_t T, N, In, H, L, D;   /* steps, batch, input and hidden sizes, layers, directions */
} pr_RnnPlan;

/* Floats of the flat weights (PyTorch's _flat_weights order) and of the forward's workspace. */
int64_t pr_rnn_weights_size(const pr_RnnPlan *p);
int64_t pr_rnn_workspace_size(const pr_RnnPlan *p);
/* x [T, N, I] time-major; h0, c0 [L·D, N, H] or NULL (zeros); fills ws (the last layer's output
   [T, N, D·H] at pr_rnn_output(ws)), hn and cn (NULL: not wanted). PR_ERR: out of memory. */
int pr_cpu_rnn_forward(const pr_RnnPlan *p, const float *x, const float *h0, const float *c0,
                       const float *w, float *ws, float *hn, float *cn);
const float *pr_rnn_output(const pr_RnnPlan *p, const float *ws);
/* Backpropagation through time from the gradients of the output (time-major), h_n and c_n (each
   NULL: zero) into gx, gh0, gc0 and the flat gw (each NULL: not wanted). PR_ERR: out of memory. */
int pr_cpu_rnn_backward(const pr_RnnPlan *p, const float *w, const float *ws, const float *gout,
                        const float *ghn, const float *gcn, float *gx, float *gh0, float *gc0,
                        float *gw);

/*
** The values (cpu) and gradients of a recurrent op whose results are views of one packed tensor
** R = [output | h_n | c_n] (views: those three or NULL, each gets a node handing its gradient to
** R). x [T, N, I] ([N, T, I] batch first), h0, c0 [L·D, N, H] or NULL, w the nw weights in
** PyTorch's order. 0 or PR_ERR with rt->err set.
*/
int pr_rnn_values(pr_Runtime *rt, const pr_RnnPlan *p, const char *name, int batch_first,
                  const pr_Tensor *x, const pr_Tensor *h0, const pr_Tensor *c0, int nw,
                  const pr_Tensor *const *w, pr_Tensor *R, pr_Tensor *const *views);

/* pr_rnn and pr_rnn_cell with their weights (ops_sequence.c): per layer and direction w_ih,
   w_hh[, b_ih, b_hh], as PyTorch's _flat_weights; a cpu input needs them, meta checks them
   when given (nw 0: none). pr_RnnArgs comes with ops.h, below. */
struct pr_RnnArgs;
pr_Tensor *pr_rnn_weighted(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h0,
                           const pr_Tensor *c0, int nw, const pr_Tensor *const *w,
                           const struct pr_RnnArgs *a, pr_Tensor **h_n, pr_Tensor **c_n);
pr_Tensor *pr_rnn_cell_weighted(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *h,
                                const pr_Tensor *c, int nw, const pr_Tensor *const *w,
                                const struct pr_RnnArgs *a, pr_Tensor **c_out);

/* Records work a fused cpu kernel did (a backward) as a PROF_OP_CUSTOM op named name. */
int pr_record_work(pr_Runtime *rt, const char *name, int64_t macs, int64_t flops,
                   int64_t bytes_read, int64_t bytes_written);

/* {====================== unary, softmax, prelu and selection kernels (cpu_unary.c) ===========} */

/*
** out (contiguous, x's shape) = f(x) for the unary kinds RELU … MISH and NEG … CLAMP; x float32 of
** any strides. a, b: leaky_relu's slope, elu's alpha, softplus's beta and threshold, gelu's form
** (a != 0: the tanh approximation), clamp's bounds. Fails (PR_ERR) on other dtypes.
*/
int pr_cpu_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,
                 pr_Tensor *out);

/* gx (contiguous) = g · f'(x) for the same kinds; y = f(x), read by exp, tanh, sigmoid, sqrt,
   rsqrt and reciprocal (NULL for the others). */
int pr_cpu_unary_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                          const pr_Tensor *y, const pr_Tensor *g, double a, double b,
                          pr_Tensor *gx);

/* SOFTMAX or LOG_SOFTMAX along dim d (out contiguous), and the gradient from its output y. */
int pr_cpu_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int d, pr_Tensor *out);
int pr_cpu_softmax_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *y,
                            const pr_Tensor *g, int d, pr_Tensor *gx);

/* prelu with w per channel (dim 1) or of one element; the backward writes gx = dL/dx and
   gwx = x > 0 ? 0 : x·g (w's gradient before summing to w's shape); either may be NULL. */
int pr_cpu_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, pr_Tensor *out);
int pr_cpu_prelu_backward(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                          const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gwx);

/* maximum/minimum's gradients in g's (the broadcast) shape: the winner takes g, ties g/2 each, as
   PyTorch; b NULL: the number s. ga or gb may be NULL. */
int pr_cpu_extremum_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,
                             const pr_Tensor *b, double s, const pr_Tensor *g, pr_Tensor *ga,
                             pr_Tensor *gb);

/* out (contiguous, the broadcast shape) = cond ? a : b; a or b NULL: the number sa or sb. cond
   bool; a, b and out of one dtype (any cpu dtype). */
int pr_cpu_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b,
                 double sa, double sb, pr_Tensor *out);

/*
** pr_unary with both parameters (a, b as pr_cpu_unary reads them) and op flags
** (PROF_OPF_OPERATOR for -x). pr_unary(kind, x, alpha) is this with a = alpha and softplus's
** threshold 20; pr_clamp passes its bounds. (An op: it belongs next to pr_unary in ops.h.)
*/
pr_Tensor *pr_unary_ex(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,
                       uint32_t flags);

/* {====================== cpu convolution, pooling, resampling (cpu_conv/pool/resample.c) ======} */

/*
** One convolution's geometry with its spatial axes padded to three from the front (size 1, kernel
** 1, stride 1, no padding), so 1-D to 3-D share one kernel. c and in[] describe the conv's input,
** cout and out[] its output; pad is the left padding (the right side follows from out).
*/
typedef struct pr_ConvGeom {
  int64_t n, c, cout, groups;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
} pr_ConvGeom;

/*
** Float32 kernels (operands of any strides; results contiguous and fully overwritten):
** out = conv(x, w) + b; gx = the adjoint of conv applied to gy (+ b per input channel: this is
** conv_transpose's forward); gw = the weight gradient of conv at x for output gradient gy.
** w is [cout, c/groups, *k] in all three. Returns 0 or PR_ERR (rt->err set).
*/
int pr_cpu_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                const pr_ConvGeom *g, pr_Tensor *out);
int pr_cpu_conv_input_grad(pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,
                           const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx);
int pr_cpu_conv_weight_grad(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,
                            const pr_ConvGeom *g, pr_Tensor *gw);

/* A pooling's geometry over planes (N·C) of three padded axes; k, stride, pad, dil unused by
   the adaptive pools. */
typedef struct pr_PoolGeom {
  int64_t planes;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  int count_include_pad;
} pr_PoolGeom;

/*
** kind: PROF_OP_MAX_POOL, _AVG_POOL, _ADAPTIVE_AVG_POOL or _ADAPTIVE_MAX_POOL. The max pools
** write each window's argmax (plane-local flat index, int64, out's shape) into indices when it is
** not NULL; their backward reads them. gx is overwritten.
*/
int pr_cpu_pool(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolGeom *g,
                pr_Tensor *out, pr_Tensor *indices);
int pr_cpu_pool_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *gy,
                         const pr_Tensor *indices, const pr_PoolGeom *g, pr_Tensor *gx);

/* interpolate's geometry: planes (N·C) of three padded axes; scale[] the factor the caller gave
   per axis (0: a size was given); align_corners 1 or 0. */
typedef struct pr_ResampleGeom {
  int64_t planes;
  int64_t in[3], out[3];
  double scale[3];
  int32_t mode;                /* prof_InterpMode */
  int align_corners;
} pr_ResampleGeom;

/* out = interpolate(x); gx = its adjoint applied to gy (overwritten). */
int pr_cpu_interpolate(pr_Runtime *rt, const pr_Tensor *x, const pr_ResampleGeom *g,
                       pr_Tensor *out);
int pr_cpu_interpolate_backward(pr_Runtime *rt, const pr_Tensor *gy, const pr_ResampleGeom *g,
                                pr_Tensor *gx);

#include "ops.h"

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
