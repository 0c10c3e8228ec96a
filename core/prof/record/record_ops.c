/* record_ops.c — ops and memory on the calling thread's recorder: counting, attribution, events. */
#include <string.h>

#include "recorder.h"

int prof_op_count(prof_State *S, prof_Op *op) {
  return profF_count(S->conv, op, S->errmsg, sizeof S->errmsg);
}

static int32_t ndim_of(const prof_Operand *o) {
  return o->ndim < 0 ? 0 : o->ndim > PROF_MAX_DIMS ? PROF_MAX_DIMS : o->ndim;
}

/* Copies the op's input shapes into the arena; the event keeps where they start. */
static void push_shapes(profR_Recorder *R, profR_Event *e, const prof_Op *op) {
  int32_t n = op->ninputs < 0 ? 0 : op->ninputs > PROF_MAX_OPERANDS ? PROF_MAX_OPERANDS : op->ninputs;
  int64_t need = 1;
  for (int32_t i = 0; i < n; i++) need += 1 + ndim_of(&op->in[i]);
  if (R->n_shapes + need > R->cap_shapes) {
    R->shapes_dropped++;
    return;
  }
  int64_t *w = &R->shapes[R->n_shapes];
  e->shapes = (int32_t)(R->n_shapes + 1);
  *w++ = n;
  for (int32_t i = 0; i < n; i++) {
    const prof_Operand *o = &op->in[i];
    int32_t nd = ndim_of(o);
    *w++ = ((int64_t)o->dtype << 8) | nd;
    for (int32_t d = 0; d < nd; d++) *w++ = o->dim[d];
  }
  R->n_shapes += need;
}

static prof_Op *open_op(profR_Recorder *R) {
  int32_t k = R->op_depth < PROF_OP_NEST_MAX ? R->op_depth : PROF_OP_NEST_MAX;
  return k > 0 ? R->open_ops[k - 1] : NULL;
}

static int64_t rest(int64_t all, int64_t parts) { return parts < all ? all - parts : 0; }

static void push_op(profR_Recorder *R, const prof_Op *op) {
  profR_Event *e = profR_push(R, PROF_EVENT_OP,
                              op->name != NULL ? op->name : prof_op_kind_name(op->kind));
  if (e == NULL) return;
  if (R->cap_shapes > 0) push_shapes(R, e, op);
  prof_State *S = R->S;
  if (S->stack_fn != NULL) e->stack = S->stack_fn(S->stack_ud, S);
  e->op_kind = (int16_t)op->kind;
  e->device = op->device;
  e->correlation = op->correlation;
  e->t_begin = op->t_begin_ticks;
  e->t_end = op->t_end_ticks;
  /* what its parts carried is on their events: the events sum to the totals */
  e->macs = rest(op->macs, op->parts_macs);
  e->flops = rest(op->flops, op->parts_flops);
  e->bytes_read = rest(op->bytes_read, op->parts_bytes_read);
  e->bytes_written = rest(op->bytes_written, op->parts_bytes_written);
  e->bytes_allocated = op->bytes_allocated;
  e->bytes_freed = op->bytes_freed;
}

/* A PROF_OPF_EVENT op's event, its counts moved from the innermost enclosing counted op's (if one
   is open; the enclosing ops are known within the depth open_ops holds). */
static void push_part(profR_Recorder *R, const prof_Op *op) {
  push_op(R, op);
  prof_Op *parent = NULL;
  for (int32_t k = R->op_depth <= PROF_OP_NEST_MAX ? R->op_depth : 0; k > 0 && parent == NULL; k--)
    if (!(R->open_ops[k - 1]->flags & PROF_OPF_EVENT)) parent = R->open_ops[k - 1];
  if (parent == NULL) return;
  PROFR_UADD(parent->parts_macs, op->macs);
  PROFR_UADD(parent->parts_flops, op->flops);
  PROFR_UADD(parent->parts_bytes_read, op->bytes_read);
  PROFR_UADD(parent->parts_bytes_written, op->bytes_written);
}

static void clear_outputs(prof_Op *op) {
  op->correlation = 0;
  op->t_begin_ticks = op->t_end_ticks = 0;
  op->bytes_allocated = op->bytes_freed = 0;
  op->parts_macs = op->parts_flops = op->parts_bytes_read = op->parts_bytes_written = 0;
}

/* An event-only op (PROF_OPF_EVENT) at one instant: recorded while R records events. */
static int record_event_op(prof_State *S, prof_Op *op) {
  clear_outputs(op);
  profR_Recorder *R = profR_get(S);
  if (R == NULL || R->suppress > 0 || R->cap_events == 0) return PROF_OK;
  op->correlation = ((uint64_t)(R->index + 1) << 40) | ++R->next_correlation;
  op->t_begin_ticks = op->t_end_ticks = profH_ticks(&S->clock);
  push_part(R, op);
  return PROF_OK;
}

