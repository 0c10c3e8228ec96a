/* session.h — the layouts behind prof_State: what a session registers, each thread's recorder, the snapshot. */
#ifndef PROF_SESSION_H
#define PROF_SESSION_H

#include <pthread.h>
#include <stdatomic.h>

#include "clock.h"
#include "prof_internal.h"

/* What the device capture's correlation hooks push (CUPTI external ids CUSTOM0..2). */
enum { PROFK_EXT_OP = 0, PROFK_EXT_RANGE = 1, PROFK_EXT_MODULE = 2, PROFK_EXT_KINDS = 3 };

/* A module call's external id: its attribution node and phase, both + 1 so that 0 is "none". */
static inline uint64_t profK_module_ext(int32_t node, int phase) {
  return ((uint64_t)(uint32_t)(phase + 1) << 32) | (uint32_t)(node + 1);
}

/* One phase's counters of one module (or of the whole session). */
typedef struct profT_Acc {
  int64_t calls;
  int64_t macs, flops, bytes_read, bytes_written;
  int64_t time_ns;             /* ticks in a recorder (clock.h); nanoseconds in the snapshot */
} profT_Acc;

/*
** A registered module. Nodes live in fixed-size chunks that never move, so a thread recording
** into node k never races a registration that adds node k + 1 on another thread.
*/
typedef struct profT_Node {
  const char *name, *type;     /* interned (names.c): a million modules share a few names */
  int32_t parent, first_child, last_child, next_sibling;
  int32_t depth;
  uint32_t flags;              /* PROF_MODULE_*; set before recording starts */
  int64_t params;
} profT_Node;

#define PROF_NODE_CHUNK 1024
#define PROF_NODE_CHUNKS 4096  /* 4 M modules per session */

/* What one recorder keeps of one module in one phase: its calls on that thread. */
typedef struct profR_Slot {
  profT_Acc incl, self;
} profR_Slot;

/*
** An open module call. Inclusive counts are the difference of the recorder's running totals
** between enter and exit, so an op costs O(1) whatever the depth of the stack.
*/
typedef struct profT_Frame {
  int32_t node;
  int32_t attr_node;           /* where ops inside this frame's own body go (-1: none) */
  uint8_t counted;             /* outermost activation of node: it owns the time and counts */
  uint8_t suppressing;         /* this frame switched suppression on (ignored under exact, rule) */
  uint8_t ruled;               /* a flop rule counts this call (forward of a rule module) */
  uint8_t rule_done;           /* prof_module_apply_rule already ran for this call */
  uint8_t phase;
  int64_t t0;                  /* ticks (clock.h) */
  profT_Acc start;             /* running totals of phase at enter */
} profT_Frame;

/* One recorded event, as the recorder's preallocated buffer holds it. */
typedef struct profR_Event {
  /* The first 64 bytes are all a range writes (record_ranges.c's put_range); prof_event_at
     gives a range zero for the fields after value. */
  uint8_t kind;                /* prof_EventKind */
  uint8_t phase;
  int16_t op_kind;
  int32_t module;
  int32_t device;
  int32_t shapes;              /* 1 + where the op's input shapes start in the recorder's arena; 0: none */
  const char *name;            /* static, or interned by the session */
  const char *stack;           /* the stack hook's source location (interned), or NULL */
  uint64_t correlation;
  int64_t t_begin, t_end;      /* ticks: prof_event_at gives them as nanoseconds */
  int64_t value;
  union {                      /* memory events count no MACs: their slot keeps the block's address */
    int64_t macs;              /* ops and modules */
    uint64_t address;          /* PROF_EVENT_MEMORY and PROF_EVENT_MEMORY_TAG */
  };
  int64_t flops, bytes_read, bytes_written;
  int64_t bytes_allocated, bytes_freed;
  int64_t total;
} profR_Event;

/* profR_push and record_ranges.c's put_range set every field they own one by one (no memset);
   a new field must be set there too */
_Static_assert(sizeof(profR_Event) == 120, "profR_Event changed: set its fields in profR_push and put_range");
_Static_assert(offsetof(profR_Event, value) + sizeof(int64_t) == 64,
               "a range's fields must stay in the event's first 64 bytes");

/* int64 words of the shapes arena per buffered event: an op with two 2-d inputs takes 7 */
#define PROF_SHAPE_WORDS_PER_EVENT 12

/* An open user range. Its fields from name to t0 lie in the order of the event's name ..
   t_begin, so that the pop copies them as two 16-byte moves (record_ranges.c's put_range). */
typedef struct profR_Range {
  const char *name;
  const char *stack;           /* the stack hook's location at the push */
  uint64_t corr;               /* its correlation while a device capture is open, else 0 */
  int64_t t0;
  int64_t number1;             /* prof_range_push_numbered's n + 1; 0: a plain range */
  /* the event's kind, op_kind and module (the innermost one when it opened) as the value of its
     first 8 bytes on a little-endian machine, the phase (the pop's) left 0: record_ranges.c */
  uint64_t head;
} profR_Range;

