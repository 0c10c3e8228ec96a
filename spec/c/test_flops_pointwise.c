/* test_flops_pointwise.c — elementwise, norm, loss and movement formulas; names, garbage. */
#include "t.h"
#include "op_builder.h"

/* {====================== activations ======================} */

static void test_activations(void) {
  /* x [2, 5], 10 elements. exact per element (one op, comparison or transcendental = 1):
     relu max 1; relu6 max, min 2; leaky/prelu compare, multiply 2; elu compare, exp, -1,
     ·alpha 4; gelu ·(1/√2), erf, +1, ·x, ·0.5 = 5; silu sigmoid 4 + ·x 5; tanh 1;
     sigmoid neg, exp, +1, divide 4; softplus exp, +1, log 3; hardswish +3, max, min, ·x, /6 5;
     mish softplus 3, tanh, ·x 5. DeepSpeed: numel for the patched F.relu, prelu, elu,
     leaky_relu, relu6, silu, gelu; 0 for the rest */
  static const struct {
    prof_OpKind kind;
    int exact, ds;
  } cases[] = {
    {PROF_OP_RELU, 10, 10}, {PROF_OP_RELU6, 20, 10}, {PROF_OP_LEAKY_RELU, 20, 10},
    {PROF_OP_PRELU, 20, 10}, {PROF_OP_ELU, 40, 10}, {PROF_OP_GELU, 50, 10},
    {PROF_OP_SILU, 50, 10}, {PROF_OP_TANH, 10, 0}, {PROF_OP_SIGMOID, 40, 0},
    {PROF_OP_SOFTPLUS, 30, 0}, {PROF_OP_HARDSWISH, 50, 0}, {PROF_OP_MISH, 50, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Operand in[2] = {sh(2, 2, 5), sh(1, 1)};
    prof_Op op = mk(cases[i].kind, cases[i].kind == PROF_OP_PRELU ? 2 : 1, in, sh(2, 2, 5));
    check_counts(&op, 0, cases[i].exact, ANY, cases[i].ds);
    T_EQ_INT(op.bytes_written, 40);
  }
  /* prelu reads its weight: 40 + 4 bytes */
  prof_Operand in[2] = {sh(2, 2, 5), sh(1, 1)};
  prof_Op op = mk(PROF_OP_PRELU, 2, in, sh(2, 2, 5));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.bytes_read, 44);
  op.ninputs = 1;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "prelu: needs 2 operands, got 1");
}

/* {====================== softmax ======================} */

static void test_softmax(void) {
  /* [4, 10] over dim -1: rows 4, n 10; softmax 5n - 2 = 48 per row (max n-1, sub n, exp n,
     sum n-1, divide n): 192; DeepSpeed numel 40. log_softmax 5n - 1 = 49 per row: 196;
     DeepSpeed 0 (F.log_softmax is not patched) */
  prof_Operand x = sh(2, 4, 10);
  prof_Op op = mk(PROF_OP_SOFTMAX, 1, &x, x);
  op.dim = -1;
  check_counts(&op, ANY, 192, ANY, 40);
  op.kind = PROF_OP_LOG_SOFTMAX;
  check_counts(&op, ANY, 196, ANY, 0);
  /* over dim 0: 10 rows of 4: 10·18 = 180 */
  op.kind = PROF_OP_SOFTMAX;
  op.dim = 0;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 180);
  op.dim = 2;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "softmax: dim 2 out of range for input [4, 10]");
}

/* {====================== norms ======================} */

/*
** Exact norms, per statistics group of n: mean (n-1 adds + divide), variance (n sub, n square,
** n-1 adds, divide), eps add and rsqrt: 4n + 2; normalise 2n; weight n; bias n.
*/
static void test_batch_norm(void) {
  /* [2,3,4,4]: numel 96, 3 channel groups */
  const struct {
    uint32_t flags;
    int64_t flops, ds_flops;
  } cases[] = {
    /* training + weight + bias: 6·96 + 2·3 + 2·96 = 774; DeepSpeed 96·5 = 480 */
    {PROF_OPF_TRAINING | PROF_OPF_AFFINE | PROF_OPF_BIAS, 774, 480},
    /* training, no affine: 582; DeepSpeed 96·4 = 384 */
    {PROF_OPF_TRAINING, 582, 384},
    /* eval + weight + bias: running stats, eps + rsqrt per channel, 2/elem: 2·96 + 6 + 192 = 390;
       DeepSpeed 96·2 = 192 */
    {PROF_OPF_AFFINE | PROF_OPF_BIAS, 390, 192},
    /* eval, no affine: 198; DeepSpeed 96 */
    {0, 198, 96},
  };
  prof_Operand in[3] = {sh(4, 2, 3, 4, 4), sh(1, 3), sh(1, 3)};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = mk(PROF_OP_BATCH_NORM, cases[i].flags & PROF_OPF_AFFINE ? 3 : 1, in, in[0]);
    op.flags = cases[i].flags;
    check_counts(&op, ANY, cases[i].flops, ANY, cases[i].ds_flops);
    if (i == 0) {
      T_EQ_INT(op.macs, 0);
      T_EQ_INT(op.bytes_read, (96 + 6) * 4);
    }
  }
}

