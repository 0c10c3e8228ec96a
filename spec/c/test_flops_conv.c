/* test_flops_conv.c — conv, conv_transpose, pooling and interpolate formulas; LeNet5. */
#include "t.h"
#include "op_builder.h"

/* A biased conv2d op: x, weight, out; stride/padding/dilation left at the defaults. */
static prof_Op conv_op(prof_OpKind kind, prof_Operand x, prof_Operand w, int64_t nbias,
                       prof_Operand out) {
  prof_Operand in[3] = {x, w, sh(1, (int)nbias)};
  prof_Op op = mk(kind, 3, in, out);
  op.flags = PROF_OPF_BIAS;
  return op;
}

static prof_Op pool_op(prof_OpKind kind, prof_Operand x, int k, prof_Operand out) {
  prof_Op op = mk(kind, 1, &x, out);
  op.kernel[0] = op.kernel[1] = k;
  op.stride[0] = op.stride[1] = k;
  return op;
}

/* {====================== LeNet5 (DeepSpeed's unit test) ======================} */

/*
** DeepSpeed's test_flops_profiler_in_inference: LeNet5 on 1024×1×32×32 gives flops 866 076 672,
** MACs 426 516 480. Per layer: conv MACs 120 422 400 + 245 760 000 + 49 152 000, linear
** 10 321 920 + 860 160; flops = 2·MACs + conv bias 4 816 896 + 1 638 400 + 122 880 + avg pool
** 4 816 896 + 1 638 400 + softmax 10 240; tanh contributes 0.
*/
static void test_lenet5_deepspeed(void) {
  int64_t macs = 0, flops = 0;
  prof_Op ops[12];
  int n = 0;
  ops[n++] = conv_op(PROF_OP_CONV, sh(4, 1024, 1, 32, 32), sh(4, 6, 1, 5, 5), 6,
                     sh(4, 1024, 6, 28, 28));
  ops[n++] = mk(PROF_OP_TANH, 1, &ops[0].out, ops[0].out);
  ops[n++] = pool_op(PROF_OP_AVG_POOL, sh(4, 1024, 6, 28, 28), 2, sh(4, 1024, 6, 14, 14));
  ops[n++] = conv_op(PROF_OP_CONV, sh(4, 1024, 6, 14, 14), sh(4, 16, 6, 5, 5), 16,
                     sh(4, 1024, 16, 10, 10));
  ops[n++] = mk(PROF_OP_TANH, 1, &ops[3].out, ops[3].out);
  ops[n++] = pool_op(PROF_OP_AVG_POOL, sh(4, 1024, 16, 10, 10), 2, sh(4, 1024, 16, 5, 5));
  ops[n++] = conv_op(PROF_OP_CONV, sh(4, 1024, 16, 5, 5), sh(4, 120, 16, 5, 5), 120,
                     sh(4, 1024, 120, 1, 1));
  ops[n++] = mk(PROF_OP_TANH, 1, &ops[6].out, ops[6].out);
  ops[n++] = conv_op(PROF_OP_LINEAR, sh(2, 1024, 120), sh(2, 84, 120), 84, sh(2, 1024, 84));
  ops[n++] = mk(PROF_OP_TANH, 1, &ops[8].out, ops[8].out);
  ops[n++] = conv_op(PROF_OP_LINEAR, sh(2, 1024, 84), sh(2, 10, 84), 10, sh(2, 1024, 10));
  ops[n] = mk(PROF_OP_SOFTMAX, 1, &ops[10].out, ops[10].out);
  ops[n++].dim = 1;
  static const int64_t want_macs[12] = {120422400, 0, 0, 245760000, 0, 0, 49152000, 0,
                                        10321920, 0, 860160, 0};
  static const int64_t want_extra[12] = {4816896, 0, 4816896, 1638400, 0, 1638400, 122880, 0,
                                         0, 0, 0, 10240};
  for (int i = 0; i < n; i++) {
    T_EQ_INT(count(DS, &ops[i]), PROF_OK);
    T_EQ_INT(ops[i].macs, want_macs[i]);
    T_EQ_INT(ops[i].flops - 2 * ops[i].macs, want_extra[i]);
    macs += ops[i].macs;
    flops += ops[i].flops;
  }
  T_EQ_INT(macs, 426516480);
  T_EQ_INT(flops, 866076672);
}

