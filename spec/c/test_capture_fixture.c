/* test_capture_fixture.c — fixtures: basic.json replayed, saved by save_path and replayed again identically, exact 64-bit time bases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof.h"
#include "t.h"

#if PROF_HAVE_CUPTI

#define MAX_EV 64

typedef struct Seen {
  prof_Event ev[MAX_EV];
  char names[MAX_EV][64];
  int n;
  prof_CaptureStats st;
} Seen;

/* Replays path into a fresh session (Net, fc), optionally saving what it decodes to save. */
static void replay(const char *path, const char *save, Seen *out) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, fc;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &net);
  prof_module_add(S, net, "fc", "Linear", 0, &fc);
  prof_CaptureOptions o;
  prof_capture_options_init(&o);
  o.save_path = save;
  T_EQ_INT(prof_capture_open(S, PROF_CAPTURE_REPLAY, &o), PROF_OK);
  prof_start(S);
  T_EQ_INT(prof_capture_replay_file(S, path), PROF_OK);
  prof_stop(S);
  prof_capture_close(S);          /* commits the save */
  out->n = 0;
  for (int64_t i = 0; i < prof_event_count(S) && out->n < MAX_EV; i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if (e.kind < PROF_EVENT_KERNEL) continue;
    snprintf(out->names[out->n], sizeof out->names[0], "%s", e.name);
    e.name = out->names[out->n];
    out->ev[out->n++] = e;
  }
  out->st.size = sizeof out->st;
  prof_capture_stats(S, &out->st);
  prof_close(S);
}

static void test_basic_fixture_round_trips_through_save_path(void) {
  char save[] = "/tmp/profrun_capture_saveXXXXXX";
  int fd = mkstemp(save);
  T_CHECK(fd >= 0);
  close(fd);
  Seen *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
  replay("spec/fixtures/cupti/basic.json", save, a);
  /* basic.json's README: 13 records, one out of the window, one zeroed, 2 dropped by CUPTI */
  T_EQ_INT(a->st.records, 13);
  T_EQ_INT(a->n, 7);              /* kernel, runtime, copy, memset, 2 memory, overhead */
  replay(save, NULL, b);
  T_EQ_INT(b->st.records, a->st.records);
  T_EQ_INT(b->st.out_of_window, 1);
  T_EQ_INT(b->st.bad_timestamps, 1);
  T_EQ_INT(b->st.dropped_cupti, 2);
  T_EQ_INT(b->st.attributed_op, a->st.attributed_op);
  T_EQ_INT(b->st.device_time_ns, 1120000);
  T_EQ_INT(b->n, a->n);
  for (int i = 0; i < a->n && i < b->n; i++) {
    const prof_Event *x = &a->ev[i], *y = &b->ev[i];
    T_EQ_INT(y->kind, x->kind);
    T_EQ_STR(y->name, x->name);
    T_EQ_INT(y->t_begin_ns, x->t_begin_ns);
    T_EQ_INT(y->t_end_ns, x->t_end_ns);
    T_EQ_INT(y->flow, x->flow);
    T_EQ_INT(y->correlation, x->correlation);
    T_EQ_INT(y->range, x->range);
    T_EQ_INT(y->module, x->module);
    T_EQ_INT(y->bytes, x->bytes);
    T_EQ_INT(y->value, x->value);
    T_EQ_INT(y->total, x->total);
    T_EQ_INT(y->grid[0], x->grid[0]);
    T_EQ_INT(y->shared_memory, x->shared_memory);
  }
  /* basic.json's kernel, derived in its README */
  T_EQ_STR(a->ev[1].name, "volta_sgemm_128x64_nn");
  T_EQ_INT(a->ev[1].t_begin_ns, 50500000);
  remove(save);
  free(a);
  free(b);
}

/* CUPTI's clock is epoch ns (more than a double's 53 bits): time_base keeps a saved capture exact. */
static void test_time_base_keeps_64_bit_times_exact(void) {
  const char *text =
      "{\"schema\": \"profrun.cupti/1\", \"time_base\": {\"device\": \"1796172349662693533\", "
      "\"host\": \"5000000000000\"}, \"clock\": [[0, 0]], \"window\": [0, 1000000], "
      "\"buffers\": [{\"records\": [{\"kind\": \"kernel\", \"name\": \"k\", \"start\": 1001, "
      "\"end\": 2003}]}]}";
  prof_State *S = prof_new(NULL, NULL);
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  prof_start(S);
  T_EQ_INT(prof_capture_replay_json(S, text, strlen(text), "inline"), PROF_OK);
  prof_stop(S);
  prof_Event e = {.size = sizeof e};
  T_EQ_INT(prof_event_at(S, 0, &e), PROF_OK);
  /* host = 5e12 + (device - device base): an offset map through the one pair */
  T_EQ_INT(e.t_begin_ns, 5000000001001LL);
  T_EQ_INT(e.t_end_ns, 5000000002003LL);
  prof_close(S);
}

static void test_bad_fixtures_name_what_and_where(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_capture_open(S, PROF_CAPTURE_REPLAY, NULL);
  struct { const char *text, *msg; } cases[] = {
      {"[1]", "t: a fixture is a JSON object"},
      {"{\"schema\": \"profrun.cupti/1\"}", "t: \"buffers\" must be an array"},
      {"{\"schema\": \"profrun.cupti/1\", \"buffers\": [{\"records\": [{\"kind\": \"warp\"}]}]}",
       "t: buffers[0].records[0]: unknown kind \"warp\""},
      {"{\"schema\": \"profrun.cupti/1\", \"buffers\": [{\"records\": [{\"kind\": \"kernel\", \"grid\": [1, 2]}]}]}",
       "t: buffers[0].records[0]: \"grid\" must be [x, y, z]"},
      {"{\"schema\": \"profrun.cupti/1\", \"buffers\": [{\"records\": [{\"kind\": \"memcpy\", \"copy_kind\": \"HtoX\"}]}]}",
       "t: buffers[0].records[0]: \"copy_kind\": unknown value \"HtoX\""},
      {"{\"schema\": \"profrun.cupti/1\", \"buffers\": [{\"records\": [{\"kind\": \"kernel\", \"start\": 1.5}]}]}",
       "t: buffers[0].records[0]: \"start\" must be an integer"},
      {"{\"schema\": \"profrun.cupti/1\", \"clock\": [[5, 0], [1, 0]], \"buffers\": []}",
       "t: clock pairs must come in increasing device time"},
      {"{\"schema\": \"profrun.cupti/1\", \"buffers\": [], \"extra\": 1}", "t: unknown key \"extra\""},
      {"{\"schema\": ", "t: not valid JSON near byte"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    T_EQ_INT(prof_capture_replay_json(S, cases[i].text, strlen(cases[i].text), "t"), PROF_ERRARG);
    T_CONTAINS(prof_errmsg(S), cases[i].msg);
  }
  T_EQ_INT(prof_capture_replay_file(S, "spec/fixtures/cupti/none.json"), PROF_ERRIO);
  T_CONTAINS(prof_errmsg(S), "none.json: cannot open");
  prof_close(S);
}

int main(void) {
  T_RUN(test_basic_fixture_round_trips_through_save_path);
  T_RUN(test_time_base_keeps_64_bit_times_exact);
  T_RUN(test_bad_fixtures_name_what_and_where);
  return T_DONE();
}

#else

int main(void) {
  printf("built without the CUPTI headers: nothing to replay\n");
  (void)t_current_failed_;
  return T_DONE();
}

#endif