static void test_layer_group_instance_norm(void) {
  /* layer_norm [2,5,8] over the last dim: 10 rows of 8, numel 80, weight and bias:
     6·80 + 2·10 + 160 = 660; DeepSpeed 80·5 = 400 */
  prof_Operand in[3] = {sh(3, 2, 5, 8), sh(1, 8), sh(1, 8)};
  prof_Op op = mk(PROF_OP_LAYER_NORM, 3, in, in[0]);
  op.dim = 1;
  op.flags = PROF_OPF_AFFINE | PROF_OPF_BIAS;
  check_counts(&op, ANY, 660, ANY, 400);
  /* over the last two dims: 2 rows of 40: 480 + 4 + 160 = 644 */
  op.dim = 2;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 644);
  op.dim = 4;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  /* group_norm [2,6,4] in 3 groups: 6 groups of 8, numel 48, affine: 288 + 12 + 96 = 396;
     DeepSpeed 48·5 = 240 */
  in[0] = sh(3, 2, 6, 4);
  in[1] = in[2] = sh(1, 6);
  op = mk(PROF_OP_GROUP_NORM, 3, in, in[0]);
  op.groups = 3;
  op.flags = PROF_OPF_AFFINE | PROF_OPF_BIAS;
  check_counts(&op, ANY, 396, ANY, 240);
  op.groups = 4;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "group_norm: input [2, 6, 4]");
  /* instance_norm [2,3,8], no affine: 6 groups of 8: 6·48 + 12 = 300; DeepSpeed 48·4 = 192 */
  in[0] = sh(3, 2, 3, 8);
  op = mk(PROF_OP_INSTANCE_NORM, 1, in, in[0]);
  check_counts(&op, ANY, 300, ANY, 192);
}

static void test_rms_norm(void) {
  /* [2,5,8] over the last dim with a weight: per row squares 8, adds 7, divide, eps add,
     rsqrt (2n + 2 = 18), scale 8, weight 8: 10·34 = 340; DeepSpeed 0 */
  prof_Operand in[2] = {sh(3, 2, 5, 8), sh(1, 8)};
  prof_Op op = mk(PROF_OP_RMS_NORM, 2, in, in[0]);
  op.dim = 1;
  op.flags = PROF_OPF_AFFINE;
  check_counts(&op, ANY, 340, ANY, 0);
}

/* {====================== embedding, dropout ======================} */

static void test_embedding(void) {
  /* indices [4, 16] int64 into a [1000, 64] table: 0 flops; reads 64 indices · 8 bytes and only
     the 64 gathered rows · 64 · 4 bytes = 512 + 16 384; writes 16 384 */
  prof_Operand in[2] = {sh(2, 4, 16), sh(2, 1000, 64)};
  in[0].dtype = PROF_I64;
  prof_Op op = mk(PROF_OP_EMBEDDING, 2, in, sh(3, 4, 16, 64));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(op.bytes_read, 16896);
  T_EQ_INT(op.bytes_written, 16384);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(op.bytes_read, 16896);
  in[1] = sh(1, 64);
  op = mk(PROF_OP_EMBEDDING, 2, in, sh(3, 4, 16, 64));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "embedding: weight [64] must be 2-D");
}

static void test_dropout(void) {
  /* training [10, 10]: compare with p and scale, 2 per element = 200; DeepSpeed 0 (unpatched).
     eval is the identity: nothing runs, nothing moves */
  prof_Operand x = sh(2, 10, 10);
  prof_Op op = mk(PROF_OP_DROPOUT, 1, &x, x);
  op.flags = PROF_OPF_TRAINING;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 200);
  T_EQ_INT(op.bytes_read, 400);
  T_EQ_INT(op.bytes_written, 400);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  op.flags = 0;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(op.bytes_read, 0);
  T_EQ_INT(op.bytes_written, 0);
}

