/* snapshot.c — stop -> plain data: every thread's counts merged, containers summed, ignore semantics applied. */
#include <stddef.h>
#include <string.h>

#include "capture/capture.h"
#include "record/recorder.h"
#include "saturate.h"

void profS_free(prof_State *S) {
  profS_Snapshot *snap = &S->snap;
  profI_free(S, snap->modules, sizeof *snap->modules * (size_t)snap->cap);
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    profI_free(S, snap->counts[p], sizeof *snap->counts[p] * (size_t)snap->cap);
    profI_free(S, snap->device[p], sizeof *snap->device[p] * (size_t)snap->cap);
  }
  profI_free(S, S->snap.preorder, sizeof *S->snap.preorder * (size_t)S->snap.cap_preorder);
  memset(&S->snap, 0, sizeof S->snap);
}

/* Empties the snapshot but keeps its buffer: start/stop cycles then allocate nothing. */
void profS_empty(prof_State *S) {
  profS_Snapshot *snap = &S->snap;
  snap->n = 0;
  memset(snap->totals, 0, sizeof snap->totals);
  memset(snap->unattributed, 0, sizeof snap->unattributed);
  memset(snap->mem_peak, 0, sizeof snap->mem_peak);
  snap->n_events = snap->dropped = snap->n_host_events = 0;
  snap->saturated = 0;
  snap->trimmed = 0;
}

/* Inclusive counts and time of a container, summed from its children (not their calls). Sums
   saturate (saturate.h); prof_snapshot looks for saturated values once at the end. */
static void acc_add_counts(profT_Acc *a, const profT_Acc *b) {
  a->macs = prof_sat_add(a->macs, b->macs);
  a->flops = prof_sat_add(a->flops, b->flops);
  a->bytes_read = prof_sat_add(a->bytes_read, b->bytes_read);
  a->bytes_written = prof_sat_add(a->bytes_written, b->bytes_written);
  a->time_ns = prof_sat_add(a->time_ns, b->time_ns);
}

static void acc_add(profT_Acc *a, const profT_Acc *b) {
  a->calls = prof_sat_add(a->calls, b->calls);
  acc_add_counts(a, b);
}

static int acc_saturated(const profT_Acc *a) {
  return prof_is_saturated(a->calls) | prof_is_saturated(a->macs) | prof_is_saturated(a->flops) |
         prof_is_saturated(a->bytes_read) | prof_is_saturated(a->bytes_written) |
         prof_is_saturated(a->time_ns);
}

/* The snapshot's array *p of cap entries of size bytes, made (zeroed) if it has none. */
static int phase_array(prof_State *S, void **p, size_t size) {
  if (S->snap.cap == 0) return PROF_OK;   /* no module: nothing to hold */
  if (*p == NULL) {
    *p = profI_alloc(S, size * (size_t)S->snap.cap);
    if (*p == NULL) return profI_error(S, PROF_ERRMEM, "prof_snapshot: out of memory");
  }
  memset(*p, 0, size * (size_t)S->snap.n);
  return PROF_OK;
}

/* Every per-module array of the snapshot at cap entries (their contents are rewritten next). */
static int grow_snapshot(prof_State *S, int32_t cap) {
  profS_Snapshot *snap = &S->snap;
  profS_Module *m = profI_realloc(S, snap->modules, sizeof *m * (size_t)snap->cap,
                                  sizeof *m * (size_t)cap);
  if (m == NULL) return profI_error(S, PROF_ERRMEM, "prof_snapshot: out of memory");
  snap->modules = m;
  /* the phase arrays are made again at the new size when next needed */
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    profI_free(S, snap->counts[p], sizeof *snap->counts[p] * (size_t)snap->cap);
    profI_free(S, snap->device[p], sizeof *snap->device[p] * (size_t)snap->cap);
    snap->counts[p] = NULL;
    snap->device[p] = NULL;
  }
  snap->cap = cap;
  return PROF_OK;
}

