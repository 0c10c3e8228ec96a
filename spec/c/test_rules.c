/* test_rules.c — flop rules in C: a rule's counts replace its module's inner ops, failures surface. */
#include "prof.h"
#include "t.h"

static void op(prof_State *S, int64_t flops) {
  prof_Op o = {0};
  o.kind = PROF_OP_CUSTOM;
  o.macs = flops / 2;
  o.flops = flops;
  prof_op_record(S, &o);
}

static int64_t flops_of(prof_State *S, prof_ModuleId id) {
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, id, &i);
  return i.phase[PROF_PHASE_FORWARD].flops;
}

/* A fused attention kernel the host cannot see into: 1000 MACs per call, said by the host. */
static int fused_rule(void *ud, prof_State *S, const prof_RuleCall *call, prof_RuleCounts *out) {
  (void)S;
  (void)call;
  int *calls = ud;
  (*calls)++;
  out->macs = 1000;
  out->flops = 2000;
  out->bytes_read = 64;
  return 0;
}

static int failing_rule(void *ud, prof_State *S, const prof_RuleCall *call, prof_RuleCounts *out) {
  (void)ud, (void)S, (void)call, (void)out;
  return 1;
}

static int negative_rule(void *ud, prof_State *S, const prof_RuleCall *call, prof_RuleCounts *out) {
  (void)ud, (void)S, (void)call;
  out->flops = -5;
  return 0;
}

/* root -> attn (FusedAttention) -> inner (Linear) */
static void run(prof_State *S, prof_ModuleId root, prof_ModuleId attn, prof_ModuleId inner) {
  prof_start(S);
  prof_module_enter(S, root);
  op(S, 10);                    /* counts: outside the rule's module */
  for (int i = 0; i < 2; i++) {
    prof_module_enter(S, attn);
    op(S, 7);                   /* replaced by the rule */
    prof_module_enter(S, inner);
    op(S, 100);                 /* replaced too: children of a ruled module run inside it */
    prof_module_exit(S, inner);
    prof_module_exit(S, attn);
  }
  prof_module_exit(S, root);
  prof_stop(S);
}

/* A session under the given conventions holding root -> attn (FusedAttention) -> proj (Linear). */
static prof_State *attention_net(int deepspeed, prof_ModuleId *root, prof_ModuleId *attn,
                                 prof_ModuleId *inner) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_conventions(S, deepspeed ? PROF_CONV_DEEPSPEED : PROF_CONV_EXACT);
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, root);
  prof_module_add(S, *root, "attn", "FusedAttention", 0, attn);
  prof_module_add(S, *attn, "proj", "Linear", 0, inner);
  return S;
}

static void test_rule_replaces_inner_ops(void) {
  for (int conv = 0; conv < 2; conv++) {
    int calls = 0;
    prof_ModuleId root, attn, inner;
    prof_State *S = attention_net(conv, &root, &attn, &inner);
    /* registered after the module was added: the existing node is flagged too */
    T_EQ_INT(prof_rule_register(S, "FusedAttention", fused_rule, &calls), PROF_OK);
    run(S, root, attn, inner);
    T_EQ_INT(calls, 2);
    T_EQ_INT(flops_of(S, attn), 4000);          /* 2 calls x 2000 */
    T_EQ_INT(flops_of(S, inner), 0);
    T_EQ_INT(flops_of(S, root), 4010);          /* 10 + 4000, the inner 214 never counted */
    prof_ModuleInfo i = {.size = sizeof i};
    prof_module_info(S, attn, &i);
    T_EQ_INT(i.phase[0].macs, 2000);
    T_EQ_INT(i.phase[0].self_flops, 4000);
    T_EQ_INT(i.phase[0].bytes_read, 128);
    T_CHECK(i.flags & PROF_MODULE_RULE);
    T_EQ_INT(prof_check(S), PROF_OK);
    /* removing the rule restores op counting */
    T_EQ_INT(prof_rule_register(S, "FusedAttention", NULL, NULL), PROF_OK);
    run(S, root, attn, inner);
    T_EQ_INT(flops_of(S, attn), 214);           /* 2 x (7 + 100) */
    T_EQ_INT(calls, 2);
    prof_close(S);
  }
}

static void test_rule_flags_modules_added_later(void) {
  prof_State *S = prof_new(NULL, NULL);
  int calls = 0;
  prof_rule_register(S, "FusedAttention", fused_rule, &calls);
  prof_ModuleId root, attn, inner;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  prof_module_add(S, root, "attn", "FusedAttention", 0, &attn);
  prof_module_add(S, attn, "proj", "Linear", 0, &inner);
  prof_module_set_flags(S, attn, 0);            /* host flags do not drop a C rule */
  run(S, root, attn, inner);
  T_EQ_INT(flops_of(S, attn), 4000);
  prof_close(S);
}

