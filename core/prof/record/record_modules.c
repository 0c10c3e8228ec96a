/* record_modules.c — module enter/exit on the calling thread's recorder: the per-call hot path. */
#include <string.h>

#include "recorder.h"

profR_Event *profR_push(profR_Recorder *R, int kind, const char *name) {
  if (R->n_events >= R->cap_events) {
    if (R->cap_events > 0) R->dropped++;
    return NULL;
  }
  profR_Event *e = &R->events[R->n_events++];
  /* field by field: memset of 120 bytes becomes `rep stos`, slow to start (a third of a range
     pair's cost) */
  e->kind = (uint8_t)kind;
  e->phase = (uint8_t)R->phase;
  e->op_kind = -1;
  e->module = profR_attr_node(R);
  e->device = 0;
  e->shapes = 0;
  e->name = name;
  e->stack = NULL;
  e->correlation = 0;
  e->t_begin = e->t_end = 0;
  e->macs = e->flops = e->bytes_read = e->bytes_written = 0;
  e->bytes_allocated = e->bytes_freed = 0;
  e->value = e->total = 0;
  return e;
}

/* A counted module call's event: its inclusive counts. */
void profR_push_module(profR_Recorder *R, const profT_Frame *f, int64_t now) {
  profR_Event *e = profR_push(R, PROF_EVENT_MODULE, profT_node(R->S, f->node)->type);
  if (e == NULL) return;
  const profT_Acc *tot = &R->totals[f->phase];
  e->phase = f->phase;
  e->module = f->node;
  e->t_begin = f->t0;
  e->t_end = now;
  e->macs = prof_sat_gain(tot->macs, f->start.macs);
  e->flops = prof_sat_gain(tot->flops, f->start.flops);
  e->bytes_read = prof_sat_gain(tot->bytes_read, f->start.bytes_read);
  e->bytes_written = prof_sat_gain(tot->bytes_written, f->start.bytes_written);
}

void prof_module_enter(prof_State *S, prof_ModuleId id) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;   /* out of memory for the thread's recorder: nothing can record */
  if (id < 0 || id >= profT_count(S)) {
    profR_sticky(R, PROF_ERRARG, "prof_module_enter: unknown module id", id);
    return;
  }
  if (__builtin_expect(R->sp == R->cap_stack, 0) && profR_grow_stack(R) != PROF_OK) {
    profR_sticky(R, PROF_ERRSTATE, R->cap_stack >= PROF_STACK_MAX
                 ? "prof_module_enter: more than " PROF_STR(PROF_STACK_MAX) " nested module calls"
                 : "prof_module_enter: out of memory for the module stack", id);
    return;
  }
  profR_Slot *slot = profR_slot(R, id);
  if (slot == NULL) {
    profR_sticky(R, PROF_ERRMEM, "prof_module_enter: out of memory for the thread's counters", id);
    return;
  }
  const profT_Node *node = profT_node(S, id);
  profT_Frame *f = &R->stack[R->sp++];
  int32_t outer_attr = R->sp > 1 ? f[-1].attr_node : -1;
  int ignored = (node->flags & PROF_MODULE_IGNORED) != 0;
  f->node = id;
  f->phase = (uint8_t)R->phase;
  f->counted = R->open[id] == 0 && !ignored;
  /* a rule replaces what its module's forward runs (its backward is measured op by op); an
     ignored module is never ruled */
  f->ruled = f->counted && (node->flags & PROF_MODULE_RULE) != 0 && R->phase == PROF_PHASE_FORWARD;
  f->rule_done = 0;
  /* exact conventions drop what an ignored module runs */
  f->suppressing = (ignored && S->conv == PROF_CONV_EXACT) || f->ruled;
  /* DeepSpeed gives an ignored module no frame: its own ops land in the enclosing module. */
  f->attr_node = ignored ? outer_attr : id;
  R->open[id]++;
  if (f->suppressing) R->suppress++;
  /* pushed idle too: a call entered in warmup is popped in the window */
  profR_corr_push(S, PROFK_EXT_MODULE, profK_module_ext(f->attr_node, f->phase));
  if (!profI_active(S)) return;
  if (f->counted) slot->incl.calls++;
  f->start = R->totals[f->phase];
  f->t0 = profH_ticks(&S->clock);
}

