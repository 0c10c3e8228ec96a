/* op_util.c — the checks and bookkeeping every runtime op shares. */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

static int same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b) {
  if (b == NULL) return 0;
  if (a->device != b->device)
    return pr_error(rt, "%s: expected all tensors on the same device, got %s and %s", op,
                    a->be->name, b->be->name);
  if (a->dtype != b->dtype)
    return pr_error(rt, "%s: expected all tensors of the same dtype, got %s and %s", op,
                    prof_dtype_name(a->dtype), prof_dtype_name(b->dtype));
  return 0;
}

int pr_check_same(pr_Runtime *rt, const char *op, const pr_Tensor *a, const pr_Tensor *b,
                  const pr_Tensor *c) {
  if (same(rt, op, a, b) != 0) return PR_ERR;
  return same(rt, op, a, c);
}

void pr_op_begin(prof_Op *op, prof_OpKind kind, const pr_Tensor *in0, const pr_Tensor *in1,
                 const pr_Tensor *in2) {
  memset(op, 0, sizeof *op);
  op->kind = kind;
  const pr_Tensor *in[3] = {in0, in1, in2};
  for (int i = 0; i < 3; i++)
    if (in[i] != NULL) pr_operand(in[i], &op->in[op->ninputs++]);
}

pr_Tensor *pr_op_finish(pr_Runtime *rt, prof_Op *op, pr_Tensor *out) {
  if (out == NULL) return NULL;
  if (rt->rec == NULL) return out;
  pr_operand(out, &op->out);
  if (prof_op_begin(rt->rec, op) != PROF_OK) {
    pr_error(rt, "%s", prof_errmsg(rt->rec));
    pr_tensor_release(out);
    return NULL;
  }
  prof_op_end(rt->rec, op);
  return out;
}

/* {====================== the children that do an op's work ======================} */

/* A pool's child by its name (the pool code names them by their spatial dims). */
static const char *pool_part(const char *name) {
  static const char *const map[][2] = {
      {"max_pool2d", "max_pool2d_with_indices"}, {"max_pool3d", "max_pool3d_with_indices"},
      {"adaptive_avg_pool2d", "_adaptive_avg_pool2d"},
      {"adaptive_avg_pool3d", "_adaptive_avg_pool3d"}};
  for (size_t i = 0; name != NULL && i < sizeof map / sizeof *map; i++)
    if (strcmp(name, map[i][0]) == 0) return map[i][1];
  return NULL;
}

/* The children torch 1.13 records under op that do its work, outermost first (the innermost
   carries the counts); 0 when torch's op is the work itself. */
static int work_parts(const prof_Op *op, const char *names[2]) {
  switch (op->kind) {
    case PROF_OP_CONV: case PROF_OP_CONV_TRANSPOSE:   /* the backend's op under _convolution */
      names[0] = "convolution";
      names[1] = "_convolution";
      return 2;
    case PROF_OP_RELU: names[0] = "clamp_min"; return 1;
    case PROF_OP_RELU6: names[0] = "hardtanh"; return 1;
    case PROF_OP_SOFTMAX: names[0] = "_softmax"; return 1;
    case PROF_OP_LOG_SOFTMAX: names[0] = "_log_softmax"; return 1;
    case PROF_OP_LAYER_NORM: names[0] = "native_layer_norm"; return 1;
    case PROF_OP_GROUP_NORM: names[0] = "native_group_norm"; return 1;
    case PROF_OP_BATCH_NORM:
      names[0] = "_batch_norm_impl_index";
      names[1] = "native_batch_norm";
      return 2;
    case PROF_OP_EMBEDDING: names[0] = "index_select"; return 1;
    case PROF_OP_NLL_LOSS:
      names[0] = "nll_loss";
      names[1] = "nll_loss_forward";
      return 2;
    case PROF_OP_MAX_POOL: case PROF_OP_ADAPTIVE_AVG_POOL:
      return (names[0] = pool_part(op->name)) != NULL;
    case PROF_OP_COPY:   /* the copies ops_shape.c names: contiguous, reshape, flatten, to */
      if (op->name == NULL) return 0;
      names[0] = strcmp(op->name, "to") == 0 ? "_to_copy" : "clone";
      names[1] = "copy_";
      return strcmp(op->name, "contiguous") == 0 || strcmp(op->name, "reshape") == 0 ||
                     strcmp(op->name, "flatten") == 0 || strcmp(op->name, "to") == 0
                 ? 2
                 : 0;
    default: return 0;
  }
}

