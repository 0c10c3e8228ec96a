/* test_scale.c — deep trees and huge counts: depth limits, paths, saturating sums and their flag. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "t.h"

static void op(prof_State *S, int64_t macs, int64_t flops) {
  prof_Op o = {0};
  o.kind = PROF_OP_CUSTOM;
  o.macs = macs;
  o.flops = flops;
  prof_op_record(S, &o);
}

static prof_ModuleInfo info(prof_State *S, prof_ModuleId id) {
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, id, &i);
  return i;
}

/* A chain root -> "0" -> "0" -> ... of n + 1 modules; ids[k] is at depth k. */
static prof_ModuleId *chain(prof_State *S, int n) {
  prof_ModuleId *ids = malloc(sizeof *ids * (size_t)(n + 1));
  prof_module_add(S, PROF_NO_MODULE, "", "Sequential", 0, &ids[0]);
  for (int k = 1; k <= n; k++) prof_module_add(S, ids[k - 1], "0", "Sequential", 1, &ids[k]);
  return ids;
}

/* Depth 1,000 and 5,000: one op of 3 flops in the leaf, every call entered and exited. Each
   level's inclusive flops is that op's 3, and its params count the chain below it: module k has
   n - k + 1 modules of 1 param each under and including it (hand count). */
static void check_chain(int n) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId *ids = chain(S, n);
  prof_start(S);
  for (int k = 0; k <= n; k++) prof_module_enter(S, ids[k]);
  op(S, 1, 3);
  for (int k = n; k >= 0; k--) prof_module_exit(S, ids[k]);
  T_EQ_INT(prof_check(S), PROF_OK);
  T_EQ_INT(prof_stop(S), PROF_OK);
  T_EQ_INT(info(S, ids[0]).phase[PROF_PHASE_FORWARD].flops, 3);
  T_EQ_INT(info(S, ids[n / 2]).phase[PROF_PHASE_FORWARD].flops, 3);
  T_EQ_INT(info(S, ids[n]).phase[PROF_PHASE_FORWARD].self_flops, 3);
  T_EQ_INT(info(S, ids[n]).depth, n);
  /* the path: n parts "0" joined by n - 1 dots */
  char *buf = malloc((size_t)2 * n + 1);
  T_EQ_INT(prof_module_path(S, ids[n], buf, (size_t)2 * n + 1), 2 * n - 1);
  T_EQ_INT((int)strlen(buf), 2 * n - 1);
  T_CHECK(strncmp(buf, "0.0.0", 5) == 0 && buf[2 * n - 2] == '0');
  char small[8];
  T_EQ_INT(prof_module_path(S, ids[n], small, sizeof small), 2 * n - 1);
  T_EQ_STR(small, "0.0.0.0");
  free(buf);
  free(ids);
  prof_close(S);
}

static void test_chain_depth_1000(void) { check_chain(1000); }
static void test_chain_depth_5000(void) { check_chain(5000); }

/* Never-called containers are summed from their children once per snapshot: a chain of 10,000
   whose only call is the leaf's still gives every level the leaf's flops (linear: the old
   re-summing per phase doubled with each level). */
static void test_uncalled_chain_sums_linearly(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId *ids = chain(S, 10000);
  prof_start(S);
  prof_module_enter(S, ids[10000]);
  op(S, 2, 7);
  prof_module_exit(S, ids[10000]);
  T_EQ_INT(prof_stop(S), PROF_OK);
  T_EQ_INT(info(S, ids[0]).phase[PROF_PHASE_FORWARD].flops, 7);
  T_EQ_INT(info(S, ids[0]).phase[PROF_PHASE_FORWARD].macs, 2);
  T_EQ_INT(info(S, ids[0]).phase[PROF_PHASE_FORWARD].calls, 0);
  T_EQ_INT(prof_counts_saturated(S), 0);
  free(ids);
  prof_close(S);
}

/* The tree holds 10,000 levels below the root (PROF_DEPTH_MAX); the next is refused with the
   limit, the module and a shortened path. */
static void test_depth_limit_is_an_error(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId *ids = chain(S, 10000);
  prof_ModuleId deeper = -7;
  T_EQ_INT(prof_module_add(S, ids[10000], "x", "Linear", 0, &deeper), PROF_ERRARG);
  T_EQ_INT(deeper, -7);
  T_CONTAINS(prof_errmsg(S), "module 'x' (Linear) would be nested 10001 levels deep");
  T_CONTAINS(prof_errmsg(S), "more than the 10000");
  /* the parent's path, 10,000 parts "0" (19,999 characters), shortened to its first and last 30
     parts (59 characters each, within a third of the 160-byte room) and the 9,940 between */
  T_CONTAINS(prof_errmsg(S), "under \"0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.(... "
                             "9940 more levels ...).0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0\"");
  T_CHECK(strlen(prof_errmsg(S)) < 400);
  T_EQ_INT(prof_module_count(S), 10001);
  free(ids);
  prof_close(S);
}

