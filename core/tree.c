/* tree.c — the module tree: registration, enter/exit on the hot path, and reading it back. */
#include <stdio.h>
#include <string.h>

#include "session.h"

static int grow_nodes(prof_State *S) {
  int32_t ncap = S->cap_nodes ? S->cap_nodes * 2 : 64;
  profT_Node *n = profI_realloc(S, S->nodes, sizeof *n * (size_t)S->cap_nodes, sizeof *n * (size_t)ncap);
  if (n == NULL) return profI_error(S, PROF_ERRMEM, "prof_module_add: out of memory");
  S->nodes = n;
  S->cap_nodes = ncap;
  return PROF_OK;
}

void profT_free_nodes(prof_State *S) {
  for (int32_t i = 0; i < S->n_nodes; i++) {
    profI_strfree(S, S->nodes[i].name);
    profI_strfree(S, S->nodes[i].type);
  }
  profI_free(S, S->nodes, sizeof *S->nodes * (size_t)S->cap_nodes);
  S->nodes = NULL;
  S->n_nodes = S->cap_nodes = 0;
  S->first_root = S->last_root = -1;
}

void profT_zero_counters(prof_State *S) {
  for (int32_t i = 0; i < S->n_nodes; i++) {
    memset(S->nodes[i].incl, 0, sizeof S->nodes[i].incl);
    memset(S->nodes[i].self, 0, sizeof S->nodes[i].self);
  }
  memset(S->totals, 0, sizeof S->totals);
  memset(S->unattributed, 0, sizeof S->unattributed);
}

int prof_module_add(prof_State *S, prof_ModuleId parent, const char *name, const char *type,
                    int64_t params, prof_ModuleId *id) {
  if (parent != PROF_NO_MODULE && (parent < 0 || parent >= S->n_nodes))
    return profI_error(S, PROF_ERRARG, "prof_module_add: unknown parent id %d", (int)parent);
  if (name == NULL || type == NULL)
    return profI_error(S, PROF_ERRARG, "prof_module_add: name and type are required");
  if (S->n_nodes == S->cap_nodes && grow_nodes(S) != PROF_OK) return PROF_ERRMEM;
  char *n = profI_strdup(S, name);
  char *t = profI_strdup(S, type);
  if (n == NULL || t == NULL) {
    profI_strfree(S, n);
    profI_strfree(S, t);
    return profI_error(S, PROF_ERRMEM, "prof_module_add: out of memory");
  }
  int32_t k = S->n_nodes++;
  profT_Node *node = &S->nodes[k];
  memset(node, 0, sizeof *node);
  node->name = n;
  node->type = t;
  node->parent = parent;
  node->first_child = node->last_child = node->next_sibling = -1;
  node->params = params;
  if (profR_find(S, type) != NULL) node->flags |= PROF_MODULE_RULE;
  if (parent == PROF_NO_MODULE) {
    node->depth = 0;
    if (S->last_root >= 0) S->nodes[S->last_root].next_sibling = k;
    else S->first_root = k;
    S->last_root = k;
  } else {
    profT_Node *p = &S->nodes[parent];
    node->depth = p->depth + 1;
    if (p->last_child >= 0) S->nodes[p->last_child].next_sibling = k;
    else p->first_child = k;
    p->last_child = k;
  }
  if (id != NULL) *id = k;
  return PROF_OK;
}

int prof_module_set_flags(prof_State *S, prof_ModuleId id, uint32_t flags) {
  if (id < 0 || id >= S->n_nodes)
    return profI_error(S, PROF_ERRARG, "prof_module_set_flags: unknown module id %d", (int)id);
  if (profR_find(S, S->nodes[id].type) != NULL) flags |= PROF_MODULE_RULE;   /* C rules stay */
  S->nodes[id].flags = flags;
  return PROF_OK;
}

/* The first hot-path error wins; later ones would only hide its cause. */
void profT_sticky(prof_State *S, int code, const char *what, prof_ModuleId id) {
  if (S->sticky != PROF_OK) return;
  S->sticky = code;
  char path[256];
  if (prof_module_path(S, id, path, sizeof path) < 0) strcpy(path, "?");
  snprintf(S->sticky_msg, sizeof S->sticky_msg, "%s (module id %d, path \"%s\")", what, (int)id,
           path);
}

