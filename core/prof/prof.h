/* prof.h — the one public header of profrun's profiler core, for C, C++ and CUDA hosts. */
#ifndef PROF_H
#define PROF_H

/*
** A session's life (examples/host_c/mlp.c is a whole host):
**
**   prof_new ........................ one state per session; allocator injectable
**   prof_config_load / prof_set_* ... conventions, event capacity, shapes, memory (while idle)
**   prof_module_add, prof_rule_register, prof_ignore_apply ... the tree and its policy
**   prof_start (or a prof_Scheduler: prof_scheduler_new / _step / _close)
**     prof_module_enter / exit, prof_op_record or prof_op_begin / end, prof_mem_*,
**     prof_range_push / pop, prof_instant, prof_counter .......... any thread, hot path
**   prof_stop (takes the snapshot; or prof_snapshot while active)
**   prof_module_info / prof_totals / prof_event_at ............ read the snapshot
**   prof_write_deepspeed_report, prof_write_profile_json (or prof_write_report of a document),
**   prof_write_chrome_trace_file
**   prof_close
**
** Conventions every entry follows:
** * Fallible calls return PROF_OK (0) or a PROF_ERR* status; the tag [may fail: ...] lists which
**   and when, and prof_errmsg(S) says what, naming the argument, key path or file. Nothing
**   prints, exits or longjmps. Hot-path calls return nothing and keep a sticky error instead
**   (prof_check).
** * Ownership: strings and structs passed in are copied unless the entry says it keeps the
**   pointer (names of ranges, instants and counters: a literal or prof_intern's). Strings handed
**   out belong to S and live until prof_clear or prof_close unless said otherwise; structs with
**   a size field may grow at their end (set size, or use the *_init function).
** * Threads. Hot path (any thread, no lock, no allocation in steady state): module enter / exit,
**   op record / begin / end, mem alloc / free / tag, ranges, instants, counters, prof_now_ns,
**   prof_set_phase (per thread). Cold path (any thread, a lock): prof_module_add,
**   prof_module_enter_named, prof_module_set_flags, prof_rule_register, prof_intern. While no
**   other thread records (they read or zero every recorder, or change what recording reads):
**   prof_set_conventions, prof_start, prof_stop, prof_reset, prof_clear, prof_snapshot,
**   prof_check, the readers (prof_module_info, prof_totals, prof_event_at, ...), the writers,
**   prof_ignore_apply and the scheduler. Only while idle: prof_set_event_capacity,
**   prof_set_record_shapes, prof_set_stack_hook, prof_set_memory_events. Pure, any thread: the
**   name / parse helpers, prof_op_kind_name, prof_schedule_torch, prof_schedule_transition,
**   prof_config_key, prof_version. prof_errmsg's text is S's last failure: with several threads
**   failing at once, read it on the thread that failed, before its next failing call.
*/

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* {====================== version and export ======================} */

#define PROF_VERSION_MAJOR 0
#define PROF_VERSION_MINOR 1
#define PROF_VERSION_PATCH 0
#define PROF_VERSION "0.1.0"

#if defined(__GNUC__)
#define PROF_API __attribute__((visibility("default")))
#else
#define PROF_API
#endif

/* Returns PROF_VERSION of the library actually linked. */
PROF_API const char *prof_version(void);

/* {====================== status codes ======================} */

enum {
  PROF_OK = 0,      /* success */
  PROF_ERRMEM,      /* the allocator returned NULL */
  PROF_ERRARG,      /* a bad argument: unknown id, inconsistent shapes, ... */
  PROF_ERRCONFIG,   /* a config file or key is wrong (the message names the key path) */
  PROF_ERRIO,       /* a file could not be read or written */
  PROF_ERRSTATE,    /* the call does not fit the session's state (e.g. stop before start) */
  PROF_ERRDEVICE,   /* no GPU capture here: no CUPTI library, driver or device (the message says
                       which), or a core built without the CUPTI headers */
  PROF_ERREXIST     /* the output exists and the call was told to keep it (prof_commit_new_file) */
};

/* {====================== state ======================} */

typedef struct prof_State prof_State;

/*
** Allocator, shaped like lua_Alloc: nsize == 0 frees ptr and returns NULL; otherwise it returns a
** block of nsize bytes (ptr == NULL: a new block; else ptr resized from osize) or NULL on failure.
*/
typedef void *(*prof_Alloc)(void *ud, void *ptr, size_t osize, size_t nsize);

/*
** A state is one profiling session. What it registers (modules, rules, conventions) is shared by
** every thread and may be changed from any thread (cold path: a lock). Each thread that records
** (module enter/exit, ops, memory) gets its own recorder on first use, found through thread-local
** storage: the recording hot path takes no lock and allocates nothing in steady state (a
** recorder's per-module counters grow once when it first meets a module registered after it was
** made). Module ids belong to the session, so what many threads record merges into one tree.
** prof_start, prof_stop, prof_reset, prof_clear and prof_snapshot read or zero every recorder:
** call them while no other thread records. With several recording threads the allocator must be
** thread-safe (the default one is).
**
** Creates a profiler state. f == NULL uses realloc/free. Returns NULL when even the state itself
** cannot be allocated. The state is idle (not profiling) until prof_start.
*/
PROF_API prof_State *prof_new(prof_Alloc f, void *ud);

/* Releases the state and everything it owns. NULL-safe. */
PROF_API void prof_close(prof_State *S);

/*
** The message of the last failed call on S (empty string when none). Valid until the next call
** that fails. Never NULL.
*/
PROF_API const char *prof_errmsg(const prof_State *S);

/* The host's monotonic clock in nanoseconds; every profrun timestamp is on it. */
PROF_API int64_t prof_now_ns(void);

/* {====================== conventions ======================} */

typedef enum prof_Conventions {
  PROF_CONV_EXACT = 0,     /* count what the runtime executes (default) */
  PROF_CONV_DEEPSPEED = 1  /* count exactly what DeepSpeed's Flops Profiler counts */
} prof_Conventions;

/* Sets the counting convention of subsequent op records. [may fail: PROF_ERRARG] */
PROF_API int prof_set_conventions(prof_State *S, prof_Conventions conv);
PROF_API prof_Conventions prof_get_conventions(const prof_State *S);

/* Name <-> value ("exact", "deepspeed"). parse returns -1 for an unknown name. */
PROF_API const char *prof_conventions_name(prof_Conventions conv);
PROF_API int prof_conventions_parse(const char *name);

/* {====================== session lifecycle ======================} */

/*
** prof_start zeroes every counter (the tree stays) and begins accumulating; prof_stop ends it and
** leaves counters readable. Starting twice, or stopping an idle state, is PROF_ERRSTATE.
** Profiling the same workload twice gives the same counts.
*/
PROF_API int prof_start(prof_State *S);
PROF_API int prof_stop(prof_State *S);
PROF_API int prof_is_active(const prof_State *S);

/*
** Events buffered per recording thread (module calls and ops with begin/end times), preallocated
** when a thread's recorder is made or at the next prof_start; 0 (the default) buffers nothing
** and keeps only running totals. A full buffer counts further events as dropped and keeps
** running. [may fail: PROF_ERRARG for a negative capacity, PROF_ERRSTATE while active]
*/
PROF_API int prof_set_event_capacity(prof_State *S, int64_t capacity);

/*
** With on, buffered op events keep their inputs' shapes and dtypes (torch's record_shapes): up to
** PROF_MAX_OPERANDS operands each, in an arena beside the event buffer (12 int64 per event on
** average; an op that does not fit keeps its event without shapes, counted in
** prof_shapes_dropped). [may fail: PROF_ERRSTATE while active]
*/
PROF_API int prof_set_record_shapes(prof_State *S, int on);
PROF_API int64_t prof_shapes_dropped(const prof_State *S);

/*
** with_stack: fn is called on the recording thread at every buffered op and range (never when
** events are off) and returns its source location: a string from prof_intern(S, ...) or a static
** one (the event keeps the pointer), e.g. "train.lua:12;model.lua:40", innermost frame first, or
** NULL for none. NULL fn (the default) turns it off. [may fail: PROF_ERRSTATE while active]
*/
typedef const char *(*prof_StackFn)(void *ud, prof_State *S);
PROF_API int prof_set_stack_hook(prof_State *S, prof_StackFn fn, void *ud);

/* Zeroes counters, events and every thread's module call stack; keeps the registered tree. */
PROF_API void prof_reset(prof_State *S);

/*
** Frees what each thread's recorder keeps per module (its counters, made again by the next
** window's first records) once a window is over: prof_stop's snapshot holds the counts, and
** prof_snapshot keeps it until the next prof_start or prof_reset. For a large model read after
** the window (a million modules: 100 bytes each). Call it as prof_stop, while no other thread
** records. [may fail: PROF_ERRSTATE while active or while a module call is open on a thread]
*/
PROF_API int prof_trim(prof_State *S);

/* Drops the whole module tree (ids become invalid) and zeroes everything. */
PROF_API void prof_clear(prof_State *S);

/* Which pass the calling thread's subsequent records belong to; counts are kept per phase. */
typedef enum prof_Phase {
  PROF_PHASE_FORWARD = 0,
  PROF_PHASE_BACKWARD = 1,
  PROF_PHASE_STEP = 2,
  PROF_PHASE_COUNT = 3
} prof_Phase;

/*
** Per calling thread (its recorder is made here when it has none; out of memory or an out-of-range
** phase leaves the phase as it was). get: the calling thread's, PROF_PHASE_FORWARD before any.
*/
PROF_API void prof_set_phase(prof_State *S, prof_Phase phase);
PROF_API prof_Phase prof_get_phase(const prof_State *S);

/* {====================== module tree ======================} */

typedef int32_t prof_ModuleId;
#define PROF_NO_MODULE ((prof_ModuleId)-1)

/* Module flags. */
#define PROF_MODULE_IGNORED 0x1u  /* see prof_module_set_flags */
#define PROF_MODULE_RULE 0x2u     /* counted by a flop rule: the ops inside it do not count */

/*
** Adds a module under parent (PROF_NO_MODULE: a new root) and returns its id in *id. name is the
** attribute name under the parent ("features", "0"; "" for a root), type the class name
** ("Conv2d"); both are copied. params is the module's parameter count including descendants,
** shared parameters counted once. The tree holds 10,000 levels below a root: a deeper module is
** refused with a message naming it, the limit and its parent's (shortened) path.
** [may fail: PROF_ERRMEM, PROF_ERRARG]
*/
PROF_API int prof_module_add(prof_State *S, prof_ModuleId parent, const char *name,
                             const char *type, int64_t params, prof_ModuleId *id);

