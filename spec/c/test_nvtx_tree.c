/* test_nvtx_tree.c — NVTX range sequences (push/pop, start/end, domains, emit_nvtx ops) -> module tree and op events. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inject/inject.h"
#include "t.h"

/* {====================== names ======================} */

static void test_parse_module_forms(void) {
  injN_Range r;
  injN_parse("BertLayer", &r);
  T_CHECK(!r.is_op);
  T_EQ_STR(r.name, "");
  T_EQ_STR(r.type, "BertLayer");
  injN_parse("encoder.layer.0:BertLayer", &r);
  T_CHECK(!r.is_op);
  T_EQ_STR(r.name, "encoder.layer.0");
  T_EQ_STR(r.type, "BertLayer");
  /* a space or a second colon: not a path, the whole message is the type */
  injN_parse("forward pass: step 3", &r);
  T_EQ_STR(r.type, "forward pass: step 3");
  T_EQ_STR(r.name, "");
  injN_parse("Engine::run", &r);
  T_CHECK(!r.is_op);
  T_EQ_STR(r.type, "Engine::run");
  injN_parse(NULL, &r);
  T_EQ_STR(r.type, "");
}

static void test_parse_emit_nvtx(void) {
  injN_Range r;
  /* the example, as torch.autograd.profiler.emit_nvtx(record_shapes=True) writes it */
  injN_parse("aten::addmm, seq = 12, sizes = [[128], [32, 64], [64, 128], [], []]", &r);
  T_CHECK(r.is_op);
  T_CHECK(!r.backward);
  T_EQ_STR(r.name, "aten::addmm");
  T_EQ_INT(r.seq, 12);
  T_EQ_INT(r.nsizes, 5);
  T_EQ_INT(r.sizes[0].ndim, 1);
  T_EQ_INT(r.sizes[0].dim[0], 128);
  T_EQ_INT(r.sizes[1].ndim, 2);
  T_EQ_INT(r.sizes[1].dim[0], 32);
  T_EQ_INT(r.sizes[1].dim[1], 64);
  T_EQ_INT(r.sizes[2].dim[1], 128);
  T_EQ_INT(r.sizes[3].ndim, 0);
  injN_parse("aten::relu", &r);
  T_CHECK(r.is_op);
  T_EQ_INT(r.seq, -1);
  T_EQ_INT(r.nsizes, -1);
  injN_parse("aten::mm, op_id = 4, sizes = [[2, 3], [3, 5]], input_op_ids = [(1,0), (2,0)]", &r);
  T_EQ_INT(r.nsizes, 2);
  T_EQ_INT(r.sizes[1].dim[1], 5);
  injN_parse("AddmmBackward0, seq = 12", &r);
  T_CHECK(r.is_op && r.backward);
  T_EQ_STR(r.name, "AddmmBackward0");
  injN_parse("aten::mm, stashed seq = 7", &r);
  T_CHECK(r.is_op && r.backward);
  T_EQ_INT(r.seq, 7);
  /* a broken list is no sizes, not a crash */
  injN_parse("aten::mm, sizes = [[2, 3], [3", &r);
  T_CHECK(r.is_op);
  T_EQ_INT(r.nsizes, -1);
  injN_parse("aten::view, sizes = [[1, 2, 3, 4, 5, 6, 7, 8, 9]]", &r);
  T_EQ_INT(r.nsizes, 1);
  T_EQ_INT(r.sizes[0].ndim, -1); /* more dims than PROF_MAX_DIMS */
}

/* {====================== aten -> formulas ======================} */

static void test_aten_addmm(void) {
  injN_Range r;
  prof_State *S = prof_new(NULL, NULL);
  injN_parse("aten::addmm, seq = 12, sizes = [[128], [32, 64], [64, 128], [], []]", &r);
  prof_Op op;
  T_EQ_INT(injA_fill(&r, &op), 1);
  T_EQ_INT(op.kind, PROF_OP_ADDMM);
  T_EQ_INT(op.ninputs, 3);
  T_EQ_INT(op.in[0].dim[0], 128); /* the bias first, as addmm(bias, mat1, mat2) */
  T_EQ_INT(op.out.dim[0], 32);
  T_EQ_INT(op.out.dim[1], 128);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  /* mat1 [32, 64] x mat2 [64, 128]: 32*64*128 = 262144 MACs; exact adds the bias once per
     output element: 2*262144 + 32*128 = 528384 */
  T_EQ_INT(op.macs, 262144);
  T_EQ_INT(op.flops, 528384);
  prof_close(S);
}