static void test_lenet5_conv_exact(void) {
  /* exact takes the spatial size from out: the same 120 422 400 MACs + 4 816 896 bias adds */
  prof_Op op = conv_op(PROF_OP_CONV, sh(4, 1024, 1, 32, 32), sh(4, 6, 1, 5, 5), 6,
                       sh(4, 1024, 6, 28, 28));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.macs, 120422400);
  T_EQ_INT(op.flops, 2 * 120422400 + 4816896);
  T_EQ_INT(op.bytes_read, (1024 * 1024 + 150 + 6) * 4);
  T_EQ_INT(op.bytes_written, 4816896 * 4);
  /* the pools: out numel 1 204 224 · K 4 = 4 816 896, the same as DeepSpeed's numel(input) */
  op = pool_op(PROF_OP_AVG_POOL, sh(4, 1024, 6, 28, 28), 2, sh(4, 1024, 6, 14, 14));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 4816896);
}

/* {====================== conv ======================} */

static void test_conv_groups_stride_dilation(void) {
  /* x [2,4,9,9], w [6,2,3,3], groups 2, stride 2, padding 2, dilation 2: out 5×5 (torch).
     exact: N·Cout·out_sp·(C/g)·K = 2·6·25·2·9 = 5400 (torch 1.13's profiler: 10800 flops);
     DeepSpeed: K·C·(Cout/g)·N·out_sp = 9·4·3·2·25 = 5400. bias 2·6·25 = 300 */
  prof_Op op = conv_op(PROF_OP_CONV, sh(4, 2, 4, 9, 9), sh(4, 6, 2, 3, 3), 6,
                       sh(4, 2, 6, 5, 5));
  op.groups = 2;
  for (int i = 0; i < 2; i++) op.stride[i] = 2, op.padding[i] = 2, op.dilation[i] = 2;
  check_counts(&op, 5400, 11100, 5400, 11100);
}

static void test_conv_padding_same_valid(void) {
  const struct {
    prof_Operand w, out;
    int padding;
    int64_t macs, flops, ds_macs, ds_flops;
  } cases[] = {
    /* padding='same' with an even kernel: x [1,1,10], w [1,1,4]: torch pads 1 left, 2 right, out
       10. exact: 10·4 = 40 MACs + 10 bias. DeepSpeed is passed d(k-1)//2 = 1 per side and
       computes (10 + 2 - 3 - 1)//1 + 1 = 9: 36 MACs + 9 */
    {sh(3, 1, 1, 4), sh(3, 1, 1, 10), 1, 40, 90, 36, 81},
    /* odd kernel 'same' (k 3, padding 1): out 10 both ways: 30 MACs */
    {sh(3, 1, 1, 3), sh(3, 1, 1, 10), 1, 30, ANY, 30, ANY},
    /* 'valid' is padding 0: out 8, 24 MACs */
    {sh(3, 1, 1, 3), sh(3, 1, 1, 8), 0, 24, ANY, 24, ANY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = conv_op(PROF_OP_CONV, sh(3, 1, 1, 10), cases[i].w, 1, cases[i].out);
    op.padding[0] = cases[i].padding;
    check_counts(&op, cases[i].macs, cases[i].flops, cases[i].ds_macs, cases[i].ds_flops);
  }
}

static void test_conv3d_no_bias(void) {
  /* x [1,2,4,4,4], w [3,2,2,2,2], stride 2: out 2×2×2; MACs 1·3·8·2·8 = 384, no bias */
  prof_Operand in[2] = {sh(5, 1, 2, 4, 4, 4), sh(5, 3, 2, 2, 2, 2)};
  prof_Op op = mk(PROF_OP_CONV, 2, in, sh(5, 1, 3, 2, 2, 2));
  for (int i = 0; i < 3; i++) op.stride[i] = 2;
  check_counts(&op, 384, 768, 384, ANY);
}

static void test_conv_errors(void) {
  /* C 3 but weight expects 2 per group with groups 1 */
  prof_Op op = conv_op(PROF_OP_CONV, sh(4, 1, 3, 8, 8), sh(4, 4, 2, 3, 3), 4, sh(4, 1, 4, 6, 6));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "conv: input [1, 3, 8, 8] does not match weight [4, 2, 3, 3] with groups=1");
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  /* rank mismatch */
  op = conv_op(PROF_OP_CONV, sh(4, 1, 3, 8, 8), sh(3, 4, 3, 3), 4, sh(4, 1, 4, 6, 6));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "[4, 3, 3]");
  /* bias of the wrong size */
  op = conv_op(PROF_OP_CONV, sh(4, 1, 3, 8, 8), sh(4, 4, 3, 3, 3), 5, sh(4, 1, 4, 6, 6));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "bias [5]");
  /* out channels disagree with the weight */
  op = conv_op(PROF_OP_CONV, sh(4, 1, 3, 8, 8), sh(4, 4, 3, 3, 3), 4, sh(4, 1, 5, 6, 6));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  /* a 2-D input is not a conv input */
  op = conv_op(PROF_OP_CONV, sh(2, 3, 8), sh(2, 4, 3), 4, sh(2, 4, 6));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  /* negative stride */
  op = conv_op(PROF_OP_CONV, sh(4, 1, 3, 8, 8), sh(4, 4, 3, 3, 3), 4, sh(4, 1, 4, 6, 6));
  op.stride[1] = -1;
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
}