/* Two ops of 2^62 flops after one of 123456789: the running total passes INT64_MAX = 2^63 - 1 at
   the second. Sums stop at INT64_MAX instead of wrapping to a negative number, and the snapshot
   says so. Module a: 123456789 + 2^62 = 4611686018550844693, exact (its frame closed before the
   total saturated). Module b's frame closes after it: its gain is unknown and reads INT64_MAX,
   as does root's. Self counts stay exact. A 9-digit count alone does not set the flag. */
static void test_counts_saturate_and_say_so(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, a, b;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", INT64_MAX / 2 + 1, &root);
  prof_module_add(S, root, "a", "Linear", 0, &a);
  prof_module_add(S, root, "b", "Linear", 0, &b);
  prof_start(S);
  prof_module_enter(S, a);
  op(S, 5, 123456789);
  prof_module_exit(S, a);
  T_EQ_INT(prof_snapshot(S), PROF_OK);
  T_EQ_INT(prof_counts_saturated(S), 0);
  prof_module_enter(S, root);
  prof_module_enter(S, a);
  op(S, 1, INT64_MAX / 2 + 1);
  prof_module_exit(S, a);
  prof_module_enter(S, b);
  op(S, 1, INT64_MAX / 2 + 1);
  prof_module_exit(S, b);
  prof_module_exit(S, root);
  T_EQ_INT(prof_stop(S), PROF_OK);
  T_EQ_INT(info(S, root).phase[PROF_PHASE_FORWARD].flops, INT64_MAX);
  T_EQ_INT(info(S, b).phase[PROF_PHASE_FORWARD].flops, INT64_MAX);
  T_EQ_INT(info(S, b).phase[PROF_PHASE_FORWARD].self_flops, 4611686018427387904);
  T_EQ_INT(info(S, a).phase[PROF_PHASE_FORWARD].flops, 4611686018550844693);
  T_EQ_INT(info(S, root).phase[PROF_PHASE_FORWARD].macs, 2);
  prof_Counts c;
  prof_totals(S, PROF_PHASE_FORWARD, &c);
  T_EQ_INT(c.flops, INT64_MAX);
  T_CHECK(c.flops > 0);
  T_EQ_INT(prof_counts_saturated(S), 1);
  prof_close(S);
}

/* A never-called container sums saturated children without wrapping; params too. */
static void test_container_sums_saturate(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, a, b;
  prof_module_add(S, PROF_NO_MODULE, "", "ModuleList", 0, &root);
  prof_module_add(S, root, "0", "Linear", 0, &a);
  prof_module_add(S, root, "1", "Linear", 0, &b);
  prof_start(S);
  prof_module_enter(S, a);
  op(S, INT64_MAX - 1, 1);
  prof_module_exit(S, a);
  prof_module_enter(S, b);
  op(S, 2, 1);
  prof_module_exit(S, b);
  T_EQ_INT(prof_stop(S), PROF_OK);
  T_EQ_INT(info(S, root).phase[PROF_PHASE_FORWARD].macs, INT64_MAX);  /* (2^63 - 2) + 2 */
  T_EQ_INT(info(S, root).phase[PROF_PHASE_FORWARD].flops, 2);
  T_EQ_INT(prof_counts_saturated(S), 1);
  prof_close(S);
}

/* Empty names are parts too: root -> "" -> "b" -> "" is ".b." (3 parts, 2 dots), as torch joins
   names; the fuzzer found the path writer counting one dot too few here. */
static void test_paths_with_empty_names(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId r, a, b, c;
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &r);
  prof_module_add(S, r, "", "A", 0, &a);
  prof_module_add(S, a, "b", "B", 0, &b);
  prof_module_add(S, b, "", "C", 0, &c);
  char buf[16];
  T_EQ_INT(prof_module_path(S, c, buf, sizeof buf), 3);
  T_EQ_STR(buf, ".b.");
  T_EQ_INT(prof_module_path(S, a, buf, sizeof buf), 0);
  T_EQ_STR(buf, "");
  T_EQ_INT(prof_module_path(S, c, buf, 3), 3);
  T_EQ_STR(buf, ".b");
  prof_close(S);
}

int main(void) {
  T_RUN(test_paths_with_empty_names);
  T_RUN(test_chain_depth_1000);
  T_RUN(test_chain_depth_5000);
  T_RUN(test_uncalled_chain_sums_linearly);
  T_RUN(test_depth_limit_is_an_error);
  T_RUN(test_counts_saturate_and_say_so);
  T_RUN(test_container_sums_saturate);
  return T_DONE();
}
