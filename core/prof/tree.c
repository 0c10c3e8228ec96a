/* tree.c — the module registry: adding modules from any thread, flags, paths, pre-order. */
#include <stdio.h>
#include <string.h>

#include "record/recorder.h"

/* Makes sure node k has storage: chunks are never moved or freed until the tree is dropped. */
static int reserve_node(prof_State *S, int32_t k) {
  int32_t c = k / PROF_NODE_CHUNK;
  if (c >= PROF_NODE_CHUNKS)
    return profI_error(S, PROF_ERRARG, "prof_module_add: more than %d modules",
                       PROF_NODE_CHUNK * PROF_NODE_CHUNKS);
  if (S->chunks[c] != NULL) return PROF_OK;
  S->chunks[c] = profI_alloc(S, sizeof(profT_Node) * PROF_NODE_CHUNK);
  if (S->chunks[c] == NULL) return profI_error(S, PROF_ERRMEM, "prof_module_add: out of memory");
  return PROF_OK;
}

void profT_free_nodes(prof_State *S) {
  /* the names are interned: they stay with the session */
  for (int32_t c = 0; c < PROF_NODE_CHUNKS && S->chunks[c] != NULL; c++) {
    profI_free(S, S->chunks[c], sizeof(profT_Node) * PROF_NODE_CHUNK);
    S->chunks[c] = NULL;
  }
  atomic_store(&S->n_nodes, 0);
  S->first_root = S->last_root = -1;
  S->tree_version++;
}

/* Adds a node; the caller holds S->lock. */
static int add_locked(prof_State *S, prof_ModuleId parent, const char *name, const char *type,
                      int64_t params, prof_ModuleId *id) {
  int32_t k = profT_count(S);
  if (parent != PROF_NO_MODULE && (parent < 0 || parent >= k))
    return profI_error(S, PROF_ERRARG, "prof_module_add: unknown parent id %d", (int)parent);
  if (name == NULL || type == NULL)
    return profI_error(S, PROF_ERRARG, "prof_module_add: name and type are required");
  if (parent != PROF_NO_MODULE && profT_node(S, parent)->depth >= PROF_DEPTH_MAX) {
    char path[160];
    profT_short_path(S, parent, path, sizeof path);
    return profI_error(S, PROF_ERRARG,
                       "prof_module_add: module '%s' (%s) would be nested %d levels deep, more "
                       "than the %d a profile holds, under \"%s\"", name, type,
                       (int)profT_node(S, parent)->depth + 1, PROF_DEPTH_MAX, path);
  }
  if (reserve_node(S, k) != PROF_OK) return PROF_ERRMEM;
  const char *n = profN_intern_locked(S, name);
  const char *t = n != NULL ? profN_intern_locked(S, type) : NULL;
  if (t == NULL) return profI_error(S, PROF_ERRMEM, "prof_module_add: out of memory");
  profT_Node *node = profT_node(S, k);
  memset(node, 0, sizeof *node);
  node->name = n;
  node->type = t;
  node->parent = parent;
  node->first_child = node->last_child = node->next_sibling = -1;
  node->params = params;
  if (profU_find(S, type) != NULL) node->flags |= PROF_MODULE_RULE;
  if (parent == PROF_NO_MODULE) {
    node->depth = 0;
    if (S->last_root >= 0) profT_node(S, S->last_root)->next_sibling = k;
    else S->first_root = k;
    S->last_root = k;
  } else {
    profT_Node *p = profT_node(S, parent);
    node->depth = p->depth + 1;   /* add_locked refused a parent at PROF_DEPTH_MAX */
    if (p->last_child >= 0) profT_node(S, p->last_child)->next_sibling = k;
    else p->first_child = k;
    p->last_child = k;
  }
  /* published last: a reader that sees the count sees the node */
  atomic_store_explicit(&S->n_nodes, k + 1, memory_order_release);
  S->tree_version++;
  if (id != NULL) *id = k;
  return PROF_OK;
}

int prof_module_add(prof_State *S, prof_ModuleId parent, const char *name, const char *type,
                    int64_t params, prof_ModuleId *id) {
  pthread_mutex_lock(&S->lock);
  int rc = add_locked(S, parent, name, type, params, id);
  pthread_mutex_unlock(&S->lock);
  return rc;
}

int profT_child_named(prof_State *S, prof_ModuleId parent, const char *name, const char *type,
                      prof_ModuleId *id) {
  pthread_mutex_lock(&S->lock);
  int32_t c = parent == PROF_NO_MODULE ? S->first_root : profT_node(S, parent)->first_child;
  for (; c >= 0; c = profT_node(S, c)->next_sibling)
    if (strcmp(profT_node(S, c)->name, name) == 0) break;
  int rc = PROF_OK;
  if (c < 0) rc = add_locked(S, parent, name, type, 0, &c);
  pthread_mutex_unlock(&S->lock);
  if (rc == PROF_OK) *id = c;
  return rc;
}