/* {====================== elementwise arithmetic ======================} */

static void test_binary_broadcast(void) {
  const struct {
    prof_OpKind kind;
    prof_Operand in[2], out;
    uint32_t flags;
    int64_t flops, ds_flops;
  } cases[] = {
    /* [8]*[2,8]: torch's output [2,8], 16; DeepSpeed aligns from the left: max(8,2)·8 = 64 */
    {PROF_OP_MUL, {sh(1, 8), sh(2, 2, 8)}, sh(2, 2, 8), 0, 16, 64},
    /* [2,3,4]*[4]: 24; DeepSpeed [max(2,4), 3, 4] = 48 */
    {PROF_OP_ADD, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), 0, 24, 48},
    /* the operator form a + b: exact counts it, DeepSpeed does not patch operators */
    {PROF_OP_ADD, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), PROF_OPF_OPERATOR, 24, 0},
    /* sub, div, pow, maximum, minimum: 1 per element exact; DeepSpeed 0 */
    {PROF_OP_SUB, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), 0, 24, 0},
    {PROF_OP_DIV, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), 0, 24, 0},
    {PROF_OP_POW, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), 0, 24, 0},
    {PROF_OP_MAXIMUM, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), 0, 24, 0},
    {PROF_OP_MINIMUM, {sh(3, 2, 3, 4), sh(1, 4)}, sh(3, 2, 3, 4), 0, 24, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = mk(cases[i].kind, 2, cases[i].in, cases[i].out);
    op.flags = cases[i].flags;
    check_counts(&op, ANY, cases[i].flops, ANY, cases[i].ds_flops);
    if (i == 1) T_EQ_INT(op.bytes_read, (24 + 4) * 4);
  }
}

static void test_binary_scalar(void) {
  /* x [2,3] + 2.0: 6 both ways; the scalar reads no bytes */
  prof_Operand in[2] = {sh(2, 2, 3), sh(0)};
  in[1].ndim = -1;
  prof_Op op = mk(PROF_OP_ADD, 2, in, sh(2, 2, 3));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 6);
  T_EQ_INT(op.bytes_read, 24);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 6);
  /* 2.0 * x (scalar first) */
  prof_Operand sw[2] = {in[1], in[0]};
  op = mk(PROF_OP_MUL, 2, sw, sh(2, 2, 3));
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 6);
  /* two scalars: 1 */
  sw[1] = sw[0];
  op = mk(PROF_OP_MUL, 2, sw, sh(0));
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 1);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 1);
  /* shapes that do not broadcast */
  in[0] = sh(1, 3);
  in[1] = sh(1, 4);
  op = mk(PROF_OP_ADD, 2, in, sh(1, 4));
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "add: input [3] and other [4] do not broadcast");
}

static void test_unary(void) {
  /* one evaluation per element: exp [3,4] = 12; DeepSpeed 0 */
  static const prof_OpKind kinds[] = {PROF_OP_NEG, PROF_OP_EXP, PROF_OP_LOG, PROF_OP_SQRT,
                                      PROF_OP_RSQRT, PROF_OP_ABS, PROF_OP_SIN, PROF_OP_COS,
                                      PROF_OP_ERF, PROF_OP_RECIPROCAL, PROF_OP_CLAMP};
  prof_Operand x = sh(2, 3, 4);
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    prof_Op op = mk(kinds[i], 1, &x, x);
    check_counts(&op, ANY, 12, ANY, 0);
    T_EQ_INT(op.bytes_read, 48);
  }
}

/* {====================== reductions ======================} */