int32_t profT_attr_node(const prof_State *S) {
  return S->sp > 0 ? S->stack[S->sp - 1].attr_node : -1;
}

void prof_module_enter(prof_State *S, prof_ModuleId id) {
  if (id < 0 || id >= S->n_nodes) {
    profT_sticky(S, PROF_ERRARG, "prof_module_enter: unknown module id", id);
    return;
  }
  if (S->sp == PROF_STACK_MAX) {
    profT_sticky(S, PROF_ERRSTATE, "prof_module_enter: module stack overflow", id);
    return;
  }
  profT_Node *node = &S->nodes[id];
  profT_Frame *f = &S->stack[S->sp++];
  int32_t outer_attr = S->sp > 1 ? f[-1].attr_node : -1;
  int ignored = (node->flags & PROF_MODULE_IGNORED) != 0;
  f->node = id;
  f->phase = (uint8_t)S->phase;
  f->counted = node->open == 0 && !ignored;
  /* exact conventions drop what an ignored module runs; a rule replaces what its module's
     forward runs (its backward is measured op by op) */
  f->suppressing = (ignored && S->conv == PROF_CONV_EXACT) ||
                   (f->counted && (node->flags & PROF_MODULE_RULE) != 0 &&
                    S->phase == PROF_PHASE_FORWARD);
  /* DeepSpeed gives an ignored module no frame: its own ops land in the enclosing module. */
  f->attr_node = ignored ? outer_attr : id;
  node->open++;
  if (f->suppressing) S->suppress++;
  if (!S->active) return;
  if (f->counted) node->incl[f->phase].calls++;
  f->start = S->totals[f->phase];
  f->t0 = profI_now_ns();
}

static void close_frame(prof_State *S, int64_t now) {
  profT_Frame *top = &S->stack[S->sp - 1];
  if (S->active && top->counted && top->phase == PROF_PHASE_FORWARD &&
      (S->nodes[top->node].flags & PROF_MODULE_RULE))
    profR_apply(S, top->node);
  profT_Frame *f = &S->stack[--S->sp];
  profT_Node *node = &S->nodes[f->node];
  node->open--;
  if (f->suppressing) S->suppress--;
  if (!S->active || !f->counted) return;
  profT_Acc *in = &node->incl[f->phase];
  const profT_Acc *now_tot = &S->totals[f->phase];
  in->macs += now_tot->macs - f->start.macs;
  in->flops += now_tot->flops - f->start.flops;
  in->bytes_read += now_tot->bytes_read - f->start.bytes_read;
  in->bytes_written += now_tot->bytes_written - f->start.bytes_written;
  in->time_ns += now - f->t0;
}

void prof_module_exit(prof_State *S, prof_ModuleId id) {
  int32_t k = S->sp - 1;
  while (k >= 0 && S->stack[k].node != id) k--;
  if (k < 0) {
    profT_sticky(S, PROF_ERRSTATE, "prof_module_exit: module is not open", id);
    return;
  }
  if (k != S->sp - 1) profT_sticky(S, PROF_ERRSTATE, "prof_module_exit: inner modules left open", id);
  int64_t now = S->active ? profI_now_ns() : 0;
  while (S->sp > k) close_frame(S, now);
}

int prof_module_enter_named(prof_State *S, const char *name, const char *type,
                            prof_ModuleId *id) {
  prof_ModuleId parent = S->sp > 0 ? S->stack[S->sp - 1].node : PROF_NO_MODULE;
  int32_t c = parent == PROF_NO_MODULE ? S->first_root : S->nodes[parent].first_child;
  for (; c >= 0; c = S->nodes[c].next_sibling)
    if (strcmp(S->nodes[c].name, name) == 0) break;
  if (c < 0) {
    int rc = prof_module_add(S, parent, name, type, 0, &c);
    if (rc != PROF_OK) return rc;
  }
  prof_module_enter(S, c);
  if (id != NULL) *id = c;
  return PROF_OK;
}

prof_ModuleId prof_module_current(const prof_State *S) {
  return S->sp > 0 ? S->stack[S->sp - 1].node : PROF_NO_MODULE;
}

