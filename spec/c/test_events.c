/* test_events.c — buffered events on one thread: ranges, instants, counters, memory, interned names. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "prof.h"
#include "t.h"

static prof_Event event(prof_State *S, int64_t i) {
  prof_Event e = {.size = sizeof e};
  prof_event_at(S, i, &e);
  return e;
}

static void test_ranges_nest_and_close_innermost_first(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_set_event_capacity(S, 16);
  prof_range_push(S, "ignored while idle");
  prof_start(S);
  prof_module_enter(S, net);
  PROF_RANGE_PUSH(S, "outer");
  prof_range_push(S, "inner");
  PROF_INSTANT(S, "mark");
  prof_range_pop(S);
  PROF_COUNTER(S, "tokens", 128);
  PROF_RANGE_POP(S);
  prof_module_exit(S, net);
  prof_stop(S);
  T_EQ_INT(prof_check(S), PROF_OK);
  /* buffered in the order they closed: mark, inner, tokens, outer, then the module call */
  T_EQ_INT(prof_event_count(S), 5);
  const char *names[5] = {"mark", "inner", "tokens", "outer", "Net"};
  const int kinds[5] = {PROF_EVENT_INSTANT, PROF_EVENT_RANGE, PROF_EVENT_COUNTER, PROF_EVENT_RANGE,
                        PROF_EVENT_MODULE};
  for (int i = 0; i < 5; i++) {
    prof_Event e = event(S, i);
    T_EQ_STR(e.name, names[i]);
    T_EQ_INT(e.kind, kinds[i]);
    T_EQ_INT(e.module, net);
  }
  prof_Event mark = event(S, 0), inner = event(S, 1), tokens = event(S, 2), outer = event(S, 3);
  T_EQ_INT(mark.t_end_ns, mark.t_begin_ns);
  T_CHECK(outer.t_begin_ns <= inner.t_begin_ns && inner.t_begin_ns <= mark.t_begin_ns);
  T_CHECK(mark.t_begin_ns <= inner.t_end_ns && inner.t_end_ns <= outer.t_end_ns);
  T_EQ_INT(tokens.value, 128);
  prof_close(S);
}

static const char *where_hook(void *ud, prof_State *S) {
  (void)ud;
  (void)S;
  return "model.lua:7";
}

/* A range slot freed by any pop holds no stack and no correlation for the next push on the leaf
   path, which writes neither: after a range that had both (a stack hook; a capture closed before
   its pop), and after ranges a stop left open (prof_start's reset). */
static void test_freed_range_slots_carry_nothing_over(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 16);
  /* a capture open at the push, closed before the pop: the pop takes the leaf path */
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL), PROF_OK);
  prof_start(S);
  prof_range_push(S, "captured");
  prof_capture_close(S);
  prof_range_pop(S);
  prof_range_push(S, "after");
  prof_range_pop(S);
  prof_stop(S);
  T_EQ_INT(prof_event_count(S), 2);
  T_CHECK(event(S, 0).correlation != 0);
  T_EQ_STR(event(S, 1).name, "after");
  T_EQ_INT((int64_t)event(S, 1).correlation, 0);
  /* a stack hook's range left open at stop; the next window has no hook */
  T_EQ_INT(prof_set_stack_hook(S, where_hook, NULL), PROF_OK);
  prof_start(S);
  prof_range_push(S, "left open");
  prof_stop(S);
  T_EQ_INT(prof_set_stack_hook(S, NULL, NULL), PROF_OK);
  prof_start(S);
  prof_range_push(S, "plain");
  prof_range_pop(S);
  prof_stop(S);
  T_EQ_INT(prof_event_count(S), 1);
  T_EQ_STR(event(S, 0).name, "plain");
  T_CHECK(event(S, 0).stack == NULL);
  prof_close(S);
}

