/* recorder.c — each thread's recorder: found through thread-local storage, made on first use, freed with the session. */
#include <stdio.h>
#include <string.h>

#include "session.h"
#include "recorder.h"

/*
** The one piece of per-thread state outside a session: which recorder this thread used last.
** serial guards against a new session allocated where a closed one was.
*/
__attribute__((tls_model("initial-exec"))) _Thread_local profR_Cache profR_cache;

/* The shapes arena: sized with the event buffer while record_shapes is on, released when off. */
static int grow_shapes(profR_Recorder *R) {
  prof_State *S = R->S;
  int64_t cap = S->record_shapes ? R->cap_events * PROF_SHAPE_WORDS_PER_EVENT : 0;
  if (cap > INT32_MAX - 1) cap = INT32_MAX - 1;   /* events hold 32-bit arena offsets */
  if (cap == R->cap_shapes) return PROF_OK;
  int64_t *s = profI_realloc(S, R->shapes, sizeof *s * (size_t)R->cap_shapes, sizeof *s * (size_t)cap);
  if (s == NULL && cap > 0) return PROF_ERRMEM;
  R->shapes = s;
  R->cap_shapes = cap;
  if (R->n_shapes > cap) R->n_shapes = cap;
  return PROF_OK;
}

static int grow_events(profR_Recorder *R, int64_t cap) {
  prof_State *S = R->S;
  if (cap == R->cap_events) return grow_shapes(R);
  profR_Event *e = profI_realloc(S, R->events, sizeof *e * (size_t)R->cap_events,
                                 sizeof *e * (size_t)cap);
  if (e == NULL && cap > 0) return PROF_ERRMEM;
  R->events = e;
  R->cap_events = cap;
  if (R->n_events > cap) R->n_events = cap;
  return grow_shapes(R);
}

/* A copy of the first old of p's size-byte entries in a new block of cap, the rest zero; NULL
   when out of memory. */
static void *copy_grown(prof_State *S, const void *p, size_t size, int32_t old, int32_t cap) {
  char *q = profI_alloc(S, size * (size_t)cap);
  if (q == NULL) return NULL;
  if (old > 0) memcpy(q, p, size * (size_t)old);
  memset(q + size * (size_t)old, 0, size * (size_t)(cap - old));
  return q;
}

/* Every per-module array at cap entries, or none of them (each block's size is cap_slots's: a
   partial growth could not be freed right). */
static int grow_all(profR_Recorder *R, int32_t cap) {
  prof_State *S = R->S;
  int32_t old = R->cap_slots;
  int32_t *open = copy_grown(S, R->open, sizeof *open, old, cap);
  profR_Slot *slots[PROF_PHASE_COUNT] = {NULL};
  int ok = open != NULL;
  for (int p = 0; p < PROF_PHASE_COUNT && ok; p++)
    if (R->slots[p] != NULL)
      ok = (slots[p] = copy_grown(S, R->slots[p], sizeof *slots[p], old, cap)) != NULL;
  if (!ok) {
    profI_free(S, open, sizeof *open * (size_t)cap);
    for (int p = 0; p < PROF_PHASE_COUNT; p++)
      profI_free(S, slots[p], sizeof *slots[p] * (size_t)cap);
    return PROF_ERRMEM;
  }
  profI_free(S, R->open, sizeof *R->open * (size_t)old);
  R->open = open;
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    if (R->slots[p] == NULL) continue;
    profI_free(S, R->slots[p], sizeof *R->slots[p] * (size_t)old);
    R->slots[p] = slots[p];
  }
  R->cap_slots = cap;
  return PROF_OK;
}

int profR_grow_slots(profR_Recorder *R, int32_t need, int phase) {
  int32_t n = profT_count(R->S);
  int32_t cap = need > n ? need : n;
  if (cap < 64) cap = 64;
  if (cap < 2 * R->cap_slots) cap = 2 * R->cap_slots;
  if (cap > R->cap_slots && grow_all(R, cap) != PROF_OK) return PROF_ERRMEM;
  if (R->slots[phase] == NULL) {
    R->slots[phase] = copy_grown(R->S, NULL, sizeof *R->slots[phase], 0, R->cap_slots);
    if (R->slots[phase] == NULL) return PROF_ERRMEM;
  }
  return PROF_OK;
}