static void test_aten_others(void) {
  injN_Range r;
  prof_Op op;
  prof_State *S = prof_new(NULL, NULL);
  injN_parse("aten::linear, sizes = [[8, 16], [4, 16], [4]]", &r);
  T_EQ_INT(injA_fill(&r, &op), 1);
  T_EQ_INT(op.kind, PROF_OP_LINEAR);
  T_CHECK(op.flags & PROF_OPF_BIAS);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  T_EQ_INT(op.macs, 8 * 16 * 4);
  T_EQ_INT(op.flops, 2 * 8 * 16 * 4 + 8 * 4);
  injN_parse("aten::bmm, sizes = [[3, 4, 5], [3, 5, 6]]", &r);
  T_EQ_INT(injA_fill(&r, &op), 1);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  T_EQ_INT(op.macs, 3 * 4 * 5 * 6);
  /* embedding(weight, indices): the core's order is indices, weight; no MACs */
  injN_parse("aten::embedding, sizes = [[1000, 32], [4, 7]]", &r);
  T_EQ_INT(injA_fill(&r, &op), 1);
  T_EQ_INT(op.in[0].dim[1], 7);
  T_EQ_INT(op.in[1].dim[0], 1000);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  T_EQ_INT(op.macs, 0);
  /* mul by a Python scalar (an empty entry): one flop per element of x */
  injN_parse("aten::mul, sizes = [[10, 10], []]", &r);
  T_EQ_INT(injA_fill(&r, &op), 1);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  T_EQ_INT(op.flops, 100);
  /* unknown, shapeless, or needing arguments emit_nvtx does not print: timed, not counted */
  injN_parse("aten::conv2d, sizes = [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", &r);
  T_EQ_INT(injA_fill(&r, &op), 0);
  T_EQ_INT(op.kind, PROF_OP_CUSTOM);
  injN_parse("aten::mm", &r);
  T_EQ_INT(injA_fill(&r, &op), 0);
  injN_parse("aten::frobnicate, sizes = [[2]]", &r);
  T_EQ_INT(injA_fill(&r, &op), 0);
  prof_close(S);
}

/* {====================== the tree ======================} */

static prof_ModuleInfo info(prof_State *S, prof_ModuleId id) {
  prof_ModuleInfo i = {.size = sizeof i};
  prof_module_info(S, id, &i);
  return i;
}

/* The module whose dotted path is path (-1 when none). */
static prof_ModuleId find(prof_State *S, const char *path) {
  char buf[256];
  for (prof_ModuleId i = 0; i < prof_module_count(S); i++)
    if (prof_module_path(S, i, buf, sizeof buf) >= 0 && strcmp(buf, path) == 0 && i != 0) return i;
  return strcmp(path, "") == 0 ? 0 : -1;
}

typedef struct Fix {
  prof_State *S;
  injT_Tree *T;
  injT_Thread *th;
} Fix;

static Fix fix_new(void) {
  Fix f;
  f.S = prof_new(NULL, NULL);
  prof_set_event_capacity(f.S, 256);
  prof_set_record_shapes(f.S, 1);
  injT_new(f.S, "app", &f.T);
  prof_start(f.S);
  f.th = injT_thread(f.T);
  return f;
}

static void fix_free(Fix *f) {
  injT_free(f->T);
  prof_close(f->S);
}