/* {====================== conv_transpose ======================} */

static void test_conv_transpose_groups_output_padding(void) {
  /* x [2,4,5,5], w [4,3,3,3], groups 2 (Cout 6), stride 2, padding 1, output_padding 1:
     out (5-1)·2 - 2 + 2 + 1 + 1 = 10 (torch: [2, 6, 10, 10]).
     exact: N·C·in_sp·(Cout/g)·K = 2·4·25·3·9 = 5400 MACs (the forward conv [2,6,10,10] ->
     [2,4,5,5] with the same weight has 2·4·25·3·9 too); bias on the real out 2·6·100 = 1200.
     DeepSpeed: 9·4·(3//2 = 1)·2·25 = 1800 MACs; bias weight[1]·N·fwd-out (5+2-3)//2+1 = 3,
     3·2·9 = 54: 3654 flops */
  prof_Op op = conv_op(PROF_OP_CONV_TRANSPOSE, sh(4, 2, 4, 5, 5), sh(4, 4, 3, 3, 3), 6,
                       sh(4, 2, 6, 10, 10));
  op.groups = 2;
  for (int i = 0; i < 2; i++) op.stride[i] = 2, op.padding[i] = 1, op.output_padding[i] = 1;
  check_counts(&op, 5400, 12000, 1800, 3654);
}

static void test_conv_transpose_depthwise(void) {
  /* depthwise x [1,8,4,4], w [8,1,3,3], groups 8, stride 1 padding 1: out [1,8,4,4].
     exact 1·8·16·1·9 = 1152; DeepSpeed divides weight[1] = 1 by groups again: 0 MACs, and its
     bias 1·1·16 = 16 */
  prof_Op op = conv_op(PROF_OP_CONV_TRANSPOSE, sh(4, 1, 8, 4, 4), sh(4, 8, 1, 3, 3), 8,
                       sh(4, 1, 8, 4, 4));
  op.groups = 8;
  op.padding[0] = op.padding[1] = 1;
  check_counts(&op, 1152, 2304 + 128, 0, 16);
}

static void test_conv_transpose_dcgan(void) {
  /* DCGAN's first layer: x [1,100,1,1], w [100,64,4,4] -> out [1,64,4,4] (torch).
     MACs 16·100·64 = 102 400 both ways. Bias: exact 64·16 = 1024; DeepSpeed's forward formula
     gives (1 - 3 - 1)//1 + 1 = -2 per axis (Python floor division), product 4: 64·4 = 256 */
  prof_Op op = conv_op(PROF_OP_CONV_TRANSPOSE, sh(4, 1, 100, 1, 1), sh(4, 100, 64, 4, 4), 64,
                       sh(4, 1, 64, 4, 4));
  check_counts(&op, 102400, 204800 + 1024, 102400, 204800 + 256);
  /* the 1-D version: 4·100·64 = 25 600 MACs; DeepSpeed's size is -2 and so is its bias
     term, 64·(-2) = -128: 51 200 - 128; exact 51 200 + 64·4 */
  op = conv_op(PROF_OP_CONV_TRANSPOSE, sh(3, 1, 100, 1), sh(3, 100, 64, 4), 64, sh(3, 1, 64, 4));
  check_counts(&op, ANY, 51200 + 256, 25600, 51200 - 128);
  /* stride 2 (out (1-1)·2 + 3 + 1 = 4): Python's (1 - 4)//2 + 1 = -1, where C's truncating
     division would give 0: bias 64·(-1) */
  op.stride[0] = 2;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 51200 - 64);
}

