/* record.c — counting an op and adding it to the innermost open module: the op hot path. */
#include "session.h"

int prof_op_count(prof_State *S, prof_Op *op) {
  return profF_count(S->conv, op, S->errmsg, sizeof S->errmsg);
}

/* Adds to the session totals (every open frame sees them at exit) and to node k's own counts. */
static void add_counts(prof_State *S, int32_t k, int64_t macs, int64_t flops, int64_t br,
                       int64_t bw) {
  profT_Acc *tot = &S->totals[S->phase];
  tot->calls++;
  tot->macs += macs;
  tot->flops += flops;
  tot->bytes_read += br;
  tot->bytes_written += bw;
  profT_Acc *self = k >= 0 ? &S->nodes[k].self[S->phase] : &S->unattributed[S->phase];
  self->calls++;
  self->macs += macs;
  self->flops += flops;
  self->bytes_read += br;
  self->bytes_written += bw;
}

int prof_op_record(prof_State *S, prof_Op *op) {
  if (!S->active) return PROF_OK;
  if (op->kind != PROF_OP_CUSTOM) {
    int rc = profF_count(S->conv, op, S->errmsg, sizeof S->errmsg);
    if (rc != PROF_OK) return rc;
  }
  if (S->suppress > 0) return PROF_OK;
  add_counts(S, profT_attr_node(S), op->macs, op->flops, op->bytes_read, op->bytes_written);
  return PROF_OK;
}

int prof_op_begin(prof_State *S, prof_Op *op) {
  if (op->kind != PROF_OP_CUSTOM) {
    int rc = profF_count(S->conv, op, S->errmsg, sizeof S->errmsg);
    if (rc != PROF_OK) return rc;
  }
  op->correlation = ++S->next_correlation;
  op->t_begin_ns = op->t_end_ns = 0;
  op->bytes_allocated = op->bytes_freed = 0;
  if (S->op_depth < PROF_OP_NEST_MAX) S->open_ops[S->op_depth] = op;
  S->op_depth++;
  return PROF_OK;
}

void prof_op_end(prof_State *S, prof_Op *op) {
  if (S->op_depth > 0) S->op_depth--;
  if (!S->active || S->suppress > 0) return;
  add_counts(S, profT_attr_node(S), op->macs, op->flops, op->bytes_read, op->bytes_written);
}

static int device_slot(int32_t device) { return device == PROF_DEVICE_CUDA ? 1 : 0; }

void prof_mem_alloc(prof_State *S, int32_t device, const void *ptr, int64_t bytes) {
  (void)ptr;
  int d = device_slot(device);
  S->mem_live[d] += bytes;
  if (S->mem_live[d] > S->mem_peak[d]) S->mem_peak[d] = S->mem_live[d];
  int32_t k = S->op_depth < PROF_OP_NEST_MAX ? S->op_depth : PROF_OP_NEST_MAX;
  if (k > 0) S->open_ops[k - 1]->bytes_allocated += bytes;
}

void prof_mem_free(prof_State *S, int32_t device, const void *ptr, int64_t bytes) {
  (void)ptr;
  S->mem_live[device_slot(device)] -= bytes;
  int32_t k = S->op_depth < PROF_OP_NEST_MAX ? S->op_depth : PROF_OP_NEST_MAX;
  if (k > 0) S->open_ops[k - 1]->bytes_freed += bytes;
}

int prof_module_add_counts(prof_State *S, prof_ModuleId id, int64_t macs, int64_t flops,
                           int64_t bytes_read, int64_t bytes_written) {
  if (id < 0 || id >= S->n_nodes)
    return profI_error(S, PROF_ERRARG, "prof_module_add_counts: unknown module id %d", (int)id);
  if (macs < 0 || flops < 0 || bytes_read < 0 || bytes_written < 0)
    return profI_error(S, PROF_ERRARG, "prof_module_add_counts: negative count for module id %d",
                       (int)id);
  /* a rule's own frame suppresses the ops inside it, not the counts it adds for itself */
  int suppress = S->suppress;
  const profT_Frame *top = S->sp > 0 ? &S->stack[S->sp - 1] : NULL;
  if (top != NULL && top->node == id && top->suppressing) suppress--;
  if (!S->active || suppress > 0) return PROF_OK;
  add_counts(S, id, macs, flops, bytes_read, bytes_written);
  return PROF_OK;
}
