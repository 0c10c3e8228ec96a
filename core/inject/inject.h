/* inject.h — internal declarations of libprof_inject.so: NVTX ranges -> profrun's module tree. */
#ifndef INJECT_H
#define INJECT_H

#include <stdint.h>

#include "prof.h"

/* {====================== range names (nvtx_names.c) ======================} */

/* The most operand shapes an op range's "sizes = [...]" keeps (aten ops pass scalars too). */
#define INJN_MAX_SIZES 8
#define INJN_NAME_SIZE 128

/*
** What one NVTX range message says. Three forms:
**   module  "BertLayer" (type and name), "encoder.layer.0:BertLayer" (path, then type);
**   op      what torch.autograd.profiler.emit_nvtx() writes: "aten::addmm, seq = 12, sizes =
**           [[128], [32, 64], [64, 128], [], []]" (sizes only with record_shapes);
**   backward an autograd node ("AddmmBackward0, seq = 12") or an op with "stashed seq": ops run
**           by the backward pass.
*/
typedef struct injN_Range {
  int is_op;                   /* an op (aten::... or an autograd node), not a module */
  int backward;                /* an autograd node or "stashed seq": the backward phase */
  char name[INJN_NAME_SIZE];   /* op: "aten::addmm"; module: the path part ("" when none) */
  char type[INJN_NAME_SIZE];   /* module: the type part (the whole message when no path) */
  int64_t seq;                 /* emit_nvtx's sequence number, -1 when absent */
  int32_t nsizes;              /* entries of sizes = [...]; -1 when the message has none */
  prof_Operand sizes[INJN_MAX_SIZES]; /* ndim -1: an entry with more than PROF_MAX_DIMS dims */
} injN_Range;

/* Parses msg (NULL reads as ""). Never fails: what is not an op is a module. */
void injN_parse(const char *msg, injN_Range *out);

/* {====================== aten ops (aten_ops.c) ======================} */

/*
** Fills op (zeroed first) for the aten op r names with its shapes: kind, operands in the core's
** order (addmm's bias, mat1, mat2; embedding's weight and indices swapped), the output shape where
** the inputs fix it. Returns 1 when the core's formula can count it, 0 when the op is unknown or
** its shapes are missing or unfit (then op is PROF_OP_CUSTOM with zero counts: timed, not
** counted). op->name is left NULL (the caller names it).
*/
int injA_fill(const injN_Range *r, prof_Op *op);

/* {====================== cuBLAS log lines (cublas_log.c) ======================} */

/*
** cuBLAS has no CUPTI callback domain, but its logger (cublasLoggerConfigure +
** cublasSetLoggerCallback, the API behind CUBLAS_LOGINFO_DBG=1) hands every API call, on the
** calling thread, as lines such as
**   I! cuBLAS (v13.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, ...) called:
**   i!  m: type=int; val=128
** The parser keeps one call's function and integer parameters; a GEMM completes at the next
** call's header, at a "Time:" line, or at injC_flush.
*/
typedef struct injC_Gemm {
  char func[64];               /* "cublasSgemm_v2" */
  int64_t m, n, k, batch;      /* batch 1 unless batchCount says otherwise */
  int32_t dtype;               /* prof_DType of A and B (Ex: from Atype) */
  int complex_;                /* C, Z: one complex MAC is 4 real MACs */
} injC_Gemm;

typedef struct injC_Parser {
  injC_Gemm cur;
  int in_call, is_gemm, have;  /* have: bits of m, n, k seen */
} injC_Parser;

/* Feeds one logger message (one or more lines); returns how many GEMMs it completed, up to
   max, into out. */
int injC_feed(injC_Parser *p, const char *msg, injC_Gemm *out, int max);
/* The call in progress, if it is a complete GEMM: 1 and *out, else 0. */
int injC_flush(injC_Parser *p, injC_Gemm *out);