/* GPU time per module: each device op's duration is its attribution node's own; inclusive sums
   run up the tree (children have larger ids: one backward pass). A phase without device ops has
   no array. */
static int device_times(prof_State *S, int32_t n) {
  profS_Snapshot *snap = &S->snap;
  if (n == 0 || profK_event_count(S) == 0) return PROF_OK;
  for (int64_t i = 0; i < profK_event_count(S); i++) {
    const profK_Event *e = profK_event(S, i);
    if (e->module < 0 || e->module >= n || e->phase >= PROF_PHASE_COUNT) continue;
    if (e->kind != PROF_EVENT_KERNEL && e->kind != PROF_EVENT_MEMCPY && e->kind != PROF_EVENT_MEMSET)
      continue;
    profS_Device *d = snap->device[e->phase];
    if (d == NULL) {
      if (phase_array(S, (void **)&snap->device[e->phase], sizeof *d) != PROF_OK) return PROF_ERRMEM;
      d = snap->device[e->phase];
      if (d == NULL) continue;
    }
    d[e->module].self += e->t_end - e->t_begin;
    d[e->module].ops++;
  }
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    profS_Device *d = snap->device[p];
    if (d == NULL) continue;
    for (int32_t k = n - 1; k >= 0; k--) {
      int32_t parent = profT_node(S, k)->parent;
      d[k].incl += d[k].self;
      if (parent >= 0) {   /* k's sums are final here: its children came first */
        d[parent].incl += d[k].incl;
        d[parent].ops += d[k].ops;
      }
    }
  }
  return PROF_OK;
}