static void test_paths_and_types(void) {
  Fix f = fix_new();
  injT_Tree *T = f.T;
  injT_Thread *th = f.th;
  T_EQ_INT(injT_push(T, th, 0, 0, "encoder:BertEncoder"), 1);
  for (int i = 0; i < 3; i++) {
    T_EQ_INT(injT_push(T, th, 0, 0, "encoder.layer.0:BertLayer"), 2);
    injT_push(T, th, 0, 0, "aten::addmm, seq = 1, sizes = [[64], [32, 128], [128, 64], [], []]");
    injT_pop(T, th, 0);
    T_EQ_INT(injT_pop(T, th, 0), 1);
  }
  injT_push(T, th, 0, 0, "Pooler");
  injT_pop(T, th, 0);
  T_EQ_INT(injT_pop(T, th, 0), 0);
  injT_close_all(T);
  prof_stop(f.S);
  prof_ModuleId enc = find(f.S, "encoder"), layer = find(f.S, "encoder.layer.0");
  prof_ModuleId pooler = find(f.S, "encoder.Pooler");
  T_CHECK(enc > 0 && layer > 0 && pooler > 0);
  prof_ModuleInfo mi = info(f.S, layer);
  T_EQ_STR(mi.type, "BertLayer");
  T_EQ_STR(mi.name, "layer.0"); /* the attribute under encoder; its path stays as given */
  T_EQ_INT(mi.parent, enc);
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].calls, 3);
  /* 3 addmm of 32x128x64 = 262144 MACs each */
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].macs, 3 * 262144);
  T_EQ_STR(info(f.S, pooler).type, "Pooler");
  T_EQ_INT(info(f.S, 0).phase[PROF_PHASE_FORWARD].macs, 3 * 262144);
  T_EQ_STR(info(f.S, 0).type, "app");
  injT_Stats st;
  injT_stats(T, &st);
  T_EQ_INT(st.ranges, 5);
  T_EQ_INT(st.ops, 3);
  T_EQ_INT(st.counted_ops, 3);
  fix_free(&f);
}

static void test_nested_ops_count_once(void) {
  /* emit_nvtx nests aten::linear > aten::t, aten::addmm: the outer op's formula counts, once */
  Fix f = fix_new();
  injT_push(f.T, f.th, 0, 0, "fc:Linear");
  injT_push(f.T, f.th, 0, 0, "aten::linear, sizes = [[8, 16], [4, 16], [4]]");
  injT_push(f.T, f.th, 0, 0, "aten::t, sizes = [[4, 16]]");
  injT_pop(f.T, f.th, 0);
  injT_push(f.T, f.th, 0, 0, "aten::addmm, sizes = [[4], [8, 16], [16, 4], [], []]");
  injT_pop(f.T, f.th, 0);
  injT_pop(f.T, f.th, 0);
  injT_pop(f.T, f.th, 0);
  injT_close_all(f.T);
  prof_stop(f.S);
  prof_ModuleInfo mi = info(f.S, find(f.S, "fc"));
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].macs, 8 * 16 * 4);
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].flops, 2 * 8 * 16 * 4 + 8 * 4);
  /* all three are op events, each timed, with its shapes */
  int ops = 0, addmm = 0;
  for (int64_t i = 0; i < prof_event_count(f.S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(f.S, i, &e);
    if (e.kind != PROF_EVENT_OP) continue;
    ops++;
    T_CHECK(e.t_end_ns >= e.t_begin_ns);
    if (strcmp(e.name, "aten::addmm") == 0) {
      addmm = 1;
      T_EQ_INT(e.macs, 0);
      /* the first PROF_MAX_OPERANDS entries, scalars' [] included, as torch's Input Dims */
      T_EQ_INT(e.ninputs, PROF_MAX_OPERANDS);
      T_EQ_INT(e.input[1].dim[0], 8);
      T_EQ_INT(e.input[3].ndim, 0);
    }
  }
  T_EQ_INT(ops, 3);
  T_CHECK(addmm);
  fix_free(&f);
}

static void test_domains_and_categories(void) {
  Fix f = fix_new();
  uint32_t d = injT_domain(f.T, "mylib");
  T_CHECK(d != INJT_DEFAULT_DOMAIN);
  T_EQ_INT(injT_domain(f.T, "mylib"), d);
  T_CHECK(injT_domain(f.T, "other") != d);
  injT_name_category(f.T, d, 3, "Forward");
  injT_name_category(f.T, 0, 3, "Global");
  injT_push(f.T, f.th, d, 3, "block");
  injT_push(f.T, f.th, 0, 3, "inner");
  injT_push(f.T, f.th, d, 9, "unnamed");
  injT_pop(f.T, f.th, d);
  injT_pop(f.T, f.th, 0);
  injT_pop(f.T, f.th, d);
  injT_close_all(f.T);
  prof_stop(f.S);
  T_EQ_STR(info(f.S, find(f.S, "block")).type, "mylib::Forward/block");
  T_EQ_STR(info(f.S, find(f.S, "block.inner")).type, "Global/inner");
  T_EQ_STR(info(f.S, find(f.S, "block.inner.unnamed")).type, "mylib::unnamed");
  fix_free(&f);
}

