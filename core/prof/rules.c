/* rules.c — the one flop-rule registry: per-type callbacks (C, or a host's trampoline) by module type. */
#include <string.h>

#include "session.h"

const profT_Rule *profU_find(const prof_State *S, const char *type) {
  for (int32_t i = 0; i < S->n_rules; i++)
    if (strcmp(S->rules[i].type, type) == 0) return &S->rules[i];
  return NULL;
}

void profU_free(prof_State *S) {
  for (int32_t i = 0; i < S->n_rules; i++) profI_strfree(S, S->rules[i].type);
  profI_free(S, S->rules, sizeof *S->rules * (size_t)S->cap_rules);
  S->rules = NULL;
  S->n_rules = S->cap_rules = 0;
}

/* Keeps every node's RULE flag equal to "its type has a rule". */
static void flag_nodes(prof_State *S, const char *type, int on) {
  for (int32_t i = 0, n = profT_count(S); i < n; i++) {
    profT_Node *node = profT_node(S, i);
    if (strcmp(node->type, type) != 0) continue;
    if (on) node->flags |= PROF_MODULE_RULE;
    else node->flags &= ~PROF_MODULE_RULE;
  }
}

static int register_locked(prof_State *S, const char *type, prof_RuleFn fn, void *ud) {
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

int prof_rule_register(prof_State *S, const char *type, prof_RuleFn fn, void *ud) {
  if (type == NULL || type[0] == '\0')
    return profI_error(S, PROF_ERRARG, "prof_rule_register: a module type is required");
  pthread_mutex_lock(&S->lock);
  int rc = register_locked(S, type, fn, ud);
  pthread_mutex_unlock(&S->lock);
  return rc;
}
