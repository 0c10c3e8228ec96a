/* capture.h — the device capture's internals: sources, buffer pool, time map, correlation, device events. */
#ifndef PROF_CAPTURE_H
#define PROF_CAPTURE_H

#include <pthread.h>
#include <stdatomic.h>

#include "session.h"

/* The hooks' kinds (session.h's PROFK_EXT_*) are CUPTI's CUSTOM0 + kind. */
#define PROFK_CUPTI_CUSTOM0 3

/* {====================== buffer pool (pool.c) ======================} */

/*
** Preallocated activity buffers. CUPTI asks for one (request) on whatever thread fills one and
** hands it back completed on its own thread: both take a buffer index off a list under a mutex
** and allocate nothing. The decoder takes completed buffers in completion order.
*/
typedef struct profK_Buffer {
  uint8_t *data;
  size_t valid;                /* bytes of records, set at completion */
  int64_t dropped;             /* CUPTI's drop count reported with it */
} profK_Buffer;

typedef struct profK_Pool {
  pthread_mutex_t lock;
  profK_Buffer *buf;
  int32_t n;
  size_t size;                 /* bytes per buffer */
  int32_t *free_list, n_free;  /* indices of free buffers */
  int32_t *ready, ready_head, n_ready; /* completed, a ring in completion order */
  atomic_llong refused;        /* requests refused: every buffer was in use */
} profK_Pool;

PROF_INTERNAL int profK_pool_init(prof_State *S, profK_Pool *p, int32_t n, size_t size);
PROF_INTERNAL void profK_pool_free(prof_State *S, profK_Pool *p);
/* A free buffer's index, or -1 (counted in refused). */
PROF_INTERNAL int32_t profK_pool_take(profK_Pool *p);
/* Buffer data (from take) completed with valid bytes: queued for the decoder. */
PROF_INTERNAL void profK_pool_complete(profK_Pool *p, const uint8_t *data, size_t valid,
                                       int64_t dropped);
/* The oldest completed buffer's index, or -1; give it back with profK_pool_release. */
PROF_INTERNAL int32_t profK_pool_next_ready(profK_Pool *p);
PROF_INTERNAL void profK_pool_release(profK_Pool *p, int32_t i);

/* {====================== time map (timemap.c) ======================} */

#define PROFK_PAIRS_MAX 4096
typedef struct profK_Pair {
  int64_t dev, host;
} profK_Pair;

/* Device-clock -> host-clock samples, in increasing device time. */
typedef struct profK_TimeMap {
  profK_Pair pair[PROFK_PAIRS_MAX];
  int32_t n;
} profK_TimeMap;

/* Adds a pair; when full, every other older pair is dropped (the span stays covered). A pair
   earlier than the last is refused (returns PROF_ERRARG). */
PROF_INTERNAL int profK_time_add(profK_TimeMap *m, int64_t dev, int64_t host);
/* dev on the host clock: piecewise linear between the pairs around it, the nearest segment's
   line outside them, the offset of the one pair, the identity with none. */
PROF_INTERNAL int64_t profK_time_map(const profK_TimeMap *m, int64_t dev);

/* {====================== correlation (correlate.c) ======================} */

/* What CUPTI's EXTERNAL_CORRELATION records said about one CUPTI correlation id. */
typedef struct profK_Corr {
  uint32_t id;                 /* CUPTI correlation id; 0: an empty slot */
  uint32_t thread1;            /* recorder index + 1 of the launch (runtime record), 0 unknown */
  uint64_t ext[PROFK_EXT_KINDS];
} profK_Corr;

typedef struct profK_CorrMap {
  profK_Corr *slot;            /* two generations of cap slots each */
  int64_t cap;                 /* a power of two */
  int64_t n, limit;            /* ids in the current generation; limit: half the option's */
  int current;                 /* which generation takes new ids */
} profK_CorrMap;