_Static_assert(offsetof(profR_Range, stack) - offsetof(profR_Range, name) ==
                       offsetof(profR_Event, stack) - offsetof(profR_Event, name) &&
                   offsetof(profR_Range, corr) - offsetof(profR_Range, name) ==
                       offsetof(profR_Event, correlation) - offsetof(profR_Event, name) &&
                   offsetof(profR_Range, t0) - offsetof(profR_Range, name) ==
                       offsetof(profR_Event, t_begin) - offsetof(profR_Event, name),
               "a range's name, stack, corr and t0 must lie as the event's name .. t_begin");

/* The calling thread's recording state: no other thread touches it while recording runs. */
typedef struct profR_Recorder {
  prof_State *S;
  struct profR_Recorder *next; /* the session's list */
  pthread_t thread;
  int32_t index;               /* 0, 1, ... in creation order: the event's thread */
  int32_t phase;               /* prof_Phase */
  int sticky;                  /* first hot-path error since the last prof_check */
  char sticky_msg[PROF_ERRMSG_SIZE];
  /* call stack */
  profT_Frame *stack;          /* cap_stack frames, grown by profR_grow_stack */
  int32_t sp, cap_stack;
  int32_t suppress;            /* > 0: ops are dropped (inside an ignored module, or a rule's) */
  int saturated;               /* a running total passed INT64_MAX: sums saturate from then on */
  /* ops open between prof_op_begin and prof_op_end (memory attribution) */
  prof_Op *open_ops[PROF_OP_NEST_MAX];
  int32_t op_depth;
  uint64_t next_correlation;
  /* running totals */
  profT_Acc totals[PROF_PHASE_COUNT];        /* every counted op */
  profT_Acc unattributed[PROF_PHASE_COUNT];  /* counted ops outside every module */
  /* user ranges */
  profR_Range ranges[PROF_RANGE_MAX];
  int32_t n_ranges;
  /* per module, cap_slots of each: grown to the session's module count when first needed. A
     phase's slots exist once the thread records in it, so a forward-only run pays for one phase
     of counters, not three */
  int32_t *open;               /* frames currently open on each node (recursion guard) */
  profR_Slot *slots[PROF_PHASE_COUNT];
  int32_t cap_slots;
  /* events (none when the session buffers none) */
  profR_Event *events;
  int64_t cap_events, n_events, dropped;
  /* input shapes of buffered ops (record_shapes): [ninputs, (dtype << 8 | ndim), dims..., ...] */
  int64_t *shapes;
  int64_t cap_shapes, n_shapes, shapes_dropped;
} profR_Recorder;

/* A flop rule for one module type: a C callback, or a host's trampoline (the Lua binding's). */
typedef struct profT_Rule {
  char *type;                  /* owned */
  prof_RuleFn fn;
  void *ud;
} profT_Rule;

/* One module in the snapshot: every thread's calls merged, the ignore semantics applied. */
typedef struct profS_Module {
  int64_t params_counted;      /* params less those of hidden subtrees (exact conventions) */
  int64_t params_removed;      /* scratch while merging: params of hidden subtrees below */
  uint8_t hidden;              /* ignored, or under exact inside an ignored subtree */
} profS_Module;

/* One phase of one module in the snapshot: host counts, and GPU time from the device capture. */
typedef struct profS_Counts {
  profT_Acc incl, self;
} profS_Counts;

typedef struct profS_Device {
  int64_t incl, self, ops;
} profS_Device;

typedef struct profS_Snapshot {
  profS_Module *modules;
  int32_t n, cap;              /* every array below holds cap modules */
  /* per phase, NULL while no thread recorded in it (its counts are zeros), and GPU time, NULL
     while the capture delivered none for it: a forward on the host holds one of six */
  profS_Counts *counts[PROF_PHASE_COUNT];
  profS_Device *device[PROF_PHASE_COUNT];
  /* the modules' pre-order at the snapshot (n of them), so that a reader taking a million
     modules in slices does not walk the tree once per slice */
  int32_t *preorder;
  int32_t cap_preorder;
  int64_t preorder_version;    /* the tree_version it was walked at */
  profT_Acc totals[PROF_PHASE_COUNT];
  profT_Acc unattributed[PROF_PHASE_COUNT];
  int64_t mem_peak[2];
  int64_t n_events, dropped;
  int64_t n_host_events;       /* n_events less the device capture's, which follow them */
  int saturated;               /* some count reached INT64_MAX (saturate.h) and stopped there */
  int trimmed;                 /* prof_trim freed the recorders' counters: this is the window's */
} profS_Snapshot;