/* Every field of a range event off the leaf paths (record_ranges.c packs kind, phase, op_kind and
   module into one store and copies the rest in 16-byte moves): a module id past 16 bits, none
   (-1), a phase past 0, a numbered range, and a slot whose previous event (an op on cuda with
   shapes) set the fields a range leaves alone. */
static void test_leaf_range_events_hold_every_field(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId parent = PROF_NO_MODULE, big = PROF_NO_MODULE;
  for (int i = 0; i < 260 && big < 65536 + 300; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    T_EQ_INT(prof_module_add(S, PROF_NO_MODULE, name, "Block", 0, &parent), PROF_OK);
    for (int j = 0; j < 256; j++) {
      snprintf(name, sizeof name, "c%d", j);
      T_EQ_INT(prof_module_add(S, parent, name, "ReLU", 0, &big), PROF_OK);
    }
  }
  T_CHECK(big >= 65536 + 300);
  T_EQ_INT(prof_set_event_capacity(S, 4), PROF_OK);
  T_EQ_INT(prof_set_record_shapes(S, 1), PROF_OK);
  prof_start(S);
  prof_Op op = {.kind = PROF_OP_CUSTOM, .name = "fused", .device = PROF_DEVICE_CUDA, .ninputs = 1};
  op.in[0] = (prof_Operand){2, PROF_F32, {3, 5}};
  prof_module_enter(S, parent);
  for (int i = 0; i < 2; i++) {
    prof_op_begin(S, &op);
    prof_op_end(S, &op);
  }
  prof_module_exit(S, parent);
  prof_stop(S);
  T_EQ_INT(prof_event_count(S), 3);
  T_EQ_INT(event(S, 0).device, PROF_DEVICE_CUDA);
  T_EQ_INT(event(S, 1).ninputs, 1);
  /* the same slots, now ranges: an outer numbered one outside every module, an inner plain one
     in the module past 16 bits, both popped in the backward phase */
  prof_start(S);
  prof_set_phase(S, PROF_PHASE_BACKWARD);
  prof_range_push_numbered(S, "step", 70000);
  prof_module_enter(S, big);
  prof_range_push(S, "inner");
  prof_range_pop(S);
  prof_module_exit(S, big);
  prof_range_pop(S);
  prof_stop(S);
  T_EQ_INT(prof_check(S), PROF_OK);
  T_EQ_INT(prof_event_count(S), 3);   /* inner, the module call, step */
  const int at[2] = {0, 2};
  const char *names[2] = {"inner", "step"};
  const prof_ModuleId modules[2] = {big, PROF_NO_MODULE};
  const int64_t values[2] = {-1, 70000};
  for (int i = 0; i < 2; i++) {
    prof_Event e = event(S, at[i]);
    T_EQ_INT(e.kind, PROF_EVENT_RANGE);
    T_EQ_STR(e.name, names[i]);
    T_EQ_INT(e.op_kind, -1);
    T_EQ_INT(e.module, modules[i]);
    T_EQ_INT(e.thread, 0);
    T_EQ_INT(e.phase, PROF_PHASE_BACKWARD);
    T_EQ_INT(e.device, 0);
    T_EQ_INT((int64_t)e.correlation, 0);
    T_EQ_INT(e.value, values[i]);
    T_CHECK(e.stack == NULL);
    T_EQ_INT(e.ninputs, 0);
    T_EQ_INT(e.macs + e.flops + e.bytes_read + e.bytes_written + e.bytes_allocated + e.bytes_freed +
                 e.total,
             0);
    T_CHECK(e.t_begin_ns <= e.t_end_ns);
  }
  prof_Event inner = event(S, 0), step = event(S, 2);
  T_CHECK(step.t_begin_ns <= inner.t_begin_ns && inner.t_end_ns <= step.t_end_ns);
  prof_close(S);
}

/* prof_recording is the session's head flag: set by prof_start, cleared by prof_stop. The macros
   test it before calling: while idle a pop with no push leaves no error and nothing is kept, and
   the counts a window takes are the same as the direct calls'. */