static void test_reductions(void) {
  /* [4, 5] -> [4]: n 20, m 4. sum 16 adds; amax 16 comparisons; mean 16 + 4 divides = 20;
     var: mean pass 20 + 20 subtracts + 20 squares + 16 adds + 4 divides = 80 = 4n.
     DeepSpeed patches none of them: 0 */
  static const struct {
    prof_OpKind kind;
    int64_t flops;
  } cases[] = {{PROF_OP_SUM, 16}, {PROF_OP_AMAX, 16}, {PROF_OP_MEAN, 20}, {PROF_OP_VAR, 80}};
  prof_Operand x = sh(2, 4, 5);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = mk(cases[i].kind, 1, &x, sh(1, 4));
    T_EQ_INT(count(EXACT, &op), PROF_OK);
    T_EQ_INT(op.flops, cases[i].flops);
    T_EQ_INT(count(DS, &op), PROF_OK);
    T_EQ_INT(op.flops, 0);
  }
  /* full sum to a 0-d tensor: 19 */
  prof_Op op = mk(PROF_OP_SUM, 1, &x, sh(0));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 19);
  op.out = sh(1, 40);
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "sum: out [40] is larger than input [4, 5]");
}

/* {====================== losses ======================} */

static void test_cross_entropy(void) {
  /* logits [8, 10], class targets [8]: log_softmax 8·(5·10 - 1) = 392, nll 8 picks summed and
     negated + 1 divide for mean: 401; sum 400; none 400. DeepSpeed 0 */
  prof_Operand in[3] = {sh(2, 8, 10), sh(1, 8), sh(1, 10)};
  in[1].dtype = PROF_I64;
  prof_Op op = mk(PROF_OP_CROSS_ENTROPY, 2, in, sh(0));
  op.mode = PROF_REDUCE_MEAN;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 401);
  T_EQ_INT(op.bytes_read, 320 + 64);
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  op.mode = PROF_REDUCE_SUM;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 400);
  op.mode = PROF_REDUCE_NONE;
  op.out = sh(1, 8);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 400);
  /* class weights, mean: + 8 multiplies + 7 adds of the picked weights: 416 */
  op = mk(PROF_OP_CROSS_ENTROPY, 3, in, sh(0));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 416);
  /* probability targets [8, 10] float: 392 + 2·80 + 7 adds + 1 divide = 560 */
  in[1] = sh(2, 8, 10);
  op = mk(PROF_OP_CROSS_ENTROPY, 2, in, sh(0));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 560);
  /* mismatched target */
  in[1] = sh(1, 7);
  in[1].dtype = PROF_I64;
  op = mk(PROF_OP_CROSS_ENTROPY, 2, in, sh(0));
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "cross_entropy: input [8, 10] does not match target [7]");
}

static void test_nll_mse(void) {
  /* nll_loss [8, 10] log-probs, targets [8]: mean 9, sum 8, none 8 */
  prof_Operand in[2] = {sh(2, 8, 10), sh(1, 8)};
  in[1].dtype = PROF_I64;
  prof_Op op = mk(PROF_OP_NLL_LOSS, 2, in, sh(0));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 9);
  op.mode = PROF_REDUCE_SUM;
  check_counts(&op, ANY, 8, ANY, 0);
  /* spatial [2,5,3,3] with targets [2,3,3]: 18 rows of 5 classes: mean 19 */
  in[0] = sh(4, 2, 5, 3, 3);
  in[1] = sh(3, 2, 3, 3);
  op = mk(PROF_OP_NLL_LOSS, 2, in, sh(0));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 19);
  /* mse [4,5]: subtract, square per element, 19 adds, divide: mean 60, sum 59, none 40;
     DeepSpeed 0 (F.mse_loss is not patched) */
  static const int modes[] = {PROF_REDUCE_MEAN, PROF_REDUCE_SUM, PROF_REDUCE_NONE};
  static const int64_t mse_flops[] = {60, 59, 40};
  in[0] = in[1] = sh(2, 4, 5);
  op = mk(PROF_OP_MSE_LOSS, 2, in, sh(0));
  for (int i = 0; i < 3; i++) {
    op.mode = modes[i];
    check_counts(&op, ANY, mse_flops[i], ANY, 0);
  }
  op.mode = 7;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "unknown reduction 7");
}

/* {====================== data movement, custom ======================} */

static void test_view_copy_custom(void) {
  prof_Operand in[2] = {sh(2, 4, 5), sh(2, 6, 5)};
  prof_Op op = mk(PROF_OP_VIEW, 1, in, sh(1, 20));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops + op.macs + op.bytes_read + op.bytes_written, 0);
  /* cat of [4,5] and [6,5] in float16: reads 50·2, writes 50·2 */
  in[0].dtype = in[1].dtype = PROF_F16;
  op = mk(PROF_OP_COPY, 2, in, sh(2, 10, 5));
  op.out.dtype = PROF_F16;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(op.bytes_read, 100);
  T_EQ_INT(op.bytes_written, 100);
  /* custom: the caller's counts stand, garbage operands are not even looked at */
  op = mk(PROF_OP_CUSTOM, 0, in, sh(0));
  op.ninputs = 99;
  op.macs = 1, op.flops = 2, op.bytes_read = 3, op.bytes_written = 4;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 1);
  T_EQ_INT(op.flops, 2);
  T_EQ_INT(op.bytes_read, 3);
  T_EQ_INT(op.bytes_written, 4);
}

