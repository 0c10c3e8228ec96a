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