/* The op a GEMM is, for the core's formulas: MM, or BMM with a batch; CUSTOM with explicit
   counts for complex types. op->name is left NULL. */
void injC_op(const injC_Gemm *g, prof_Op *op);

/* {====================== the tree (nvtx_tree.c) ======================} */

typedef struct injT_Tree injT_Tree;
typedef struct injT_Thread injT_Thread;

/* Frame kinds. */
enum { INJT_MODULE = 0, INJT_OP = 1 };

/* What the tree could not map, for the run's notes. */
typedef struct injT_Stats {
  int64_t ranges, ops, counted_ops;  /* module frames, op frames, ops the formulas counted */
  int64_t unmatched_pops;            /* a pop (or end) with no open range of its domain */
  int64_t foreign_ends;              /* nvtxRangeEnd on another thread than the start */
  int64_t too_deep;                  /* ranges not opened: beyond INJT_MAX_FRAMES (or MAX_OPS open
                                        ops), or out of memory; timed by nothing */
  int64_t op_errors;                 /* shapes the core's formula refused (then counted 0) */
} injT_Stats;

#define INJT_MAX_FRAMES 512
#define INJT_DEFAULT_DOMAIN 0u

/*
** A tree over S (which stays the caller's): one root module "" of type root_type that every
** recording thread enters at its first range. Kernels need nothing more: while a capture is open
** the core pushes each module call's and op's CUPTI external correlation id itself.
** [may fail: PROF_ERRMEM, or the core's error]
*/
int injT_new(prof_State *S, const char *root_type, injT_Tree **out);

/* Closes every thread's open ranges (from the calling thread: call it when no thread records). */
void injT_close_all(injT_Tree *T);
void injT_free(injT_Tree *T);

/* The calling thread's state, made on first use (cold: a lock). NULL when out of memory. */
injT_Thread *injT_thread(injT_Tree *T);

/* Closes the calling thread's open ranges (a thread about to end). */
void injT_thread_done(injT_Tree *T, injT_Thread *th);

/*
** Domains (nvtxDomainCreateA): 1, 2, ... by name, the same number for the same name; 0 is
** NVTX's default domain and when out of memory. Category names (nvtxNameCategoryA) are per
** domain; a range's category prefixes its module's type ("Category/Type"), its domain's name
** prefixes that ("domain::Type").
*/
uint32_t injT_domain(injT_Tree *T, const char *name);
void injT_name_category(injT_Tree *T, uint32_t domain, uint32_t category, const char *name);

/* nvtxRangePush* / nvtxRangePop: returns the depth (of the domain's ranges) after the call. */
int injT_push(injT_Tree *T, injT_Thread *th, uint32_t domain, uint32_t category, const char *msg);
int injT_pop(injT_Tree *T, injT_Thread *th, uint32_t domain);

/*
** nvtxRangeStart* / nvtxRangeEnd: a start opens a range on the calling thread as a push does and
** returns its id (never 0); an end closes it. A range ended while ranges opened after it are still
** open closes with the innermost of them (the tree nests; the time runs to that close). An end on
** another thread is counted in foreign_ends and the range closes with its enclosing one.
*/
uint64_t injT_start(injT_Tree *T, injT_Thread *th, uint32_t domain, uint32_t category,
                    const char *msg);
void injT_end(injT_Tree *T, injT_Thread *th, uint64_t id);

/*
** An op that happened on the calling thread outside NVTX (a cuBLAS GEMM from its log): recorded
** in the innermost range; inside an op range the formulas already counted (aten::addmm over its
** cublasSgemm) it is kept with zero counts, so nothing is counted twice.
*/
void injT_record(injT_Tree *T, injT_Thread *th, prof_Op *op);

/* nvtxMark*: an instant event named msg on the calling thread. */
void injT_mark(injT_Tree *T, injT_Thread *th, const char *msg);

/* The counts so far (racy reads of other threads' counters: for the notes at exit). */
void injT_stats(injT_Tree *T, injT_Stats *out);

#endif