/* {====================== garbage ======================} */

static void test_garbage_operands(void) {
  prof_Operand x = sh(2, 4, 5);
  prof_Op op = mk(PROF_OP_RELU, 1, &x, x);
  op.in[0].ndim = 9;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "relu: in[0] has ndim 9 (0..8 allowed)");
  op.in[0].ndim = -1;  /* a scalar is only allowed for binary ops */
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.in[0] = sh(2, 4, -5);
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "relu: in[0] [4, -5] has a negative dim");
  op.in[0] = x;
  op.in[0].dtype = 99;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "unknown dtype 99");
  op.in[0] = x;
  op.out.ndim = 100;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "out has ndim 100");
  op.out = x;
  op.ninputs = 5;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.ninputs = -1;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  op.ninputs = 1;
  T_EQ_INT(profF_count((prof_Conventions)7, &op, err, sizeof err), PROF_ERRARG);
  op.kind = (prof_OpKind)999;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "unknown op kind 999");
  T_EQ_INT(profF_count(EXACT, NULL, err, sizeof err), PROF_ERRARG);
  /* a tiny error buffer is truncated, never overrun */
  char small[8];
  op.kind = PROF_OP_RELU;
  op.ninputs = 3;
  T_EQ_INT(profF_count(EXACT, &op, small, sizeof small), PROF_ERRARG);
  T_EQ_STR(small, "relu: n");
  /* success leaves the error buffer alone: record.c passes the state's last error message */
  op = mk(PROF_OP_RELU, 1, &x, x);
  strcpy(err, "older message");
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_OK);
  T_EQ_STR(err, "older message");
  /* huge dims saturate instead of overflowing */
  prof_Operand big[2] = {sh(2, 1 << 30, 1 << 30), sh(2, 1 << 30, 1 << 30)};
  op = mk(PROF_OP_MM, 2, big, x);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, INT64_MAX);
  T_EQ_INT(op.flops, INT64_MAX);
}

/* Every kind survives pseudo-random operands under both conventions (run under ASan/UBSan). */
static void test_fuzz_all_kinds(void) {
  unsigned long long s = 0x9e3779b97f4a7c15ULL;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
  static const char *eqs[] = {"ij,jk->ik", "...ij,...jk", "ii->", "ab", "a,b", "i..j", ",->",
                              "abc,cd->abd", "->", ""};
  int survived = 0;
  for (int iter = 0; iter < 20000; iter++) {
    prof_Op op;
    memset(&op, 0, sizeof op);
    op.kind = (prof_OpKind)(RND() % PROF_OP_KIND_COUNT);
    op.ninputs = (int32_t)(RND() % 6) - 1;
    for (int i = 0; i <= PROF_MAX_OPERANDS; i++) {
      prof_Operand *o = i < PROF_MAX_OPERANDS ? &op.in[i] : &op.out;
      o->ndim = (int32_t)(RND() % 12) - 2;
      o->dtype = (int32_t)(RND() % 11) - 1;
      if (RND() % 4) o->dtype = PROF_F32;
      if (RND() % 3) o->ndim = (int32_t)(RND() % 6);
      for (int d = 0; d < PROF_MAX_DIMS; d++) {
        uint64_t r = RND();
        o->dim[d] = r % 16 == 0 ? (int64_t)(r >> 1) : r % 16 == 1 ? -1 : (int64_t)(r % 9);
      }
    }
    op.flags = (uint32_t)RND();
    for (int i = 0; i < 3; i++) {
      op.kernel[i] = (int64_t)(RND() % 5) - 1;
      op.stride[i] = (int64_t)(RND() % 4) - 1;
      op.padding[i] = (int64_t)(RND() % 4) - 1;
      op.dilation[i] = (int64_t)(RND() % 4) - 1;
      op.output_padding[i] = (int64_t)(RND() % 3) - 1;
      op.scale[i] = (double)(RND() % 7) * 0.75 - 1.0;
    }
    op.groups = (int64_t)(RND() % 5) - 1;
    op.dim = (int64_t)(RND() % 9) - 4;
    op.hidden_size = RND() % 8 == 0 ? (int64_t)(RND() >> 1) : (int64_t)(RND() % 6) - 1;
    op.num_layers = RND() % 8 == 0 ? (int64_t)(RND() >> 1) : (int64_t)(RND() % 4) - 1;
    op.mode = (int32_t)(RND() % 9) - 1;
    op.scale_count = (int32_t)(RND() % 5) - 1;
    op.equation = RND() % 5 ? eqs[RND() % (sizeof eqs / sizeof eqs[0])] : NULL;
    err[0] = '\0';
    int rc = profF_count(RND() % 2 ? EXACT : DS, &op, err, sizeof err);
    T_CHECK(rc == PROF_OK || rc == PROF_ERRARG);
    if (rc == PROF_ERRARG) T_CHECK(err[0] != '\0');
    if (rc == PROF_OK) survived++;
  }
#undef RND
  T_CHECK(survived > 100);  /* the generator does reach the formulas */
}