/*
** PROF_MODULE_IGNORED: under "exact" conventions the module and everything it runs leave both the
** rows and the totals; under "deepspeed" the row is hidden and the ops its own body runs count
** for its parent (its children keep their rows), as DeepSpeed does.
** PROF_MODULE_RULE: a flop rule (prof_rule_register) counts the module's forward; the ops its
** forward runs, children included, do not count. Its backward is counted op by op. A module that
** is both ignored and ruled is ignored: the rule does not run, in either convention.
** [may fail: PROF_ERRARG]
*/
PROF_API int prof_module_set_flags(prof_State *S, prof_ModuleId id, uint32_t flags);

/*
** Hot path: marks the start and end of one call of module id on the calling thread. They never
** fail loudly; enter allocates only when the thread's frame stack doubles (from 256 open calls,
** amortized, up to 65,536). An unknown id, a deeper stack or an exit that does not match the
** innermost enter sets a sticky error (see prof_check) and is otherwise survived. An exit of an
** outer module closes the modules still open inside it. A module re-entered while already on the
** stack (recursion, or a shared instance called inside itself) is counted once.
*/
PROF_API void prof_module_enter(prof_State *S, prof_ModuleId id);
PROF_API void prof_module_exit(prof_State *S, prof_ModuleId id);

/*
** For hosts without a pre-registered tree: enters the child of the innermost open module (or the
** root named name) called name, adding it on first use. [may fail: PROF_ERRMEM]
*/
PROF_API int prof_module_enter_named(prof_State *S, const char *name, const char *type,
                                     prof_ModuleId *id);

/* The calling thread's innermost open module, or PROF_NO_MODULE. */
PROF_API prof_ModuleId prof_module_current(const prof_State *S);

/*
** Writes the dotted path of module id ("layer1.0.conv1"; "" for a root) into buf, truncated to
** size - 1 characters. Returns the full path length, or -1 for an unknown id.
*/
PROF_API int prof_module_path(const prof_State *S, prof_ModuleId id, char *buf, size_t size);

/*
** Returns the sticky hot-path error of any thread (PROF_OK if none; the first thread's in
** creation order when several have one) and clears them all; the message says what.
*/
PROF_API int prof_check(prof_State *S);

/* {====================== operations ======================} */

#define PROF_MAX_DIMS 8
#define PROF_MAX_OPERANDS 4

typedef enum prof_DType {
  PROF_F32 = 0, PROF_F64, PROF_F16, PROF_BF16, PROF_I64, PROF_I32, PROF_I8, PROF_U8, PROF_BOOL,
  PROF_DTYPE_COUNT
} prof_DType;

/* Bytes per element; name as PyTorch spells it ("float32"); parse returns -1 when unknown. */
PROF_API int prof_dtype_size(prof_DType dt);
PROF_API const char *prof_dtype_name(prof_DType dt);
PROF_API int prof_dtype_parse(const char *name);

/* The shape and element type of one tensor operand. ndim 0 is a 0-d tensor (one element). */
typedef struct prof_Operand {
  int32_t ndim;
  int32_t dtype;                 /* prof_DType */
  int64_t dim[PROF_MAX_DIMS];
} prof_Operand;

/*
** Op kinds. The comment says which operands and arguments each kind reads; "x" is in[0].
** Unless noted, out must hold the output shape the op produced.
*/
typedef enum prof_OpKind {
  PROF_OP_CUSTOM = 0,        /* counts given by the caller in macs/flops/bytes_* */
  /* dense algebra */
  PROF_OP_LINEAR,            /* x [..., in], weight [out, in]; PROF_OPF_BIAS: bias [out] in[2] */
  PROF_OP_MATMUL,            /* torch.matmul(a, b): broadcasting, 1-D operands */
  PROF_OP_MM,                /* a [n, m], b [m, p] */
  PROF_OP_BMM,               /* a [b, n, m], b [b, m, p] */
  PROF_OP_ADDMM,             /* in[0] added term (broadcast to [n, p]), mat1 [n, m], mat2 [m, p] */
  PROF_OP_BADDBMM,           /* in[0] added term, batch1 [b, n, m], batch2 [b, m, p] */
  PROF_OP_EINSUM,            /* equation, two operands */
  /* convolution */
  PROF_OP_CONV,              /* x [N, C, *sp], weight [Cout, C/groups, *k]; stride, padding (per
                                side, resolved), dilation, groups; PROF_OPF_BIAS */
  PROF_OP_CONV_TRANSPOSE,    /* x [N, C, *sp], weight [C, Cout/groups, *k]; stride, padding,
                                output_padding, dilation, groups; PROF_OPF_BIAS */
  /* pooling: kernel, stride, padding, dilation as for conv */
  PROF_OP_MAX_POOL,
  PROF_OP_AVG_POOL,
  PROF_OP_ADAPTIVE_AVG_POOL, /* output size taken from out */
  PROF_OP_ADAPTIVE_MAX_POOL,
  /* activations (x only; PRELU: weight in[1]) */
  PROF_OP_RELU, PROF_OP_RELU6, PROF_OP_LEAKY_RELU, PROF_OP_PRELU, PROF_OP_ELU, PROF_OP_GELU,
  PROF_OP_SILU, PROF_OP_TANH, PROF_OP_SIGMOID, PROF_OP_SOFTPLUS, PROF_OP_HARDSWISH, PROF_OP_MISH,
  PROF_OP_SOFTMAX,           /* x; dim */
  PROF_OP_LOG_SOFTMAX,       /* x; dim */
  /* normalisation; PROF_OPF_AFFINE: a weight, PROF_OPF_BIAS: a bias */
  PROF_OP_BATCH_NORM,        /* x [N, C, *]; PROF_OPF_TRAINING: batch statistics */
  PROF_OP_LAYER_NORM,        /* x; dim = number of trailing normalised dims */
  PROF_OP_GROUP_NORM,        /* x [N, C, *]; groups */
  PROF_OP_INSTANCE_NORM,     /* x [N, C, *] */
  PROF_OP_RMS_NORM,          /* x; dim = number of trailing normalised dims */
  /* lookup and regularisation */
  PROF_OP_EMBEDDING,         /* indices in[0], weight [V, D] in[1] */
  PROF_OP_DROPOUT,           /* x; PROF_OPF_TRAINING when it really drops */
  /* elementwise binary (right-aligned broadcasting). in[1].ndim < 0: the other operand is a
     Python-style scalar. PROF_OPF_OPERATOR: written as an operator (a + b), not a function */
  PROF_OP_ADD, PROF_OP_SUB, PROF_OP_MUL, PROF_OP_DIV, PROF_OP_POW, PROF_OP_MAXIMUM,
  PROF_OP_MINIMUM,
  /* elementwise unary, one evaluation per element */
  PROF_OP_NEG, PROF_OP_EXP, PROF_OP_LOG, PROF_OP_SQRT, PROF_OP_RSQRT, PROF_OP_ABS, PROF_OP_SIN,
  PROF_OP_COS, PROF_OP_ERF, PROF_OP_RECIPROCAL, PROF_OP_CLAMP,
  /* reductions: x, out */
  PROF_OP_SUM, PROF_OP_MEAN, PROF_OP_AMAX, PROF_OP_VAR,
  /* resampling: x, out; mode; PROF_OPF_SIZE_GIVEN with PROF_OPF_SIZE_SCALAR for an int size,
     else scale[] (scale_count of them; one value means "the same on every axis") */
  PROF_OP_INTERPOLATE,
  /* attention: q [..., Hq, L, E], k [..., Hk, S, E], v [..., Hk, S, Ev]; PROF_OPF_CAUSAL,
     PROF_OPF_MASK (an additive or boolean attn_mask), PROF_OPF_TRAINING (dropout_p > 0) */
  PROF_OP_SDPA,
  /* losses: logits or log-probabilities [N, C, *] in[0], target in[1]; reduction */
  PROF_OP_CROSS_ENTROPY, PROF_OP_NLL_LOSS, PROF_OP_MSE_LOSS,
  /* recurrent layers: x in[0] ([T, N, I], or [N, T, I] with PROF_OPF_BATCH_FIRST); hidden_size,
     num_layers, PROF_OPF_BIAS, PROF_OPF_BIDIRECTIONAL. Cells: x [N, I] */
  PROF_OP_RNN, PROF_OP_GRU, PROF_OP_LSTM, PROF_OP_RNN_CELL, PROF_OP_GRU_CELL, PROF_OP_LSTM_CELL,
  /* data movement: VIEW moves nothing (view, reshape of contiguous, transpose, permute, expand);
     COPY reads in[0..n) and writes out (cat, contiguous, clone, index_select) */
  PROF_OP_VIEW, PROF_OP_COPY,
  PROF_OP_KIND_COUNT
} prof_OpKind;

/* Op flags */
#define PROF_OPF_BIAS          0x001u
#define PROF_OPF_AFFINE        0x002u
#define PROF_OPF_TRAINING      0x004u
#define PROF_OPF_CAUSAL        0x008u
#define PROF_OPF_MASK          0x010u
#define PROF_OPF_BIDIRECTIONAL 0x020u
#define PROF_OPF_BATCH_FIRST   0x040u
#define PROF_OPF_OPERATOR      0x080u
#define PROF_OPF_SIZE_GIVEN    0x100u
#define PROF_OPF_SIZE_SCALAR   0x200u
/* An event only (PROF_OP_CUSTOM): the activity profiler records it, the flops profile does not
   count it. Torch's child ops (aten::linear's aten::t and aten::addmm), factory ops and autograd's
   rows are such events. Inside an open op it is a part of that op: the counts it carries move from
   the enclosing op's event to its own, so the events still sum to the profile's totals. */
#define PROF_OPF_EVENT         0x400u

/* Interpolation modes (PROF_OP_INTERPOLATE). */
typedef enum prof_InterpMode {
  PROF_INTERP_NEAREST = 0, PROF_INTERP_LINEAR, PROF_INTERP_BILINEAR, PROF_INTERP_BICUBIC,
  PROF_INTERP_TRILINEAR, PROF_INTERP_AREA
} prof_InterpMode;

/* Loss reductions. */
typedef enum prof_Reduction {
  PROF_REDUCE_MEAN = 0, PROF_REDUCE_SUM, PROF_REDUCE_NONE
} prof_Reduction;

