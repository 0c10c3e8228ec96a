/* state.c — creating and closing a session, its allocator, errors and lifecycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "record/recorder.h"

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
  profI_set_active(S, 0);
  atomic_init(&S->range_fast, 0);
  atomic_init(&S->n_nodes, 0);
  profH_init(&S->clock);
  for (int d = 0; d < 2; d++) {
    atomic_init(&S->mem_live[d], 0);
    atomic_init(&S->mem_peak[d], 0);
  }
  if (pthread_mutex_init(&S->lock, NULL) != 0) {
    f(ud, S, sizeof *S, 0);
    return NULL;
  }
  /* Threads cache (session, serial) -> recorder; a session made later at this same address must
     not match an old entry: creation time, plus a per-thread count for two in one tick. */
  static _Thread_local int64_t made_here;
  S->serial = profI_now_ns() * 64 + (++made_here & 63);
  return S;
}

void prof_close(prof_State *S) {
  if (S == NULL) return;
  profK_free(S);
  profR_free_all(S);
  profS_free(S);
  profT_free_nodes(S);
  profU_free(S);
  profN_free(S);
  pthread_mutex_destroy(&S->lock);
  S->alloc(S->ud, S, sizeof *S, 0);
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

int prof_set_event_capacity(prof_State *S, int64_t capacity) {
  if (capacity < 0)
    return profI_error(S, PROF_ERRARG, "prof_set_event_capacity: negative capacity %lld",
                       (long long)capacity);
  if (profI_active(S))
    return profI_error(S, PROF_ERRSTATE, "prof_set_event_capacity: the session is active");
  S->event_capacity = capacity;
  return PROF_OK;
}

int prof_set_record_shapes(prof_State *S, int on) {
  if (profI_active(S))
    return profI_error(S, PROF_ERRSTATE, "prof_set_record_shapes: the session is active");
  S->record_shapes = on != 0;
  return PROF_OK;
}

int prof_set_stack_hook(prof_State *S, prof_StackFn fn, void *ud) {
  if (profI_active(S))
    return profI_error(S, PROF_ERRSTATE, "prof_set_stack_hook: the session is active");
  S->stack_fn = fn;
  S->stack_ud = ud;
  return PROF_OK;
}

int prof_set_memory_events(prof_State *S, int on) {
  if (profI_active(S))
    return profI_error(S, PROF_ERRSTATE, "prof_set_memory_events: the session is active");
  S->memory_events = on != 0;
  return PROF_OK;
}

int prof_start(prof_State *S) {
  if (profI_active(S))
    return profI_error(S, PROF_ERRSTATE, "prof_start: the session is already active");
  int rc = profR_resize_events(S);
  if (rc != PROF_OK) return rc;
  prof_reset(S);
  profH_start(&S->clock);
  profK_on_start(S);
  profI_set_active(S, 1);
  profI_range_fast_update(S);
  return PROF_OK;
}

int prof_stop(prof_State *S) {
  if (!profI_active(S))
    return profI_error(S, PROF_ERRSTATE, "prof_stop: the session is not active");
  atomic_store(&S->range_fast, 0);
  profI_set_active(S, 0);
  profK_on_stop(S);
  return prof_snapshot(S);
}

int prof_is_active(const prof_State *S) { return profI_active(S); }

void prof_reset(prof_State *S) {
  pthread_mutex_lock(&S->lock);
  for (profR_Recorder *R = S->recorders; R != NULL; R = R->next) profR_zero(R);
  pthread_mutex_unlock(&S->lock);
  /* live bytes count from the start: a block made before it and freed after counts negative */
  for (int d = 0; d < 2; d++) {
    atomic_store(&S->mem_live[d], 0);
    atomic_store(&S->mem_peak[d], 0);
  }
  profS_empty(S);
  profK_on_reset(S);
}

void prof_clear(prof_State *S) {
  prof_reset(S);
  pthread_mutex_lock(&S->lock);
  profT_free_nodes(S);
  pthread_mutex_unlock(&S->lock);
}
