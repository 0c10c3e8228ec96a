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