/*
** One operation. Zero-initialise it, fill kind, operands and the arguments the kind reads (zero
** means the PyTorch default: stride 1, dilation 1, groups 1, padding 0), then call prof_op_count
** or prof_op_record. The counts are outputs, except for PROF_OP_CUSTOM where the caller sets them.
*/
typedef struct prof_Op {
  size_t size;                 /* sizeof(prof_Op) of the caller's header; 0 (zero-initialised) is
                                  taken as this header's: fields added later read as zero */
  prof_OpKind kind;
  const char *name;            /* display name; NULL: the kind's name. Buffered events keep the
                                  pointer: a literal or prof_intern's */
  uint32_t flags;              /* PROF_OPF_* */
  int32_t ninputs;
  prof_Operand in[PROF_MAX_OPERANDS];
  prof_Operand out;
  int64_t kernel[3], stride[3], padding[3], dilation[3], output_padding[3];
  int64_t groups;
  int64_t dim;                 /* softmax dim; normalised dims for layer/RMS norm */
  int64_t hidden_size, num_layers;
  int32_t mode;                /* prof_InterpMode or prof_Reduction */
  int32_t scale_count;
  double scale[3];             /* interpolate scale factors */
  const char *equation;        /* einsum */
  int32_t device;              /* where it runs: PROF_DEVICE_CPU (0, also meta), PROF_DEVICE_CUDA */
  /* outputs */
  int64_t macs;                /* multiply-accumulates */
  int64_t flops;               /* = 2 * macs + other floating-point work */
  int64_t bytes_read, bytes_written;
  /* outputs of prof_op_begin / prof_op_end */
  uint64_t correlation;        /* unique within the session; CUPTI's external correlation id */
  int64_t t_begin_ticks, t_end_ticks;     /* the recorder's clock; buffered events carry ns */
  int64_t bytes_allocated, bytes_freed;   /* reported by prof_mem_* while the op was open */
  int64_t parts_macs, parts_flops;        /* what its PROF_OPF_EVENT parts carried onto their */
  int64_t parts_bytes_read, parts_bytes_written;   /* own events (its event keeps the rest) */
} prof_Op;

/* Devices of ops and memory events. */
#define PROF_DEVICE_CPU 0
#define PROF_DEVICE_CUDA 1

/* "cpu" / "cuda" <-> PROF_DEVICE_*; parse returns -1 when unknown (NULL: the host, cpu). */
PROF_API const char *prof_device_name(int32_t device);
PROF_API int prof_device_parse(const char *name);

/* The kind's name as PyTorch's functional spells it ("linear", "conv", "scaled_dot_product_attention"). */
PROF_API const char *prof_op_kind_name(prof_OpKind kind);

/*
** Computes op->macs, flops, bytes_read and bytes_written under S's conventions (PROF_OP_CUSTOM:
** leaves them). Pure: touches no counter. [may fail: PROF_ERRARG when operands contradict the kind]
*/
PROF_API int prof_op_count(prof_State *S, prof_Op *op);

/*
** Counts op (as prof_op_count) and, while the session is active, adds it to the innermost open
** module (ops outside every module go to the session's "unattributed" totals). Hot path: no
** allocation. [may fail: PROF_ERRARG]
*/
PROF_API int prof_op_record(prof_State *S, prof_Op *op);

/*
** An op bracketed around its kernel, on the calling thread. prof_op_begin counts op (as
** prof_op_count), gives it a correlation id and its begin time, and makes it the thread's open op:
** allocations and frees reported until prof_op_end are its own. The caller then runs the kernel
** and calls prof_op_end with the same op, which stamps the end time and adds the counts to the
** innermost open module (as prof_op_record does). Ops may nest (an op built from ops), up to
** PROF_OP_NEST_MAX deep; deeper ones are counted but not open for memory. While the session is
** idle both calls only count. A PROF_OPF_EVENT op is not counted, and is recorded only while the
** thread records events. Hot path: no allocation, no lock.
** [prof_op_begin may fail: PROF_ERRARG when operands contradict the kind; nothing is open then]
*/
#define PROF_OP_NEST_MAX 16
PROF_API int prof_op_begin(prof_State *S, prof_Op *op);
PROF_API void prof_op_end(prof_State *S, prof_Op *op);

/*
** Reports that bytes of device memory at ptr were allocated or freed (a backend's allocator calls
** these for every block). Attributed to the calling thread's open op and innermost module; the
** session keeps a running total and peak per device. Hot path: no allocation, no lock.
*/
PROF_API void prof_mem_alloc(prof_State *S, int32_t device, const void *ptr, int64_t bytes);
PROF_API void prof_mem_free(prof_State *S, int32_t device, const void *ptr, int64_t bytes);

/* What a block of memory holds: torch's memory-timeline categories, in its order. */
typedef enum prof_MemCategory {
  PROF_MEM_UNKNOWN = 0,
  PROF_MEM_PARAMETER = 1,
  PROF_MEM_OPTIMIZER_STATE = 2,
  PROF_MEM_INPUT = 3,
  PROF_MEM_TEMPORARY = 4,
  PROF_MEM_ACTIVATION = 5,     /* saved by autograd for the backward (the runtime tags these) */
  PROF_MEM_GRADIENT = 6
} prof_MemCategory;

/*
** Says that the block at ptr (an address prof_mem_alloc was given) holds category from now on: a
** PROF_EVENT_MEMORY_TAG event, so a memory timeline built afterwards knows what a block was even
** when it is freed before anyone asks. Only while memory events are on; otherwise nothing.
** Hot path: no allocation, no lock.
*/
PROF_API void prof_mem_tag(prof_State *S, int32_t device, const void *ptr, int32_t category);

/* "parameter", "optimizer_state", ... ("unknown" for PROF_MEM_UNKNOWN and anything out of range). */
PROF_API const char *prof_mem_category_name(prof_MemCategory c);

/* {====================== flop rules ======================} */

/* What a flop rule returns for one call of a module. */
typedef struct prof_RuleCounts {
  int64_t macs, flops, bytes_read, bytes_written;
} prof_RuleCounts;

/*
** One forward call of a ruled module, as its rule sees it. size is sizeof(prof_RuleCall) of the
** library that made it: fields past it are absent. Operands are those the host passed to
** prof_module_apply_rule (none when the call ended with a plain prof_module_exit).
*/
typedef struct prof_RuleCall {
  size_t size;
  prof_ModuleId id;
  const char *type;
  prof_Conventions conventions;
  int32_t ninputs, noutputs;
  const prof_Operand *inputs, *outputs;
  void *host;                  /* what the host passed along (the Lua binding: its call's values) */
} prof_RuleCall;

/*
** A flop rule: called once per forward call of a module of its type, while the module is still
** open, with *out zeroed. It fills *out and returns 0, or returns non-zero to refuse (the call's
** counts are then 0 and the failure is reported, naming the module). Negative counts are refused
** the same way. Lua rule scripts are registered through this same registry (a trampoline).
*/
typedef int (*prof_RuleFn)(void *ud, prof_State *S, const prof_RuleCall *call,
                           prof_RuleCounts *out);

/*
** Registers fn for modules of type (exact class name); modules of that type, already added or added
** later, get PROF_MODULE_RULE. A second registration for a type replaces the first; fn == NULL
** removes it. [may fail: PROF_ERRMEM, PROF_ERRARG]
*/
PROF_API int prof_rule_register(prof_State *S, const char *type, prof_RuleFn fn, void *ud);

/*
** Runs the rule of module id's type for the current call, giving it the call's operands; id must be
** the calling thread's innermost open module. Call it before prof_module_exit; an exit whose rule
** has not run this way runs it without operands (then a failure is sticky, see prof_check). Does
** nothing when the session is idle, the module is ignored, this is not a forward call, or the
** type has no rule. [may fail: PROF_ERRARG when the rule refuses or returns a negative count,
** PROF_ERRSTATE when id is not innermost]
*/
PROF_API int prof_module_apply_rule(prof_State *S, prof_ModuleId id, const prof_Operand *inputs,
                                    int32_t ninputs, const prof_Operand *outputs,
                                    int32_t noutputs, void *host);

/* {====================== ignore filters and schedules ======================} */

/*
** Every hook a Lua script can fill has a C twin: flop rules (above), ignore filters and schedules
** (here), report writers (prof_ReportFn, below).
**
** An ignore filter, the C twin of flops_profiler.ignore_modules (whose lists the Lua face applies
** through prof_ignore_apply too): called with each module's id, dotted path ("" for a root) and
** type; non-zero means ignore it (PROF_MODULE_IGNORED, whose semantics prof_module_set_flags
** gives). path and type are valid during the call only.
*/
typedef int (*prof_IgnoreFn)(void *ud, prof_State *S, prof_ModuleId id, const char *path,
                             const char *type);

/*
** Calls fn once for every module registered now, in pre-order, and sets PROF_MODULE_IGNORED on
** each it names (flags it does not name are left as they are), so call it after the tree is
** registered and before prof_start. Returns the number of modules ignored, or a negative status.
** Cold path; not while recording. [may fail: PROF_ERRARG for a NULL fn, PROF_ERRMEM]
*/
PROF_API int32_t prof_ignore_apply(prof_State *S, prof_IgnoreFn fn, void *ud);

/* torch.profiler.ProfilerAction: what a schedule says about one step. */
typedef enum prof_Action {
  PROF_ACTION_NONE = 0,        /* not profiling */
  PROF_ACTION_WARMUP = 1,      /* about to record: nothing is kept yet */
  PROF_ACTION_RECORD = 2,      /* recording */
  PROF_ACTION_RECORD_AND_SAVE = 3 /* recording; the window closes and is handed on after it */
} prof_Action;

/* "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE" (as torch prints them); NULL when out of range. */
PROF_API const char *prof_action_name(prof_Action a);

/*
** A schedule, the C twin of a schedule script (scripts/schedules/): step (0, 1, ...) -> action.
** step_ns is how long the step that just ended took (-1 before the first), for schedules that
** react to time (scripts/schedules/slow_steps.lua).
*/
typedef prof_Action (*prof_ScheduleFn)(void *ud, int64_t step, int64_t step_ns);

/* torch.profiler.schedule's arguments; zero-initialise, then set active >= 1. */
typedef struct prof_Schedule {
  int64_t wait, warmup, active, repeat, skip_first, skip_first_wait;
} prof_Schedule;

/*
** torch's schedule(), to the letter: skip_first steps NONE; then cycles of wait NONE, warmup
** WARMUP, active - 1 RECORD and one RECORD_AND_SAVE (a non-zero skip_first_wait skips the first
** cycle's wait); after repeat cycles NONE forever (0: cycle forever). A prof_ScheduleFn whose ud is
** a const prof_Schedule *; lua/prof/schedule.lua's prof.schedule{...} calls it too (one machine).
** Pure, any thread. An invalid schedule (active < 1, a negative field) is NONE at every step.
*/
PROF_API prof_Action prof_schedule_torch(void *ud, int64_t step, int64_t step_ns);