static void test_conv_transpose_errors(void) {
  /* weight[0] must be C */
  prof_Op op = conv_op(PROF_OP_CONV_TRANSPOSE, sh(4, 2, 4, 5, 5), sh(4, 3, 3, 3, 3), 3,
                       sh(4, 2, 3, 7, 7));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "conv_transpose: input [2, 4, 5, 5] does not match weight [3, 3, 3, 3]");
  /* Cout is weight[1]·groups: a bias of weight[1] is wrong with groups 2 */
  op = conv_op(PROF_OP_CONV_TRANSPOSE, sh(4, 2, 4, 5, 5), sh(4, 4, 3, 3, 3), 3,
                       sh(4, 2, 6, 7, 7));
  op.groups = 2;
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "bias [3]");
}

/* {====================== pooling ======================} */

static void test_max_pool(void) {
  /* ResNet stem: max_pool2d(3, 2, 1) on [1,64,112,112] -> [1,64,56,56]: exact 200 704 outputs
     · 9 comparisons = 1 806 336; DeepSpeed numel(input) = 802 816 */
  prof_Operand x = sh(4, 1, 64, 112, 112);
  prof_Op op = mk(PROF_OP_MAX_POOL, 1, &x, sh(4, 1, 64, 56, 56));
  op.kernel[0] = op.kernel[1] = 3;
  op.stride[0] = op.stride[1] = 2;
  op.padding[0] = op.padding[1] = 1;
  check_counts(&op, 0, 1806336, ANY, 802816);
  /* 1-D, unbatched [C, L]: [3, 10] kernel 2 -> [3, 5]: 30 both ways */
  x = sh(2, 3, 10);
  op = mk(PROF_OP_AVG_POOL, 1, &x, sh(2, 3, 5));
  op.kernel[0] = 2;
  check_counts(&op, ANY, 30, ANY, 30);
  /* no kernel */
  op.kernel[0] = 0;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "avg_pool: no kernel size");
  /* 3-D kernel on a 2-D input */
  op.kernel[0] = op.kernel[1] = op.kernel[2] = 2;
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
}

static void test_adaptive_pool(void) {
  /* [2,3,5,7] -> [2,3,3,3]. Windows [floor(i·in/out), ceil((i+1)·in/out)): H 5->3 sizes
     2,3,2 = 7; W 7->3 sizes 3,3,3 = 9 (brute force in Python agrees with in + out - gcd);
     exact 2·3·7·9 = 378; DeepSpeed numel = 210 */
  prof_Operand x = sh(4, 2, 3, 5, 7);
  prof_Op op = mk(PROF_OP_ADAPTIVE_AVG_POOL, 1, &x, sh(4, 2, 3, 3, 3));
  check_counts(&op, ANY, 378, ANY, 210);
  /* global pooling [2,512,7,7] -> 1×1: 48 adds + 1 divide per output = numel 50 176 */
  x = sh(4, 2, 512, 7, 7);
  op = mk(PROF_OP_ADAPTIVE_AVG_POOL, 1, &x, sh(4, 2, 512, 1, 1));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 50176);
  /* upsampling windows [1,1,2] -> [1,1,4]: four windows of one element: 4; max the same */
  x = sh(3, 1, 1, 2);
  op = mk(PROF_OP_ADAPTIVE_MAX_POOL, 1, &x, sh(3, 1, 1, 4));
  check_counts(&op, ANY, 4, ANY, 2);
  /* 100 -> 7: Python's brute force gives 106 */
  x = sh(3, 1, 1, 100);
  op = mk(PROF_OP_ADAPTIVE_MAX_POOL, 1, &x, sh(3, 1, 1, 7));
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 106);
  /* out rank differs */
  op.out = sh(2, 1, 7);
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "out [1, 7] does not fit input [1, 1, 100]");
}

/* {====================== interpolate ======================} */

static void test_interpolate_size(void) {
  /* x [2,3,4,4] -> size (8, 8): DeepSpeed prod(size) = 64 (batch and channels dropped);
     a scalar size 8: just 8. exact nearest 0; bilinear 3 lerps · 3 = 9 per output: 9·384 */
  prof_Operand x = sh(4, 2, 3, 4, 4);
  prof_Op op = mk(PROF_OP_INTERPOLATE, 1, &x, sh(4, 2, 3, 8, 8));
  op.flags = PROF_OPF_SIZE_GIVEN;
  op.mode = PROF_INTERP_NEAREST;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 64);
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  T_EQ_INT(op.bytes_read, 96 * 4);
  T_EQ_INT(op.bytes_written, 384 * 4);
  op.flags |= PROF_OPF_SIZE_SCALAR;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 8);
  op.mode = PROF_INTERP_BILINEAR;
  check_counts(&op, ANY, 3456, ANY, 8);
}