int profR_grow_stack(profR_Recorder *R) {
  if (R->cap_stack >= PROF_STACK_MAX) return PROF_ERRSTATE;
  int32_t cap = R->cap_stack > 0 ? 2 * R->cap_stack : PROF_STACK_INIT;
  if (cap > PROF_STACK_MAX) cap = PROF_STACK_MAX;
  profT_Frame *f = profI_realloc(R->S, R->stack, sizeof *f * (size_t)R->cap_stack,
                                 sizeof *f * (size_t)cap);
  if (f == NULL) return PROF_ERRMEM;
  R->stack = f;
  R->cap_stack = cap;
  return PROF_OK;
}

static void free_recorder(prof_State *S, profR_Recorder *R) {
  profI_free(S, R->open, sizeof *R->open * (size_t)R->cap_slots);
  for (int p = 0; p < PROF_PHASE_COUNT; p++)
    profI_free(S, R->slots[p], sizeof *R->slots[p] * (size_t)R->cap_slots);
  profI_free(S, R->events, sizeof *R->events * (size_t)R->cap_events);
  profI_free(S, R->shapes, sizeof *R->shapes * (size_t)R->cap_shapes);
  profI_free(S, R->stack, sizeof *R->stack * (size_t)R->cap_stack);
  profI_free(S, R, sizeof *R);
}

static profR_Recorder *create(prof_State *S) {
  profR_Recorder *R = profI_alloc(S, sizeof *R);
  if (R == NULL) return NULL;
  memset(R, 0, sizeof *R);
  R->S = S;
  R->thread = pthread_self();
  R->phase = PROF_PHASE_FORWARD;
  if (profR_grow_slots(R, 0, PROF_PHASE_FORWARD) != PROF_OK || grow_events(R, S->event_capacity) != PROF_OK ||
      profR_grow_stack(R) != PROF_OK) {
    free_recorder(S, R);
    return NULL;
  }
  R->index = S->n_recorders++;
  /* appended, so the list stays in creation order (events and sticky errors read it so) */
  profR_Recorder **tail = &S->recorders;
  while (*tail != NULL) tail = &(*tail)->next;
  *tail = R;
  return R;
}

profR_Recorder *profR_lookup(prof_State *S, int make) {
  profR_Recorder *R;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&S->lock);
  for (R = S->recorders; R != NULL; R = R->next)
    if (pthread_equal(R->thread, self)) break;
  if (R == NULL && make) R = create(S);
  pthread_mutex_unlock(&S->lock);
  if (R != NULL) {
    profR_cache.S = S;
    profR_cache.serial = S->serial;
    profR_cache.R = R;
  }
  return R;
}

void profR_free_all(prof_State *S) {
  profR_Recorder *R = S->recorders;
  while (R != NULL) {
    profR_Recorder *next = R->next;
    free_recorder(S, R);
    R = next;
  }
  S->recorders = NULL;
  S->n_recorders = 0;
  if (profR_cache.S == S) profR_cache.S = NULL;
}

int prof_trim(prof_State *S) {
  if (profI_active(S)) return profI_error(S, PROF_ERRSTATE, "prof_trim: the session is active");
  pthread_mutex_lock(&S->lock);
  for (profR_Recorder *R = S->recorders; R != NULL; R = R->next)
    if (R->sp > 0) {
      pthread_mutex_unlock(&S->lock);
      return profI_error(S, PROF_ERRSTATE, "prof_trim: a module call is open on thread %d",
                         (int)R->index);
    }
  for (profR_Recorder *R = S->recorders; R != NULL; R = R->next) {
    profI_free(S, R->open, sizeof *R->open * (size_t)R->cap_slots);
    R->open = NULL;
    for (int p = 0; p < PROF_PHASE_COUNT; p++) {
      profI_free(S, R->slots[p], sizeof *R->slots[p] * (size_t)R->cap_slots);
      R->slots[p] = NULL;
    }
    R->cap_slots = 0;
  }
  S->snap.trimmed = 1;
  pthread_mutex_unlock(&S->lock);
  return PROF_OK;
}