/* A valid op of each structured kind, for the mutation fuzzer to start from. */
static int fuzz_template(int which, prof_Op *op) {
  prof_Operand a[3];
  switch (which) {
    case 0:
      a[0] = sh(2, 4, 10), a[1] = sh(2, 20, 10), a[2] = sh(1, 20);
      *op = mk(PROF_OP_LINEAR, 3, a, sh(2, 4, 20));
      op->flags = PROF_OPF_BIAS;
      return 1;
    case 1:
      a[0] = sh(4, 2, 1, 4, 8), a[1] = sh(3, 3, 8, 5);
      *op = mk(PROF_OP_MATMUL, 2, a, sh(4, 2, 3, 4, 5));
      return 1;
    case 2:
      a[0] = sh(3, 2, 3, 4), a[1] = sh(3, 2, 4, 5);
      *op = mk(PROF_OP_BMM, 2, a, sh(3, 2, 3, 5));
      return 1;
    case 3:
      a[0] = sh(3, 1, 1, 5), a[1] = sh(3, 2, 3, 4), a[2] = sh(3, 2, 4, 5);
      *op = mk(PROF_OP_BADDBMM, 3, a, sh(3, 2, 3, 5));
      return 1;
    case 4:
      a[0] = sh(3, 2, 3, 4), a[1] = sh(3, 2, 4, 6);
      *op = mk(PROF_OP_EINSUM, 2, a, sh(3, 2, 3, 6));
      op->equation = "bij,bjk->bik";
      return 1;
    case 5:
    case 6:
      a[0] = sh(4, 2, 4, 9, 9), a[1] = sh(4, 6, 2, 3, 3), a[2] = sh(1, 6);
      *op = mk(which == 5 ? PROF_OP_CONV : PROF_OP_CONV_TRANSPOSE, 3, a, sh(4, 2, 6, 5, 5));
      if (which == 6) op->in[1] = sh(4, 4, 3, 3, 3), op->out = sh(4, 2, 6, 10, 10);
      op->flags = PROF_OPF_BIAS;
      op->groups = 2;
      op->stride[0] = op->stride[1] = 2;
      return 1;
    case 7:
      a[0] = sh(4, 1, 3, 8, 8);
      *op = mk(PROF_OP_MAX_POOL, 1, a, sh(4, 1, 3, 4, 4));
      op->kernel[0] = op->kernel[1] = 2;
      return 1;
    case 8:
      a[0] = sh(4, 2, 3, 4, 4);
      *op = mk(PROF_OP_INTERPOLATE, 1, a, sh(4, 2, 3, 8, 8));
      op->mode = PROF_INTERP_BILINEAR;
      op->scale_count = 1;
      op->scale[0] = 2.0;
      return 1;
    case 9:
      a[0] = sh(4, 1, 8, 4, 16), a[1] = sh(4, 1, 2, 6, 16), a[2] = sh(4, 1, 2, 6, 16);
      *op = mk(PROF_OP_SDPA, 3, a, sh(4, 1, 8, 4, 16));
      op->flags = PROF_OPF_CAUSAL;
      return 1;
    case 10:
      a[0] = sh(2, 8, 10), a[1] = sh(1, 8), a[2] = sh(1, 10);
      *op = mk(PROF_OP_CROSS_ENTROPY, 3, a, sh(0));
      return 1;
    case 11:
      a[0] = sh(3, 5, 3, 10);
      *op = mk(PROF_OP_LSTM, 1, a, sh(3, 5, 3, 40));
      op->hidden_size = 20;
      op->num_layers = 2;
      op->flags = PROF_OPF_BIAS | PROF_OPF_BIDIRECTIONAL;
      return 1;
    case 12:
      a[0] = sh(4, 2, 3, 5, 7);
      *op = mk(PROF_OP_ADAPTIVE_AVG_POOL, 1, a, sh(4, 2, 3, 3, 3));
      return 1;
    case 13:
      a[0] = sh(4, 2, 6, 4, 4), a[1] = sh(1, 6), a[2] = sh(1, 6);
      *op = mk(PROF_OP_GROUP_NORM, 3, a, a[0]);
      op->groups = 3;
      return 1;
    default:
      return 0;
  }
}