static void open_parts(pr_Runtime *rt, const prof_Op *op) {
  const char *names[2];
  int n = work_parts(op, names);
  if (n == 0 || op->correlation == 0 || rt->n_parts + n > PR_PARTS_MAX) return;
  for (int i = 0; i < n; i++) {
    struct pr_OpPart *p = &rt->parts[rt->n_parts++];
    p->owner = op;
    pr_part_begin(rt, &p->op, names[i], i == n - 1 ? op : NULL, op->ninputs, op->in);
  }
}

static void close_parts(pr_Runtime *rt, const prof_Op *op) {
  while (rt->n_parts > 0 && rt->parts[rt->n_parts - 1].owner == op)
    pr_part_end(rt, &rt->parts[--rt->n_parts].op);
}

/* Ends op and the parts it opened. */
static void op_end(pr_Runtime *rt, prof_Op *op) {
  if (rt->n_parts > 0) close_parts(rt, op);
  prof_op_end(rt->rec, op);
}

int pr_op_open(pr_Runtime *rt, prof_Op *op, int ndim, const int64_t *shape, int dtype) {
  if (rt->rec == NULL) return 0;
  op->out.ndim = ndim;
  op->out.dtype = dtype;
  for (int i = 0; i < ndim && i < PR_MAX_DIMS; i++) op->out.dim[i] = shape[i];
  if (prof_op_begin(rt->rec, op) != PROF_OK) return pr_error(rt, "%s", prof_errmsg(rt->rec));
  open_parts(rt, op);
  return 0;
}

pr_Tensor *pr_op_alloc(pr_Runtime *rt, prof_Op *op, int ndim, const int64_t *shape, int dtype,
                       int device) {
  if (pr_op_open(rt, op, ndim, shape, dtype) != 0) return NULL;
  pr_Tensor *out = pr_tensor_new(rt, ndim, shape, dtype, device);
  if (out == NULL && rt->rec != NULL) op_end(rt, op);
  return out;
}

pr_Tensor *pr_op_end(pr_Runtime *rt, prof_Op *op, pr_Tensor *out, int rc) {
  if (rt->rec != NULL) op_end(rt, op);
  if (rc == 0) return out;
  pr_tensor_release(out);
  return NULL;
}

const char *pr_backward_name(pr_Runtime *rt, const char *forward) {
  if (rt->rec == NULL) return "backward";
  char buf[64];
  snprintf(buf, sizeof buf, "%s_backward", forward);
  const char *name = prof_intern(rt->rec, buf);
  return name != NULL ? name : "backward";
}

int pr_work_begin(pr_Runtime *rt, prof_Op *op, const char *name, int64_t macs, int64_t flops,
                  int64_t bytes_read, int64_t bytes_written, const pr_Tensor *in0,
                  const pr_Tensor *in1, const pr_Tensor *in2) {
  if (rt->rec == NULL) {
    memset(op, 0, sizeof *op);
    return 0;
  }
  pr_op_begin(op, PROF_OP_CUSTOM, in0, in1, in2);
  op->name = name;
  op->macs = macs;
  op->flops = flops;
  op->bytes_read = bytes_read;
  op->bytes_written = bytes_written;
  if (prof_op_begin(rt->rec, op) != PROF_OK) return pr_error(rt, "%s", prof_errmsg(rt->rec));
  return 0;
}