int prof_snapshot(prof_State *S) {
  profS_Snapshot *snap = &S->snap;
  /* the recorders' counters are gone (prof_trim) and nothing recorded since: it stands */
  if (snap->trimmed && !profI_active(S)) return PROF_OK;
  profK_on_snapshot(S);   /* while active: a drain, so that device events are current */
  int32_t n = profT_count(S);
  if (n > snap->cap && grow_snapshot(S, n) != PROF_OK) return PROF_ERRMEM;
  if (n > snap->cap_preorder) {
    int32_t *order = profI_realloc(S, snap->preorder, sizeof *order * (size_t)snap->cap_preorder,
                                   sizeof *order * (size_t)n);
    if (order == NULL) return profI_error(S, PROF_ERRMEM, "prof_snapshot: out of memory");
    snap->preorder = order;
    snap->cap_preorder = n;
  }
  snap->n = n;
  if (n > 0) prof_module_preorder(S, snap->preorder, n);
  snap->preorder_version = S->tree_version;
  if (n > 0) memset(snap->modules, 0, sizeof *snap->modules * (size_t)n);
  for (int p = 0; p < PROF_PHASE_COUNT; p++)   /* filled again below, where there are device ops */
    if (snap->device[p] != NULL) memset(snap->device[p], 0, sizeof *snap->device[p] * (size_t)n);
  memset(snap->totals, 0, sizeof snap->totals);
  memset(snap->unattributed, 0, sizeof snap->unattributed);
  for (int d = 0; d < 2; d++) snap->mem_peak[d] = atomic_load(&S->mem_peak[d]);
  snap->n_events = snap->dropped = 0;
  snap->saturated = 0;
  pthread_mutex_lock(&S->lock);
  /* a phase has counts once some thread recorded in it */
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    int used = 0;
    for (const profR_Recorder *R = S->recorders; R != NULL; R = R->next) used |= R->slots[p] != NULL;
    if (used && phase_array(S, (void **)&snap->counts[p], sizeof *snap->counts[p]) != PROF_OK) {
      pthread_mutex_unlock(&S->lock);
      return PROF_ERRMEM;
    }
    if (!used && snap->counts[p] != NULL) memset(snap->counts[p], 0, sizeof *snap->counts[p] * (size_t)n);
  }
  for (const profR_Recorder *R = S->recorders; R != NULL; R = R->next) {
    int32_t m = R->cap_slots < n ? R->cap_slots : n;
    for (int p = 0; p < PROF_PHASE_COUNT; p++) {
      if (R->slots[p] == NULL || snap->counts[p] == NULL) continue;   /* none, or made since */
      for (int32_t k = 0; k < m; k++) {
        acc_add(&snap->counts[p][k].incl, &R->slots[p][k].incl);
        acc_add(&snap->counts[p][k].self, &R->slots[p][k].self);
      }
    }
    for (int p = 0; p < PROF_PHASE_COUNT; p++) {
      acc_add(&snap->totals[p], &R->totals[p]);
      acc_add(&snap->unattributed[p], &R->unattributed[p]);
    }
    snap->saturated |= R->saturated;
    snap->n_events += R->n_events;
    snap->dropped += R->dropped;
  }
  pthread_mutex_unlock(&S->lock);
  snap->n_host_events = snap->n_events;
  snap->n_events += profK_event_count(S);   /* device events follow the host's */
  /* recorders count time in ticks; the snapshot holds nanoseconds */
  profH_calibrate(&S->clock);
  for (int p = 0; p < PROF_PHASE_COUNT; p++) {
    profS_Counts *c = snap->counts[p];
    if (c == NULL) continue;
    for (int32_t k = 0; k < n; k++) {
      c[k].incl.time_ns = profH_dur_ns(&S->clock, c[k].incl.time_ns);
      c[k].self.time_ns = profH_dur_ns(&S->clock, c[k].self.time_ns);
    }
  }
  /* Children have larger ids than their parents, so one backward pass sees every child final
     before its parent. A module never called itself (a ModuleList, a ModuleDict) still holds its
     children: its inclusive counts and time are theirs, summed, as DeepSpeed's recursion gives. */
  int exact = S->conv == PROF_CONV_EXACT;
  /* hidden: forward pass (parents first) */
  for (int32_t k = 0; k < n; k++) {
    const profT_Node *node = profT_node(S, k);
    int ignored = (node->flags & PROF_MODULE_IGNORED) != 0;
    int parent_hidden = node->parent >= 0 && snap->modules[node->parent].hidden;
    snap->modules[k].hidden = node->parent >= 0 && (ignored || (exact && parent_hidden));
  }
  for (int32_t k = n - 1; k >= 0; k--) {
    const profT_Node *node = profT_node(S, k);
    profS_Module *m = &snap->modules[k];
    if (!(node->flags & PROF_MODULE_IGNORED))
      for (int p = 0; p < PROF_PHASE_COUNT; p++) {
        profS_Counts *pc = snap->counts[p];
        if (pc == NULL || pc[k].incl.calls != 0) continue;
        for (int32_t c = node->first_child; c >= 0; c = profT_node(S, c)->next_sibling)
          acc_add_counts(&pc[k].incl, &pc[c].incl);
      }
    /* exact conventions: an ignored subtree leaves its ancestors' params too */
    m->params_counted = prof_sat_sub(node->params, m->params_removed);
    if (exact && node->parent >= 0) {
      profS_Module *parent = &snap->modules[node->parent];
      if (m->hidden && !parent->hidden)
        parent->params_removed = prof_sat_add(parent->params_removed, node->params);
      else if (!m->hidden)
        parent->params_removed = prof_sat_add(parent->params_removed, m->params_removed);
    }
    snap->saturated |= prof_is_saturated(node->params) | prof_is_saturated(m->params_counted);
    for (int p = 0; p < PROF_PHASE_COUNT; p++)
      if (snap->counts[p] != NULL)
        snap->saturated |= acc_saturated(&snap->counts[p][k].incl) | acc_saturated(&snap->counts[p][k].self);
  }
  for (int p = 0; p < PROF_PHASE_COUNT; p++)
    snap->saturated |= acc_saturated(&snap->totals[p]) | acc_saturated(&snap->unattributed[p]);
  return device_times(S, n);
}

