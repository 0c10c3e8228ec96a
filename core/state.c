/* state.c — creating and closing a profiler state, its allocator, errors and lifecycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

const char *prof_version(void) { return PROF_VERSION; }

prof_State *prof_new(prof_Alloc f, void *ud) {
  if (f == NULL) f = default_alloc;
  prof_State *S = f(ud, NULL, 0, sizeof *S);
  if (S == NULL) return NULL;
  memset(S, 0, sizeof *S);
  S->alloc = f;
  S->ud = ud;
  S->conv = PROF_CONV_EXACT;
  S->first_root = S->last_root = -1;
  return S;
}

void prof_close(prof_State *S) {
  if (S == NULL) return;
  profT_free_nodes(S);
  profR_free(S);
  S->alloc(S->ud, S, sizeof *S, 0);
}

const char *prof_errmsg(const prof_State *S) { return S->errmsg; }

void *profI_alloc(prof_State *S, size_t size) { return S->alloc(S->ud, NULL, 0, size); }

void *profI_realloc(prof_State *S, void *ptr, size_t osize, size_t nsize) {
  return S->alloc(S->ud, ptr, osize, nsize);
}

void profI_free(prof_State *S, void *ptr, size_t size) {
  if (ptr != NULL) S->alloc(S->ud, ptr, size, 0);
}

char *profI_strdup(prof_State *S, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = profI_alloc(S, n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

void profI_strfree(prof_State *S, char *s) {
  if (s != NULL) profI_free(S, s, strlen(s) + 1);
}

int profI_error(prof_State *S, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(S->errmsg, sizeof S->errmsg, fmt, ap);
  va_end(ap);
  return code;
}

int prof_set_conventions(prof_State *S, prof_Conventions conv) {
  if (conv != PROF_CONV_EXACT && conv != PROF_CONV_DEEPSPEED)
    return profI_error(S, PROF_ERRARG, "unknown conventions %d", (int)conv);
  S->conv = conv;
  return PROF_OK;
}

prof_Conventions prof_get_conventions(const prof_State *S) { return S->conv; }

const char *prof_conventions_name(prof_Conventions conv) {
  return conv == PROF_CONV_DEEPSPEED ? "deepspeed" : "exact";
}

int prof_conventions_parse(const char *name) {
  if (name == NULL) return -1;
  if (strcmp(name, "exact") == 0) return PROF_CONV_EXACT;
  if (strcmp(name, "deepspeed") == 0) return PROF_CONV_DEEPSPEED;
  return -1;
}

int prof_start(prof_State *S) {
  if (S->active) return profI_error(S, PROF_ERRSTATE, "prof_start: the session is already active");
  prof_reset(S);
  S->active = 1;
  return PROF_OK;
}

int prof_stop(prof_State *S) {
  if (!S->active) return profI_error(S, PROF_ERRSTATE, "prof_stop: the session is not active");
  S->active = 0;
  return PROF_OK;
}

int prof_is_active(const prof_State *S) { return S->active; }

void prof_reset(prof_State *S) {
  profT_zero_counters(S);
  S->sp = 0;
  S->op_depth = 0;
  S->suppress = 0;
  S->sticky = PROF_OK;
  S->sticky_msg[0] = '\0';
  for (int32_t i = 0; i < S->n_nodes; i++) S->nodes[i].open = 0;
}

void prof_clear(prof_State *S) {
  profT_free_nodes(S);
  prof_reset(S);
}

void prof_set_phase(prof_State *S, prof_Phase phase) {
  if ((unsigned)phase < PROF_PHASE_COUNT) S->phase = phase;
}

prof_Phase prof_get_phase(const prof_State *S) { return S->phase; }

int prof_check(prof_State *S) {
  int code = S->sticky;
  if (code != PROF_OK) {
    memcpy(S->errmsg, S->sticky_msg, sizeof S->errmsg);
    S->sticky = PROF_OK;
    S->sticky_msg[0] = '\0';
  }
  return code;
}
