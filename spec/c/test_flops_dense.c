/* test_flops_dense.c — linear, matmul-family and einsum formulas, both conventions. */
#include <stdlib.h>

#include "t.h"
#include "op_builder.h"

/* {====================== linear ======================} */

static void test_linear_exact(void) {
  prof_Operand in[3] = {sh(2, 4, 10), sh(2, 20, 10), sh(1, 20)};
  prof_Op op = mk(PROF_OP_LINEAR, 2, in, sh(2, 4, 20));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 800);          /* 4 rows · 10 in · 20 out */
  T_EQ_INT(op.flops, 1600);
  T_EQ_INT(op.bytes_read, 960);    /* (40 + 200) · 4 */
  T_EQ_INT(op.bytes_written, 320); /* 80 · 4 */
  op = mk(PROF_OP_LINEAR, 3, in, sh(2, 4, 20));
  op.flags = PROF_OPF_BIAS;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 800);
  T_EQ_INT(op.flops, 1680);        /* 1600 + 4·20 bias adds */
  T_EQ_INT(op.bytes_read, 1040);   /* + 20 · 4 */
}

static void test_linear_ds(void) {
  /* DeepSpeed never counts the bias: numel(x)·out_features, 2·MACs */
  prof_Operand in[3] = {sh(2, 4, 10), sh(2, 20, 10), sh(1, 20)};
  prof_Op op = mk(PROF_OP_LINEAR, 3, in, sh(2, 4, 20));
  op.flags = PROF_OPF_BIAS;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 800);
  T_EQ_INT(op.flops, 1600);
  T_EQ_INT(op.bytes_read, 1040);   /* bytes do not depend on the convention */
}

static void test_linear_batched(void) {
  /* x [2, 3, 10]: 6 rows; exact 6·10·5 = 300 = DeepSpeed's numel(x)·5 */
  prof_Operand in[2] = {sh(3, 2, 3, 10), sh(2, 5, 10)};
  prof_Op op = mk(PROF_OP_LINEAR, 2, in, sh(3, 2, 3, 5));
  check_counts(&op, 300, ANY, 300, ANY);
}

static void test_linear_deepspeed_reference(void) {
  const struct {
    prof_Operand in[3], out;
    int64_t macs, flops, ds_macs, ds_flops;
  } cases[] = {
    /* DeepSpeed's engine test: SimpleModel(hidden 10), batch 1: flops 200 (bias not counted) */
    {{sh(2, 1, 10), sh(2, 10, 10), sh(1, 10)}, sh(2, 1, 10), ANY, ANY, ANY, 200},
    /* LeNet5 at batch 1024: Linear(120, 84) 10 321 920 MACs and Linear(84, 10) 860 160 */
    {{sh(2, 1024, 120), sh(2, 84, 120), sh(1, 84)}, sh(2, 1024, 84),
     ANY, 2 * 10321920 + 1024 * 84, 10321920, 2 * 10321920},
    {{sh(2, 1024, 84), sh(2, 10, 84), sh(1, 10)}, sh(2, 1024, 10), ANY, ANY, 860160, ANY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = mk(PROF_OP_LINEAR, 3, cases[i].in, cases[i].out);
    op.flags = PROF_OPF_BIAS;
    check_counts(&op, cases[i].macs, cases[i].flops, cases[i].ds_macs, cases[i].ds_flops);
  }
}

static void test_linear_errors(void) {
  prof_Operand in[2] = {sh(2, 4, 10), sh(2, 20, 30)};
  prof_Op op = mk(PROF_OP_LINEAR, 2, in, sh(2, 4, 20));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "linear: input [4, 10] does not match weight [20, 30]");
  T_EQ_INT(op.macs, 0);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  /* PROF_OPF_BIAS without the bias operand */
  in[1] = sh(2, 20, 10);
  op = mk(PROF_OP_LINEAR, 2, in, sh(2, 4, 20));
  op.flags = PROF_OPF_BIAS;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "PROF_OPF_BIAS");
  /* a 0-d input */
  in[0] = sh(0);
  op = mk(PROF_OP_LINEAR, 2, in, sh(1, 20));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "input []");
  /* NULL err buffer is fine */
  T_EQ_INT(profF_count(EXACT, &op, NULL, 0), PROF_ERRARG);
}

/* {====================== matmul family ======================} */

/* Two-operand products counted both ways: exact and DeepSpeed MACs, flops 2·MACs in each. */
typedef struct {
  prof_OpKind kind;
  prof_Operand in[2], out;
  int64_t macs, ds_macs;
} Product;

static void check_products(const Product *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    prof_Op op = mk(cases[i].kind, 2, cases[i].in, cases[i].out);
    check_counts(&op, cases[i].macs, 2 * cases[i].macs, cases[i].ds_macs, 2 * cases[i].ds_macs);
  }
}