/* Valid ops with one to three fields replaced by hostile values: the formulas' own checks and
   saturating arithmetic must hold (run under ASan/UBSan). */
static void test_fuzz_mutated(void) {
  unsigned long long s = 0x2545f4914f6cdd1dULL;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
  static const int64_t nasty[] = {0, 1, -1, 2, 3, 7, 1LL << 31, 1LL << 40, INT64_MAX, INT64_MIN};
  static const char *eqs[] = {"bij,bjk->bik", "...j,...j", "bij,bjk", "bii,bjk->b", "b..."};
  int ok[14] = {0}, valid = 0;
  for (int iter = 0; iter < 30000; iter++) {
    prof_Op op;
    int which = (int)(RND() % 14);
    fuzz_template(which, &op);
    prof_Conventions conv = RND() % 2 ? EXACT : DS;
    int nmut = (int)(RND() % 4);
    if (nmut == 0) {
      err[0] = '\0';
      valid += profF_count(conv, &op, err, sizeof err) == PROF_OK;
      if (err[0] != '\0') fprintf(stderr, "  template %d: %s\n", which, err);
      continue;
    }
    for (int m = 0; m < nmut; m++) {
      int64_t v = nasty[RND() % (sizeof nasty / sizeof nasty[0])];
      int i = (int)(RND() % 3);
      prof_Operand *o = RND() % 5 == 0 ? &op.out : &op.in[RND() % 3];
      switch (RND() % 12) {
        case 0: case 1: case 2: o->dim[RND() % PROF_MAX_DIMS] = v; break;
        case 3: o->ndim += (int32_t)(RND() % 3) - 1; break;
        case 4: op.flags ^= 1u << (RND() % 10); break;
        case 5: op.groups = v; break;
        case 6: op.stride[i] = v, op.padding[(i + 1) % 3] = v % 5; break;
        case 7: op.dilation[i] = v, op.output_padding[i] = v % 3, op.kernel[i] = v % 4; break;
        case 8: op.scale[i] = (double)v * 0.5, op.scale_count = (int32_t)(RND() % 5) - 1; break;
        case 9: op.mode = (int32_t)(RND() % 9) - 1, op.dim = v; break;
        case 10: op.hidden_size = v, op.num_layers = v % 4; break;
        default:
          op.equation = eqs[RND() % (sizeof eqs / sizeof eqs[0])];
          op.ninputs += (int32_t)(RND() % 3) - 1;
          break;
      }
    }
    err[0] = '\0';
    int rc = profF_count(conv, &op, err, sizeof err);
    T_CHECK(rc == PROF_OK || rc == PROF_ERRARG);
    if (rc == PROF_ERRARG) T_CHECK(err[0] != '\0');
    if (rc == PROF_OK) ok[which]++;
  }
#undef RND
  T_CHECK(valid > 1000);  /* every unmutated template counts without error */
  for (int w = 0; w < 14; w++) T_CHECK(ok[w] > 50);  /* mutants do reach every formula */
}

/* {====================== names, dtypes, shapes ======================} */