/* What a transition between two steps' actions does, in order (torch's _transit_action). */
typedef enum prof_ScheduleItem {
  PROF_ITEM_END = 0,           /* terminates a list */
  PROF_ITEM_PREPARE,           /* set up for a window (nothing to do in the core) */
  PROF_ITEM_START,             /* open the recording window: prof_start */
  PROF_ITEM_STOP,              /* close it: prof_stop */
  PROF_ITEM_TRACE_READY,       /* hand the closed window on (torch's on_trace_ready) */
  PROF_ITEM_WARN               /* the schedule skipped a phase (WARMUP or RECORD followed by NONE) */
} prof_ScheduleItem;

/*
** The items of the transition prev -> cur, PROF_ITEM_END-terminated (static data); exiting: cur
** = -1 (leaving the profiler, torch's None). lua/prof/schedule.lua's transition table reads it.
*/
PROF_API const prof_ScheduleItem *prof_schedule_transition(int prev, int cur);

/*
** Called when a window closes (PROF_ITEM_TRACE_READY), with the session stopped and its snapshot
** readable: where a host writes its report, profile and trace. step is the window's last step.
** Non-zero aborts: prof_scheduler_step returns PROF_ERRIO and the message names the step.
*/
typedef int (*prof_WindowFn)(void *ud, prof_State *S, int64_t step);

/* A host-driven schedule over S (torch.profiler's profile object with schedule= and on_trace_ready=). */
typedef struct prof_Scheduler prof_Scheduler;

/*
** Creates a scheduler for S (S must outlive it) and applies step 0's action (a window that opens
** at step 0 starts now). ready may be NULL. Returns NULL when out of memory or fn is NULL (see
** prof_errmsg), or when step 0's transition fails. Cold path; the thread that calls it and
** prof_scheduler_step is the one that may call prof_start/stop: no other thread records meanwhile.
*/
PROF_API prof_Scheduler *prof_scheduler_new(prof_State *S, prof_ScheduleFn fn, void *ud,
                                            prof_WindowFn ready, void *ready_ud);

/*
** Ends the current step (torch's p.step()): asks fn for the next step's action and runs the
** transition (start, stop, ready). Call it between steps, while no module or range is open.
** [may fail: PROF_ERRSTATE from prof_start/stop, PROF_ERRIO when ready fails]
*/
PROF_API int prof_scheduler_step(prof_Scheduler *sch);

/* The step now running (0 before the first prof_scheduler_step) and its action. */
PROF_API int64_t prof_scheduler_step_num(const prof_Scheduler *sch);
PROF_API prof_Action prof_scheduler_action(const prof_Scheduler *sch);

/*
** Leaves the schedule (torch's profiler __exit__): an open window is stopped and handed to ready,
** then the scheduler is freed. NULL-safe. Returns what the exit transition returned (the
** scheduler is freed either way).
*/
PROF_API int prof_scheduler_close(prof_Scheduler *sch);

/* {====================== reading results ======================} */

/* Counters of one module in one phase. Inclusive of descendants unless named self_. */
typedef struct prof_Counts {
  int64_t calls;
  int64_t macs, flops, bytes_read, bytes_written;
  int64_t self_macs, self_flops, self_bytes_read, self_bytes_written;
  int64_t time_ns;             /* inclusive wall time of its calls */
} prof_Counts;

typedef struct prof_ModuleInfo {
  size_t size;                 /* set by the caller to sizeof(prof_ModuleInfo); 0 means that too */
  prof_ModuleId id, parent;
  const char *name, *type;     /* owned by S; valid until prof_clear or prof_close */
  int32_t depth;               /* root 0 */
  uint32_t flags;
  int64_t params;
  prof_Counts phase[PROF_PHASE_COUNT];
  int32_t hidden;              /* left out of reports: ignored, or (exact) inside an ignored module */
  int64_t params_counted;      /* params less those of hidden subtrees under exact conventions */
  /* GPU time (device capture, prof_capture_open): the summed durations of the kernels, copies
     and memsets launched while the module was the innermost one (self_) or it or a descendant
     (inclusive), per phase, in ns of the device. Sums, not a wall interval: work on concurrent
     streams adds up (torch's device_time_total). 0 without capture. */
  int64_t device_time_ns[PROF_PHASE_COUNT];
  int64_t self_device_time_ns[PROF_PHASE_COUNT];
  int64_t device_ops[PROF_PHASE_COUNT];      /* how many kernels, copies and memsets, inclusive */
} prof_ModuleInfo;

/* Number of registered modules; ids are 0 .. count-1 in registration order. */
PROF_API int32_t prof_module_count(const prof_State *S);

/* Writes up to n ids of module id's children, in insertion order, into ids and returns how many
   children it has (0 for an unknown id). */
PROF_API int32_t prof_module_children(const prof_State *S, prof_ModuleId id, prof_ModuleId *ids,
                                      int32_t n);

/*
** Merges what every thread recorded into the session's snapshot: inclusive and self counts per
** phase, never-called containers summed from their children, the ignore semantics of both
** conventions. prof_stop takes one; call it to read counts while the session is active.
** [may fail: PROF_ERRMEM]
*/
PROF_API int prof_snapshot(prof_State *S);

/* Fills *info for module id from the snapshot. [may fail: PROF_ERRARG] */
PROF_API int prof_module_info(const prof_State *S, prof_ModuleId id, prof_ModuleInfo *info);

/*
** Writes up to n module ids in pre-order (each root, then its children in insertion order) into
** ids and returns the total number of modules.
*/
PROF_API int32_t prof_module_preorder(const prof_State *S, prof_ModuleId *ids, int32_t n);

/*
** The ids at pre-order positions first .. first + n - 1 (fewer at the end) into ids; returns how
** many were written. Taken from the snapshot's copy of the order when the tree has not changed
** since (prof_snapshot), so that reading a million modules in slices costs one walk, not one per
** slice; else walked.
*/
PROF_API int32_t prof_module_preorder_from(const prof_State *S, int32_t first, prof_ModuleId *ids,
                                           int32_t n);

/*
** Session totals per phase from the snapshot: every recorded op, inside modules or not. Here the self_* fields hold
** the part recorded outside every module ("unattributed"); calls and time_ns are 0.
*/
PROF_API void prof_totals(const prof_State *S, prof_Phase phase, prof_Counts *out);

/*
** 1 when some count of the snapshot (a module's, a total, params) passed INT64_MAX: such counts
** saturate at INT64_MAX (INT64_MIN for negative ones) instead of wrapping, and stay there, so a
** report can say the numbers are lower bounds. 0 otherwise. Never fails.
*/
PROF_API int prof_counts_saturated(const prof_State *S);

/* {====================== events ======================} */

typedef enum prof_EventKind {
  PROF_EVENT_MODULE = 0,       /* one counted module call: its inclusive counts */
  PROF_EVENT_OP = 1,           /* one op (prof_op_begin .. prof_op_end, or prof_op_record) */
  PROF_EVENT_RANGE = 2,        /* a user range, prof_range_push .. prof_range_pop */
  PROF_EVENT_INSTANT = 3,      /* prof_instant: a point in time (t_end_ns == t_begin_ns) */
  PROF_EVENT_COUNTER = 4,      /* prof_counter: value is the counter's value at t_begin_ns */
  PROF_EVENT_MEMORY = 5,       /* an allocation (value > 0) or free (value < 0) of device memory;
                                  total: the session's live bytes on that device after it */
  PROF_EVENT_MEMORY_TAG = 6,   /* prof_mem_tag: value is the prof_MemCategory of the block at address */
  /* device events (prof_capture_open): they follow every host event in prof_event_at's order,
     device is PROF_DEVICE_CUDA, times are mapped onto prof_now_ns's clock, and the fields after
     address say where they ran and what launched them */
  PROF_EVENT_KERNEL = 7,       /* a kernel (CUPTI CONCURRENT_KERNEL); name: as CUPTI gives it */
  PROF_EVENT_MEMCPY = 8,       /* a copy; bytes, copy_kind, src_kind, dst_kind */
  PROF_EVENT_MEMSET = 9,       /* a memset; bytes, value: the byte value set, dst_kind */
  PROF_EVENT_RUNTIME = 10,     /* a CUDA runtime (api 0) or driver (api 1) call on a host thread
                                  (cudaLaunchKernel, cudaMemcpyAsync, ...): thread is the
                                  recorder of the op that made it, cbid CUPTI's callback id */
  PROF_EVENT_GPU_MEMORY = 11,  /* a device allocation (value > 0) or release (value < 0) seen by
                                  CUPTI (MEMORY2); total: live bytes on device_index after it;
                                  address: the block; t_end_ns == t_begin_ns */
  PROF_EVENT_OVERHEAD = 12     /* CUPTI's own overhead (OVERHEAD records); name: its kind */
} prof_EventKind;

/* What a copy copies (CUPTI's CUpti_ActivityMemcpyKind values). */
typedef enum prof_CopyKind {
  PROF_COPY_UNKNOWN = 0, PROF_COPY_HTOD = 1, PROF_COPY_DTOH = 2, PROF_COPY_HTOA = 3,
  PROF_COPY_ATOH = 4, PROF_COPY_ATOA = 5, PROF_COPY_ATOD = 6, PROF_COPY_DTOA = 7,
  PROF_COPY_DTOD = 8, PROF_COPY_HTOH = 9, PROF_COPY_PTOP = 10
} prof_CopyKind;

/* Where memory lives (CUPTI's CUpti_ActivityMemoryKind values). */
typedef enum prof_MemKind {
  PROF_MEMKIND_UNKNOWN = 0, PROF_MEMKIND_PAGEABLE = 1, PROF_MEMKIND_PINNED = 2,
  PROF_MEMKIND_DEVICE = 3, PROF_MEMKIND_ARRAY = 4, PROF_MEMKIND_MANAGED = 5,
  PROF_MEMKIND_DEVICE_STATIC = 6, PROF_MEMKIND_MANAGED_STATIC = 7
} prof_MemKind;

/* "HtoD", "DtoH", ... as Kineto names copies ("Memcpy HtoD"); "Unknown" out of range. */
PROF_API const char *prof_copy_kind_name(int32_t kind);
/* "Pageable", "Pinned", "Device", ... as Kineto writes them ("Pageable -> Device"). */
PROF_API const char *prof_mem_kind_name(int32_t kind);

