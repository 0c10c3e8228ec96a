/* rules.c — flop rules in C: per-type callbacks that count a module instead of its inner ops. */
#include <string.h>

#include "session.h"

const profT_Rule *profR_find(const prof_State *S, const char *type) {
  for (int32_t i = 0; i < S->n_rules; i++)
    if (strcmp(S->rules[i].type, type) == 0) return &S->rules[i];
  return NULL;
}

void profR_free(prof_State *S) {
  for (int32_t i = 0; i < S->n_rules; i++) profI_strfree(S, S->rules[i].type);
  profI_free(S, S->rules, sizeof *S->rules * (size_t)S->cap_rules);
  S->rules = NULL;
  S->n_rules = S->cap_rules = 0;
}

/* Keeps every node's RULE flag equal to "its type has a C rule" (Lua rules set it themselves). */
static void flag_nodes(prof_State *S, const char *type, int on) {
  for (int32_t i = 0; i < S->n_nodes; i++) {
    if (strcmp(S->nodes[i].type, type) != 0) continue;
    if (on) S->nodes[i].flags |= PROF_MODULE_RULE;
    else S->nodes[i].flags &= ~PROF_MODULE_RULE;
  }
}

int prof_rule_register(prof_State *S, const char *type, prof_RuleFn fn, void *ud) {
  if (type == NULL || type[0] == '\0')
    return profI_error(S, PROF_ERRARG, "prof_rule_register: a module type is required");
  for (int32_t i = 0; i < S->n_rules; i++) {
    if (strcmp(S->rules[i].type, type) != 0) continue;
    if (fn != NULL) {
      S->rules[i].fn = fn;
      S->rules[i].ud = ud;
      return PROF_OK;
    }
    profI_strfree(S, S->rules[i].type);
    S->rules[i] = S->rules[--S->n_rules];
    flag_nodes(S, type, 0);
    return PROF_OK;
  }
  if (fn == NULL) return PROF_OK;
  if (S->n_rules == S->cap_rules) {
    int32_t ncap = S->cap_rules ? 2 * S->cap_rules : 8;
    profT_Rule *r = profI_realloc(S, S->rules, sizeof *r * (size_t)S->cap_rules,
                                  sizeof *r * (size_t)ncap);
    if (r == NULL) return profI_error(S, PROF_ERRMEM, "prof_rule_register: out of memory");
    S->rules = r;
    S->cap_rules = ncap;
  }
  char *t = profI_strdup(S, type);
  if (t == NULL) return profI_error(S, PROF_ERRMEM, "prof_rule_register: out of memory");
  S->rules[S->n_rules++] = (profT_Rule){t, fn, ud};
  flag_nodes(S, type, 1);
  return PROF_OK;
}

void profR_apply(prof_State *S, int32_t k) {
  const profT_Rule *rule = profR_find(S, S->nodes[k].type);
  if (rule == NULL) return;   /* a Lua rule: it added its counts already */
  prof_RuleCounts c = {0, 0, 0, 0};
  if (rule->fn(rule->ud, S, k, &c) != 0) {
    profT_sticky(S, PROF_ERRARG, "flop rule failed", k);
    return;
  }
  if (c.macs < 0 || c.flops < 0 || c.bytes_read < 0 || c.bytes_written < 0) {
    profT_sticky(S, PROF_ERRARG, "flop rule returned a negative count", k);
    return;
  }
  prof_module_add_counts(S, k, c.macs, c.flops, c.bytes_read, c.bytes_written);
}