static void test_names(void) {
  T_EQ_STR(prof_op_kind_name(PROF_OP_LINEAR), "linear");
  T_EQ_STR(prof_op_kind_name(PROF_OP_CONV_TRANSPOSE), "conv_transpose");
  T_EQ_STR(prof_op_kind_name(PROF_OP_ADAPTIVE_MAX_POOL), "adaptive_max_pool");
  T_EQ_STR(prof_op_kind_name(PROF_OP_SDPA), "scaled_dot_product_attention");
  T_EQ_STR(prof_op_kind_name(PROF_OP_LSTM_CELL), "lstm_cell");
  T_EQ_STR(prof_op_kind_name(PROF_OP_MAXIMUM), "maximum");
  T_EQ_STR(prof_op_kind_name(PROF_OP_CUSTOM), "custom");
  T_EQ_STR(prof_op_kind_name(PROF_OP_COPY), "copy");
  T_EQ_STR(prof_op_kind_name(PROF_OP_KIND_COUNT), "unknown");
  T_EQ_STR(prof_op_kind_name((prof_OpKind)-1), "unknown");
  /* every kind has its own name */
  for (int i = 0; i < PROF_OP_KIND_COUNT; i++) {
    T_CHECK(strcmp(prof_op_kind_name((prof_OpKind)i), "unknown") != 0);
    for (int j = 0; j < i; j++)
      T_CHECK(strcmp(prof_op_kind_name((prof_OpKind)i), prof_op_kind_name((prof_OpKind)j)) != 0);
  }
}

static void test_dtypes(void) {
  static const struct {
    prof_DType dt;
    const char *name;
    int size;
  } cases[] = {
    {PROF_F32, "float32", 4}, {PROF_F64, "float64", 8}, {PROF_F16, "float16", 2},
    {PROF_BF16, "bfloat16", 2}, {PROF_I64, "int64", 8}, {PROF_I32, "int32", 4},
    {PROF_I8, "int8", 1}, {PROF_U8, "uint8", 1}, {PROF_BOOL, "bool", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    T_EQ_INT(prof_dtype_size(cases[i].dt), cases[i].size);
    T_EQ_STR(prof_dtype_name(cases[i].dt), cases[i].name);
    T_EQ_INT(prof_dtype_parse(cases[i].name), cases[i].dt);
  }
  T_EQ_INT(prof_dtype_size(PROF_DTYPE_COUNT), 0);
  T_EQ_STR(prof_dtype_name((prof_DType)-3), "unknown");
  T_EQ_INT(prof_dtype_parse("torch.bfloat16"), PROF_BF16);
  T_EQ_INT(prof_dtype_parse("half"), PROF_F16);
  T_EQ_INT(prof_dtype_parse("long"), PROF_I64);
  T_EQ_INT(prof_dtype_parse("float128"), -1);
  T_EQ_INT(prof_dtype_parse(""), -1);
  T_EQ_INT(prof_dtype_parse(NULL), -1);
}

static void test_shape_str(void) {
  char buf[64];
  prof_Operand o = sh(3, 2, 3, 4);
  T_EQ_STR(profF_shape_str(&o, buf, sizeof buf), "[2, 3, 4]");
  o = sh(0);
  T_EQ_STR(profF_shape_str(&o, buf, sizeof buf), "[]");
  o.ndim = -1;
  T_EQ_STR(profF_shape_str(&o, buf, sizeof buf), "scalar");
  o.ndim = 40;
  T_EQ_STR(profF_shape_str(&o, buf, sizeof buf), "[ndim=40?]");
  o = sh(3, 1000, 2000, 3000);
  T_EQ_STR(profF_shape_str(&o, buf, 9), "[1000, 2");  /* truncated like snprintf, terminated */
  T_EQ_STR(profF_shape_str(&o, buf, 1), "");
  T_CHECK(profF_shape_str(&o, NULL, 0) == NULL);
}

int main(void) {
  T_RUN(test_activations);
  T_RUN(test_softmax);
  T_RUN(test_batch_norm);
  T_RUN(test_layer_group_instance_norm);
  T_RUN(test_rms_norm);
  T_RUN(test_embedding);
  T_RUN(test_dropout);
  T_RUN(test_binary_broadcast);
  T_RUN(test_binary_scalar);
  T_RUN(test_unary);
  T_RUN(test_reductions);
  T_RUN(test_cross_entropy);
  T_RUN(test_nll_mse);
  T_RUN(test_view_copy_custom);
  T_RUN(test_garbage_operands);
  T_RUN(test_fuzz_all_kinds);
  T_RUN(test_fuzz_mutated);
  T_RUN(test_names);
  T_RUN(test_dtypes);
  T_RUN(test_shape_str);
  return T_DONE();
}
