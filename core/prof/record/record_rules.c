/* record_rules.c — running a module's flop rule on the calling thread, with the call's operands. */
#include "recorder.h"

int profU_apply(profR_Recorder *R, profT_Frame *f, const prof_RuleCall *given) {
  prof_State *S = R->S;
  const profT_Node *node = profT_node(S, f->node);
  f->rule_done = 1;
  const profT_Rule *rule = profU_find(S, node->type);
  if (rule == NULL) return PROF_OK;
  prof_RuleCall call = {sizeof call, f->node, node->type, S->conv, 0, 0, NULL, NULL, NULL};
  if (given != NULL) call = *given;
  prof_RuleCounts c = {0, 0, 0, 0};
  if (rule->fn(rule->ud, S, &call, &c) != 0)
    return profI_error(S, PROF_ERRARG, "flop rule failed (type %s)", node->type);
  if (c.macs < 0 || c.flops < 0 || c.bytes_read < 0 || c.bytes_written < 0)
    return profI_error(S, PROF_ERRARG, "flop rule returned a negative count (type %s)", node->type);
  /* the rule's own frame suppresses the ops inside it, not the counts it gives for itself;
     an enclosing suppression (an ignored module under exact, an outer rule) still drops them */
  if (R->suppress - (f->suppressing ? 1 : 0) > 0) return PROF_OK;
  profR_add(R, f->node, c.macs, c.flops, c.bytes_read, c.bytes_written);
  return PROF_OK;
}

int prof_module_apply_rule(prof_State *S, prof_ModuleId id, const prof_Operand *inputs,
                           int32_t ninputs, const prof_Operand *outputs, int32_t noutputs,
                           void *host) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL) return profI_error(S, PROF_ERRMEM, "prof_module_apply_rule: out of memory");
  if (R->sp == 0 || R->stack[R->sp - 1].node != id)
    return profI_error(S, PROF_ERRSTATE,
                       "prof_module_apply_rule: module id %d is not the innermost open module",
                       (int)id);
  profT_Frame *f = &R->stack[R->sp - 1];
  if (!profI_active(S) || !f->ruled || f->rule_done) return PROF_OK;
  prof_RuleCall call = {sizeof call, id, profT_node(S, id)->type, S->conv, ninputs, noutputs,
                        inputs, outputs, host};
  return profU_apply(R, f, &call);
}