static void test_annotation_macros_follow_the_recording_flag(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 8);
  T_EQ_INT(prof_recording(S), 0);
  PROF_RANGE_POP(S);
  PROF_INSTANT(S, "idle mark");
  PROF_COUNTER(S, "idle counter", 1);
  T_EQ_INT(prof_check(S), PROF_OK);
  prof_start(S);
  T_EQ_INT(prof_recording(S) != 0, 1);
  PROF_RANGE_PUSH(S, "step");
  PROF_INSTANT(S, "mark");
  PROF_RANGE_POP(S);
  PROF_RANGE_POP(S);   /* one pop too many while recording: the call runs and keeps its error */
  prof_stop(S);
  T_EQ_INT(prof_recording(S), 0);
  T_EQ_INT(prof_event_count(S), 2);
  T_EQ_STR(event(S, 0).name, "mark");
  T_EQ_STR(event(S, 1).name, "step");
  T_EQ_INT(prof_check(S), PROF_ERRSTATE);
  prof_close(S);
}

static void test_range_errors_are_sticky(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_start(S);
  prof_range_pop(S);
  T_EQ_INT(prof_check(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "no range is open");
  for (int i = 0; i <= PROF_RANGE_MAX; i++) prof_range_push(S, "deep");
  T_EQ_INT(prof_check(S), PROF_ERRSTATE);
  T_CONTAINS(prof_errmsg(S), "nested too deep");
  prof_stop(S);
  prof_close(S);
}

/* An op that allocates its 4 KiB output and frees an 1 KiB temporary, inside a module. */
static void test_memory_events_carry_signed_bytes_and_live_total(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_set_event_capacity(S, 16);
  T_EQ_INT(prof_set_memory_events(S, 1), PROF_OK);
  prof_start(S);
  T_EQ_INT(prof_set_memory_events(S, 0), PROF_ERRSTATE);
  static char out[4096], tmp[1024];
  prof_module_enter(S, net);
  prof_Op op = {.kind = PROF_OP_CUSTOM, .flops = 10, .name = "fused"};
  prof_op_begin(S, &op);
  prof_mem_alloc(S, PROF_DEVICE_CPU, tmp, 1024);
  prof_mem_alloc(S, PROF_DEVICE_CPU, out, 4096);
  prof_mem_free(S, PROF_DEVICE_CPU, tmp, 1024);
  prof_op_end(S, &op);
  prof_mem_free(S, PROF_DEVICE_CPU, out, 4096);   /* outside every op: the module's */
  prof_module_exit(S, net);
  prof_stop(S);
  /* three memory events inside the op, its op event, the free outside, the module */
  T_EQ_INT(prof_event_count(S), 6);
  const int64_t value[4] = {1024, 4096, -1024, -4096}, total[4] = {1024, 5120, 4096, 0};
  const int at[4] = {0, 1, 2, 4};
  for (int i = 0; i < 4; i++) {
    prof_Event e = event(S, at[i]);
    T_EQ_INT(e.kind, PROF_EVENT_MEMORY);
    T_EQ_INT(e.value, value[i]);
    T_EQ_INT(e.total, total[i]);
    T_EQ_INT(e.module, net);
    T_EQ_INT(e.correlation, i < 3 ? op.correlation : 0);
  }
  prof_Event o = event(S, 3);
  T_EQ_INT(o.kind, PROF_EVENT_OP);
  T_EQ_INT(o.bytes_allocated, 5120);
  T_EQ_INT(o.bytes_freed, 1024);
  T_EQ_INT(prof_memory_peak(S, PROF_DEVICE_CPU), 5120);
  T_EQ_INT(prof_memory_peak(S, PROF_DEVICE_CUDA), 0);
  prof_close(S);
}

/* A free pairs with its allocation by address; a tag names the block it marks; an old caller's
   shorter prof_Event is never written past its size; MACs stay 0 (the address shares their slot). */
static void test_memory_events_keep_addresses_and_tags(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 16);
  prof_set_memory_events(S, 1);
  static char a[64], b[32];
  prof_mem_tag(S, PROF_DEVICE_CPU, a, PROF_MEM_ACTIVATION);   /* before start: nothing */
  prof_start(S);
  prof_mem_alloc(S, PROF_DEVICE_CPU, a, 64);
  prof_mem_alloc(S, PROF_DEVICE_CUDA, b, 32);
  prof_mem_tag(S, PROF_DEVICE_CPU, a, PROF_MEM_ACTIVATION);
  prof_mem_free(S, PROF_DEVICE_CPU, a, 64);
  prof_stop(S);
  T_EQ_INT(prof_event_count(S), 4);
  const uintptr_t addr[4] = {(uintptr_t)a, (uintptr_t)b, (uintptr_t)a, (uintptr_t)a};
  const int kind[4] = {PROF_EVENT_MEMORY, PROF_EVENT_MEMORY, PROF_EVENT_MEMORY_TAG, PROF_EVENT_MEMORY};
  const int64_t value[4] = {64, 32, PROF_MEM_ACTIVATION, -64};
  for (int i = 0; i < 4; i++) {
    prof_Event e = event(S, i);
    T_EQ_INT(e.kind, kind[i]);
    T_CHECK(e.address == addr[i]);
    T_EQ_INT(e.value, value[i]);
    T_EQ_INT(e.macs, 0);
  }
  T_EQ_INT(event(S, 1).device, PROF_DEVICE_CUDA);
  T_EQ_INT(event(S, 2).total, 0);   /* a tag moves no bytes */
  struct { prof_Event e; } old;
  memset(&old, 0xAB, sizeof old);
  old.e.size = offsetof(prof_Event, address);
  T_EQ_INT(prof_event_at(S, 0, &old.e), PROF_OK);
  T_EQ_INT(old.e.value, 64);
  T_CHECK(old.e.address == (uint64_t)0xABABABABABABABABu);
  T_EQ_INT(prof_memory_peak(S, PROF_DEVICE_CPU), 64);
  T_CHECK(strcmp(prof_mem_category_name(PROF_MEM_OPTIMIZER_STATE), "optimizer_state") == 0);
  T_CHECK(strcmp(prof_mem_category_name((prof_MemCategory)99), "unknown") == 0);
  prof_close(S);
}