int prof_op_record(prof_State *S, prof_Op *op) {
  if (!profI_active(S)) return PROF_OK;
  if (op->flags & PROF_OPF_EVENT) return record_event_op(S, op);
  if (op->kind != PROF_OP_CUSTOM) {
    int rc = profF_count(S->conv, op, S->errmsg, sizeof S->errmsg);
    if (rc != PROF_OK) return rc;
  }
  profR_Recorder *R = profR_get(S);
  if (R == NULL || R->suppress > 0) return PROF_OK;
  profR_add(R, profR_attr_node(R), op->macs, op->flops, op->bytes_read, op->bytes_written);
  if (R->cap_events > 0) {
    op->correlation = ((uint64_t)(R->index + 1) << 40) | ++R->next_correlation;
    op->t_begin_ticks = op->t_end_ticks = profH_ticks(&S->clock);
    op->bytes_allocated = op->bytes_freed = 0;
    op->parts_macs = op->parts_flops = op->parts_bytes_read = op->parts_bytes_written = 0;
    push_op(R, op);
  }
  return PROF_OK;
}

int prof_op_begin(prof_State *S, prof_Op *op) {
  clear_outputs(op);
  if (!profI_active(S)) return PROF_OK;
  int event_only = (op->flags & PROF_OPF_EVENT) != 0;
  if (op->kind != PROF_OP_CUSTOM && !event_only) {
    int rc = profF_count(S->conv, op, S->errmsg, sizeof S->errmsg);
    if (rc != PROF_OK) return rc;
  }
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return PROF_OK;
  if (event_only && R->cap_events == 0) return PROF_OK;   /* correlation 0: the end is a no-op */
  /* unique within the session without a shared counter: the thread's index in the high bits */
  op->correlation = ((uint64_t)(R->index + 1) << 40) | ++R->next_correlation;
  if (R->cap_events > 0) op->t_begin_ticks = profH_ticks(&S->clock);
  if (R->op_depth < PROF_OP_NEST_MAX) R->open_ops[R->op_depth] = op;
  R->op_depth++;
  profR_corr_push(S, PROFK_EXT_OP, op->correlation);
  return PROF_OK;
}

void prof_op_end(prof_State *S, prof_Op *op) {
  if (op->correlation == 0) return;
  profR_corr_pop(S, PROFK_EXT_OP);   /* before the activity test: begin pushed it */
  if (!profI_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  if (R->op_depth > 0) R->op_depth--;
  if (R->suppress > 0) return;
  if (op->flags & PROF_OPF_EVENT) {
    if (R->cap_events == 0) return;
    op->t_end_ticks = profH_ticks(&S->clock);
    push_part(R, op);
    return;
  }
  profR_add(R, profR_attr_node(R), op->macs, op->flops, op->bytes_read, op->bytes_written);
  if (R->cap_events > 0) {
    op->t_end_ticks = profH_ticks(&S->clock);
    push_op(R, op);
  }
}

static int device_slot(int32_t device) { return device == PROF_DEVICE_CUDA ? 1 : 0; }

/* Live bytes are the session's (a block may be freed on another thread than made it): one
   relaxed atomic add, and a compare-exchange only when the peak moves. */
static int64_t add_live(prof_State *S, int d, int64_t delta) {
  int64_t live = atomic_fetch_add_explicit(&S->mem_live[d], delta, memory_order_relaxed) + delta;
  long long peak = atomic_load_explicit(&S->mem_peak[d], memory_order_relaxed);   /* the atomic's type */
  while (live > peak &&
         !atomic_compare_exchange_weak_explicit(&S->mem_peak[d], &peak, live, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
  return live;
}

static void memory_event(profR_Recorder *R, int32_t device, const void *ptr, int64_t delta,
                         int64_t live) {
  profR_Event *e = profR_push(R, PROF_EVENT_MEMORY, "[memory]");
  if (e == NULL) return;
  const prof_Op *op = open_op(R);
  e->device = device;
  e->address = (uint64_t)(uintptr_t)ptr;
  e->correlation = op != NULL ? op->correlation : 0;
  e->t_begin = e->t_end = profH_ticks(&R->S->clock);
  e->value = delta;
  e->total = live;
}

void prof_mem_alloc(prof_State *S, int32_t device, const void *ptr, int64_t bytes) {
  if (!profI_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  prof_Op *op = open_op(R);
  if (op != NULL) op->bytes_allocated += bytes;
  /* the session's live total costs two atomics: only when memory is profiled */
  if (S->memory_events) memory_event(R, device, ptr, bytes, add_live(S, device_slot(device), bytes));
}

void prof_mem_free(prof_State *S, int32_t device, const void *ptr, int64_t bytes) {
  if (!profI_active(S)) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  prof_Op *op = open_op(R);
  if (op != NULL) op->bytes_freed += bytes;
  if (S->memory_events) memory_event(R, device, ptr, -bytes, add_live(S, device_slot(device), -bytes));
}

void prof_mem_tag(prof_State *S, int32_t device, const void *ptr, int32_t category) {
  if (!profI_active(S) || !S->memory_events) return;
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  profR_Event *e = profR_push(R, PROF_EVENT_MEMORY_TAG, "[memory tag]");
  if (e == NULL) return;
  e->device = device;
  e->address = (uint64_t)(uintptr_t)ptr;
  e->value = category;
  e->t_begin = e->t_end = profH_ticks(&S->clock);
}