static void test_matmul_1d(void) {
  const Product cases[] = {
    /* (8,)@(8,) is a dot product: 8 MACs. DeepSpeed: prod(a)·b[-1] = 8·8 = 64 */
    {PROF_OP_MATMUL, {sh(1, 8), sh(1, 8)}, sh(0), 8, 64},
    /* (4, 8)@(8,): matrix-vector, 32 MACs; DeepSpeed 32·8 = 256 */
    {PROF_OP_MATMUL, {sh(2, 4, 8), sh(1, 8)}, sh(1, 4), 32, 256},
    /* (8,)@(8, 5): 40 both ways */
    {PROF_OP_MATMUL, {sh(1, 8), sh(2, 8, 5)}, sh(1, 5), 40, 40},
  };
  check_products(cases, sizeof cases / sizeof cases[0]);
}

static void test_matmul_broadcast(void) {
  const Product cases[] = {
    /* (2,1,4,8)@(3,8,5): batch [2,1] and [3] broadcast to [2,3]: 6·4·8·5 = 960 MACs
       (torch 1.13's profiler reports aten::bmm 1920 flops for it). DeepSpeed: 64·5 = 320 */
    {PROF_OP_MATMUL, {sh(4, 2, 1, 4, 8), sh(3, 3, 8, 5)}, sh(4, 2, 3, 4, 5), 960, 320},
    /* other carries the batch: (3, 8)@(2, 8, 5) = 2·3·8·5 = 240; DeepSpeed 24·5 = 120 */
    {PROF_OP_MATMUL, {sh(2, 3, 8), sh(3, 2, 8, 5)}, sh(3, 2, 3, 5), 240, 120},
  };
  check_products(cases, sizeof cases / sizeof cases[0]);
}

static void test_matmul_errors(void) {
  prof_Operand in[2] = {sh(2, 2, 3), sh(2, 4, 5)};
  prof_Op op = mk(PROF_OP_MATMUL, 2, in, sh(2, 2, 5));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "matmul: input [2, 3] does not match other [4, 5]");
  in[0] = sh(3, 2, 4, 4);
  in[1] = sh(3, 3, 4, 4);
  op = mk(PROF_OP_MATMUL, 2, in, sh(3, 2, 4, 4));
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "do not broadcast");
  in[0] = sh(0);
  op = mk(PROF_OP_MATMUL, 2, in, sh(0));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  /* mm is 2-D only, bmm 3-D with equal batch */
  in[0] = sh(3, 2, 3, 4);
  in[1] = sh(2, 4, 5);
  op = mk(PROF_OP_MM, 2, in, sh(2, 3, 5));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "mm: input [2, 3, 4] must be 2-D");
  in[1] = sh(3, 3, 4, 5);
  op = mk(PROF_OP_BMM, 2, in, sh(3, 2, 3, 5));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "[3, 4, 5]");
  op = mk(PROF_OP_MATMUL, 1, in, sh(0));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "needs 2 operands, got 1");
}

static void test_mm_bmm(void) {
  const Product cases[] = {
    /* [3,4]@[4,5]: 60 MACs both ways (torch 1.13: aten::mm 120 flops) */
    {PROF_OP_MM, {sh(2, 3, 4), sh(2, 4, 5)}, sh(2, 3, 5), 60, 60},
    /* [2,3,4]@[2,4,5]: 2·3·4·5 = 120 */
    {PROF_OP_BMM, {sh(3, 2, 3, 4), sh(3, 2, 4, 5)}, sh(3, 2, 3, 5), 120, 120},
  };
  check_products(cases, sizeof cases / sizeof cases[0]);
  prof_Op op = mk(PROF_OP_BMM, 2, cases[1].in, cases[1].out);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.bytes_read, (24 + 40) * 4);
}

static void test_addmm(void) {
  /* bias [5] + [3,4]@[4,5]: 60 MACs; exact adds numel(out) 15 -> 135; DeepSpeed numel(bias) 5 */
  prof_Operand in[3] = {sh(1, 5), sh(2, 3, 4), sh(2, 4, 5)};
  prof_Op op = mk(PROF_OP_ADDMM, 3, in, sh(2, 3, 5));
  check_counts(&op, 60, 135, 60, 125);
  /* a bias that does not broadcast to [3, 5] */
  in[0] = sh(1, 4);
  op = mk(PROF_OP_ADDMM, 3, in, sh(2, 3, 5));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "input [4] does not broadcast to the product [3, 5]");
  /* inner dims */
  in[0] = sh(1, 5);
  in[2] = sh(2, 6, 5);
  op = mk(PROF_OP_ADDMM, 3, in, sh(2, 3, 5));
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "mat1 [3, 4] does not match mat2 [6, 5]");
}

