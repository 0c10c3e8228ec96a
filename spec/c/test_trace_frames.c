/* test_trace_frames.c — with_stack locations to lua_function slices: shared outer frames make one slice, slices nest. */
#include <string.h>

#include "trace/trace_internal.h"
#include "t.h"

typedef struct Got { int n; char name[16][32]; int64_t begin[16], end[16]; } Got;

static void emit(void *ud, const char *name, size_t len, int64_t begin, int64_t end) {
  Got *g = ud;
  if (g->n == 16) return;
  memcpy(g->name[g->n], name, len);
  g->name[g->n][len] = '\0';
  g->begin[g->n] = begin;
  g->end[g->n] = end;
  g->n++;
}

static void test_shared_frames_make_one_slice(void) {
  profX_Frames F = {0};
  Got g = {0};
  /* main(9) calls fwd(5) twice, fwd calls layer(2) for two ops, then main(10) runs one op */
  profX_frames_feed(&F, "layer(2);fwd(5);main(9)", 0, 10, emit, &g);
  profX_frames_feed(&F, "layer(2);fwd(5);main(9)", 20, 30, emit, &g);   /* the same frames: nothing closes */
  T_EQ_INT(g.n, 0);
  profX_frames_feed(&F, "fwd(6);main(9)", 40, 50, emit, &g);   /* another line: layer(2), fwd(5) close */
  T_EQ_INT(g.n, 2);
  T_EQ_STR(g.name[0], "layer(2)");
  T_EQ_INT(g.begin[0], 0);
  T_EQ_INT(g.end[0], 30);
  profX_frames_feed(&F, "main(10)", 60, 70, emit, &g);                  /* fwd(6), main(9) close */
  profX_frames_flush(&F, emit, &g);
  T_EQ_INT(g.n, 5);
  /* in closing order, innermost first */
  T_EQ_STR(g.name[1], "fwd(5)");
  T_EQ_INT(g.begin[1], 0);
  T_EQ_INT(g.end[1], 30);
  T_EQ_STR(g.name[2], "fwd(6)");
  T_EQ_INT(g.begin[2], 40);
  T_EQ_INT(g.end[2], 50);
  T_EQ_STR(g.name[3], "main(9)");
  T_EQ_INT(g.begin[3], 0);
  T_EQ_INT(g.end[3], 50);
  T_EQ_STR(g.name[4], "main(10)");
  T_EQ_INT(g.begin[4], 60);
  T_EQ_INT(g.end[4], 70);
}

/* Any two slices either nest or do not overlap, whatever the stacks (truncated ones included). */
static void test_slices_always_nest(void) {
  const char *stacks[6] = {"a(1);b(2);c(3)", "b(2);c(3);d(4)", "a(1);b(2)", "x(9)", "a(1);b(2);c(3)",
                           "q(1);b(2);c(3)"};
  profX_Frames F = {0};
  Got g = {0};
  for (int i = 0; i < 6; i++) profX_frames_feed(&F, stacks[i], i * 10, i * 10 + 5, emit, &g);
  profX_frames_flush(&F, emit, &g);
  T_CHECK(g.n > 0);
  for (int i = 0; i < g.n; i++) {
    T_CHECK(g.begin[i] <= g.end[i]);
    for (int j = i + 1; j < g.n; j++) {
      int disjoint = g.end[i] <= g.begin[j] || g.end[j] <= g.begin[i];
      int nested = (g.begin[i] <= g.begin[j] && g.end[j] <= g.end[i]) ||
                   (g.begin[j] <= g.begin[i] && g.end[i] <= g.end[j]);
      T_CHECK(disjoint || nested);
    }
  }
}

int main(void) {
  T_RUN(test_shared_frames_make_one_slice);
  T_RUN(test_slices_always_nest);
  return T_DONE();
}
