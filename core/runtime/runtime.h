/* runtime.h — the runtime's tensors and ops: shapes, dtypes, devices; every op records itself. */
#ifndef PR_RUNTIME_H
#define PR_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "prof.h"

#define PR_MAX_DIMS PROF_MAX_DIMS
#define PR_ERR (-1)

#include "backend.h"

/* The registry's first device: shapes only (autograd keeps shape twins there). */
#define PR_SHAPES_DEVICE 0

typedef struct pr_Runtime pr_Runtime;

/*
** Element storage, shared by views; a block of its backend's allocator, freed through it when the
** last tensor lets go.
*/
typedef struct pr_Storage {
  int64_t refs;
  size_t nbytes;
  void *data;                  /* device memory of be */
  const pr_Backend *be;
  pr_Runtime *home;            /* whose live bytes count it (see pr_Runtime.home) */
  prof_State *rec;             /* the recorder told of the allocation (NULL: none), and of the free */
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
  int32_t device;              /* index into the runtime's device registry */
  uint32_t flags;              /* PR_T_* */
  int64_t shape[PR_MAX_DIMS];
  int64_t stride[PR_MAX_DIMS]; /* in elements */
  int64_t offset;              /* in elements */
  pr_Storage *storage;         /* NULL on a shapes-only device */
  const pr_Backend *be;        /* the device's backend (never NULL) */
  pr_Node *grad_fn;            /* the op that made it, when it needs a gradient (owned ref) */
  struct pr_Tensor *grad;      /* accumulated gradient of a leaf that requires one (owned ref) */
} pr_Tensor;

#define PR_T_REQUIRES_GRAD 0x1u
#define PR_T_PARAMETER 0x2u

#define PR_PARTS_MAX 8   /* open work parts (two per op at most): deeper ops record none */

/*
** Runtime context: the recorder ops report to (NULL: not profiling) and the last error. One per
** Lua state (or host); no globals.
*/
struct pr_Runtime {
  prof_State *rec;
  int32_t default_device;      /* a registry index */
  int32_t host_device;         /* the device whose memory is the host's: raw bytes land there */
  int32_t default_dtype;       /* prof_DType */
  int32_t grad_enabled;        /* ops record their backward (torch's grad mode) */
  int32_t training;            /* unused by ops; modules carry their own mode */
  uint64_t rng[4];             /* xoshiro256** state of randn/rand/dropout */
  int64_t allocated;           /* storage bytes allocated since the host last asked (GC pressure) */
  int64_t live_bytes;          /* storage bytes allocated and not yet freed */
  int64_t memory_bytes;        /* this machine's physical memory: larger host tensors are refused */
  pr_Runtime *home;            /* the runtime this one was copied from (itself): its live bytes and
                                  recorder see every allocation */
  const pr_Backend *devices[PR_MAX_DEVICES];   /* the device registry; index 0 is meta */
  int32_t n_devices;
  /* the open ops' torch children that do their work (aten::relu's aten::clamp_min: pr_op_open
     opens them, closing the op closes them), innermost last */
  struct pr_OpPart {
    const prof_Op *owner;
    prof_Op op;
  } parts[PR_PARTS_MAX];
  int32_t n_parts;
  char err[512];
};

/* {====================== the runtime (runtime.c) ======================} */

/* Sets the runtime's defaults: devices meta, cpu and cuda registered, meta default, float32, no
   recorder. */
void pr_runtime_init(pr_Runtime *rt);

/* {====================== errors (rt_error.c) ======================} */

