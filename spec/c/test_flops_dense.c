/* test_flops_dense.c — linear, matmul-family and einsum formulas, both conventions. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops_internal.h"
#include "prof.h"
#include "t.h"

#define EXACT PROF_CONV_EXACT
#define DS PROF_CONV_DEEPSPEED

static char err[PROF_ERRMSG_SIZE];

/* A float32 operand of nd dims. */
static prof_Operand sh(int nd, ...) {
  prof_Operand o;
  memset(&o, 0, sizeof o);
  o.ndim = nd;
  o.dtype = PROF_F32;
  va_list ap;
  va_start(ap, nd);
  for (int i = 0; i < nd; i++) o.dim[i] = va_arg(ap, int);
  va_end(ap);
  return o;
}

static prof_Op mk(prof_OpKind kind, int n, const prof_Operand *in, prof_Operand out) {
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.ninputs = n;
  for (int i = 0; i < n; i++) op.in[i] = in[i];
  op.out = out;
  return op;
}

static int count(prof_Conventions conv, prof_Op *op) {
  int rc = profF_count(conv, op, err, sizeof err);
  if (rc != PROF_OK) fprintf(stderr, "  (%s)\n", err);
  return rc;
}

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
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 300);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 300);
}

static void test_linear_deepspeed_reference(void) {
  /* DeepSpeed's engine test: SimpleModel(hidden 10), batch 1: flops 200 (bias not counted) */
  prof_Operand in[3] = {sh(2, 1, 10), sh(2, 10, 10), sh(1, 10)};
  prof_Op op = mk(PROF_OP_LINEAR, 3, in, sh(2, 1, 10));
  op.flags = PROF_OPF_BIAS;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 200);
  /* LeNet5 at batch 1024: Linear(120, 84) 10 321 920 MACs and Linear(84, 10) 860 160 */
  prof_Operand l1[3] = {sh(2, 1024, 120), sh(2, 84, 120), sh(1, 84)};
  op = mk(PROF_OP_LINEAR, 3, l1, sh(2, 1024, 84));
  op.flags = PROF_OPF_BIAS;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 10321920);
  T_EQ_INT(op.flops, 2 * 10321920);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 2 * 10321920 + 1024 * 84);
  prof_Operand l2[3] = {sh(2, 1024, 84), sh(2, 10, 84), sh(1, 10)};
  op = mk(PROF_OP_LINEAR, 3, l2, sh(2, 1024, 10));
  op.flags = PROF_OPF_BIAS;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 860160);
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

static void test_matmul_1d(void) {
  /* (8,)@(8,) is a dot product: 8 MACs. DeepSpeed: prod(a)·b[-1] = 8·8 = 64 */
  prof_Operand in[2] = {sh(1, 8), sh(1, 8)};
  prof_Op op = mk(PROF_OP_MATMUL, 2, in, sh(0));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 8);
  T_EQ_INT(op.flops, 16);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 64);
  T_EQ_INT(op.flops, 128);
  /* (4, 8)@(8,): matrix-vector, 32 MACs; DeepSpeed 32·8 = 256 */
  in[0] = sh(2, 4, 8);
  op = mk(PROF_OP_MATMUL, 2, in, sh(1, 4));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 32);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 256);
  /* (8,)@(8, 5): 40 both ways */
  in[0] = sh(1, 8);
  in[1] = sh(2, 8, 5);
  op = mk(PROF_OP_MATMUL, 2, in, sh(1, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 40);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 40);
}

static void test_matmul_broadcast(void) {
  /* (2,1,4,8)@(3,8,5): batch [2,1] and [3] broadcast to [2,3]: 6·4·8·5 = 960 MACs
     (torch 1.13's profiler reports aten::bmm 1920 flops for it). DeepSpeed: 64·5 = 320 */
  prof_Operand in[2] = {sh(4, 2, 1, 4, 8), sh(3, 3, 8, 5)};
  prof_Op op = mk(PROF_OP_MATMUL, 2, in, sh(4, 2, 3, 4, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 960);
  T_EQ_INT(op.flops, 1920);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 320);
  /* other carries the batch: (3, 8)@(2, 8, 5) = 2·3·8·5 = 240; DeepSpeed 24·5 = 120 */
  in[0] = sh(2, 3, 8);
  in[1] = sh(3, 2, 8, 5);
  op = mk(PROF_OP_MATMUL, 2, in, sh(3, 2, 3, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 240);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 120);
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
  /* [3,4]@[4,5]: 60 MACs both ways (torch 1.13: aten::mm 120 flops) */
  prof_Operand in[2] = {sh(2, 3, 4), sh(2, 4, 5)};
  prof_Op op = mk(PROF_OP_MM, 2, in, sh(2, 3, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 60);
  T_EQ_INT(op.flops, 120);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 60);
  /* [2,3,4]@[2,4,5]: 2·3·4·5 = 120 */
  in[0] = sh(3, 2, 3, 4);
  in[1] = sh(3, 2, 4, 5);
  op = mk(PROF_OP_BMM, 2, in, sh(3, 2, 3, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 120);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 120);
  T_EQ_INT(op.bytes_read, (24 + 40) * 4);
}