PROF_INTERNAL int profK_corr_init(prof_State *S, profK_CorrMap *m, int64_t limit);
PROF_INTERNAL void profK_corr_free(prof_State *S, profK_CorrMap *m);
PROF_INTERNAL void profK_corr_clear(profK_CorrMap *m);
/* The entry of id, made when absent: the last correlations / 2 .. correlations ids are kept. */
PROF_INTERNAL profK_Corr *profK_corr_put(profK_CorrMap *m, uint32_t id);
PROF_INTERNAL const profK_Corr *profK_corr_get(const profK_CorrMap *m, uint32_t id);

/* {====================== device events ======================} */

typedef struct profK_Event {
  uint8_t kind;                /* prof_EventKind */
  uint8_t phase;
  uint8_t api;
  uint8_t resolved;            /* attribution looked up */
  int8_t copy_kind, src_kind, dst_kind;
  int32_t device, context, stream;
  int32_t module;
  int32_t thread;
  int32_t cbid;
  uint32_t flow;
  uint64_t op, range;
  int64_t t_begin, t_end;      /* host ns */
  int64_t bytes, value, total;
  uint64_t address;
  int32_t grid[3], block[3];
  int32_t registers, shared_memory;
  const char *name;            /* static or interned */
} profK_Event;

/* {====================== sources ======================} */

typedef struct profK_Capture profK_Capture;
typedef struct profK_Saver profK_Saver;

/* A buffer's record iterator: cursor starts at 0 and is the iterator's own; *rec NULL at the end. */
typedef int (*profK_NextFn)(uint64_t *cursor, const uint8_t *buf, size_t valid, const void **rec);

/* What a source does for the capture; NULL entries do nothing. */
typedef struct profK_Source {
  const char *name;
  int (*enable)(profK_Capture *C);          /* at open */
  int (*flush)(profK_Capture *C, int forced);/* hand completed buffers to the pool's ready list */
  int (*sample)(profK_Capture *C, int64_t *dev);   /* the device clock now */
  void (*disable)(profK_Capture *C);        /* at close */
  const char *(*api_name)(profK_Capture *C, int api, int32_t cbid);
  profK_NextFn next;                        /* NULL: the replay layout */
  void (*push)(void *ud, int kind, uint64_t id);   /* the correlation hooks */
  void (*pop)(void *ud, int kind);
} profK_Source;

PROF_INTERNAL const profK_Source profK_null_source, profK_replay_source, profK_cupti_source;

/* The capture's fixed tables. Kineto's copy and memset names are made once per (copy kind,
   source, destination) and memory kind: CUDA 13's CUpti_ActivityMemcpyKind has 11 values and
   CUpti_ActivityMemoryKind 8 (a record outside them is named plainly). Live device memory is
   kept per device index; indices past the last share it. CUPTI's API names are cached per
   callback id, which CUDA 13 keeps below 1024 in both the runtime's and the driver's domain
   (CUPTI_RUNTIME_TRACE_CBID_SIZE 523, CUPTI_DRIVER_TRACE_CBID_SIZE 807); later ids are looked up
   each time. */
#define PROFK_COPY_KINDS 11
#define PROFK_MEMORY_KINDS 8
#define PROFK_MAX_DEVICES 64
#define PROFK_API_CBIDS 1024

/* The replay hooks' stacks: what a synthesised launch correlates to. */
#define PROFK_REPLAY_DEPTH 256
typedef struct profK_ReplayStacks {
  uint64_t id[PROFK_EXT_KINDS][PROFK_REPLAY_DEPTH];
  int32_t n[PROFK_EXT_KINDS];
} profK_ReplayStacks;

