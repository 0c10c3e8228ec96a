/* events.c — decoded device events: attribution (op, range, module), reading them out, per-module GPU time. */
#include <string.h>

#include "capture.h"
#include "session.h"

static int device_op(int kind) {
  return kind == PROF_EVENT_KERNEL || kind == PROF_EVENT_MEMCPY || kind == PROF_EVENT_MEMSET;
}

/* The recorder index an op or range correlation carries in its high bits (record_ops.c). */
static int32_t thread_of(uint64_t corr) { return corr != 0 ? (int32_t)(corr >> 40) - 1 : -1; }

/* Events decoded before their EXTERNAL_CORRELATION record arrived (another buffer) are looked up
   again at the next resolve; the attribution counts are recounted over every event. */
void profK_resolve(profK_Capture *C) {
  int64_t ops = 0, by_op = 0, by_range = 0, by_module = 0, time = 0;
  for (int64_t i = 0; i < C->n_events; i++) {
    profK_Event *e = &C->events[i];
    if (!e->resolved && e->flow != 0) {
      const profK_Corr *c = profK_corr_get(&C->corr, e->flow);
      if (c != NULL) {
        e->resolved = 1;
        e->op = c->ext[PROFK_EXT_OP];
        e->range = c->ext[PROFK_EXT_RANGE];
        uint64_t m = c->ext[PROFK_EXT_MODULE];
        if (m != 0) {
          e->module = (int32_t)(uint32_t)m - 1;
          e->phase = (uint8_t)((m >> 32) - 1);
        }
        int32_t t = thread_of(e->op);
        e->thread = t >= 0 ? t : thread_of(e->range) >= 0 ? thread_of(e->range) : 0;
      }
    }
    if (!device_op(e->kind)) continue;
    ops++;
    by_op += e->op != 0;
    by_range += e->range != 0;
    by_module += e->module != PROF_NO_MODULE;
    time += e->t_end - e->t_begin;
  }
  C->stats.device_ops = ops;
  C->stats.attributed_op = by_op;
  C->stats.attributed_range = by_range;
  C->stats.attributed_module = by_module;
  C->stats.device_time_ns = time;
}

int64_t profK_event_count(const prof_State *S) {
  return S->capture != NULL ? S->capture->n_events : 0;
}

const profK_Event *profK_event(const prof_State *S, int64_t i) {
  const profK_Capture *C = S->capture;
  return C != NULL && i >= 0 && i < C->n_events ? &C->events[i] : NULL;
}

/* The device part of a prof_Event: fields up to address as prof_event_at fills host ones. */
void profK_fill_event(const prof_State *S, const profK_Event *d, prof_Event *ev) {
  (void)S;
  ev->kind = (prof_EventKind)d->kind;
  ev->name = d->name;
  ev->op_kind = -1;
  ev->module = d->module;
  ev->thread = d->thread;
  ev->phase = (prof_Phase)d->phase;
  ev->device = PROF_DEVICE_CUDA;
  ev->correlation = d->op;
  ev->t_begin_ns = d->t_begin;
  ev->t_end_ns = d->t_end;
  ev->value = d->value;
  ev->total = d->total;
  ev->address = d->address;
  ev->device_index = d->device;
  ev->context = d->context;
  ev->stream = d->stream;
  ev->api = d->api;
  ev->flow = d->flow;
  ev->range = d->range;
  ev->bytes = d->bytes;
  ev->copy_kind = d->copy_kind;
  ev->src_kind = d->src_kind;
  ev->dst_kind = d->dst_kind;
  memcpy(ev->grid, d->grid, sizeof ev->grid);
  memcpy(ev->block, d->block, sizeof ev->block);
  ev->registers = d->registers;
  ev->shared_memory = d->shared_memory;
  ev->cbid = d->cbid;
}

const char *prof_copy_kind_name(int32_t kind) {
  static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < (int32_t)(sizeof names / sizeof *names) ? names[kind] : "Unknown";
}

const char *prof_mem_kind_name(int32_t kind) {
  static const char *const names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                      "Array",   "Managed",  "Device Static", "Managed Static"};
  return kind >= 0 && kind < (int32_t)(sizeof names / sizeof *names) ? names[kind] : "Unknown";
}