/* One buffered event; size as in prof_ModuleInfo. Times are on prof_now_ns's clock. */
typedef struct prof_Event {
  size_t size;
  prof_EventKind kind;
  const char *name;            /* op name or kind name; for a module, its type */
  int32_t op_kind;             /* prof_OpKind, for ops */
  prof_ModuleId module;        /* the module, or the innermost one the op ran in */
  int32_t thread;              /* the recorder's index: 0, 1, ... in order of first record */
  prof_Phase phase;
  int32_t device;
  uint64_t correlation;
  int64_t t_begin_ns, t_end_ns;
  int64_t macs, flops, bytes_read, bytes_written, bytes_allocated, bytes_freed;
  int64_t value, total;        /* counters and memory events; for a range, its number
                                  (prof_range_push_numbered: the name is "name#value") or -1 */
  const char *stack;           /* the stack hook's location (prof_set_stack_hook), or NULL */
  int32_t ninputs;             /* ops under record_shapes: input[0 .. ninputs) are set; else 0 */
  prof_Operand input[PROF_MAX_OPERANDS];
  uint64_t address;            /* memory events and tags: the block's address (pairs a free with its
                                  allocation); 0 for every other kind */
  /* device events only (0 for host events); for them correlation is the op's correlation that
     launched them (its "External id"), module and phase those of the innermost module then */
  int32_t device_index;        /* the CUDA device ordinal (Kineto's GPU pid) */
  int32_t context;             /* CUPTI context id */
  int32_t stream;              /* CUPTI stream id (Kineto's GPU tid) */
  int32_t api;                 /* PROF_EVENT_RUNTIME: 0 runtime, 1 driver */
  uint64_t flow;               /* CUPTI correlation id: joins a launch to its kernel (ac2g) */
  uint64_t range;              /* the innermost user range's correlation at the launch (the
                                  PROF_EVENT_RANGE event whose correlation equals it), or 0 */
  int64_t bytes;               /* copies and memsets */
  int32_t copy_kind;           /* prof_CopyKind (copies) */
  int32_t src_kind, dst_kind;  /* prof_MemKind (copies; memsets: dst_kind; GPU memory: dst_kind) */
  int32_t grid[3], block[3];   /* kernels */
  int32_t registers;           /* kernels: registers per thread */
  int32_t shared_memory;       /* kernels: static + dynamic shared memory per block, bytes */
  int32_t cbid;                /* PROF_EVENT_RUNTIME: CUPTI callback id; OVERHEAD: its kind */
} prof_Event;

/* Events buffered by every thread; dropped ones are counted in prof_events_dropped. */
PROF_API int64_t prof_event_count(const prof_State *S);
PROF_API int64_t prof_events_dropped(const prof_State *S);

/*
** Fills *ev with event i (threads in creation order, each in record order). name and stack are
** the pointers recorded: a module's type or a kind's name (owned by S), or the string the host
** passed (prof_Op.name, a range's name, the stack hook's result), which must outlive the read.
** [may fail: PROF_ERRARG]
*/
PROF_API int prof_event_at(const prof_State *S, int64_t i, prof_Event *ev);

/*
** The peak of bytes live on device (PROF_DEVICE_*) since prof_start, over every thread (an
** allocation on one thread and its free on another balance). Tracked while memory events are on
** (prof_set_memory_events), as torch's profile_memory; 0 otherwise.
*/
PROF_API int64_t prof_memory_peak(const prof_State *S, int32_t device);

/*
** With on, every prof_mem_alloc/free while the session is active updates the session's live
** bytes and peak and is buffered as a PROF_EVENT_MEMORY event (attributed to the open op and
** module); off (the default) keeps only the open op's bytes, at no atomic's cost.
** [may fail: PROF_ERRSTATE while active]
*/
PROF_API int prof_set_memory_events(prof_State *S, int on);

/* {====================== ranges, instants, counters ======================} */

/*
** A copy of name owned by the session, the same pointer for equal strings, valid until
** prof_close: the names ranges, instants and counters take must outlive the session, and a
** literal or an interned string does. Cold path (a lock). NULL when out of memory.
*/
PROF_API const char *prof_intern(prof_State *S, const char *name);

/*
** A user range on the calling thread (torch's record_function, NVTX's push/pop): pop closes the
** innermost open range and buffers it as one PROF_EVENT_RANGE. Ranges nest up to PROF_RANGE_MAX
** deep; a deeper push or a pop with none open sets a sticky error (prof_check). While the session
** is idle both do nothing. Hot path: no allocation, no lock.
*/
#define PROF_RANGE_MAX 64
PROF_API void prof_range_push(prof_State *S, const char *name);
PROF_API void prof_range_pop(prof_State *S);

/*
** A range named "name#n" (torch's ProfilerStep#N) without interning a string per n: the event
** keeps name and n (prof_Event.value), so a run of a million steps holds one name.
*/
PROF_API void prof_range_push_numbered(prof_State *S, const char *name, int64_t n);

/* A point in time, and a named value at a point in time, on the calling thread. Hot path. */
PROF_API void prof_instant(prof_State *S, const char *name);
PROF_API void prof_counter(prof_State *S, const char *name, int64_t value);

/*
** The one part of a prof_State a host may read, its first member: nonzero while a window records
** (prof_start .. prof_stop; the functions above do nothing otherwise). prof_recording reads it
** without a call, so that marks in an idle session cost a load and a branch (ITT's domain flag
** works the same way); the rest of prof_State stays opaque. Any thread, hot path.
*/
typedef struct prof_StateHead {
  int recording;               /* written by prof_start and prof_stop only */
} prof_StateHead;

/* inline where the language has it (C99, C++), GCC's spelling under C89 */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define PROF_INLINE static inline
#elif defined(__GNUC__)
#define PROF_INLINE static __inline__
#else
#define PROF_INLINE static
#endif

PROF_INLINE int prof_recording(const prof_State *S) {
#if defined(__GNUC__) && defined(__cplusplus)
  return __atomic_load_n(&reinterpret_cast<const prof_StateHead *>(S)->recording, __ATOMIC_RELAXED);
#elif defined(__GNUC__)
  return __atomic_load_n(&((const prof_StateHead *)(const void *)S)->recording, __ATOMIC_RELAXED);
#else
  (void)S;
  return 1;   /* no atomic builtin: the call decides, as it does anyway */
#endif
}

/*
** Annotation macros: the calls above behind prof_recording's test, each argument evaluated once
** (while idle too: they are inline functions' arguments) and no call made while idle. Compiled to
** nothing, arguments included, when PROF_DISABLE is defined, so a host can leave its marks in
** place and build them out.
*/
#ifdef PROF_DISABLE
#define PROF_RANGE_PUSH(S, name) ((void)0)
#define PROF_RANGE_POP(S) ((void)0)
#define PROF_INSTANT(S, name) ((void)0)
#define PROF_COUNTER(S, name, value) ((void)0)
#else
PROF_INLINE void prof_mark_range_push(prof_State *S, const char *name) {
  if (prof_recording(S)) prof_range_push(S, name);
}
PROF_INLINE void prof_mark_range_pop(prof_State *S) {
  if (prof_recording(S)) prof_range_pop(S);
}
PROF_INLINE void prof_mark_instant(prof_State *S, const char *name) {
  if (prof_recording(S)) prof_instant(S, name);
}
PROF_INLINE void prof_mark_counter(prof_State *S, const char *name, int64_t value) {
  if (prof_recording(S)) prof_counter(S, name, value);
}
#define PROF_RANGE_PUSH(S, name) prof_mark_range_push((S), (name))
#define PROF_RANGE_POP(S) prof_mark_range_pop(S)
#define PROF_INSTANT(S, name) prof_mark_instant((S), (name))
#define PROF_COUNTER(S, name, value) prof_mark_counter((S), (name), (value))
#endif

/* {====================== device capture (CUPTI) ======================} */

/*
** GPU activity (kernels, copies, memsets, runtime/driver launch calls, device memory, CUPTI
** overhead) captured into the session as device events (PROF_EVENT_KERNEL ..). One capture per
** state, from one source:
**   PROF_CAPTURE_CUPTI   CUPTI's activity API, libcupti.so.13 loaded at run time (the library
**                        and profrun load on machines without CUDA);
**   PROF_CAPTURE_REPLAY  recorded activity records fed by prof_capture_replay_* (tests, saved
**                        captures): the same decoding, correlation and time mapping as CUPTI's;
**   PROF_CAPTURE_NULL    nothing is captured (the capture API works, no device event comes).
**
** Lifecycle (Kineto's): prof_capture_open enables the source at once, typically during a
** schedule's warmup, so that CUPTI's start-up costs land before the window. The window is
** prof_start .. prof_stop: device records outside it are dropped and counted (out_of_window).
** Completed buffers are decoded off the hot path by prof_capture_drain (call it at step
** boundaries), by prof_snapshot and prof_stop; prof_stop flushes CUPTI first (synchronize the
** device before it, as torch does, so that work in flight lands in the window).
** prof_capture_close disables the source and tears CUPTI down (no lingering slowdown).
**
** Correlation: while a capture is open, every op (prof_op_begin .. prof_op_end) pushes its
** correlation, every range (prof_range_push .. pop) a range correlation, and every module call
** its module and phase as CUPTI external correlation ids (kinds CUSTOM0, CUSTOM1, CUSTOM2), so
** each device event is attributed to its op (prof_Event.correlation), innermost range
** (prof_Event.range, and the range event's correlation), module and phase. With no capture open
** these hooks cost one predictable branch. Open a capture outside every module call and range,
** while no other thread records (as prof_start). Kernel names are demangled when the C++
** runtime (libstdc++.so.6) is there, as Kineto shows them.
**
** Time: CUPTI's default clock is kept (no timestamp callback: on CUDA 13.0 that path zeroes
** kernel timestamps) and mapped onto prof_now_ns's clock by (cuptiGetTimestamp, prof_now_ns)
** pairs read at open, prof_start, every drain and prof_stop: piecewise linear between adjacent
** pairs, the nearest segment's line outside them, an offset alone with one pair. A record with a
** zero or inverted time is counted (bad_timestamps) and not emitted.
*/
typedef enum prof_CaptureKind {
  PROF_CAPTURE_NONE = -1,      /* prof_capture_kind: no capture open */
  PROF_CAPTURE_NULL = 0,
  PROF_CAPTURE_REPLAY = 1,
  PROF_CAPTURE_CUPTI = 2
} prof_CaptureKind;

/* Activity kinds a capture enables (prof_CaptureOptions.activities). */
#define PROF_CAPTURE_KERNEL 0x01u
#define PROF_CAPTURE_MEMCPY 0x02u
#define PROF_CAPTURE_MEMSET 0x04u
#define PROF_CAPTURE_RUNTIME 0x08u   /* runtime and driver API calls (launches) */
#define PROF_CAPTURE_MEMORY 0x10u    /* MEMORY2: device allocations and releases */
#define PROF_CAPTURE_OVERHEAD 0x20u
#define PROF_CAPTURE_ALL 0x3fu