static void test_failing_and_negative_rules_are_reported(void) {
  prof_RuleFn bad[2] = {failing_rule, negative_rule};
  const char *what[2] = {"flop rule failed", "negative count"};
  for (int b = 0; b < 2; b++) {
    prof_State *S = prof_new(NULL, NULL);
    prof_ModuleId root, attn, inner;
    prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
    prof_module_add(S, root, "attn", "FusedAttention", 0, &attn);
    prof_module_add(S, attn, "proj", "Linear", 0, &inner);
    prof_rule_register(S, "FusedAttention", bad[b], NULL);
    run(S, root, attn, inner);
    T_EQ_INT(flops_of(S, attn), 0);
    T_EQ_INT(prof_check(S), PROF_ERRARG);
    T_CONTAINS(prof_errmsg(S), what[b]);
    T_CONTAINS(prof_errmsg(S), "path \"attn\"");
    prof_close(S);
  }
}

static void test_register_arguments(void) {
  prof_State *S = prof_new(NULL, NULL);
  T_EQ_INT(prof_rule_register(S, "", fused_rule, NULL), PROF_ERRARG);
  T_EQ_INT(prof_rule_register(S, NULL, fused_rule, NULL), PROF_ERRARG);
  T_EQ_INT(prof_rule_register(S, "Unknown", NULL, NULL), PROF_OK);   /* removing nothing is fine */
  for (int i = 0; i < 20; i++) {                                     /* the table grows */
    char type[16];
    snprintf(type, sizeof type, "T%d", i);
    T_EQ_INT(prof_rule_register(S, type, fused_rule, NULL), PROF_OK);
  }
  prof_close(S);
}

/* A rule that reads its call: 2 * numel(input) FLOPs, as a fused scale-and-bias would do. */
static int operand_rule(void *ud, prof_State *S, const prof_RuleCall *call, prof_RuleCounts *out) {
  (void)S;
  const prof_RuleCall **seen = ud;
  *seen = call;
  if (call->ninputs < 1) return 1;
  int64_t n = 1;
  for (int d = 0; d < call->inputs[0].ndim; d++) n *= call->inputs[0].dim[d];
  out->flops = 2 * n;
  out->bytes_read = n * prof_dtype_size(call->inputs[0].dtype);
  return 0;
}

static void test_rule_sees_operands_and_conventions(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_conventions(S, PROF_CONV_DEEPSPEED);
  prof_ModuleId root, fused;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  prof_module_add(S, root, "fused", "FusedScaleBias", 0, &fused);
  const prof_RuleCall *seen = NULL;
  prof_rule_register(S, "FusedScaleBias", operand_rule, &seen);
  prof_Operand x = {.ndim = 2, .dtype = PROF_F16, .dim = {4, 8}};
  prof_start(S);
  prof_module_enter(S, root);
  prof_module_enter(S, fused);
  T_EQ_INT(prof_module_apply_rule(S, root, &x, 1, &x, 1, NULL), PROF_ERRSTATE);   /* not innermost */
  T_EQ_INT(prof_module_apply_rule(S, fused, &x, 1, &x, 1, &seen), PROF_OK);
  T_CHECK(seen != NULL);
  prof_module_exit(S, fused);    /* the rule ran already: not again */
  prof_module_exit(S, root);
  prof_stop(S);
  T_EQ_INT(flops_of(S, fused), 2 * 32);   /* numel 4 * 8 = 32 */
  T_EQ_INT(flops_of(S, root), 2 * 32);
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, fused, &i);
  T_EQ_INT(i.phase[PROF_PHASE_FORWARD].bytes_read, 32 * 2);   /* float16: 2 bytes */
  T_EQ_INT(prof_check(S), PROF_OK);
  prof_close(S);
}

/* Ignored wins over ruled: the rule never runs, under either convention. */
static void test_ignored_ruled_module_follows_ignore_semantics(void) {
  for (int conv = 0; conv < 2; conv++) {
    int calls = 0;
    prof_ModuleId root, attn, inner;
    prof_State *S = attention_net(conv, &root, &attn, &inner);
    prof_rule_register(S, "FusedAttention", fused_rule, &calls);
    prof_module_set_flags(S, attn, PROF_MODULE_IGNORED);
    run(S, root, attn, inner);
    T_EQ_INT(calls, 0);
    /* exact: attn and all it runs leave the totals (10 outside it stays); deepspeed: its own ops
       (7 a call) count for root, its child keeps its 100s */
    T_EQ_INT(flops_of(S, root), conv ? 10 + 2 * 107 : 10);
    T_EQ_INT(flops_of(S, inner), conv ? 200 : 0);
    T_EQ_INT(prof_check(S), PROF_OK);
    prof_close(S);
  }
}

int main(void) {
  T_RUN(test_rule_sees_operands_and_conventions);
  T_RUN(test_ignored_ruled_module_follows_ignore_semantics);
  T_RUN(test_rule_replaces_inner_ops);
  T_RUN(test_rule_flags_modules_added_later);
  T_RUN(test_failing_and_negative_rules_are_reported);
  T_RUN(test_register_arguments);
  return T_DONE();
}