void profR_zero(profR_Recorder *R) {
  if (R->open != NULL) memset(R->open, 0, sizeof *R->open * (size_t)R->cap_slots);   /* none after prof_trim */
  for (int p = 0; p < PROF_PHASE_COUNT; p++)
    if (R->slots[p] != NULL) memset(R->slots[p], 0, sizeof *R->slots[p] * (size_t)R->cap_slots);
  memset(R->totals, 0, sizeof R->totals);
  memset(R->unattributed, 0, sizeof R->unattributed);
  R->n_ranges = 0;
  memset(R->ranges, 0, sizeof R->ranges);   /* ranges left open: their slots free again (record_ranges.c) */
  R->sp = 0;
  R->suppress = 0;
  R->op_depth = 0;
  R->n_events = 0;
  R->dropped = 0;
  R->n_shapes = 0;
  R->shapes_dropped = 0;
  R->sticky = PROF_OK;
  R->sticky_msg[0] = '\0';
  R->saturated = 0;
}

/* Every sum saturates (saturate.h) once one total has passed INT64_MAX. */
void profR_acc_add_sat(profT_Acc *a, int64_t macs, int64_t flops, int64_t br, int64_t bw) {
  a->macs = prof_sat_add(a->macs, macs);
  a->flops = prof_sat_add(a->flops, flops);
  a->bytes_read = prof_sat_add(a->bytes_read, br);
  a->bytes_written = prof_sat_add(a->bytes_written, bw);
}

void profR_add_slow(profR_Recorder *R, profT_Acc *self, int64_t macs, int64_t flops, int64_t br,
                    int64_t bw) {
  R->saturated = 1;
  profR_acc_add_sat(&R->totals[R->phase], macs, flops, br, bw);
  profR_acc_add_sat(self, macs, flops, br, bw);
}

/* Resizes every recorder's event buffer to the session's capacity (cold: between runs). */
int profR_resize_events(prof_State *S) {
  for (profR_Recorder *R = S->recorders; R != NULL; R = R->next)
    if (grow_events(R, S->event_capacity) != PROF_OK)
      return profI_error(S, PROF_ERRMEM, "prof_start: out of memory for %lld events per thread",
                         (long long)S->event_capacity);
  return PROF_OK;
}

/* The first hot-path error wins; later ones would only hide its cause. */
void profR_sticky(profR_Recorder *R, int code, const char *what, prof_ModuleId id) {
  if (R->sticky != PROF_OK) return;
  R->sticky = code;
  char path[256];
  profT_short_path(R->S, id, path, sizeof path);
  snprintf(R->sticky_msg, sizeof R->sticky_msg, "%s (module id %d, path \"%s\")", what, (int)id,
           path);
}

int prof_check(prof_State *S) {
  int code = PROF_OK;
  pthread_mutex_lock(&S->lock);
  for (profR_Recorder *R = S->recorders; R != NULL; R = R->next) {
    if (R->sticky != PROF_OK && code == PROF_OK) {
      code = R->sticky;
      memcpy(S->errmsg, R->sticky_msg, sizeof S->errmsg);
    }
    R->sticky = PROF_OK;
    R->sticky_msg[0] = '\0';
  }
  pthread_mutex_unlock(&S->lock);
  return code;
}

void prof_set_phase(prof_State *S, prof_Phase phase) {
  profR_Recorder *R = profR_get(S);
  if (R == NULL || (unsigned)phase >= PROF_PHASE_COUNT) return;
  /* the phase's slots before its first op: an open frame's ops land in them (profR_add) */
  if (R->slots[phase] == NULL && profR_grow_slots(R, 0, phase) != PROF_OK) {
    profR_sticky(R, PROF_ERRMEM, "prof_set_phase: out of memory for the phase's counters",
                 profR_attr_node(R));
    return;
  }
  R->phase = phase;
  /* a device capture's module id carries the phase: the innermost call's is replaced in place */
  if (S->corr_push != NULL && R->sp > 0) {
    S->corr_pop(S->corr_ud, PROFK_EXT_MODULE);
    S->corr_push(S->corr_ud, PROFK_EXT_MODULE, profK_module_ext(R->stack[R->sp - 1].attr_node, phase));
  }
}

prof_Phase prof_get_phase(const prof_State *S) {
  profR_Recorder *R = profR_find((prof_State *)S);
  return R != NULL ? (prof_Phase)R->phase : PROF_PHASE_FORWARD;
}

prof_ModuleId prof_module_current(const prof_State *S) {
  profR_Recorder *R = profR_find((prof_State *)S);
  return R != NULL && R->sp > 0 ? R->stack[R->sp - 1].node : PROF_NO_MODULE;
}
