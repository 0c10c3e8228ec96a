/* test_shapes.c — what op events carry beyond counts: input shapes (record_shapes), the stack hook's location, numbered ranges. */
#include <stddef.h>
#include <string.h>

#include "prof.h"
#include "t.h"

static prof_Event event(prof_State *S, int64_t i) {
  prof_Event e;
  memset(&e, 0x5a, sizeof e);   /* garbage: whatever prof_event_at leaves unset shows */
  e.size = sizeof e;
  prof_event_at(S, i, &e);
  return e;
}

static void set_operand(prof_Operand *o, int dtype, int ndim, const int64_t *dims) {
  o->dtype = dtype;
  o->ndim = ndim;
  for (int i = 0; i < ndim; i++) o->dim[i] = dims[i];
}

/* An mm of [8, 64] x [64, 32] -> [8, 32], recorded as a bracketed op. */
static void mm(prof_State *S) {
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.size = sizeof op;
  op.kind = PROF_OP_MM;
  op.ninputs = 2;
  set_operand(&op.in[0], PROF_F32, 2, (const int64_t[]){8, 64});
  set_operand(&op.in[1], PROF_F32, 2, (const int64_t[]){64, 32});
  set_operand(&op.out, PROF_F32, 2, (const int64_t[]){8, 32});
  prof_op_begin(S, &op);
  prof_op_end(S, &op);
}

static void test_shapes_recorded_only_when_asked(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 8);
  prof_start(S);
  mm(S);
  prof_stop(S);
  prof_Event off = event(S, 0);
  T_EQ_INT(off.kind, PROF_EVENT_OP);
  T_EQ_INT(off.ninputs, 0);
  T_CHECK(off.stack == NULL);
  T_EQ_INT(prof_set_record_shapes(S, 1), PROF_OK);
  prof_start(S);
  T_EQ_INT(prof_set_record_shapes(S, 0), PROF_ERRSTATE);   /* not while active */
  mm(S);
  prof_stop(S);
  prof_Event on = event(S, 0);
  T_EQ_INT(on.ninputs, 2);
  T_EQ_INT(on.input[0].ndim, 2);
  T_EQ_INT(on.input[0].dim[0], 8);
  T_EQ_INT(on.input[0].dim[1], 64);
  T_EQ_INT(on.input[1].dim[0], 64);
  T_EQ_INT(on.input[1].dim[1], 32);
  T_EQ_INT(on.input[1].dtype, PROF_F32);
  /* the formulas still ran: mm is 8 * 64 * 32 MACs */
  T_EQ_INT(on.macs, 8 * 64 * 32);
  T_EQ_INT(prof_shapes_dropped(S), 0);
  prof_close(S);
}

static void test_older_event_struct_gets_no_operands(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_set_event_capacity(S, 8);
  prof_set_record_shapes(S, 1);
  prof_start(S);
  mm(S);
  prof_stop(S);
  /* a caller built against the header before shapes: its struct ends before ninputs */
  unsigned char buf[sizeof(prof_Event)];
  memset(buf, 0x77, sizeof buf);
  prof_Event *e = (prof_Event *)buf;
  e->size = offsetof(prof_Event, stack);
  T_EQ_INT(prof_event_at(S, 0, e), PROF_OK);
  T_EQ_INT((int64_t)e->size, (int64_t)offsetof(prof_Event, stack));
  T_EQ_INT(e->macs, 8 * 64 * 32);
  for (size_t k = offsetof(prof_Event, stack); k < sizeof buf; k++) T_EQ_INT(buf[k], 0x77);
  prof_close(S);
}

static void test_full_arena_keeps_the_event(void) {
  prof_State *S = prof_new(NULL, NULL);
  /* 2 events x 12 words = 24 words; each mm takes 1 + (1 + 2) * 2 = 7: three fit, not four */
  prof_set_event_capacity(S, 2);
  prof_set_record_shapes(S, 1);
  prof_start(S);
  for (int i = 0; i < 4; i++) {
    prof_stop(S);
    T_EQ_INT(prof_set_event_capacity(S, 2 + i), PROF_OK);   /* more events, same words per event */
    prof_start(S);
    for (int k = 0; k < 2 + i; k++) mm(S);
  }
  prof_stop(S);
  /* 5 events fit in 5 x 12 = 60 words, 7 each: 8 would; every one got its shapes */
  T_EQ_INT(prof_event_count(S), 5);
  T_EQ_INT(prof_shapes_dropped(S), 0);
  for (int i = 0; i < 5; i++) T_EQ_INT(event(S, i).ninputs, 2);
  /* operands of 8 dims each: 1 + 4 * 9 = 37 words per op, 24 words of room for 2 events */
  prof_set_event_capacity(S, 2);
  prof_start(S);
  prof_Op big;
  memset(&big, 0, sizeof big);
  big.kind = PROF_OP_CUSTOM;
  big.ninputs = 4;
  const int64_t dims[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 4; i++) set_operand(&big.in[i], PROF_BF16, 8, dims);
  prof_op_record(S, &big);
  mm(S);
  prof_stop(S);
  T_EQ_INT(prof_event_count(S), 2);
  T_EQ_INT(prof_shapes_dropped(S), 1);
  T_EQ_INT(event(S, 0).ninputs, 0);     /* kept, without shapes */
  T_EQ_INT(event(S, 1).ninputs, 2);     /* the next op still fits */
  prof_close(S);
}

typedef struct Hook { int calls; } Hook;

static const char *where(void *ud, prof_State *S) {
  Hook *h = ud;
  h->calls++;
  return prof_intern(S, h->calls == 1 ? "outer.lua(3)" : "inner.lua(7);outer.lua(4)");
}

static void test_stack_hook_and_numbered_ranges(void) {
  prof_State *S = prof_new(NULL, NULL);
  Hook h = {0};
  prof_set_event_capacity(S, 8);
  T_EQ_INT(prof_set_stack_hook(S, where, &h), PROF_OK);
  prof_start(S);
  T_EQ_INT(prof_set_stack_hook(S, NULL, NULL), PROF_ERRSTATE);
  prof_range_push_numbered(S, "ProfilerStep", 41);   /* hook call 1, at the push */
  mm(S);                                              /* hook call 2 */
  prof_range_pop(S);
  prof_range_push(S, "plain");                        /* hook call 3 */
  prof_range_pop(S);
  prof_stop(S);
  T_EQ_INT(h.calls, 3);
  prof_Event op = event(S, 0), step = event(S, 1), plain = event(S, 2);
  T_EQ_STR(op.stack, "inner.lua(7);outer.lua(4)");
  T_EQ_STR(step.name, "ProfilerStep");
  T_EQ_INT(step.value, 41);
  T_EQ_STR(step.stack, "outer.lua(3)");
  T_EQ_INT(plain.value, -1);
  /* no events buffered: the hook is never called */
  prof_set_event_capacity(S, 0);
  prof_start(S);
  mm(S);
  prof_stop(S);
  T_EQ_INT(h.calls, 3);
  prof_close(S);
}

int main(void) {
  T_RUN(test_shapes_recorded_only_when_asked);
  T_RUN(test_older_event_struct_gets_no_operands);
  T_RUN(test_full_arena_keeps_the_event);
  T_RUN(test_stack_hook_and_numbered_ranges);
  return T_DONE();
}