/* Formats rt->err and returns PR_ERR (or NULL through the pointer-returning ops). */
int pr_error(pr_Runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets rt->err and returns NULL, for ops that return tensors. */
pr_Tensor *pr_fail(pr_Runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Puts the caller's context before what a backend call that failed left in rt->err ("to: could
   not copy values to cuda: a copy from the host on cuda: ..."). Returns PR_ERR. */
int pr_error_wrap(pr_Runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* {====================== the device registry (device.c) ======================} */

/*
** Adds be to rt's devices (a host or a spec may add its own at run time); a name already there is
** replaced for tensors made from then on. Returns the device index or PR_ERR (rt->err set) when
** the registry is full. be must outlive every tensor made on it.
*/
int pr_device_register(pr_Runtime *rt, const pr_Backend *be);

/* A registered device's index by name, -1 when unknown; its name ("?" when out of range); its
   backend (NULL when out of range). */
int pr_device_parse(const pr_Runtime *rt, const char *name);
const char *pr_device_name(const pr_Runtime *rt, int device);
const pr_Backend *pr_device_backend(const pr_Runtime *rt, int device);

/* The device names for messages: "meta, cpu or cuda" into buf; returns buf. */
const char *pr_device_list(const pr_Runtime *rt, char *buf, size_t size);

/* {====================== tensors (tensor.c) ======================} */

/*
** A new contiguous tensor with refs = 1 (a device that holds values: zero-filled storage of
** numel * dtype size bytes from its backend's allocator, reported to the recorder).
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

/* Tells the recorder (if any) that t's storage block holds category (a prof_MemCategory), for the
   memory timeline: a no-op unless memory events are on. NULL-safe. */
void pr_tensor_tag(const pr_Tensor *t, int category);

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

/* {====================== helpers for kernels (kernel_util.c) ======================} */

/* A contiguous copy of t on its device (its backend's contiguous kernel) when t is not
   contiguous, else t retained; an internal buffer, not an op. NULL with rt->err set. */
pr_Tensor *pr_contiguous_data(pr_Runtime *rt, const pr_Tensor *t);

/* {====================== helpers for op implementations (op_util.c) ======================} */

/* Fails (PR_ERR) unless every non-NULL tensor shares a's device and dtype. */
int pr_check_same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b,
                  const pr_Tensor *c);

/* Starts an op: zeroes it, sets kind and copies the non-NULL inputs (in order) as operands. */
void pr_op_begin(prof_Op *op, prof_OpKind kind, const pr_Tensor *in0, const pr_Tensor *in1,
                 const pr_Tensor *in2);

/*
** Ops are events bracketed around their kernel: check shapes, pr_op_alloc (prof_op_begin, then the
** output is allocated inside the op so its bytes are the op's), the kernel, pr_op_end
** (prof_op_end), then autograd. Every path after a successful pr_op_alloc reaches pr_op_end, so
** nothing stays open. Without a recorder they only allocate and release.
*/
/* Opens op with out [ndim, shape] of dtype, then allocates out on device. NULL (rt->err set;
   nothing open) when the recorder rejects the op or out of memory. */
pr_Tensor *pr_op_alloc(pr_Runtime *rt, prof_Op *op, int ndim, const int64_t *shape, int dtype,
                       int device);
/* pr_op_alloc's first half, for ops whose output is a view of a larger block: opens op with out
   [ndim, shape] of dtype. 0, or PR_ERR (rt->err set; nothing open). */
int pr_op_open(pr_Runtime *rt, prof_Op *op, int ndim, const int64_t *shape, int dtype);
/* Closes op; rc != 0 (the kernel failed, rt->err set) releases out and returns NULL. */
pr_Tensor *pr_op_end(pr_Runtime *rt, prof_Op *op, pr_Tensor *out, int rc);
/* An op without a kernel (a view, an identity): opens and closes op around out at once; on
   failure releases out and returns NULL. */
pr_Tensor *pr_op_finish(pr_Runtime *rt, prof_Op *op, pr_Tensor *out);
/* "<forward>_backward" as a name the recorder keeps (interned in its session: an op's name must
   outlive the op's event); "backward" when nothing records. */
const char *pr_backward_name(pr_Runtime *rt, const char *forward);

/* The fused backward work a kernel does beyond its ops, bracketed the same way: a custom op of
   these counts over the non-NULL inputs (torch's Input Dims: the gradient first) opened by
   pr_work_begin (PR_ERR: rejected, nothing open). pr_op_close closes an op opened by either
   pr_work_begin or pr_op_open and returns rc. */
int pr_work_begin(pr_Runtime *rt, prof_Op *op, const char *name, int64_t macs, int64_t flops,
                  int64_t bytes_read, int64_t bytes_written, const pr_Tensor *in0,
                  const pr_Tensor *in1, const pr_Tensor *in2);
int pr_op_close(pr_Runtime *rt, prof_Op *op, int rc);

/*
** Torch's child ops, as events only (PROF_OPF_EVENT: the flops profile does not count them). A
** part is opened inside the open op by pr_part_begin, named name over n operands, and closed by
** pr_part_end: allocations between are its own, and it carries share's counts (NULL: none), the
** enclosing op's work it does (aten::linear's aten::addmm takes the GEMM), so that sorting by
** self time lands where torch's does. pr_part_mark records one that does no work of its own, at
** an instant (aten::t, a view). Without a recorder, or while no events are recorded, nothing
** happens; parts cannot fail.
*/
void pr_part_begin(pr_Runtime *rt, prof_Op *part, const char *name, const prof_Op *share, int n,
                   const prof_Operand *in);
void pr_part_end(pr_Runtime *rt, prof_Op *part);
void pr_part_mark(pr_Runtime *rt, const char *name, int n, const prof_Operand *in);
/* t's operand with its last two dims swapped (a transpose's), and t seen as a matrix of its
   last dim (the rows are the leading dims' product). */
void pr_operand_t(const pr_Tensor *t, prof_Operand *o);
void pr_operand_2d(const pr_Tensor *t, prof_Operand *o);

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

/* Sum of t over the leading/broadcast dims so that it has shape like (for broadcast backward);
   ops_reduce.c, since it is a reduce and a reshape. */
pr_Tensor *pr_sum_to(pr_Runtime *rt, const pr_Tensor *t, const pr_Tensor *like);

/* Uniform doubles in [0, 1) and standard normals from the runtime's generator (random.c). */
double pr_rand_uniform(pr_Runtime *rt);
double pr_rand_normal(pr_Runtime *rt);
void pr_manual_seed(pr_Runtime *rt, uint64_t seed);

/* {====================== autograd (autograd.c, autograd_engine.c) ======================} */

#define PR_NODE_MAX 4

/*
** Which backward a node runs: one id per backward function (ops_*_backward.c). A node records the
** id and the engine finds the function in autograd_table.c, so forward code never references
** backward code (which calls forward ops of any family).
*/
typedef enum pr_BackwardId {
  PR_BW_NONE = 0,              /* the graph's saved tensors were freed */
  PR_BW_BINARY, PR_BW_UNARY, PR_BW_PRELU, PR_BW_SOFTMAX,     /* ops_pointwise_backward.c */
  PR_BW_REDUCE,                                              /* ops_reduce_backward.c */
  PR_BW_VIEW, PR_BW_JOIN,                                    /* ops_shape_backward.c */
  PR_BW_SELECT, PR_BW_TRIANGLE,                              /* ops_select_backward.c */
  PR_BW_MATMUL, PR_BW_ADDMM,                                 /* ops_linalg_backward.c */
  PR_BW_LINEAR,                                              /* ops_dense_backward.c */
  PR_BW_EINSUM,                                              /* ops_einsum_backward.c */
  PR_BW_CONV, PR_BW_CONV_TRANSPOSE, PR_BW_POOL,              /* ops_conv_backward.c */
  PR_BW_NORM, PR_BW_EMBEDDING, PR_BW_DROPOUT,                /* ops_norm_backward.c */
  PR_BW_CLASS_LOSS, PR_BW_MSE_LOSS,                          /* ops_loss_backward.c */
  PR_BW_INTERPOLATE,                                         /* ops_resample_backward.c */
  PR_BW_SDPA,                                                /* ops_sequence_backward.c */
  PR_BW_RNN, PR_BW_RNN_PACK, PR_BW_RNN_UNPACK,               /* ops_rnn_backward.c */
  PR_BW_COUNT
} pr_BackwardId;

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
  int32_t backward;            /* a pr_BackwardId */
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
pr_Node *pr_node_attach(pr_Runtime *rt, pr_Tensor *out, int backward, const char *name, int n,
                        const pr_Tensor *const *inputs);

/* Saves t for the backward (a new reference, or a storage-sharing view when t is out itself). */
void pr_node_save(pr_Node *n, int slot, pr_Tensor *t);

/* Saves only t's shape and dtype (a meta twin), for backwards that read no values. */
void pr_node_save_shape(pr_Runtime *rt, pr_Node *n, int slot, const pr_Tensor *t);

/* Node lifetimes live with tensors' (tensor.c): a tensor owns its grad_fn, a node its inputs.
   pr_node_clear drops what only the backward needed (inputs, saved tensors, gradient); the node
   stays linked for messages. */
void pr_node_clear(pr_Node *n);
void pr_node_release(pr_Node *n);   /* NULL-safe */

/*
** Runs the backward from root: gradient g (NULL: ones, for a one-element root) flows through the
** graph in reverse topological order; leaves that require grad accumulate into ->grad. With a
** recorder, every node's backward runs inside the frames of the module that ran its forward,
** phase "backward". Unless retain_graph, the graph's saved tensors are released afterwards.
*/
int pr_backward(pr_Runtime *rt, pr_Tensor *root, const pr_Tensor *g, int retain_graph);

/* The backward function of an id other than PR_BW_NONE (autograd_table.c). */
pr_BackwardFn pr_backward_fn(int id);

#include "plans.h"
#include "kernels.h"
#include "ops.h"

#endif