struct prof_State {
  prof_StateHead head;         /* first (prof.h): recording, read by the annotation macros */
  prof_Alloc alloc;
  void *ud;
  prof_OutputWatch watch;      /* told of every output temporary (atomic_file.c) */
  char errmsg[PROF_ERRMSG_SIZE];
  pthread_mutex_t lock;        /* registration, rules, the recorder list: the cold paths */
  int64_t serial;              /* tells this session from an earlier one at the same address */
  prof_Conventions conv;
  /* serial while ranges may take their leaf path (active, TSC clock, no stack hook), else 0: one
     compare with the thread's cache entry answers all four questions (record_ranges.c) */
  atomic_llong range_fast;     /* kept by profI_range_fast_update */
  profH_Clock clock;           /* what recorders stamp with, and its mapping to nanoseconds */
  int64_t event_capacity;      /* events per recorder; 0: only running totals */
  int memory_events;           /* buffer every allocation and free */
  int record_shapes;           /* buffered ops keep their inputs' shapes and dtypes */
  prof_StackFn stack_fn;       /* with_stack: the source location of each op and range */
  void *stack_ud;
  /* live and peak bytes per device (PROF_DEVICE_CPU, PROF_DEVICE_CUDA): atomics, not locks */
  atomic_llong mem_live[2], mem_peak[2];
  /* interned names: an open-addressing set of owned strings */
  char **names;
  int32_t n_names, cap_names;
  /* module tree */
  profT_Node *chunks[PROF_NODE_CHUNKS];
  atomic_int n_nodes;
  int64_t tree_version;        /* changes with every node added and every clear (under lock) */
  int32_t first_root, last_root;
  /* flop rules */
  profT_Rule *rules;
  int32_t n_rules, cap_rules;
  /* recorders, one per thread that recorded */
  profR_Recorder *recorders;
  int32_t n_recorders;
  /* merged counts (prof_snapshot, prof_stop) */
  profS_Snapshot snap;
  /* device capture (core/prof/capture/): the correlation hooks its source installs, called around
     every op, range and module call while it is open; NULL (one branch) otherwise */
  void (*corr_push)(void *ud, int kind, uint64_t id);
  void (*corr_pop)(void *ud, int kind);
  void *corr_ud;
  struct profK_Capture *capture;
};

/* tree.c: the registry */
PROF_INTERNAL void profT_free_nodes(prof_State *S);
/* tree.c: the ids at pre-order positions first .. first + n - 1 into ids (those that exist),
   walked from the roots; returns the number of modules */
PROF_INTERNAL int32_t profT_preorder(const prof_State *S, int32_t first, prof_ModuleId *ids,
                                     int32_t n);
static inline profT_Node *profT_node(const prof_State *S, int32_t k) {
  return &S->chunks[k / PROF_NODE_CHUNK][k % PROF_NODE_CHUNK];
}
static inline int32_t profT_count(const prof_State *S) {
  return atomic_load_explicit(&((prof_State *)S)->n_nodes, memory_order_acquire);
}

/* recorder.c: the calling thread's recorder */
PROF_INTERNAL profR_Recorder *profR_lookup(prof_State *S, int create) __attribute__((cold));
PROF_INTERNAL void profR_free_all(prof_State *S);
PROF_INTERNAL void profR_zero(profR_Recorder *R);
/* Sets a hot-path error that prof_check reports (the first one on a thread wins). */
PROF_INTERNAL void profR_sticky(profR_Recorder *R, int code, const char *what, prof_ModuleId id);

/* rules.c */
PROF_INTERNAL const profT_Rule *profU_find(const prof_State *S, const char *type);
PROF_INTERNAL void profU_free(prof_State *S);
/* Runs frame f's rule (module f->node, innermost open) with the call's operands. */
PROF_INTERNAL int profU_apply(profR_Recorder *R, profT_Frame *f, const prof_RuleCall *call);

/* names.c */
PROF_INTERNAL void profN_free(prof_State *S);
/* prof_intern with S->lock held by the caller; NULL when out of memory. */
PROF_INTERNAL const char *profN_intern_locked(prof_State *S, const char *name);

/* snapshot.c */
PROF_INTERNAL void profS_free(prof_State *S);
PROF_INTERNAL void profS_empty(prof_State *S);

/* Whether a window records (prof_start .. prof_stop): the head's flag, read by recorders on any
   thread and by prof.h's macros, written by the thread that starts and stops (the __atomic
   builtins prof.h reads it with, which C++ hosts also have). */
static inline int profI_active(const prof_State *S) {
  return __atomic_load_n(&S->head.recording, __ATOMIC_RELAXED);
}
static inline void profI_set_active(prof_State *S, int on) {
  __atomic_store_n(&S->head.recording, on, __ATOMIC_SEQ_CST);
}

/* range_fast again, after active, the clock, the stack hook or the capture's hooks changed
   (prof_start, prof_capture_open and _close). Inline: capture/ calls it, and a call into
   state.c would close a dependency circle (state -> snapshot -> capture -> state). */
static inline void profI_range_fast_update(prof_State *S) {
  int fast = profI_active(S) && S->clock.tsc && S->stack_fn == NULL && S->corr_push == NULL;
  atomic_store(&S->range_fast, fast ? S->serial : 0);
}

#endif