int prof_module_path(const prof_State *S, prof_ModuleId id, char *buf, size_t size) {
  if (id < 0 || id >= S->n_nodes) return -1;
  /* Collect the chain root-first; depth bounds it, so no allocation is needed. */
  prof_ModuleId chain[PROF_STACK_MAX];
  int n = 0;
  for (prof_ModuleId k = id; k >= 0 && n < PROF_STACK_MAX; k = S->nodes[k].parent) chain[n++] = k;
  size_t len = 0;
  int first = 1;
  for (int i = n - 1; i >= 0; i--) {
    const profT_Node *node = &S->nodes[chain[i]];
    if (node->parent < 0) continue;   /* the root's name is not part of paths */
    const char *part = node->name;
    size_t plen = strlen(part);
    if (!first) {
      if (len + 1 < size) buf[len] = '.';
      len++;
    }
    for (size_t j = 0; j < plen; j++, len++)
      if (len + 1 < size) buf[len] = part[j];
    first = 0;
  }
  if (size > 0) buf[len < size ? len : size - 1] = '\0';
  return (int)len;
}

int32_t prof_module_count(const prof_State *S) { return S->n_nodes; }

static void fill_counts(const profT_Acc *incl, const profT_Acc *self, prof_Counts *c) {
  c->calls = incl->calls;
  c->macs = incl->macs;
  c->flops = incl->flops;
  c->bytes_read = incl->bytes_read;
  c->bytes_written = incl->bytes_written;
  c->time_ns = incl->time_ns;
  c->self_macs = self->macs;
  c->self_flops = self->flops;
  c->self_bytes_read = self->bytes_read;
  c->self_bytes_written = self->bytes_written;
}

/*
** A module that was never called itself (a ModuleList, a ModuleDict) still holds its children:
** its inclusive counts and time are theirs, summed, as DeepSpeed's get_module_* recursion gives.
*/
static void children_sum(const prof_State *S, int32_t k, int p, prof_Counts *c) {
  for (int32_t ch = S->nodes[k].first_child; ch >= 0; ch = S->nodes[ch].next_sibling) {
    prof_ModuleInfo ci;
    prof_module_info(S, ch, &ci);
    const prof_Counts *x = &ci.phase[p];
    c->macs += x->macs;
    c->flops += x->flops;
    c->bytes_read += x->bytes_read;
    c->bytes_written += x->bytes_written;
    c->time_ns += x->time_ns;
  }
}

int prof_module_info(const prof_State *S, prof_ModuleId id, prof_ModuleInfo *info) {
  if (id < 0 || id >= S->n_nodes) return PROF_ERRARG;
  const profT_Node *node = &S->nodes[id];
  info->id = id;
  info->parent = node->parent;
  info->name = node->name;
  info->type = node->type;
  info->depth = node->depth;
  info->flags = node->flags;
  info->params = node->params;
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    fill_counts(&node->incl[p], &node->self[p], &info->phase[p]);
    if (node->incl[p].calls == 0 && node->first_child >= 0 && !(node->flags & PROF_MODULE_IGNORED))
      children_sum(S, id, p, &info->phase[p]);
  }
  return PROF_OK;
}

int32_t prof_module_preorder(const prof_State *S, prof_ModuleId *ids, int32_t n) {
  /* Iterative walk over the first-child/next-sibling links: no recursion, no allocation. */
  int32_t count = 0;
  int32_t k = S->first_root;
  while (k >= 0) {
    if (count < n) ids[count] = k;
    count++;
    const profT_Node *node = &S->nodes[k];
    if (node->first_child >= 0) {
      k = node->first_child;
      continue;
    }
    while (k >= 0 && S->nodes[k].next_sibling < 0) k = S->nodes[k].parent;
    if (k >= 0) k = S->nodes[k].next_sibling;
  }
  return count;
}

void prof_totals(const prof_State *S, prof_Phase phase, prof_Counts *out) {
  memset(out, 0, sizeof *out);
  if ((unsigned)phase >= PROF_PHASE_COUNT) return;
  fill_counts(&S->totals[phase], &S->unattributed[phase], out);
}