static void test_interleaved_domains(void) {
  /* domain stacks are separate: A push, B push, A pop closes A when B closes (the tree nests) */
  Fix f = fix_new();
  uint32_t a = injT_domain(f.T, "A"), b = injT_domain(f.T, "B");
  injT_push(f.T, f.th, a, 0, "ra");
  injT_push(f.T, f.th, b, 0, "rb");
  T_EQ_INT(injT_pop(f.T, f.th, a), 0);          /* no A range left open */
  T_EQ_INT(prof_module_current(f.S), find(f.S, "ra.rb")); /* both still open */
  T_EQ_INT(injT_pop(f.T, f.th, b), 0);
  T_EQ_INT(prof_module_current(f.S), 0);         /* both closed: the root is innermost */
  T_EQ_INT(injT_pop(f.T, f.th, a), -1);          /* nothing of A left */
  injT_Stats st;
  injT_stats(f.T, &st);
  T_EQ_INT(st.unmatched_pops, 1);
  injT_close_all(f.T);
  prof_stop(f.S);
  T_EQ_INT(prof_check(f.S), PROF_OK);            /* every exit matched its enter */
  T_EQ_INT(info(f.S, find(f.S, "ra")).phase[PROF_PHASE_FORWARD].calls, 1);
  fix_free(&f);
}

static void test_start_end(void) {
  Fix f = fix_new();
  uint64_t r1 = injT_start(f.T, f.th, 0, 0, "load");
  injT_push(f.T, f.th, 0, 0, "step");
  uint64_t r2 = injT_start(f.T, f.th, 0, 0, "io");
  T_CHECK(r1 != 0 && r2 != 0 && r1 != r2);
  injT_end(f.T, f.th, r1); /* ends while step and io are open: closes with them */
  T_EQ_INT(prof_module_current(f.S), find(f.S, "load.step.io"));
  injT_end(f.T, f.th, r2);
  T_EQ_INT(prof_module_current(f.S), find(f.S, "load.step"));
  injT_pop(f.T, f.th, 0);  /* step closes, and load (ended) with it */
  T_EQ_INT(prof_module_current(f.S), 0);
  injT_end(f.T, f.th, r1); /* twice: unmatched */
  injT_end(f.T, f.th, ((uint64_t)7 << 40) | 1); /* another thread's id */
  injT_Stats st;
  injT_stats(f.T, &st);
  T_EQ_INT(st.unmatched_pops, 1);
  T_EQ_INT(st.foreign_ends, 1);
  injT_close_all(f.T);
  prof_stop(f.S);
  T_EQ_INT(prof_check(f.S), PROF_OK);
  fix_free(&f);
}

static void test_backward_phase(void) {
  /* as PyTorch runs it: forward ops inside module ranges; later, outside every module range,
     the autograd node with the forward op's seq and the ops it runs */
  Fix f = fix_new();
  injT_push(f.T, f.th, 0, 0, "fc:Linear");
  injT_push(f.T, f.th, 0, 0, "aten::mm, seq = 3, sizes = [[2, 3], [3, 4]]");
  injT_pop(f.T, f.th, 0);
  injT_pop(f.T, f.th, 0);
  injT_push(f.T, f.th, 0, 0, "MmBackward0, seq = 3");
  T_EQ_INT(prof_get_phase(f.S), PROF_PHASE_BACKWARD);
  T_EQ_INT(prof_module_current(f.S), find(f.S, "fc")); /* the forward op's module again */
  injT_push(f.T, f.th, 0, 0, "aten::mm, sizes = [[2, 4], [4, 3]]");
  injT_pop(f.T, f.th, 0);
  injT_pop(f.T, f.th, 0);
  T_EQ_INT(prof_get_phase(f.S), PROF_PHASE_FORWARD);
  T_EQ_INT(prof_module_current(f.S), 0);
  /* a node whose seq no forward op had runs where it is */
  injT_push(f.T, f.th, 0, 0, "AddBackward0, seq = 99");
  T_EQ_INT(prof_module_current(f.S), 0);
  injT_pop(f.T, f.th, 0);
  injT_close_all(f.T);
  prof_stop(f.S);
  T_EQ_INT(prof_check(f.S), PROF_OK);
  prof_ModuleInfo mi = info(f.S, find(f.S, "fc"));
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].macs, 2 * 3 * 4);
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].calls, 1);
  T_EQ_INT(mi.phase[PROF_PHASE_BACKWARD].macs, 2 * 4 * 3);
  T_EQ_INT(mi.phase[PROF_PHASE_BACKWARD].calls, 1);
  prof_Counts tot;
  prof_totals(f.S, PROF_PHASE_BACKWARD, &tot);
  T_EQ_INT(tot.macs, 24);
  fix_free(&f);
}

