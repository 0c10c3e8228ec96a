/* capture.c — the device capture's lifecycle: open and close a source, the window, drains, stats. */
#include <dlfcn.h>
#include <string.h>

#include "capture.h"
#include "session.h"

void prof_capture_options_init(prof_CaptureOptions *opt) {
  memset(opt, 0, sizeof *opt);
  opt->size = sizeof *opt;
  opt->activities = PROF_CAPTURE_ALL;
  opt->buffer_bytes = 4 << 20;
  opt->buffers = 8;
  opt->device_events = 1 << 18;
  opt->correlations = 1 << 18;
}

static const profK_Source *source_of(prof_CaptureKind kind) {
  switch (kind) {
    case PROF_CAPTURE_NULL: return &profK_null_source;
    case PROF_CAPTURE_REPLAY: return &profK_replay_source;
    case PROF_CAPTURE_CUPTI: return &profK_cupti_source;
    default: return NULL;
  }
}

static int check_options(prof_State *S, const prof_CaptureOptions *o) {
  if (o->buffer_bytes < 1024 || o->buffer_bytes > ((int64_t)1 << 30))
    return profI_error(S, PROF_ERRARG, "prof_capture_open: buffer_bytes %lld is not in 1 KiB .. 1 GiB",
                       (long long)o->buffer_bytes);
  if (o->buffers < 1 || o->buffers > 4096)
    return profI_error(S, PROF_ERRARG, "prof_capture_open: buffers %d is not in 1 .. 4096",
                       (int)o->buffers);
  if (o->device_events < 1 || o->device_events > ((int64_t)1 << 32))
    return profI_error(S, PROF_ERRARG, "prof_capture_open: device_events %lld is not in 1 .. 2^32",
                       (long long)o->device_events);
  if (o->correlations < 1 || o->correlations > ((int64_t)1 << 30))
    return profI_error(S, PROF_ERRARG, "prof_capture_open: correlations %lld is not in 1 .. 2^30",
                       (long long)o->correlations);
  if ((o->activities & ~PROF_CAPTURE_ALL) != 0)
    return profI_error(S, PROF_ERRARG, "prof_capture_open: unknown activity bits 0x%x",
                       o->activities & ~PROF_CAPTURE_ALL);
  return PROF_OK;
}

/* The pool, the correlation map and the buffers of a source; the events outlive them. */
static void release(profK_Capture *C) {
  prof_State *S = C->S;
  if (C->pool.buf != NULL) profK_pool_free(S, &C->pool);
  profK_corr_free(S, &C->corr);
}

static void free_events(profK_Capture *C) {
  profI_free(C->S, C->events, sizeof *C->events * (size_t)C->cap_events);
  C->events = NULL;
  C->n_events = C->cap_events = 0;
}

void profK_free(prof_State *S) {
  profK_Capture *C = S->capture;
  if (C == NULL) return;
  prof_capture_close(S);
  free_events(C);
  profI_free(S, C, sizeof *C);
  S->capture = NULL;
}

/* A (device, host) pair for the time map, read as close together as the source allows. */
static void sample(profK_Capture *C) {
  int64_t dev;
  if (C->src == NULL || C->src->sample == NULL || C->src->sample(C, &dev) != PROF_OK) return;
  int64_t host = prof_now_ns();
  if (profK_time_add(&C->time, dev, host) == PROF_OK) C->stats.clock_pairs++;
}

