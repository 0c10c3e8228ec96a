/* names.c — interned names: one owned copy per distinct string, valid until the session closes. */
#include <string.h>

#include "session.h"

/* FNV-1a: names are short; any decent spread does. */
static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

/* The slot of name, or of the empty place where it would go (cap is a power of two). */
static int32_t find(char **names, int32_t cap, const char *name) {
  int32_t i = (int32_t)(hash(name) & (uint64_t)(cap - 1));
  while (names[i] != NULL && strcmp(names[i], name) != 0) i = (i + 1) & (cap - 1);
  return i;
}

static int grow(prof_State *S) {
  int32_t cap = S->cap_names ? 2 * S->cap_names : 64;
  char **t = profI_alloc(S, sizeof *t * (size_t)cap);
  if (t == NULL) return PROF_ERRMEM;
  memset(t, 0, sizeof *t * (size_t)cap);
  for (int32_t i = 0; i < S->cap_names; i++)
    if (S->names[i] != NULL) t[find(t, cap, S->names[i])] = S->names[i];
  profI_free(S, S->names, sizeof *S->names * (size_t)S->cap_names);
  S->names = t;
  S->cap_names = cap;
  return PROF_OK;
}

const char *profN_intern_locked(prof_State *S, const char *name) {
  /* kept at most half full, so probes stay short */
  if (2 * (S->n_names + 1) > S->cap_names && grow(S) != PROF_OK) return NULL;
  int32_t i = find(S->names, S->cap_names, name);
  if (S->names[i] == NULL) {
    if ((S->names[i] = profI_strdup(S, name)) == NULL) return NULL;
    S->n_names++;
  }
  return S->names[i];
}

const char *prof_intern(prof_State *S, const char *name) {
  if (name == NULL) return NULL;
  pthread_mutex_lock(&S->lock);
  const char *out = profN_intern_locked(S, name);
  pthread_mutex_unlock(&S->lock);
  return out;
}

void profN_free(prof_State *S) {
  for (int32_t i = 0; i < S->cap_names; i++) profI_strfree(S, S->names[i]);
  profI_free(S, S->names, sizeof *S->names * (size_t)S->cap_names);
  S->names = NULL;
  S->n_names = S->cap_names = 0;
}