int prof_module_set_flags(prof_State *S, prof_ModuleId id, uint32_t flags) {
  if (id < 0 || id >= profT_count(S))
    return profI_error(S, PROF_ERRARG, "prof_module_set_flags: unknown module id %d", (int)id);
  pthread_mutex_lock(&S->lock);
  /* the RULE flag follows the registry: a registered rule stays, none cannot be asked for */
  flags &= ~PROF_MODULE_RULE;
  if (profU_find(S, profT_node(S, id)->type) != NULL) flags |= PROF_MODULE_RULE;
  profT_node(S, id)->flags = flags;
  pthread_mutex_unlock(&S->lock);
  return PROF_OK;
}

/* Length of id's path (parts joined by dots, the root's name left out). */
static size_t path_length(const prof_State *S, prof_ModuleId id) {
  size_t len = 0, parts = 0;
  for (prof_ModuleId k = id; k >= 0 && profT_node(S, k)->parent >= 0; k = profT_node(S, k)->parent) {
    len += strlen(profT_node(S, k)->name);
    parts++;
  }
  return parts > 0 ? len + parts - 1 : 0;   /* a dot between parts, empty names included */
}

/* Copies s[0..n) to buf at position at, keeping what falls inside size - 1 bytes. */
static void put(char *buf, size_t size, size_t at, const char *s, size_t n) {
  for (size_t j = 0; j < n; j++)
    if (at + j + 1 < size) buf[at + j] = s[j];
}

int prof_module_path(const prof_State *S, prof_ModuleId id, char *buf, size_t size) {
  if (id < 0 || id >= profT_count(S)) return -1;
  /* Written from the end, walking up the parents: O(depth), no chain kept. */
  size_t len = path_length(S, id), end = len;
  for (prof_ModuleId k = id; k >= 0 && profT_node(S, k)->parent >= 0; k = profT_node(S, k)->parent) {
    const char *part = profT_node(S, k)->name;
    size_t plen = strlen(part);
    end -= plen;
    put(buf, size, end, part, plen);
    if (profT_node(S, profT_node(S, k)->parent)->parent >= 0) put(buf, size, --end, ".", 1);
  }
  if (size > 0) buf[len < size ? len : size - 1] = '\0';
  return (int)len;
}

/* Keeps whole parts: the longest prefix of s[0..n) that ends before a dot, at most max bytes. */
static size_t head_cut(const char *s, size_t n, size_t max) {
  size_t cut = 0;
  for (size_t i = 0; i < n && i <= max; i++)
    if (s[i] == '.') cut = i;
  return cut;
}

void profT_short_path(prof_State *S, prof_ModuleId id, char *buf, size_t size) {
  if (size == 0) return;
  size_t len = path_length(S, id);
  char *full = len + 1 > size ? profI_alloc(S, len + 1) : NULL;
  if (full == NULL) {   /* it fits, or no memory to shorten it: the plain (cut) path */
    if (prof_module_path(S, id, buf, size) < 0) snprintf(buf, size, "?");
    return;
  }
  prof_module_path(S, id, full, len + 1);
  /* a third of the room either side of the count of the levels left out */
  size_t keep = size > 60 ? (size - 40) / 2 : 0;
  size_t h = head_cut(full, len, keep), t = len;
  for (size_t i = len; i > 0 && len - i <= keep; i--)
    if (full[i - 1] == '.') t = i;
  long left = 1;
  for (size_t i = h + 1; i + 1 < t; i++) left += full[i] == '.';
  if (h == 0 || t >= len) snprintf(buf, size, "%.*s...", (int)(size > 4 ? size - 4 : 0), full);
  else snprintf(buf, size, "%.*s.(... %ld more levels ...).%s", (int)h, full, left, full + t);
  profI_free(S, full, len + 1);
}

int32_t prof_module_count(const prof_State *S) { return profT_count(S); }

int32_t prof_module_children(const prof_State *S, prof_ModuleId id, prof_ModuleId *ids,
                             int32_t n) {
  if (id < 0 || id >= profT_count(S)) return 0;
  int32_t k = 0;
  for (int32_t c = profT_node(S, id)->first_child; c >= 0; c = profT_node(S, c)->next_sibling, k++)
    if (k < n) ids[k] = c;
  return k;
}

int32_t profT_preorder(const prof_State *S, int32_t first, prof_ModuleId *ids, int32_t n) {
  /* Iterative walk over the first-child/next-sibling links: no recursion, no allocation. */
  int32_t pos = 0;
  int32_t k = S->first_root;
  while (k >= 0) {
    if (pos >= first && pos - first < n) ids[pos - first] = k;
    pos++;
    const profT_Node *node = profT_node(S, k);
    if (node->first_child >= 0) {
      k = node->first_child;
      continue;
    }
    while (k >= 0 && profT_node(S, k)->next_sibling < 0) k = profT_node(S, k)->parent;
    if (k >= 0) k = profT_node(S, k)->next_sibling;
  }
  return pos;
}

int32_t prof_module_preorder(const prof_State *S, prof_ModuleId *ids, int32_t n) {
  return profT_preorder(S, 0, ids, n);
}