static void test_interpolate_scale(void) {
  /* scale 2 on [2,3,4,4] (numel 96): DeepSpeed 96·2^2 = 384; scales (2, 3): 96·6 = 576 */
  prof_Operand x = sh(4, 2, 3, 4, 4);
  prof_Op op = mk(PROF_OP_INTERPOLATE, 1, &x, sh(4, 2, 3, 8, 8));
  op.scale_count = 1;
  op.scale[0] = 2.0;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 384);
  op.out = sh(4, 2, 3, 8, 12);
  op.scale_count = 2;
  op.scale[1] = 3.0;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 576);
  /* scale 1.5: a float power, 96·2.25 = 216; as a list (1.5, 1.5): int(2.25) = 2, 192 */
  op.out = sh(4, 2, 3, 6, 6);
  op.scale_count = 1;
  op.scale[0] = 1.5;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 216);
  op.scale_count = 2;
  op.scale[1] = 1.5;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 192);
  /* exact follows the out shape and mode: nearest 0, area = adaptive avg pool 4 -> 6:
     per axis 4 + 6 - 2 = 8, 2·3·8·8 = 384 */
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 0);
  op.mode = PROF_INTERP_AREA;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, 384);
  /* neither size nor scale */
  op.scale_count = 0;
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "0 scale factors for input [2, 3, 4, 4]");
  op.scale_count = 1;
  op.scale[0] = -1.0;
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
}

static void test_interpolate_modes(void) {
  const struct {
    prof_Operand x, out;
    int mode;
    int64_t flops;
  } cases[] = {
    /* linear [1,2,5] -> [1,2,10]: 3·20 = 60 */
    {sh(3, 1, 2, 5), sh(3, 1, 2, 10), PROF_INTERP_LINEAR, 60},
    /* trilinear [1,1,2,2,2] -> [1,1,4,4,4]: 7 lerps · 3 = 21 per output, 21·64 = 1344 */
    {sh(5, 1, 1, 2, 2, 2), sh(5, 1, 1, 4, 4, 4), PROF_INTERP_TRILINEAR, 1344},
    /* bicubic [1,1,4,4] -> [1,1,8,8]: 5 cubic rows of 7 = 35 per output, 2240 */
    {sh(4, 1, 1, 4, 4), sh(4, 1, 1, 8, 8), PROF_INTERP_BICUBIC, 2240},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = mk(PROF_OP_INTERPOLATE, 1, &cases[i].x, cases[i].out);
    op.flags = PROF_OPF_SIZE_GIVEN;
    op.mode = cases[i].mode;
    T_EQ_INT(count(EXACT, &op), PROF_OK);
    T_EQ_INT(op.flops, cases[i].flops);
  }
  /* scale 1.5 in 3-D: DeepSpeed 8·1.5^3 = 27 */
  prof_Operand x = sh(5, 1, 1, 2, 2, 2);
  prof_Op op = mk(PROF_OP_INTERPOLATE, 1, &x, sh(5, 1, 1, 3, 3, 3));
  op.mode = PROF_INTERP_TRILINEAR;
  op.scale_count = 1;
  op.scale[0] = 1.5;
  T_EQ_INT(count(DS, &op), PROF_OK);
  T_EQ_INT(op.flops, 27);
  /* bilinear needs a 4-D input */
  x = sh(3, 1, 2, 5);
  op = mk(PROF_OP_INTERPOLATE, 1, &x, sh(3, 1, 2, 10));
  op.flags = PROF_OPF_SIZE_GIVEN;
  op.mode = PROF_INTERP_BILINEAR;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "[1, 2, 5]");
  op.mode = 17;
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
}

int main(void) {
  T_RUN(test_lenet5_deepspeed);
  T_RUN(test_lenet5_conv_exact);
  T_RUN(test_conv_groups_stride_dilation);
  T_RUN(test_conv_padding_same_valid);
  T_RUN(test_conv3d_no_bias);
  T_RUN(test_conv_errors);
  T_RUN(test_conv_transpose_groups_output_padding);
  T_RUN(test_conv_transpose_depthwise);
  T_RUN(test_conv_transpose_dcgan);
  T_RUN(test_conv_transpose_errors);
  T_RUN(test_max_pool);
  T_RUN(test_adaptive_pool);
  T_RUN(test_interpolate_size);
  T_RUN(test_interpolate_scale);
  T_RUN(test_interpolate_modes);
  return T_DONE();
}