static void test_depth_overflow(void) {
  Fix f = fix_new();
  for (int i = 0; i < INJT_MAX_FRAMES + 5; i++) injT_push(f.T, f.th, 0, 0, "r");
  for (int i = 0; i < INJT_MAX_FRAMES + 5; i++) injT_pop(f.T, f.th, 0);
  T_EQ_INT(prof_module_current(f.S), 0);
  injT_Stats st;
  injT_stats(f.T, &st);
  T_EQ_INT(st.too_deep, 5);
  T_EQ_INT(st.unmatched_pops, 0);
  injT_close_all(f.T);
  prof_stop(f.S);
  fix_free(&f);
}

static void test_reused_buffer_and_parents(void) {
  /* the same buffer with new text each time, and one literal under two parents: the per-thread
     cache of (parent, message) must never hand back the wrong module */
  Fix f = fix_new();
  char buf[32];
  for (int i = 0; i < 3; i++) {
    snprintf(buf, sizeof buf, "step%d", i % 2);
    injT_push(f.T, f.th, 0, 0, buf);
    injT_push(f.T, f.th, 0, 0, "inner:Block");
    injT_pop(f.T, f.th, 0);
    injT_pop(f.T, f.th, 0);
  }
  injT_push(f.T, f.th, 0, 0, "inner:Block"); /* at the top level this time */
  injT_pop(f.T, f.th, 0);
  injT_close_all(f.T);
  prof_stop(f.S);
  T_EQ_INT(info(f.S, find(f.S, "step0")).phase[PROF_PHASE_FORWARD].calls, 2);
  T_EQ_INT(info(f.S, find(f.S, "step1")).phase[PROF_PHASE_FORWARD].calls, 1);
  T_EQ_INT(info(f.S, find(f.S, "step0.inner")).phase[PROF_PHASE_FORWARD].calls, 2);
  T_EQ_INT(info(f.S, find(f.S, "step1.inner")).phase[PROF_PHASE_FORWARD].calls, 1);
  T_EQ_INT(info(f.S, find(f.S, "inner")).phase[PROF_PHASE_FORWARD].calls, 1);
  T_EQ_INT(prof_module_count(f.S), 6); /* the root and the five above */
  fix_free(&f);
}

typedef struct ThreadArg {
  injT_Tree *T;
  int n;
} ThreadArg;

static void *thread_body(void *p) {
  ThreadArg *a = p;
  injT_Thread *th = injT_thread(a->T);
  for (int i = 0; i < a->n; i++) {
    injT_push(a->T, th, 0, 0, "worker:Block");
    injT_push(a->T, th, 0, 0, "aten::mm, sizes = [[4, 4], [4, 4]]");
    injT_pop(a->T, th, 0);
    injT_pop(a->T, th, 0);
  }
  return NULL; /* no injT_thread_done: the thread's end closes its root (the key's destructor) */
}

static void test_threads_merge(void) {
  Fix f = fix_new();
  pthread_t t[3];
  ThreadArg a = {f.T, 10};
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, thread_body, &a);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  injT_close_all(f.T);
  prof_stop(f.S);
  prof_ModuleInfo mi = info(f.S, find(f.S, "worker"));
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].calls, 30);
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].macs, 30 * 64);
  T_EQ_INT(info(f.S, 0).phase[PROF_PHASE_FORWARD].macs, 30 * 64);
  T_EQ_INT(prof_check(f.S), PROF_OK);
  fix_free(&f);
}

int main(void) {
  T_RUN(test_parse_module_forms);
  T_RUN(test_parse_emit_nvtx);
  T_RUN(test_aten_addmm);
  T_RUN(test_aten_others);
  T_RUN(test_paths_and_types);
  T_RUN(test_nested_ops_count_once);
  T_RUN(test_domains_and_categories);
  T_RUN(test_interleaved_domains);
  T_RUN(test_start_end);
  T_RUN(test_backward_phase);
  T_RUN(test_depth_overflow);
  T_RUN(test_reused_buffer_and_parents);
  T_RUN(test_threads_merge);
  return T_DONE();
}
