/* session.h — the profiler state's layout: module tree nodes, the call stack and accumulators. */
#ifndef PROF_SESSION_H
#define PROF_SESSION_H

#include "prof_internal.h"

/* One phase's counters of one module (or of the whole session). */
typedef struct profT_Acc {
  int64_t calls;
  int64_t macs, flops, bytes_read, bytes_written;
  int64_t time_ns;
} profT_Acc;

typedef struct profT_Node {
  char *name, *type;           /* owned */
  int32_t parent, first_child, last_child, next_sibling;
  int32_t depth;
  uint32_t flags;
  int32_t open;                /* frames currently open on this node (recursion guard) */
  int64_t params;
  profT_Acc incl[PROF_PHASE_COUNT];
  profT_Acc self[PROF_PHASE_COUNT];
} profT_Node;

/*
** An open module call. Inclusive counts are the difference of the session's running totals
** between enter and exit, so an op costs O(1) whatever the depth of the stack.
*/
typedef struct profT_Frame {
  int32_t node;
  int32_t attr_node;           /* where ops inside this frame's own body go (-1: none) */
  uint8_t counted;             /* outermost activation of node: it owns the time and counts */
  uint8_t suppressing;         /* this frame switched suppression on (ignored, exact) */
  uint8_t phase;
  int64_t t0;
  profT_Acc start;             /* running totals of phase at enter */
} profT_Frame;

/* A C flop rule for one module type. */
typedef struct profT_Rule {
  char *type;                  /* owned */
  prof_RuleFn fn;
  void *ud;
} profT_Rule;

struct prof_State {
  prof_Alloc alloc;
  void *ud;
  char errmsg[PROF_ERRMSG_SIZE];
  int sticky;                  /* first hot-path error since the last prof_check */
  char sticky_msg[PROF_ERRMSG_SIZE];
  prof_Conventions conv;
  int active;
  prof_Phase phase;
  /* module tree */
  profT_Node *nodes;
  int32_t n_nodes, cap_nodes;
  int32_t first_root, last_root;
  /* call stack of the (single) recording thread */
  profT_Frame stack[PROF_STACK_MAX];
  int32_t sp;
  int32_t suppress;            /* > 0: ops are dropped (inside an ignored module, exact) */
  /* C flop rules */
  profT_Rule *rules;
  int32_t n_rules, cap_rules;
  /* ops open on the recording thread (prof_op_begin .. prof_op_end), for memory attribution */
  prof_Op *open_ops[PROF_OP_NEST_MAX];
  int32_t op_depth;
  uint64_t next_correlation;
  int64_t mem_live[2], mem_peak[2];          /* per device: PROF_DEVICE_CPU, PROF_DEVICE_CUDA */
  /* counters */
  profT_Acc totals[PROF_PHASE_COUNT];        /* every counted op */
  profT_Acc unattributed[PROF_PHASE_COUNT];  /* counted ops outside every module */
};

/* tree.c: node storage shared with record.c and profile_json.c */
PROF_INTERNAL void profT_free_nodes(prof_State *S);
PROF_INTERNAL void profT_zero_counters(prof_State *S);
PROF_INTERNAL int32_t profT_attr_node(const prof_State *S);

/* rules.c */
PROF_INTERNAL const profT_Rule *profR_find(const prof_State *S, const char *type);
PROF_INTERNAL void profR_free(prof_State *S);
/* Runs node k's C rule, if any, at the end of a call (k is the innermost open frame). */
PROF_INTERNAL void profR_apply(prof_State *S, int32_t k);
/* Sets a hot-path error that prof_check reports (the first one wins). */
PROF_INTERNAL void profT_sticky(prof_State *S, int code, const char *what, prof_ModuleId id);

#endif