int prof_capture_open(prof_State *S, prof_CaptureKind kind, const prof_CaptureOptions *opt) {
  if (S->capture != NULL && S->capture->src != NULL)
    return profI_error(S, PROF_ERRSTATE, "prof_capture_open: a %s capture is already open",
                       S->capture->src->name);
  const profK_Source *src = source_of(kind);
  if (src == NULL) return profI_error(S, PROF_ERRARG, "prof_capture_open: unknown kind %d", (int)kind);
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  if (opt != NULL) {
    size_t n = opt->size != 0 && opt->size < sizeof o ? opt->size : sizeof o;
    memcpy(&o, opt, n);
    o.size = sizeof o;
  }
  int rc = check_options(S, &o);
  if (rc != PROF_OK) return rc;
  if (kind == PROF_CAPTURE_CUPTI) {
    char why[256];
    if (!prof_capture_available(why, sizeof why))
      return profI_error(S, PROF_ERRDEVICE, "CUPTI capture: %s", why);
  }
  profK_Capture *C = S->capture;
  if (C == NULL) {
    C = profI_alloc(S, sizeof *C);
    if (C == NULL) return profI_error(S, PROF_ERRMEM, "prof_capture_open: out of memory");
    memset(C, 0, sizeof *C);
    C->S = S;
    S->capture = C;
  }
  if (C->cap_events != o.device_events) {
    free_events(C);
    C->events = profI_alloc(S, sizeof *C->events * (size_t)o.device_events);
    if (C->events == NULL)
      return profI_error(S, PROF_ERRMEM, "prof_capture_open: out of memory for %lld device events",
                         (long long)o.device_events);
    C->cap_events = o.device_events;
  }
  C->n_events = 0;
  C->opt = o;
  C->kind = kind;
  memset(&C->stats, 0, sizeof C->stats);
  C->dropped_cupti = 0;
  C->time.n = 0;
  C->window_begin = INT64_MAX;
  C->window_end = INT64_MAX;
  C->window_fixed = 0;
  C->started = 0;
  memset(C->live, 0, sizeof C->live);
  memset(&C->replay, 0, sizeof C->replay);
  C->next_flow = 1u << 30;   /* synthesised launches: clear of the ids fixtures use */
  if (C->demangle == NULL) {
    /* the C++ runtime is loaded by every CUDA program; a plain C host may lack it (then kernel
       names stay mangled). Loaded once, never unloaded: names stay valid for the session. */
    void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (cxx != NULL) *(void **)&C->demangle = dlsym(cxx, "__cxa_demangle");
  }
  C->last_name_in = C->last_name_raw = C->last_name_out = NULL;
  if ((rc = profK_pool_init(S, &C->pool, o.buffers, (size_t)o.buffer_bytes)) != PROF_OK) return rc;
  if ((rc = profK_corr_init(S, &C->corr, o.correlations)) != PROF_OK) {
    release(C);
    return rc;
  }
  C->src = src;
  if (src->enable != NULL && (rc = src->enable(C)) != PROF_OK) {
    C->src = NULL;
    release(C);
    return rc;
  }
  sample(C);
  if (o.save_path != NULL && (rc = profK_save_open(C, o.save_path)) != PROF_OK) {
    if (src->disable != NULL) src->disable(C);
    C->src = NULL;
    release(C);
    return rc;
  }
  C->opt.save_path = NULL;   /* the caller's string is not kept */
  if (profI_active(S)) {
    /* opened inside a window: it begins now */
    C->window_begin = prof_now_ns();
    C->started = 1;
  }
  /* the hooks last: from here every op, range and module call pushes its id */
  S->corr_ud = C;
  S->corr_pop = src->pop;
  S->corr_push = src->push;
  profI_range_fast_update(S);   /* ranges leave their leaf path: they push a correlation now */
  return PROF_OK;
}

prof_CaptureKind prof_capture_kind(const prof_State *S) {
  const profK_Capture *C = S->capture;
  return C != NULL && C->src != NULL ? C->kind : PROF_CAPTURE_NONE;
}

static profK_Capture *open_capture(prof_State *S) {
  profK_Capture *C = S->capture;
  return C != NULL && C->src != NULL ? C : NULL;
}

/* Hands completed buffers over, samples the clocks and decodes once the window is known. */
static int drain(profK_Capture *C, int forced) {
  int rc = PROF_OK;
  if (C->src->flush != NULL) rc = C->src->flush(C, forced);
  sample(C);
  if (C->started) {
    int r = profK_decode_ready(C);
    if (rc == PROF_OK) rc = r;
    profK_resolve(C);
  }
  return rc;
}

int prof_capture_drain(prof_State *S) {
  profK_Capture *C = open_capture(S);
  return C != NULL ? drain(C, 0) : PROF_OK;
}

void prof_capture_close(prof_State *S) {
  if (S == NULL) return;
  profK_Capture *C = open_capture(S);
  if (C == NULL) return;
  S->corr_push = NULL;
  S->corr_pop = NULL;
  S->corr_ud = NULL;
  profI_range_fast_update(S);
  (void)drain(C, 1);
  if (C->src->disable != NULL) C->src->disable(C);
  profK_save_close(C);
  C->stats.dropped_pool = atomic_load(&C->pool.refused);
  C->src = NULL;
  release(C);
}

void profK_on_reset(prof_State *S) {
  profK_Capture *C = S->capture;
  if (C == NULL) return;
  C->n_events = 0;
  int64_t pairs = C->stats.clock_pairs;
  memset(&C->stats, 0, sizeof C->stats);
  C->stats.clock_pairs = pairs;
  C->last_name_in = C->last_name_raw = C->last_name_out = NULL;
}

void profK_on_start(prof_State *S) {
  profK_Capture *C = open_capture(S);
  if (C == NULL) return;
  if (!C->window_fixed) {
    C->window_begin = prof_now_ns();
    C->window_end = INT64_MAX;
  }
  C->started = 1;
  profK_corr_clear(&C->corr);
  /* what warmup left queued is decoded now, against this window (mostly out of it) */
  (void)drain(C, 0);
}

void profK_on_stop(prof_State *S) {
  profK_Capture *C = open_capture(S);
  if (C == NULL) return;
  if (!C->window_fixed) C->window_end = prof_now_ns();
  (void)drain(C, 1);
}

void profK_on_snapshot(prof_State *S) {
  profK_Capture *C = open_capture(S);
  if (C != NULL && profI_active(S)) (void)drain(C, 0);
}

void prof_capture_stats(const prof_State *S, prof_CaptureStats *out) {
  prof_CaptureStats st;
  memset(&st, 0, sizeof st);
  const profK_Capture *C = S->capture;
  if (C != NULL) {
    st = C->stats;
    st.dropped_cupti = C->dropped_cupti;
    if (C->src != NULL) st.dropped_pool = atomic_load(&((profK_Capture *)C)->pool.refused);
  }
  st.size = sizeof st;
  size_t n = out->size != 0 && out->size < sizeof st ? out->size : sizeof st;
  memcpy(out, &st, n);
  out->size = n;
}