int32_t prof_module_preorder_from(const prof_State *S, int32_t first, prof_ModuleId *ids,
                                  int32_t n) {
  int32_t total = profT_count(S);
  if (first < 0 || n <= 0 || first >= total) return 0;
  if (n > total - first) n = total - first;
  const profS_Snapshot *snap = &S->snap;
  if (snap->preorder_version == S->tree_version && snap->n == total) {
    memcpy(ids, snap->preorder + first, sizeof *ids * (size_t)n);
    return n;
  }
  /* the tree changed since the snapshot: walk it, keeping positions first .. first + n - 1 */
  profT_preorder(S, first, ids, n);
  return n;
}

static void fill_counts(const profT_Acc *incl, const profT_Acc *self, prof_Counts *c) {
  c->calls = incl->calls;
  c->macs = incl->macs;
  c->flops = incl->flops;
  c->bytes_read = incl->bytes_read;
  c->bytes_written = incl->bytes_written;
  c->time_ns = incl->time_ns;
  c->self_macs = self->macs;
  c->self_flops = self->flops;
  c->self_bytes_read = self->bytes_read;
  c->self_bytes_written = self->bytes_written;
}

int prof_module_info(const prof_State *S, prof_ModuleId id, prof_ModuleInfo *out) {
  if (id < 0 || id >= profT_count(S)) return PROF_ERRARG;
  prof_ModuleInfo info;
  memset(&info, 0, sizeof info);
  const profT_Node *node = profT_node(S, id);
  info.size = sizeof info;
  info.id = id;
  info.parent = node->parent;
  info.name = node->name;
  info.type = node->type;
  info.depth = node->depth;
  info.flags = node->flags;
  info.params = node->params;
  info.params_counted = node->params;
  const profS_Snapshot *snap = &S->snap;
  if (id < snap->n) {
    const profS_Module *m = &snap->modules[id];
    info.hidden = m->hidden;
    info.params_counted = m->params_counted;
    for (int p = 0; p < PROF_PHASE_COUNT; p++) {   /* a phase without an array is zeros */
      if (snap->counts[p] != NULL)
        fill_counts(&snap->counts[p][id].incl, &snap->counts[p][id].self, &info.phase[p]);
      if (snap->device[p] != NULL) {
        info.device_time_ns[p] = snap->device[p][id].incl;
        info.self_device_time_ns[p] = snap->device[p][id].self;
        info.device_ops[p] = snap->device[p][id].ops;
      }
    }
  }
  /* a caller built against an older, smaller prof_ModuleInfo gets only what it has room for */
  size_t size = out->size != 0 && out->size < sizeof info ? out->size : sizeof info;
  memcpy(out, &info, size);
  out->size = size;
  return PROF_OK;
}

void prof_totals(const prof_State *S, prof_Phase phase, prof_Counts *out) {
  memset(out, 0, sizeof *out);
  if ((unsigned)phase >= PROF_PHASE_COUNT) return;
  fill_counts(&S->snap.totals[phase], &S->snap.unattributed[phase], out);
}

int64_t prof_event_count(const prof_State *S) { return S->snap.n_events; }

int prof_counts_saturated(const prof_State *S) { return S->snap.saturated; }

int64_t prof_events_dropped(const prof_State *S) { return S->snap.dropped; }

int64_t prof_memory_peak(const prof_State *S, int32_t device) {
  return S->snap.mem_peak[device == PROF_DEVICE_CUDA ? 1 : 0];
}

/* Decodes the op's input shapes from its recorder's arena (push_shapes' layout). */
static int32_t read_shapes(const profR_Recorder *R, const profR_Event *e, prof_Operand *in, int max) {
  if (e->shapes == 0 || e->shapes > R->n_shapes) return 0;
  const int64_t *w = &R->shapes[e->shapes - 1];
  int32_t n = (int32_t)*w++;
  for (int32_t i = 0; i < n; i++) {
    int32_t nd = (int32_t)(*w & 0xff);
    if (i < max) {
      in[i].dtype = (int32_t)(*w >> 8);
      in[i].ndim = nd;
      for (int32_t d = 0; d < nd; d++) in[i].dim[d] = w[1 + d];
    }
    w += 1 + nd;
  }
  return n < max ? n : max;
}