typedef struct prof_CaptureOptions {
  size_t size;                 /* set by prof_capture_options_init */
  unsigned activities;         /* PROF_CAPTURE_*; PROF_CAPTURE_ALL */
  int64_t buffer_bytes;        /* one activity buffer: 4 MiB (CUPTI advises 1-10 MB) */
  int32_t buffers;             /* the preallocated pool: 8 buffers; CUPTI asking for one more
                                  while all are in use is refused and counted (dropped_pool) */
  int64_t device_events;       /* decoded device events kept: 1 << 18; more are counted
                                  (dropped_events) */
  int64_t correlations;        /* CUPTI correlation ids remembered for attribution: 1 << 18; the
                                  most recent half to all of them are kept, so a device record
                                  decoded more than that many launches after its own goes
                                  unattributed */
  /* NULL (default), or a path: every record decoded (in the window or not, bad times included),
     the clock pairs and the window are saved there as a "profrun.cupti/1" fixture, written while
     the capture runs and committed atomically by prof_capture_close (a capture on a real GPU
     then replays on any machine). The string is copied. [open may fail: PROF_ERRIO] */
  const char *save_path;
} prof_CaptureOptions;

/* Fills *opt with the defaults above. */
PROF_API void prof_capture_options_init(prof_CaptureOptions *opt);

/*
** Whether CUPTI capture can run here: 1, or 0 with the reason written into why (truncated to
** size; NULL or 0 to skip): "built without the CUPTI headers", "libcupti.so.13 not found
** (dlopen: ...)", "no CUDA driver (libcuda.so.1: ...)", "no CUDA device (cuDeviceGetCount: 0)".
** Loads the libraries the first time (cold). Never fails otherwise.
*/
PROF_API int prof_capture_available(char *why, size_t size);

/*
** Opens a capture of kind on S (opt NULL: defaults) and enables it now; device events then
** reach the session from the next prof_start on. [may fail: PROF_ERRSTATE when one is open,
** PROF_ERRARG for bad options, PROF_ERRMEM, PROF_ERRDEVICE when CUPTI cannot run (the message
** is prof_capture_available's reason, or CUPTI's own error naming the call)]
*/
PROF_API int prof_capture_open(prof_State *S, prof_CaptureKind kind, const prof_CaptureOptions *opt);

/* The open capture's kind, or PROF_CAPTURE_NONE. */
PROF_API prof_CaptureKind prof_capture_kind(const prof_State *S);

/*
** Decodes every buffer completed so far into device events and samples a clock pair; with
** CUPTI also hands over the buffers CUPTI has completed (not the ones being filled). Cold: call
** it between steps, never inside an op. Nothing to do without a capture.
** [may fail: PROF_ERRDEVICE when CUPTI fails]
*/
PROF_API int prof_capture_drain(prof_State *S);

/*
** Disables the source, flushes and decodes what is left, releases CUPTI (cuptiFinalize) and the
** buffers. Device events already decoded stay readable until the next prof_start or
** prof_reset. NULL-safe; nothing to do without a capture. Never fails.
*/
PROF_API void prof_capture_close(prof_State *S);

/*
** Feeds one recorded activity buffer to a PROF_CAPTURE_REPLAY capture, as CUPTI's completion
** callback would: a record stream, each record a uint32 CUpti_ActivityKind, a uint32 size and
** size bytes of the CUDA 13 record struct (CUpti_ActivityKernel10, Memcpy6, Memset4, API,
** Memory4, ExternalCorrelation, Overhead3; the kind field included), padded to 8 bytes. The
** buffer is copied and decoded at the next drain; kernel name pointers in it must stay valid
** until then (literals, or prof_intern's). dropped: what cuptiActivityGetNumDroppedRecords reported
** with it. [may fail: PROF_ERRSTATE without a replay capture, PROF_ERRARG for a malformed stream
** (the message gives the byte offset), PROF_ERRMEM when the pool is exhausted (counted too)]
*/
PROF_API int prof_capture_replay_buffer(prof_State *S, const void *records, size_t len,
                                        int64_t dropped);

/*
** A (device clock, host clock) pair for a replay capture's time map, as the CUPTI source samples
** (cuptiGetTimestamp, prof_now_ns). Pairs must come in increasing device time.
** [may fail: PROF_ERRSTATE without a replay capture, PROF_ERRARG out of order]
*/
PROF_API int prof_capture_replay_clock(prof_State *S, int64_t device_ns, int64_t host_ns);

/*
** A replay capture's window, overriding prof_start/prof_stop's (a saved capture keeps its own).
** [may fail: PROF_ERRSTATE without a replay capture, PROF_ERRARG when end < begin]
*/
PROF_API int prof_capture_replay_window(prof_State *S, int64_t begin_ns, int64_t end_ns);

/*
** Replays a fixture (spec/fixtures/cupti/README.md gives the format) into a replay capture:
** JSON text ("schema": "profrun.cupti/1": clock pairs, an optional window, buffers of records
** by field name) converted to the CUDA 13 record structs and fed as prof_capture_replay_buffer;
** origin names it in messages. The _file form reads the fixture at path (a save_path capture's
** output included). [may fail: PROF_ERRSTATE, PROF_ERRARG naming origin, the record and the
** key, PROF_ERRIO, PROF_ERRMEM]
*/
PROF_API int prof_capture_replay_json(prof_State *S, const char *text, size_t len,
                                      const char *origin);
PROF_API int prof_capture_replay_file(prof_State *S, const char *path);

/*
** A launch synthesised at the calling thread's current context, for tests and specs without a
** GPU: a replay capture builds the records CUPTI would write for it (a cudaLaunchKernel,
** cudaMemcpyAsync or cudaMemsetAsync runtime record from now to now + launch_ns, one
** EXTERNAL_CORRELATION record per op, range and module correlation its hooks hold now, and the
** kernel, copy or memset record from the call's end + delay_ns, lasting duration_ns), in device
** time equal to host time, and queues them as one buffer (one pool buffer per launch: drain
** between many). It returns once that work has ended on the host clock (it waits, as a launch
** and a synchronize would), so the records lie inside the window and inside the op around the
** call. Use it without replay clock pairs. A replay capture's hooks keep one set of
** correlation stacks: synthesise launches from one recording thread.
*/
typedef struct prof_ReplayLaunch {
  size_t size;                 /* sizeof(prof_ReplayLaunch); 0 means that too */
  prof_EventKind kind;         /* PROF_EVENT_KERNEL (0 means it too), MEMCPY or MEMSET */
  const char *name;            /* kernel name (copied); NULL: "replay_kernel" */
  int64_t launch_ns;           /* the runtime call's duration; 0: 1000 */
  int64_t delay_ns;            /* from the call's end to the device's start; 0 */
  int64_t duration_ns;         /* on the device; 0: 1000 */
  int32_t device, stream;      /* 0 and 7 when both are 0 */
  int64_t bytes;               /* copies and memsets */
  int32_t copy_kind;           /* prof_CopyKind; 0: HtoD */
  int32_t grid[3], block[3];   /* kernels; zeros: 1 */
} prof_ReplayLaunch;

/* [may fail: PROF_ERRSTATE without a replay capture, PROF_ERRMEM when the pool is exhausted]
   *flow (may be NULL) receives the CUPTI correlation id it used. */
PROF_API int prof_capture_replay_launch(prof_State *S, const prof_ReplayLaunch *l, uint64_t *flow);

/* What a capture saw since the last prof_start (or since open, before any); dropped_cupti and
   dropped_pool count since open (CUPTI drops most during warmup). */
typedef struct prof_CaptureStats {
  size_t size;                 /* set by the caller to sizeof(prof_CaptureStats); 0 means that too */
  int64_t buffers;             /* buffers decoded */
  int64_t records;             /* activity records read */
  int64_t kernels, memcpys, memsets, runtime_calls, memory_records, overheads; /* emitted */
  int64_t external_correlations;
  int64_t dropped_cupti;       /* records CUPTI dropped (cuptiActivityGetNumDroppedRecords) */
  int64_t dropped_pool;        /* buffer requests refused: every pool buffer was in use */
  int64_t dropped_events;      /* decoded records with no room left among the device events */
  int64_t out_of_window;       /* records outside prof_start .. prof_stop */
  int64_t bad_timestamps;      /* records with a zero or inverted time */
  int64_t unknown_records;     /* kinds the decoder does not read */
  int64_t device_ops;          /* kernels + memcpys + memsets emitted */
  int64_t attributed_op, attributed_range, attributed_module; /* of device_ops */
  int64_t device_time_ns;      /* summed duration of device_ops */
  int64_t clock_pairs;         /* time-map samples */
} prof_CaptureStats;

/* Fills *st (zeros without a capture ever opened). Never fails. */
PROF_API void prof_capture_stats(const prof_State *S, prof_CaptureStats *st);

/* {====================== JSON profile ======================} */

/*
** Run facts the core cannot know; the JSON writer copies them into the summary. A negative count
** or a NaN time means "not measured" and is written as null.
*/
typedef struct prof_RunInfo {
  size_t size;                 /* set by prof_runinfo_init */
  const char *device;          /* "meta", "cpu", "cuda" */
  int64_t world_size, dp_size, mp_size, batch_size;
  double fwd_latency_s, bwd_latency_s, step_latency_s, iter_latency_s, samples_per_s;
  int64_t bwd_flops;
} prof_RunInfo;

/* Fills *info with "not measured" everywhere and sizes of 1. */
PROF_API void prof_runinfo_init(prof_RunInfo *info);

/* Receives output bytes; returns 0 on success, non-zero to abort the write. */
typedef int (*prof_WriteFn)(void *ud, const char *data, size_t len);

/*
** Writes the "profrun.profile/1" JSON document (README, "JSON profile") for the current counters
** through fn: prof_write_report of the snapshot's document, info supplying the summary's run
** facts. [may fail: PROF_ERRIO when fn fails, PROF_ERRMEM]
*/
PROF_API int prof_write_profile_json(prof_State *S, const prof_RunInfo *info, prof_WriteFn fn,
                                     void *ud);

/*
** Writes text to path atomically: a temporary file beside it, then rename; missing parent
** directories are created. A path that exists and is not a regular file is never replaced: a
** character device or FIFO (/dev/null, a pipe) is written in place, a directory, block device or
** socket is refused. A symbolic link is followed (the file it names is replaced, not the link).
** On failure nothing is left at path or beside it, and directories made for it are removed; the
** message names path (its middle shortened when long) and the reason (e.g. "No space left on
** device"). [may fail: PROF_ERRIO]
*/
PROF_API int prof_write_file_atomic(prof_State *S, const char *path, const char *data, size_t len);