int pr_op_close(pr_Runtime *rt, prof_Op *op, int rc) {
  if (rt->rec != NULL) op_end(rt, op);
  return rc;
}

static void part_open(pr_Runtime *rt, prof_Op *part, const char *name, const prof_Op *share, int n,
                      const prof_Operand *in) {
  memset(part, 0, sizeof *part);
  part->kind = PROF_OP_CUSTOM;
  part->flags = PROF_OPF_EVENT;
  part->name = name;
  part->ninputs = n;
  for (int i = 0; i < n && i < PROF_MAX_OPERANDS; i++) part->in[i] = in[i];
  if (share != NULL) {
    part->macs = share->macs;
    part->flops = share->flops;
    part->bytes_read = share->bytes_read;
    part->bytes_written = share->bytes_written;
    part->device = share->device;
  }
  (void)rt;
}

void pr_part_begin(pr_Runtime *rt, prof_Op *part, const char *name, const prof_Op *share, int n,
                   const prof_Operand *in) {
  if (rt->rec == NULL) {
    part->correlation = 0;
    return;
  }
  part_open(rt, part, name, share, n, in);
  (void)prof_op_begin(rt->rec, part);   /* an event-only op is not counted: it cannot fail */
}

void pr_part_end(pr_Runtime *rt, prof_Op *part) {
  if (rt->rec != NULL) prof_op_end(rt->rec, part);
}

void pr_part_mark(pr_Runtime *rt, const char *name, int n, const prof_Operand *in) {
  if (rt->rec == NULL) return;
  prof_Op part;
  part_open(rt, &part, name, NULL, n, in);
  (void)prof_op_record(rt->rec, &part);
}

void pr_operand_t(const pr_Tensor *t, prof_Operand *o) {
  pr_operand(t, o);
  if (o->ndim < 2) return;
  int64_t d = o->dim[o->ndim - 1];
  o->dim[o->ndim - 1] = o->dim[o->ndim - 2];
  o->dim[o->ndim - 2] = d;
}

void pr_operand_2d(const pr_Tensor *t, prof_Operand *o) {
  pr_operand(t, o);
  int64_t rows = 1;
  for (int i = 0; i + 1 < t->ndim; i++) rows *= t->shape[i];
  o->ndim = 2;
  o->dim[0] = rows;
  o->dim[1] = t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
}

int pr_is_float(int dtype) {
  return dtype == PROF_F32 || dtype == PROF_F64 || dtype == PROF_F16 || dtype == PROF_BF16;
}

int pr_check_float(pr_Runtime *rt, const char *op, const char *what, const pr_Tensor *x) {
  if (pr_is_float(x->dtype)) return 0;
  return pr_error(rt, "%s: expected a floating-point %s, got %s", op, what,
                  prof_dtype_name(x->dtype));
}

const char *pr_dims_str(int n, const int64_t *dims, char *buf, size_t size) {
  pr_Tensor t;
  memset(&t, 0, sizeof t);
  t.ndim = n;
  if (n > 0) memcpy(t.shape, dims, sizeof *dims * (size_t)n);
  return pr_shape_str(&t, buf, size);
}

int pr_broadcast_shapes(pr_Runtime *rt, const char *op, int na, const int64_t *a, int nb,
                        const int64_t *b, int *n, int64_t *shape) {
  char sa[96], sb[96];
  int m = na > nb ? na : nb;
  int64_t out[PR_MAX_DIMS];
  for (int i = 0; i < m; i++) {
    int ia = na - m + i, ib = nb - m + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return pr_error(rt, "%s: shapes %s and %s cannot be broadcast together", op,
                      pr_dims_str(na, a, sa, sizeof sa), pr_dims_str(nb, b, sb, sizeof sb));
    out[i] = da == 1 ? db : da;
  }
  memcpy(shape, out, sizeof *out * (size_t)m);   /* shape may alias a or b */
  *n = m;
  return 0;
}