static void test_addmm(void) {
  /* bias [5] + [3,4]@[4,5]: 60 MACs; exact adds numel(out) 15 -> 135; DeepSpeed numel(bias) 5 */
  prof_Operand in[3] = {sh(1, 5), sh(2, 3, 4), sh(2, 4, 5)};
  prof_Op op = mk(PROF_OP_ADDMM, 3, in, sh(2, 3, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 60);
  T_EQ_INT(op.flops, 135);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 60);
  T_EQ_INT(op.flops, 125);
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
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 120);
  T_EQ_INT(op.flops, 270);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 245);
  /* full-size input: both add 30 */
  in[0] = sh(3, 2, 3, 5);
  op = mk(PROF_OP_BADDBMM, 3, in, sh(3, 2, 3, 5));
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 270);
}

/* {====================== einsum ======================} */

static void test_einsum_ds(void) {
  /* numpy 1.24: np.einsum_path('ij,jk->ik', zeros((3,4)), zeros((4,5)), optimize='optimal')
     prints "Optimized FLOP count:  1.210e+02": 3·4·5·2 = 120, + 1 (numpy's sum(cost) + 1) */
  prof_Operand in[2] = {sh(2, 3, 4), sh(2, 4, 5)};
  prof_Op op = mk(PROF_OP_EINSUM, 2, in, sh(2, 3, 5));
  op.equation = "ij,jk->ik";
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.macs, 0);
  T_EQ_INT(op.flops, 121);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 60);
  T_EQ_INT(op.flops, 120);
}

static void test_einsum_rounding(void) {
  /* 'bhld,bhsd->bhls' [3,7,11,13], [3,7,17,13]: 2·3·7·11·17·13 + 1 = 102103; numpy prints
     "1.021e+05" and DeepSpeed reads back int(float(...)) = 102100 */
  prof_Operand in[2] = {sh(4, 3, 7, 11, 13), sh(4, 3, 7, 17, 13)};
  prof_Op op = mk(PROF_OP_EINSUM, 2, in, sh(4, 3, 7, 11, 17));
  op.equation = "bhld,bhsd->bhls";
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 102100);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 51051);
  T_EQ_INT(op.flops, 102102);
  /* GPT-3 attention scores, 96 heads, 2048 tokens, head dim 128: 2·96·2048·2048·128 + 1
     = 103 079 215 105; numpy prints "1.031e+11" */
  prof_Operand g[2] = {sh(4, 1, 96, 2048, 128), sh(4, 1, 96, 2048, 128)};
  op = mk(PROF_OP_EINSUM, 2, g, sh(4, 1, 96, 2048, 2048));
  op.equation = "bhqd,bhkd->bhqk";
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 103100000000LL);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 103079215104LL);
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
  /* nothing summed: exact 0 MACs and 12 multiplies; numpy: 12·1 + 1 = 13 */
  prof_Operand in[2] = {sh(2, 3, 4), sh(2, 3, 4)};
  prof_Op op = mk(PROF_OP_EINSUM, 2, in, sh(2, 3, 4));
  op.equation = "ij,ij->ij";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 0);
  T_EQ_INT(op.flops, 12);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 13);
  /* outer product, spaces ignored: 'i, j -> ij' [3], [4]: 12; numpy 13 */
  in[0] = sh(1, 3);
  in[1] = sh(1, 4);
  op = mk(PROF_OP_EINSUM, 2, in, sh(2, 3, 4));
  op.equation = "i, j -> ij";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 12);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 13);
}

static void test_einsum_implicit_ellipsis(void) {
  /* '...ij,...jk' [2,1,3,4], [5,4,6]: ellipsis [2,1] and [5] broadcast right-aligned to [2,5];
     implicit output '...ik' sums j: P = 2·5·3·4·6 = 720; numpy "1.441e+03" = 2·720 + 1 */
  prof_Operand in[2] = {sh(4, 2, 1, 3, 4), sh(3, 5, 4, 6)};
  prof_Op op = mk(PROF_OP_EINSUM, 2, in, sh(4, 2, 5, 3, 6));
  op.equation = "...ij,...jk";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 720);
  T_EQ_INT(op.flops, 1440);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 1441);
  /* 'bij,bjk' (implicit output 'bik'), [2,3,4], [2,4,6]: 144 MACs; numpy 289 */
  in[0] = sh(3, 2, 3, 4);
  in[1] = sh(3, 2, 4, 6);
  op = mk(PROF_OP_EINSUM, 2, in, sh(3, 2, 3, 6));
  op.equation = "bij,bjk";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 144);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 289);
}

static void test_einsum_one_operand(void) {
  /* trace 'ii->' [5,5]: one index of size 5: 4 adds; numpy 2·5 + 1 = 11 */
  prof_Operand in[1] = {sh(2, 5, 5)};
  prof_Op op = mk(PROF_OP_EINSUM, 1, in, sh(0));
  op.equation = "ii->";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 4);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 11);
  /* transpose 'ij->ji' [5,6]: no arithmetic; numpy 30 + 1 = 31 */
  in[0] = sh(2, 5, 6);
  op = mk(PROF_OP_EINSUM, 1, in, sh(2, 6, 5));
  op.equation = "ij->ji";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 31);
  /* row sums 'ij->i': 30 - 5 = 25 adds; numpy 61 */
  op.equation = "ij->i";
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 25);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 61);
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