static void test_baddbmm(void) {
  /* [1,1,5] + [2,3,4]@[2,4,5]: 120 MACs; exact + 2·3·5 = 270, DeepSpeed + 5 = 245 */
  prof_Operand in[3] = {sh(3, 1, 1, 5), sh(3, 2, 3, 4), sh(3, 2, 4, 5)};
  prof_Op op = mk(PROF_OP_BADDBMM, 3, in, sh(3, 2, 3, 5));
  check_counts(&op, 120, 270, ANY, 245);
  /* full-size input: both add 30 */
  in[0] = sh(3, 2, 3, 5);
  op = mk(PROF_OP_BADDBMM, 3, in, sh(3, 2, 3, 5));
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 270);
}

/* {====================== einsum ======================} */

/* Einsums counted both ways: exact MACs and flops, DeepSpeed (numpy's) flops. */
typedef struct {
  int n;
  prof_Operand in[2], out;
  const char *equation;
  int64_t macs, flops, ds_flops;
} Einsum;

static void check_einsums(const Einsum *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    prof_Op op = mk(PROF_OP_EINSUM, cases[i].n, cases[i].in, cases[i].out);
    op.equation = cases[i].equation;
    check_counts(&op, cases[i].macs, cases[i].flops, ANY, cases[i].ds_flops);
  }
}

static void test_einsum_ds(void) {
  /* numpy 1.24: np.einsum_path('ij,jk->ik', zeros((3,4)), zeros((4,5)), optimize='optimal')
     prints "Optimized FLOP count:  1.210e+02": 3·4·5·2 = 120, + 1 (numpy's sum(cost) + 1) */
  const Einsum cases[] = {{2, {sh(2, 3, 4), sh(2, 4, 5)}, sh(2, 3, 5), "ij,jk->ik", 60, 120, 121}};
  check_einsums(cases, 1);
  prof_Op op = mk(PROF_OP_EINSUM, 2, cases[0].in, cases[0].out);
  op.equation = cases[0].equation;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 0);
}

static void test_einsum_rounding(void) {
  const Einsum cases[] = {
    /* 'bhld,bhsd->bhls' [3,7,11,13], [3,7,17,13]: 2·3·7·11·17·13 + 1 = 102103; numpy prints
       "1.021e+05" and DeepSpeed reads back int(float(...)) = 102100 */
    {2, {sh(4, 3, 7, 11, 13), sh(4, 3, 7, 17, 13)}, sh(4, 3, 7, 11, 17), "bhld,bhsd->bhls",
     51051, 102102, 102100},
    /* GPT-3 attention scores, 96 heads, 2048 tokens, head dim 128: 2·96·2048·2048·128 + 1
       = 103 079 215 105; numpy prints "1.031e+11" */
    {2, {sh(4, 1, 96, 2048, 128), sh(4, 1, 96, 2048, 128)}, sh(4, 1, 96, 2048, 2048),
     "bhqd,bhkd->bhqk", ANY, 103079215104LL, 103100000000LL},
  };
  check_einsums(cases, sizeof cases / sizeof cases[0]);
}

