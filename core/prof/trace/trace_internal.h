/* trace_internal.h — declarations shared by the trace writer's files (trace_*.c); never installed. */
#ifndef TRACE_INTERNAL_H
#define TRACE_INTERNAL_H

#include <stdio.h>

#include "prof_internal.h"

/* {====================== event order (trace_sort.c) ======================} */

/* One buffered event's place in the trace: where it is (prof_event_at) and when. */
typedef struct profX_Key {
  int64_t begin, end;
  int64_t index;               /* for prof_event_at */
} profX_Key;

/* One recording thread's events: keys[start .. end). */
typedef struct profX_Run {
  int64_t start, end;
  int32_t thread;              /* prof_Event.thread */
} profX_Run;

typedef struct profX_Order {
  profX_Key *keys;             /* n keys, each thread's run sorted so that spans nest */
  int64_t n;
  profX_Run *runs;             /* one per thread with events, in recorder order */
  int32_t n_runs, cap_runs;
  int64_t min_begin, max_end;  /* over every event; both 0 when there is none */
} profX_Order;

/*
** Orders the session's buffered events: per thread (in recorder order) by begin time, then the
** longer first, then the later closed first (an enclosing span closes after what it encloses),
** so that a reader meets every span before the spans inside it. O(n log n), and close to O(n) on
** what recorders buffer (long runs already in order). [may fail: PROF_ERRMEM]
*/
PROF_INTERNAL int profX_order(prof_State *S, profX_Order *o);
PROF_INTERNAL void profX_order_free(prof_State *S, profX_Order *o);

/* {====================== Lua frames as spans (trace_frames.c) ======================} */

/*
** with_stack's locations become slices on a thread's frames row: events in begin order feed the
** tracker; a frame opens at the first event whose stack holds it (below the same outer frames)
** and closes when an event's stack leaves it, lasting to the end of the latest event inside it.
** The slices nest by construction. Frame text points into the session's interned stacks.
*/
#define PROFX_MAX_FRAMES 16
typedef struct profX_Frames {
  int n;
  const char *start[PROFX_MAX_FRAMES];
  size_t len[PROFX_MAX_FRAMES];
  int64_t begin[PROFX_MAX_FRAMES], end[PROFX_MAX_FRAMES];
} profX_Frames;

typedef void (*profX_FrameFn)(void *ud, const char *name, size_t len, int64_t begin, int64_t end);
PROF_INTERNAL void profX_frames_feed(profX_Frames *F, const char *stack, int64_t begin,
                                     int64_t end, profX_FrameFn emit, void *ud);
PROF_INTERNAL void profX_frames_flush(profX_Frames *F, profX_FrameFn emit, void *ud);

/* {====================== device events (trace_gpu.c) ======================} */

/* What trace_gpu.c writes through: trace_writer.c's buffered output. */
typedef struct profX_Sink {
  void *ud;
  void (*raw)(void *ud, const char *s, size_t n);
  void (*str)(void *ud, const char *s);        /* a JSON string, escaped */
  int *first_event;                            /* no comma before the document's first event */
  int64_t base;                                /* the time written as ts 0 */
  int64_t pid;                                 /* the host's process row */
  const char *process_name;
} profX_Sink;

/*
** The capture's device events in Kineto's layout: kernels, copies and memsets on pid = device,
** tid = stream; runtime calls on the launching thread's row; ac2g flows between them;
** gpu_user_annotation spans per range and stream; GPU memory counters; CUPTI overhead on pid -1.
** [may fail: PROF_ERRMEM for its indexes]
*/
PROF_INTERNAL int profX_gpu_events(prof_State *S, const profX_Sink *k);
/* The device events' earliest begin and latest end; unchanged when there are none. */
PROF_INTERNAL void profX_gpu_bounds(const prof_State *S, int64_t *min_begin, int64_t *max_end);
/* ",\n\"cupti\":{...}" with the capture's counts, when a capture ran. */
PROF_INTERNAL void profX_gpu_summary(const prof_State *S, const profX_Sink *k);

/* {====================== gzip sink (trace_gzip.c) ======================} */

typedef struct profX_Gzip profX_Gzip;

/* A gzip stream into f (compressed as it is written; memory from S's allocator). NULL when out
   of memory, with S's error set. */
PROF_INTERNAL profX_Gzip *profX_gzip_open(prof_State *S, FILE *f);
/* A prof_WriteFn: ud is the profX_Gzip. Non-zero once compressing or writing has failed. */
PROF_INTERNAL int profX_gzip_write(void *ud, const char *data, size_t len);
/* Ends the stream (the gzip trailer) and frees g; NULL-safe. ok 0 only frees (after the writer
   failed). Returns PROF_OK, or PROF_ERRIO with S's error saying why a write failed. */
PROF_INTERNAL int profX_gzip_close(profX_Gzip *g, int ok);

#endif
