/* test_disabled.c — with PROF_DISABLE the annotation macros are nothing: not even their arguments run. */
#define PROF_DISABLE
#include "prof.h"
#include "t.h"

static int evaluated;
__attribute__((unused)) static prof_State *session(void) {
  evaluated++;
  return NULL;   /* a real call with NULL would crash: the macros must not call anything */
}

static void test_macros_compile_to_nothing(void) {
  PROF_RANGE_PUSH(session(), "forward");
  PROF_INSTANT(session(), "mark");
  PROF_COUNTER(session(), "tokens", 1);
  PROF_RANGE_POP(session());
  T_EQ_INT(evaluated, 0);
}

int main(void) {
  T_RUN(test_macros_compile_to_nothing);
  return T_DONE();
}