/* A device event (capture/events.c) into out, as far as out's size reaches. */
static int device_event_at(const prof_State *S, int64_t i, prof_Event *out) {
  const profK_Event *d = profK_event(S, i);
  if (d == NULL) return PROF_ERRARG;
  prof_Event ev;
  memset(&ev, 0, sizeof ev);
  ev.size = sizeof ev;
  profK_fill_event(S, d, &ev);
  size_t size = out->size != 0 && out->size < sizeof ev ? out->size : sizeof ev;
  memcpy(out, &ev, size);
  out->size = size;
  return PROF_OK;
}

int prof_event_at(const prof_State *S, int64_t i, prof_Event *out) {
  if (i < 0 || i >= S->snap.n_events) return PROF_ERRARG;
  if (i >= S->snap.n_host_events) return device_event_at(S, i - S->snap.n_host_events, out);
  const profR_Recorder *R = S->recorders;
  while (R != NULL && i >= R->n_events) {
    i -= R->n_events;
    R = R->next;
  }
  if (R == NULL) return PROF_ERRARG;
  const profR_Event *e = &R->events[i];
  const profH_Clock *c = &S->clock;
  /* the fixed part first: the operand array is copied only for the shapes an op has */
  prof_Event ev;
  size_t fixed = offsetof(prof_Event, input);
  memset(&ev, 0, fixed);
  ev.size = sizeof ev;
  ev.kind = (prof_EventKind)e->kind;
  ev.name = e->name;
  ev.op_kind = e->op_kind;
  ev.module = e->module;
  ev.thread = R->index;
  ev.phase = (prof_Phase)e->phase;
  ev.device = e->device;
  ev.correlation = e->correlation;
  ev.t_begin_ns = profH_ns(c, e->t_begin);
  ev.t_end_ns = profH_ns(c, e->t_end);
  int block = e->kind == PROF_EVENT_MEMORY || e->kind == PROF_EVENT_MEMORY_TAG;
  if (e->kind == PROF_EVENT_RANGE) {
    ev.value = e->value - 1;   /* a range wrote none of the counts (put_range): they stay 0 */
  } else {
    ev.macs = block ? 0 : e->macs;
    ev.flops = e->flops;
    ev.bytes_read = e->bytes_read;
    ev.bytes_written = e->bytes_written;
    ev.bytes_allocated = e->bytes_allocated;
    ev.bytes_freed = e->bytes_freed;
    ev.value = e->value;
    ev.total = e->total;
  }
  ev.stack = e->stack;
  size_t size = out->size != 0 && out->size < sizeof ev ? out->size : sizeof ev;
  if (size <= fixed) {
    memcpy(out, &ev, size);
  } else {
    memcpy(out, &ev, fixed);
    int room = (int)((size - fixed) / sizeof(prof_Operand));
    out->ninputs = read_shapes(R, e, out->input, room < PROF_MAX_OPERANDS ? room : PROF_MAX_OPERANDS);
  }
  /* fields after input[] reach only callers whose prof_Event has them */
  if (size >= offsetof(prof_Event, address) + sizeof ev.address)
    out->address = block ? e->address : 0;
  /* the device fields of a host event are zeros */
  if (size > offsetof(prof_Event, device_index))
    memset((char *)out + offsetof(prof_Event, device_index), 0, size - offsetof(prof_Event, device_index));
  out->size = size;
  return PROF_OK;
}

int64_t prof_shapes_dropped(const prof_State *S) {
  int64_t n = 0;
  for (const profR_Recorder *R = S->recorders; R != NULL; R = R->next) n += R->shapes_dropped;
  return n;
}