/* The longest path an output file may have, its terminating NUL included. */
#define PROF_PATH_SIZE 4096

/*
** An output staged for a later commit (a transaction over several files: all appear or none).
** tmp is a temporary beside the target, ".<name>.profrun-<pid>-<n>": unique per process (created
** with O_EXCL), hidden, and removed by a later staging in the same directory once process <pid> is
** gone (a run killed by SIGKILL). tmp is "" when the target is a device or FIFO: nothing can be
** staged for it, and the commit writes it in place (prof_write_file_atomic).
*/
typedef struct prof_Staged {
  char target[PROF_PATH_SIZE]; /* the file replaced: path, or what the symbolic link path names */
  char tmp[PROF_PATH_SIZE];
  char made[PROF_PATH_SIZE];   /* the topmost directory created for the target; "" when none */
  int existed;                 /* a regular file was at the target before */
} prof_Staged;

/*
** Stages text for path into st (see prof_Staged): parents are created and the text written to
** st->tmp. On failure nothing is left behind. [may fail: PROF_ERRIO]
*/
PROF_API int prof_stage_file(prof_State *S, const char *path, const char *data, size_t len,
                             prof_Staged *st);

/*
** Renames st->tmp over st->target (nothing to do when st->tmp is ""); messages name path. On
** failure st is discarded. [may fail: PROF_ERRIO]
*/
PROF_API int prof_commit_file(prof_State *S, const char *path, const prof_Staged *st);

/*
** Drops a staged file: removes st->tmp and the directories made for its target, deepest first,
** that are empty. Async-signal-safe (unlink and rmdir only): a signal handler may call it. Never fails.
*/
PROF_API void prof_discard_file(const prof_Staged *st);

/*
** prof_commit_file without replacing: an existing file at st->target is kept, st discarded and
** PROF_ERREXIST returned (a name taken since staging, by this process or another: the commit is
** the check, so two writers never both win). [may fail: PROF_ERREXIST, PROF_ERRIO]
*/
PROF_API int prof_commit_new_file(prof_State *S, const char *path, const prof_Staged *st);

/* prof_discard_file, and S's output watch told that st is done with. Never fails. */
PROF_API void prof_abandon_file(prof_State *S, const prof_Staged *st);

/*
** Every temporary S makes for an output (the writers', prof_stage_file's) is told to the watch
** when it exists (PROF_OUTPUT_STAGED) and when it has been renamed into place or removed
** (PROF_OUTPUT_DONE), on the thread that writes. A host that must leave no temporary behind when
** it is interrupted keeps a copy of each open one and calls prof_discard_file on it from its
** signal handler or atexit (profrun's exit guard does). Outputs written in place (a device, a
** FIFO) have no temporary. fn NULL: no watch. The struct is copied. Cold path.
*/
typedef enum prof_OutputEvent { PROF_OUTPUT_STAGED, PROF_OUTPUT_DONE } prof_OutputEvent;
typedef void (*prof_OutputWatchFn)(void *ud, prof_OutputEvent event, const prof_Staged *st);
typedef struct prof_OutputWatch {
  prof_OutputWatchFn fn;
  void *ud;
} prof_OutputWatch;

PROF_API void prof_set_output_watch(prof_State *S, const prof_OutputWatch *watch);

/* {====================== text report ======================} */

/* What a report writer is told; prof_report_options_init gives DeepSpeed's defaults. */
typedef struct prof_ReportOptions {
  size_t size;                 /* set by prof_report_options_init */
  int64_t profile_step;        /* "Profile Summary at step N"; 1 */
  int64_t module_depth;        /* depths of the aggregated profile; -1: all */
  int64_t top_modules;         /* entries per depth; 1 */
  int detailed;                /* print the tree; 1 */
  int timed;                   /* latencies were measured; 0 prints "n/a" (the meta device); 1 */
  int detailed_backward;       /* the tree also prints each module's measured backward; 0 */
} prof_ReportOptions;

PROF_API void prof_report_options_init(prof_ReportOptions *opts);

/*
** A report writer, the C twin of a report script (scripts/reports/): renders S's snapshot as text
** through out. prof_write_deepspeed_report is one; a host passes its own where it passes that.
*/
typedef int (*prof_ReportFn)(prof_State *S, const prof_ReportOptions *opts, prof_WriteFn out,
                             void *out_ud);

/*
** DeepSpeed's print_model_profile text for the first root's tree (summary, aggregated profile per
** depth, detailed tree): prof_write_report of the snapshot's document (prof_ReportDoc), as a
** flops profile without an engine. Reads the snapshot: after prof_stop or prof_snapshot, while no
** thread records. opts NULL: the defaults. [may fail: PROF_ERRSTATE with no module, PROF_ERRIO
** when out fails, PROF_ERRMEM]
*/
PROF_API int prof_write_deepspeed_report(prof_State *S, const prof_ReportOptions *opts,
                                         prof_WriteFn out, void *out_ud);

/* {====================== report documents ======================} */

/*
** What the report writers read: a summary and the modules of one tree. The snapshot is one
** (prof_write_deepspeed_report, prof_write_profile_json); a host with numbers of its own (an
** engine's step latencies, roofline fields, module reprs) builds one, and profrun's Lua reports
** are written from theirs. A count nobody knows is PROF_UNKNOWN, a number NAN, a string NULL:
** the JSON writes null where the key is required and leaves an optional key out, the text "n/a".
*/
#define PROF_UNKNOWN INT64_MIN

typedef struct prof_ReportSummary {
  size_t size;                 /* set by prof_report_doc_init */
  const char *device, *conventions;
  int64_t world_size, dp_size, mp_size, batch_size;
  int64_t params, params_model, fwd_macs, fwd_flops, fwd_flops_model, bwd_flops;
  double fwd_latency_s, bwd_latency_s, step_latency_s, iter_latency_s, samples_per_s;
  /* written only when known */
  int64_t gradient_accumulation_steps;
  double peak_flops, peak_bytes_per_s, ridge_intensity, mfu, fwd_mfu, iter_mfu;
  const char *peaks_machine;
  int saturated;               /* some count stopped at INT64_MAX: the numbers are lower bounds */
  /* the text's: DeepSpeed's engine ran (its sizes, backward, step and iteration lines) */
  int engine;
  double recompute_fwd_factor; /* share of the forward recomputed in the backward; 0 */
  int64_t profile_step;        /* PROF_UNKNOWN: the options' */
} prof_ReportSummary;

typedef struct prof_ReportModule {
  size_t size;                 /* set by prof_report_module_init */
  const char *name;            /* its attribute name in the parent ("conv1"); "" for the root */
  const char *path;            /* dotted path ("layer1.0.conv1"); NULL: made from the names */
  const char *type;            /* the class name as PyTorch spells it */
  const char *extra_repr;      /* the text tree prints it after the counts (may hold lines) */
  int32_t parent;              /* the parent's index; -1 for the root */
  int32_t depth;
  int hidden;                  /* left out of every report: its children take its place */
  int fold;                    /* the text tree prints a run of identical children once */
  int64_t params, macs, flops, bytes, calls;   /* inclusive of the subtree */
  double fwd_latency_s, bwd_latency_s;
  /* written only when known: the measured backward, and the roofline verdict */
  int64_t bwd_flops, exact_flops;
  double intensity, achieved_flops, achieved_bytes_per_s, mfu;
  const char *bound;           /* "compute", "memory" or "overhead" */
  int bound_expected;          /* 1: judged by intensity alone (nothing ran); -1 unknown */
} prof_ReportModule;

/*
** Fills *m with module index (0 is the root) of the document; strings must stay valid until
** the next call. Returns 0, or non-zero to stop the writer (prof_write_report fails).
*/
typedef int (*prof_ReportModuleFn)(void *ud, int32_t index, prof_ReportModule *m);

/*
** The modules come in pre-order: a module after its parent, its subtree before its next sibling,
** so that a module's children are the following modules naming it as parent, in order. Only the
** tree of module 0 is written.
*/
typedef struct prof_ReportDoc {
  size_t size;                 /* set by prof_report_doc_init */
  prof_ReportSummary summary;
  int32_t count;
  prof_ReportModuleFn module;
  void *ud;
} prof_ReportDoc;

/* An empty document: every summary field unknown, no modules. */
PROF_API void prof_report_doc_init(prof_ReportDoc *doc);

/* A module with every field unknown, no parent, name and type "". */
PROF_API void prof_report_module_init(prof_ReportModule *m);

typedef enum prof_ReportFormat {
  PROF_REPORT_DEEPSPEED,       /* DeepSpeed's print_model_profile text */
  PROF_REPORT_JSON             /* the "profrun.profile/1" document */
} prof_ReportFormat;

/*
** Writes doc in format through out, reading each module as it goes (a document of a million
** modules is never held: the writer keeps a few numbers a module). S gives the allocator and
** holds the message; doc need not come from it. opts NULL: the defaults (JSON reads none).
** [may fail: PROF_ERRARG for a document that is not a tree in pre-order or a module reader that
** failed, PROF_ERRSTATE with no module (text), PROF_ERRIO when out fails, PROF_ERRMEM]
*/
PROF_API int prof_write_report(prof_State *S, prof_ReportFormat format, const prof_ReportDoc *doc,
                               const prof_ReportOptions *opts, prof_WriteFn out, void *out_ud);

/* {====================== trace ======================} */

/*
** Run facts for a Chrome / Perfetto trace in Kineto's format (what torch.profiler's
** export_chrome_trace writes), so that chrome://tracing, Perfetto and HTA read it unchanged.
*/
typedef struct prof_TraceInfo {
  size_t size;                 /* set by prof_traceinfo_init */
  int64_t rank, world_size;    /* "distributedInfo"; 0 and 1 by default */
  int64_t base_ns;             /* the prof_now_ns time written as ts 0; 0: the earliest event's */
  int64_t base_epoch_ns;       /* "baseTimeNanoseconds", base_ns as Unix-epoch ns (add ts to get
                                  wall time back, comparable across ranks); 0: derived from the
                                  realtime clock when the trace is written */
  const char *device_properties; /* JSON text of Kineto's "deviceProperties" array (an object
                                  is one device); NULL: [] */
  const char *process_name;    /* the process row's name; NULL: "profrun" */
  const char *trace_name;      /* "traceName"; NULL: the path (file writer) or "" */
  int64_t pid;                 /* the events' pid; 0: the calling process's id */
  /* the name an op event is written under (e.g. PyTorch's "aten::mm" for "mm"), called once per
     op event; NULL, or a NULL result: the event's own name */
  const char *(*op_name)(void *ud, const char *name);
  void *op_name_ud;
  int keep_existing;           /* the file writer keeps a file already at path: PROF_ERREXIST */
} prof_TraceInfo;