static void test_einsum_sig4(void) {
  /* Python: int(float("%.3e" % v)); values computed with /usr/bin/python3 */
  static const long long cases[][2] = {
    {121, 121}, {9999, 9999}, {10000, 10000}, {123456, 123500},
    {123450, 123400},              /* tie, half to even */
    {123550, 123600}, {99995, 100000}, {99985, 99980}, {102103, 102100},
    {9007199254740993LL, 9007000000000000LL},          /* 2^53 + 1 */
    {1152921504606859321LL, 1153000000000000000LL},    /* 2^60 + 12345 */
    {987654321987654321LL, 987700000000000000LL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    T_EQ_INT(profF_sig4(cases[i][0]), cases[i][1]);
  /* and against the C library's own correctly rounded "%.3e" */
  unsigned long long x = 88172645463325252ULL;
  for (int i = 0; i < 2000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    long long v = (long long)(x >> (1 + (unsigned)(i % 60)));
    char buf[64];
    snprintf(buf, sizeof buf, "%.3e", (double)v);
    double back = strtod(buf, NULL);
    long long want = back >= 9223372036854775807.0 ? INT64_MAX : (long long)back;
    if (profF_sig4(v) != want) {
      T_EQ_INT(profF_sig4(v), want);
      break;
    }
  }
}

static void test_einsum_elementwise(void) {
  const Einsum cases[] = {
    /* nothing summed: exact 0 MACs and 12 multiplies; numpy: 12·1 + 1 = 13 */
    {2, {sh(2, 3, 4), sh(2, 3, 4)}, sh(2, 3, 4), "ij,ij->ij", 0, 12, 13},
    /* outer product, spaces ignored: 'i, j -> ij' [3], [4]: 12; numpy 13 */
    {2, {sh(1, 3), sh(1, 4)}, sh(2, 3, 4), "i, j -> ij", ANY, 12, 13},
  };
  check_einsums(cases, sizeof cases / sizeof cases[0]);
}

static void test_einsum_implicit_ellipsis(void) {
  const Einsum cases[] = {
    /* '...ij,...jk' [2,1,3,4], [5,4,6]: ellipsis [2,1] and [5] broadcast right-aligned to [2,5];
       implicit output '...ik' sums j: P = 2·5·3·4·6 = 720; numpy "1.441e+03" = 2·720 + 1 */
    {2, {sh(4, 2, 1, 3, 4), sh(3, 5, 4, 6)}, sh(4, 2, 5, 3, 6), "...ij,...jk", 720, 1440, 1441},
    /* 'bij,bjk' (implicit output 'bik'), [2,3,4], [2,4,6]: 144 MACs; numpy 289 */
    {2, {sh(3, 2, 3, 4), sh(3, 2, 4, 6)}, sh(3, 2, 3, 6), "bij,bjk", 144, ANY, 289},
  };
  check_einsums(cases, sizeof cases / sizeof cases[0]);
}

static void test_einsum_one_operand(void) {
  const Einsum cases[] = {
    /* trace 'ii->' [5,5]: one index of size 5: 4 adds; numpy 2·5 + 1 = 11 */
    {1, {sh(2, 5, 5)}, sh(0), "ii->", ANY, 4, 11},
    /* transpose 'ij->ji' [5,6]: no arithmetic; numpy 30 + 1 = 31 */
    {1, {sh(2, 5, 6)}, sh(2, 6, 5), "ij->ji", ANY, 0, 31},
    /* row sums 'ij->i': 30 - 5 = 25 adds; numpy 61 */
    {1, {sh(2, 5, 6)}, sh(2, 6, 5), "ij->i", ANY, 25, 61},
  };
  check_einsums(cases, sizeof cases / sizeof cases[0]);
}

static void test_einsum_errors(void) {
  prof_Operand in[2] = {sh(2, 3, 4), sh(2, 5, 6)};
  prof_Op op = mk(PROF_OP_EINSUM, 2, in, sh(2, 3, 6));
  op.equation = "ij,jk->ik";
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "einsum: operand 1 [5, 6] does not fit \"ij,jk->ik\"");
  in[1] = sh(2, 4, 6);
  op = mk(PROF_OP_EINSUM, 2, in, sh(2, 3, 6));
  op.equation = "ijk,jk->ik";
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "[3, 4]");
  op.equation = "ij->ik";
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.equation = "ij,jk->iz";
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "'z'");
  op.equation = "ij,j1->ik";
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.equation = "i..j,jk->ik";
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.equation = "ij,jk->ii";
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.equation = NULL;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "no equation");
}

/* {====================== scale ======================} */

static void test_gpt3_scale(void) {
  /* GPT-3 175B forward at seq 2048, per layer QKV [12288 -> 36864], output projection
     [12288 -> 12288], MLP [12288 -> 49152 -> 12288]; 96 layers:
     96·2048·12288·(36864 + 12288 + 2·49152) = 356 241 767 399 424 MACs (Python), ~7.1e14 flops */
  static const int widths[][2] = {{12288, 36864}, {12288, 12288}, {12288, 49152}, {49152, 12288}};
  int64_t macs = 0, flops = 0;
  for (int i = 0; i < 4; i++) {
    prof_Operand in[2] = {sh(2, 2048, widths[i][0]), sh(2, widths[i][1], widths[i][0])};
    prof_Op op = mk(PROF_OP_LINEAR, 2, in, sh(2, 2048, widths[i][1]));
    T_EQ_INT(count(DS, &op), PROF_OK);
    macs += 96 * op.macs;
    flops += 96 * op.flops;
  }
  T_EQ_INT(macs, 356241767399424LL);
  T_EQ_INT(flops, 2 * 356241767399424LL);
}

int main(void) {
  T_RUN(test_linear_exact);
  T_RUN(test_linear_ds);
  T_RUN(test_linear_batched);
  T_RUN(test_linear_deepspeed_reference);
  T_RUN(test_linear_errors);
  T_RUN(test_matmul_1d);
  T_RUN(test_matmul_broadcast);
  T_RUN(test_matmul_errors);
  T_RUN(test_mm_bmm);
  T_RUN(test_addmm);
  T_RUN(test_baddbmm);
  T_RUN(test_einsum_ds);
  T_RUN(test_einsum_rounding);
  T_RUN(test_einsum_sig4);
  T_RUN(test_einsum_elementwise);
  T_RUN(test_einsum_implicit_ellipsis);
  T_RUN(test_einsum_one_operand);
  T_RUN(test_einsum_errors);
  T_RUN(test_gpt3_scale);
  return T_DONE();
}