struct profK_Capture {
  prof_State *S;
  const profK_Source *src;
  prof_CaptureKind kind;
  prof_CaptureOptions opt;
  profK_Pool pool;
  profK_TimeMap time;
  profK_CorrMap corr;
  profK_Event *events;
  int64_t n_events, cap_events;
  prof_CaptureStats stats;
  int64_t dropped_cupti;       /* since open */
  int64_t window_begin, window_end; /* host ns; begin INT64_MAX before the first prof_start */
  int window_fixed;            /* prof_capture_replay_window set it */
  int started;                 /* a prof_start happened since open */
  int64_t live[PROFK_MAX_DEVICES]; /* GPU memory: live bytes per device index */
  uint32_t next_flow;          /* replay: CUPTI correlation ids of synthesised launches */
  profK_ReplayStacks replay;   /* replay hooks (single recording thread) */
  const char *last_name_in, *last_name_raw, *last_name_out; /* the last kernel name seen: its
                                            pointer, an interned copy, and what it became */
  /* the process's C++ demangler (libstdc++'s __cxa_demangle), when one is loaded: Kineto shows
     kernels demangled */
  char *(*demangle)(const char *mangled, char *buf, size_t *len, int *status);
  /* "Memcpy HtoD (Pageable -> Device)" and "Memset (Device)", interned */
  const char *copy_names[PROFK_COPY_KINDS][PROFK_MEMORY_KINDS][PROFK_MEMORY_KINDS];
  const char *set_names[PROFK_MEMORY_KINDS];
  void *cupti;                 /* the CUPTI source's state */
  profK_Saver *saver;          /* save_path's fixture being written, or NULL */
};

/* {====================== saving (fixture_save.c) ======================} */

/* The fixture at path is written as records are decoded and committed at close (atomically). */
PROF_INTERNAL int profK_save_open(profK_Capture *C, const char *path);
PROF_INTERNAL void profK_save_buffer(profK_Capture *C, int begin, int64_t dropped);
PROF_INTERNAL void profK_save_record(profK_Capture *C, const void *rec);
PROF_INTERNAL void profK_save_close(profK_Capture *C);

/* {====================== decoding (decode.c) ======================} */

/* Decodes a record stream of profrun's replay layout (next NULL), or CUPTI's own buffer through
   its iterator; returns PROF_OK or PROF_ERRARG with S's message at a bad offset. */
PROF_INTERNAL int profK_decode_buffer(profK_Capture *C, const uint8_t *buf, size_t valid,
                                      profK_NextFn next);
/* The replay layout's iterator: [u32 kind][u32 size][record], padded to 8. *rec NULL at the end. */
PROF_INTERNAL int profK_replay_next(uint64_t *cursor, const uint8_t *buf, size_t valid,
                                    const void **rec);
/* sizeof the CUDA 13 record struct of kind, 0 for a kind the decoder does not read. */
PROF_INTERNAL size_t profK_record_size(uint32_t kind);
/* Looks every unresolved device event's attribution up (after the last decode). */
PROF_INTERNAL void profK_resolve(profK_Capture *C);
/* Decodes every ready buffer of the pool. */
PROF_INTERNAL int profK_decode_ready(profK_Capture *C);

/* {====================== the session's side (capture.c) ======================} */

/* prof_start: the window opens (stats and events reset, ready buffers decoded); prof_stop: a
   forced flush, the window closes, everything decoded and resolved; prof_snapshot while active:
   a drain. Each does nothing without a capture. */
PROF_INTERNAL void profK_on_start(prof_State *S);
PROF_INTERNAL void profK_on_stop(prof_State *S);
PROF_INTERNAL void profK_on_snapshot(prof_State *S);
PROF_INTERNAL void profK_on_reset(prof_State *S);
PROF_INTERNAL void profK_free(prof_State *S);
/* Device events, for prof_event_at and the snapshot. */
PROF_INTERNAL int64_t profK_event_count(const prof_State *S);
PROF_INTERNAL const profK_Event *profK_event(const prof_State *S, int64_t i);
PROF_INTERNAL void profK_fill_event(const prof_State *S, const profK_Event *d, prof_Event *ev);

#endif