/* Fills *info with the defaults above. */
PROF_API void prof_traceinfo_init(prof_TraceInfo *info);

/*
** Writes the buffered events (prof_event_at: call after prof_stop or prof_snapshot, while no
** thread records) as one trace document through fn, event by event: memory stays bounded by an
** index over the events, whatever the document's size. info NULL means the defaults.
** Rows: pid = info->pid, tid = the recorder's thread index + PROF_TRACE_TID_BASE, each named by
** thread_name metadata. Spans ("ph":"X") are sorted per thread by begin time, the longer first,
** so that they nest; a span that would overlap its enclosing one without nesting (a range popped
** after its module exited) is clipped to it and counted in "clippedSpans". Categories: cpu_op
** (ops), user_annotation (ranges), module (module calls, with their MACs, FLOPs, bytes and
** achieved FLOP/s), cpu_instant_event (instants, and "[memory]" with torch's Bytes (signed),
** Total Allocated, Device Type, Device Id; no Addr: events carry none), counters as "ph":"C";
** "External id" is the op's correlation; with record_shapes ops carry "Input Dims" and "Input
** type" (torch's C++ type names), with a stack hook "Call stack", and the locations become
** "lua_function" slices on a frames row per thread (PROF_TRACE_FRAMES_ROW). Times are µs with three decimals (ns) relative to
** base_ns; dropped events are counted in "droppedEvents".
** Every string is escaped (control characters as \uXXXX, invalid UTF-8 as U+FFFD).
** [may fail: PROF_ERRIO when fn fails, PROF_ERRMEM, PROF_ERRARG for device_properties that are
** not a JSON array or object]
*/
#define PROF_TRACE_TID_BASE 1
/* with_stack's Lua frames of thread t are slices on the row of tid t + PROF_TRACE_TID_BASE +
   PROF_TRACE_FRAMES_ROW (cat "lua_function", torch's python_function), named "thread N Lua
   frames" */
#define PROF_TRACE_FRAMES_ROW 1000000
PROF_API int prof_write_chrome_trace(prof_State *S, const prof_TraceInfo *info, prof_WriteFn fn,
                                     void *ud);

/*
** prof_write_chrome_trace into path, atomically (a temporary file beside it, then rename; missing
** parent directories are created; on failure nothing is left at path or beside it). A path ending
** in ".gz" is gzip-compressed while it streams. info->trace_name NULL names the trace by path.
** [may fail: PROF_ERRIO, PROF_ERRMEM, PROF_ERRARG as prof_write_chrome_trace]
*/
PROF_API int prof_write_chrome_trace_file(prof_State *S, const prof_TraceInfo *info,
                                          const char *path);

/* {====================== configuration ======================} */

/* The flops_profiler section (DeepSpeed's keys and defaults plus profrun's). */
typedef struct prof_FlopsConfig {
  int enabled;                 /* false */
  double recompute_fwd_factor; /* 0.0 */
  int64_t profile_step;        /* 1 */
  int64_t module_depth;        /* -1 */
  int64_t top_modules;         /* 1 */
  int detailed;                /* true */
  char *output_file;           /* NULL: stdout */
  prof_Conventions conventions;/* exact */
  char *format;                /* NULL: from output_file's extension, else "deepspeed" */
  char **ignore_modules;       /* type names, paths, "prefix.*" or Lua patterns */
  int32_t n_ignore_modules;
  char **rules;                /* Lua rule scripts */
  int32_t n_rules;
} prof_FlopsConfig;

/* The profiler section: torch.profiler's settings (validated now, applied by the Lua layer). */
typedef struct prof_ProfilerConfig {
  int enabled;                 /* false */
  char **activities;           /* "cpu", "cuda"; ["cpu"] */
  int32_t n_activities;
  int64_t wait, warmup, active, repeat, skip_first; /* schedule: 0, 0, 1, 0, 0 */
  int record_shapes, profile_memory, with_stack, with_flops, with_modules; /* false */
  char *output_dir;            /* NULL */
  char *trace_file;            /* NULL */
} prof_ProfilerConfig;

/*
** A JSON value as the config file (and overrides) gave it: how DeepSpeed's own sections, which
** the core does not interpret, reach a host. Objects keep file order.
*/
typedef enum prof_JsonType {
  PROF_JSON_NULL, PROF_JSON_FALSE, PROF_JSON_TRUE, PROF_JSON_NUMBER, PROF_JSON_STRING,
  PROF_JSON_ARRAY, PROF_JSON_OBJECT
} prof_JsonType;

typedef struct prof_JsonValue {
  prof_JsonType type;
  char *key;                   /* the member's name inside an object, else NULL */
  double number;               /* PROF_JSON_NUMBER */
  char *string;                /* PROF_JSON_STRING */
  struct prof_JsonValue *items;/* ARRAY and OBJECT: n_items members */
  int32_t n_items;
} prof_JsonValue;

/*
** The loaded config. The core's sections (top-level batch keys, device, flops_profiler, profiler,
** parallel, report) are typed fields, filled from the schema (prof_config_key); DeepSpeed's
** other keys (optimizer, scheduler, fp16, zero_optimization, ...) are in deepspeed, checked
** against DeepSpeed's documented keys but not interpreted: the Lua engine applies their policy.
** The struct may grow at its end: size says how many bytes of it the library filled, so a host
** compiled against a newer prof.h reads a field only when offsetof(field) < size.
*/
typedef struct prof_Config {
  size_t size;                 /* sizeof(prof_Config) of the library that filled it */
  /* DeepSpeed's batch keys; 0 when absent */
  int64_t train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps;
  int wall_clock_breakdown;
  char *device;                /* "meta", "cpu" or "cuda"; NULL: the runtime's default */
  prof_FlopsConfig flops_profiler;
  int64_t model_parallel_size; /* parallel.model_parallel_size, 1 */
  int64_t model_parallel_rank; /* parallel.model_parallel_rank: this process's partition, 0 */
  char *report_script;         /* report.script, NULL */
  /* DeepSpeed keys present in the file that profrun accepts but does not use (dotted paths),
     an optimizer section without a type among them */
  char **unused_keys;
  int32_t n_unused_keys;
  /* key paths given by overrides (they win over what a script passes) */
  char **forced_keys;
  int32_t n_forced_keys;
  prof_ProfilerConfig profiler;
  /* DeepSpeed's keys other than the core's, non-null ones in file order, as an object; NULL
     when there are none. An optimizer section without a type is left out (DeepSpeed builds
     nothing from it). */
  prof_JsonValue *deepspeed;
  /* flops_profiler.detailed_backward (false): the deepspeed tree prints each module's measured
     backward too; here, not in prof_FlopsConfig, because the struct grows at its end */
  int detailed_backward;
  /* The schema's int, number and bool keys given as "auto" (Hugging Face's DeepSpeed placeholder),
     dotted paths in schema order: each keeps its default, and the run says so once */
  char **auto_keys;
  int32_t n_auto_keys;
  /* profiler.schedule.script (NULL: the wait/warmup/active rows) and profiler.schedule.args, the
     free-form object handed to that script (NULL when not set) */
  char *schedule_script;
  prof_JsonValue *schedule_args;
  /* profiler.emit_nvtx (false): profrun's module calls are NVTX ranges "path:Type" too */
  int emit_nvtx;
  /* device_options.tf32 (false): float32 GEMMs on the cuda device use TF32 tensor cores */
  int device_tf32;
} prof_Config;

/* What a schema key holds, and so the C type of its field in prof_Config. */
typedef enum prof_ConfigType {
  PROF_CONFIG_SECTION,         /* an object of keys; no field */
  PROF_CONFIG_BOOL,            /* int, 0 or 1 */
  PROF_CONFIG_INT,             /* int64_t */
  PROF_CONFIG_NUMBER,          /* double */
  PROF_CONFIG_STRING,          /* char *, NULL when not set */
  PROF_CONFIG_ENUM,            /* int: the index of the value in choices */
  PROF_CONFIG_STRINGS,         /* char ** with an int32_t count at count_offset */
  PROF_CONFIG_OBJECT           /* prof_JsonValue *, NULL when not set: any JSON object, its
                                  contents unchecked (a script's arguments) */
} prof_ConfigType;

/* One row of the schema that drives parsing, defaults, --set and profrun --help-config. */
typedef struct prof_ConfigKey {
  const char *path;            /* dotted key path: "flops_profiler.top_modules" */
  prof_ConfigType type;
  size_t offset;               /* of the field in prof_Config (not for SECTION) */
  size_t count_offset;         /* STRINGS: of the int32_t count */
  int nullable;                /* null means "not set" (the default) */
  int64_t min;                 /* INT: the smallest valid value; NUMBER: likewise, as a double */
  const char *const *choices;  /* ENUM, and STRING or STRINGS limited to a set; NULL-ended */
  const char *default_json;    /* the default as JSON text: "1", "true", "null", "[\"cpu\"]" */
  const char *doc;             /* one line */
} prof_ConfigKey;

/* The i-th schema row (sections before their keys), NULL past the last. Static data. */
PROF_API const prof_ConfigKey *prof_config_key(int32_t i);

/* What a value of k must be, as --help-config's TYPE column shows it ("int >= 1 or null",
   "meta|cpu|cuda or null", "[string]"), into buf (truncated to size); returns buf. */
PROF_API const char *prof_config_type_name(const prof_ConfigKey *k, char *buf, size_t size);

/*
** Writes the listing of profrun --help-config (every schema row: key, type, default, doc,
** grouped by section) into buf, truncated to size - 1 bytes and NUL-terminated when size > 0;
** returns the full length, as snprintf does. Allocates nothing.
*/
PROF_API size_t prof_config_help(char *buf, size_t size);

/*
** Loads a DeepSpeed-style JSON config from path (NULL: defaults only), then applies overrides
** "a.b=value" (value parsed as JSON, else taken as a string). Unknown keys, wrong types and
** malformed JSON fail with a message naming file:line:column or the key path and, for an unknown
** key, the closest known one. On success *out is a new config owned by the caller.
** [may fail: PROF_ERRCONFIG, PROF_ERRIO, PROF_ERRMEM]
*/
PROF_API int prof_config_load(prof_State *S, const char *path, const char *const *overrides,
                              int32_t n_overrides, prof_Config **out);

/* Frees a config from prof_config_load. NULL-safe. */
PROF_API void prof_config_free(prof_State *S, prof_Config *cfg);

#ifdef __cplusplus
}
#endif

#endif /* PROF_H */