/* in += what the running totals tot gained since start, saturating; a saturated total's gain is
   unknown and reads saturated. */
__attribute__((cold, noinline)) static void add_gain_sat(profT_Acc *in, const profT_Acc *tot,
                                                         const profT_Acc *start) {
  profR_acc_add_sat(in, prof_sat_gain(tot->macs, start->macs),
                    prof_sat_gain(tot->flops, start->flops),
                    prof_sat_gain(tot->bytes_read, start->bytes_read),
                    prof_sat_gain(tot->bytes_written, start->bytes_written));
}

/* Closes the innermost frame. Its rule runs (without operands) unless apply_rule ran it, or the
   frame is being unwound by an outer exit: a call that failed has no counts to give. */
static void close_frame(profR_Recorder *R, int64_t now, int active, int unwinding) {
  profT_Frame *f = &R->stack[R->sp - 1];
  if (active && f->ruled && !f->rule_done && !unwinding && profU_apply(R, f, NULL) != PROF_OK)
    profR_sticky(R, PROF_ERRARG, R->S->errmsg, f->node);
  R->sp--;
  profR_corr_pop(R->S, PROFK_EXT_MODULE);
  R->open[f->node]--;
  if (f->suppressing) R->suppress--;
  if (!active || !f->counted) return;
  profT_Acc *in = &R->slots[f->phase][f->node].incl;   /* entering made the frame's phase's */
  const profT_Acc *tot = &R->totals[f->phase];
  /* the gains are non-negative and a module's inclusive counts are a part of the total, so
     nothing here can overflow unless a total did (profR_add marked the recorder then) */
  if (__builtin_expect(R->saturated, 0)) {
    add_gain_sat(in, tot, &f->start);
  } else {
    PROFR_UADD(in->macs, (uint64_t)tot->macs - (uint64_t)f->start.macs);
    PROFR_UADD(in->flops, (uint64_t)tot->flops - (uint64_t)f->start.flops);
    PROFR_UADD(in->bytes_read, (uint64_t)tot->bytes_read - (uint64_t)f->start.bytes_read);
    PROFR_UADD(in->bytes_written, (uint64_t)tot->bytes_written - (uint64_t)f->start.bytes_written);
  }
  PROFR_UADD(in->time_ns, now - f->t0);
  if (R->cap_events > 0) profR_push_module(R, f, now);
}

void prof_module_exit(prof_State *S, prof_ModuleId id) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return;
  int32_t k = R->sp - 1;
  while (k >= 0 && R->stack[k].node != id) k--;
  if (k < 0) {
    profR_sticky(R, PROF_ERRSTATE, "prof_module_exit: module is not open", id);
    return;
  }
  if (k != R->sp - 1)
    profR_sticky(R, PROF_ERRSTATE, "prof_module_exit: inner modules left open", id);
  int active = profI_active(S);
  int64_t now = active ? profH_ticks(&S->clock) : 0;
  while (R->sp > k) close_frame(R, now, active, R->sp - 1 != k);
}

int prof_module_enter_named(prof_State *S, const char *name, const char *type,
                            prof_ModuleId *id) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return profI_error(S, PROF_ERRMEM, "prof_module_enter_named: out of memory");
  prof_ModuleId parent = R->sp > 0 ? R->stack[R->sp - 1].node : PROF_NO_MODULE;
  prof_ModuleId c;
  int rc = profT_child_named(S, parent, name, type, &c);
  if (rc != PROF_OK) return rc;
  prof_module_enter(S, c);
  if (id != NULL) *id = c;
  return PROF_OK;
}