static void test_interned_names_are_shared_copies(void) {
  prof_State *S = prof_new(NULL, NULL);
  char buf[32];
  snprintf(buf, sizeof buf, "model_forward");
  const char *a = prof_intern(S, buf);
  buf[0] = 'M';
  const char *b = prof_intern(S, "model_forward");
  T_CHECK(a == b);
  T_EQ_STR(a, "model_forward");
  const char *first = NULL;
  for (int i = 0; i < 1000; i++) {    /* the table grows; earlier pointers stay valid */
    snprintf(buf, sizeof buf, "range %d", i);
    const char *p = prof_intern(S, buf);
    if (i == 0) first = p;
    T_EQ_STR(p, buf);
  }
  T_CHECK(prof_intern(S, "range 0") == first);
  T_CHECK(prof_intern(S, "model_forward") == a);
  T_CHECK(prof_intern(S, NULL) == NULL);
  prof_close(S);
}

int main(void) {
  T_RUN(test_ranges_nest_and_close_innermost_first);
  T_RUN(test_freed_range_slots_carry_nothing_over);
  T_RUN(test_leaf_range_events_hold_every_field);
  T_RUN(test_annotation_macros_follow_the_recording_flag);
  T_RUN(test_range_errors_are_sticky);
  T_RUN(test_memory_events_carry_signed_bytes_and_live_total);
  T_RUN(test_memory_events_keep_addresses_and_tags);
  T_RUN(test_interned_names_are_shared_copies);
  return T_DONE();
}
