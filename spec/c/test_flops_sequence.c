/* test_flops_sequence.c — attention and recurrent-layer formulas, both conventions. */
#include "t.h"
#include "op_builder.h"

/* {====================== attention ======================} */

static void test_sdpa_full(void) {
  /* q [2,4,16,8], k [2,4,32,8], v [2,4,32,10]: DeepSpeed prod(q)·S + prod(q[:-1])·S·Ev
     = 1024·32 + 128·32·10 = 73 728 MACs, 147 456 flops.
     exact: 8 heads · 16·32 = 4096 scores: MACs 4096·(8 + 10) = 73 728 (the same);
     flops 147 456 + 4096 scale + softmax (5·4096 - 2·128 rows = 20 224) = 171 776 */
  prof_Operand in[3] = {sh(4, 2, 4, 16, 8), sh(4, 2, 4, 32, 8), sh(4, 2, 4, 32, 10)};
  prof_Op op = mk(PROF_OP_SDPA, 3, in, sh(4, 2, 4, 16, 10));
  check_counts(&op, 73728, 171776, 73728, 147456);
  T_EQ_INT(op.bytes_read, (1024 + 2048 + 2560) * 4);
  T_EQ_INT(op.bytes_written, 1280 * 4);
}

static void test_sdpa_causal(void) {
  /* causal, L = S = 16, 2 heads, E = Ev = 8: torch keeps ones(16,16).tril() = 136 entries per
     head (torch 1.13 sums it to 136), 272 in all: MACs 272·16 = 4352; flops 8704 + 272 scale
     + softmax (5·272 - 2·32 = 1296) = 10 272. DeepSpeed ignores is_causal:
     256·16 + 32·16·8 = 8192 MACs */
  prof_Operand in[3] = {sh(4, 1, 2, 16, 8), sh(4, 1, 2, 16, 8), sh(4, 1, 2, 16, 8)};
  prof_Op op = mk(PROF_OP_SDPA, 3, in, sh(4, 1, 2, 16, 8));
  op.flags = PROF_OPF_CAUSAL;
  check_counts(&op, 4352, 10272, 8192, 16384);
  const struct {
    prof_Operand in[3], out;
    int64_t macs;
  } cases[] = {
    /* top-left alignment, L 6 > S 4: rows keep 1,2,3,4,4,4 = 18 (torch: ones(6,4).tril().sum());
       one head, E 1: MACs 18·2 = 36 */
    {{sh(2, 6, 1), sh(2, 4, 1), sh(2, 4, 1)}, sh(2, 6, 1), 36},
    /* L 3 < S 5: 1 + 2 + 3 = 6 (torch: ones(3,5).tril().sum() = 6), MACs 12 */
    {{sh(2, 3, 1), sh(2, 5, 1), sh(2, 5, 1)}, sh(2, 3, 1), 12},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    op = mk(PROF_OP_SDPA, 3, cases[i].in, cases[i].out);
    op.flags = PROF_OPF_CAUSAL;
    T_EQ_INT(count(EXACT, &op), PROF_OK);
    T_EQ_INT(op.macs, cases[i].macs);
  }
}

static void test_sdpa_gqa(void) {
  /* grouped-query: q [1,8,4,16] with 2 key/value heads [1,2,6,16]: heads from q, 8·4·6 = 192
     scores: MACs 192·32 = 6144; flops 12 288 + 192 + (960 - 64) = 13 376.
     DeepSpeed: 512·6 + 32·6·16 = 6144 MACs, 12 288 */
  prof_Operand in[3] = {sh(4, 1, 8, 4, 16), sh(4, 1, 2, 6, 16), sh(4, 1, 2, 6, 16)};
  prof_Op op = mk(PROF_OP_SDPA, 3, in, sh(4, 1, 8, 4, 16));
  check_counts(&op, 6144, 13376, 6144, 12288);
  /* 3 key heads do not divide 8 query heads */
  in[1] = in[2] = sh(4, 1, 3, 6, 16);
  op = mk(PROF_OP_SDPA, 3, in, sh(4, 1, 8, 4, 16));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "scaled_dot_product_attention: query [1, 8, 4, 16] does not match key "
                "[1, 3, 6, 16] and value [1, 3, 6, 16]");
}

static void test_sdpa_mask_dropout(void) {
  /* q, k, v [1,1,4,8], a bool mask [4,4] in[3], dropout: 16 scores, MACs 16·16 = 256;
     flops 512 + 16 scale + softmax (80 - 8) + 16 mask adds + 2·16 dropout = 648;
     reads 3·32·4 + 16 mask bytes */
  prof_Operand in[4] = {sh(4, 1, 1, 4, 8), sh(4, 1, 1, 4, 8), sh(4, 1, 1, 4, 8), sh(2, 4, 4)};
  in[3].dtype = PROF_BOOL;
  prof_Op op = mk(PROF_OP_SDPA, 4, in, sh(4, 1, 1, 4, 8));
  op.flags = PROF_OPF_MASK | PROF_OPF_TRAINING;
  check_counts(&op, 256, 648, ANY, 512);
  T_EQ_INT(op.bytes_read, 400);
}

static void test_sdpa_gpt3_scale(void) {
  /* GPT-3: 96 heads, 2048 tokens, head dim 128, causal: 2048·2049/2 = 2 098 176 kept scores per
     head, 201 424 896 in all; MACs ·256 = 51 564 773 376. DeepSpeed: 2·96·2048·2048·128 */
  prof_Operand in[3] = {sh(4, 1, 96, 2048, 128), sh(4, 1, 96, 2048, 128),
                        sh(4, 1, 96, 2048, 128)};
  prof_Op op = mk(PROF_OP_SDPA, 3, in, sh(4, 1, 96, 2048, 128));
  op.flags = PROF_OPF_CAUSAL;
  check_counts(&op, 51564773376LL, ANY, 103079215104LL, ANY);
}

static void test_sdpa_errors(void) {
  prof_Operand in[3] = {sh(3, 2, 4, 8), sh(3, 2, 4, 6), sh(3, 2, 4, 8)};
  prof_Op op = mk(PROF_OP_SDPA, 3, in, sh(3, 2, 4, 8));
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "query [2, 4, 8] does not match key [2, 4, 6]");
  in[1] = sh(2, 4, 8);
  op = mk(PROF_OP_SDPA, 3, in, sh(3, 2, 4, 8));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_CONTAINS(err, "differ in rank");
  op = mk(PROF_OP_SDPA, 2, in, sh(3, 2, 4, 8));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
}

/* {====================== recurrent layers ======================} */

static void test_lstm_bidirectional(void) {
  /* nn.LSTM(10, 20, num_layers=2, bidirectional=True, bias=True), x [T 5, N 3, 10].
     G = 4·20 = 80; layer 1 reads 2·20 = 40 features (torch: weight_ih_l1 is [80, 40]).
     DeepSpeed _rnn_flops: layer 0 (2·80·10 - 80) + (2·80·20 - 80) + 10·20 + 2·80 = 5000;
     layer 1 (2·80·40 - 80) + 3120 + 200 + 160 = 9800; (5000 + 9800)·5·3·2 = 444 000, 0 MACs.
     exact: layer 0 MACs 800 + 1600 = 2400, flops 4800 + 160 + 22·20 = 5400; layer 1 MACs
     3200 + 1600 = 4800, flops 9600 + 600 = 10 200; × 15 steps × 2 directions:
     MACs 7200·30 = 216 000, flops 15 600·30 = 468 000.
     bytes: weights per direction 800+1600+160 + 3200+1600+160 = 7520, ×2 dirs ×4 = 60 160,
     plus x 150·4 = 600 */
  prof_Operand x = sh(3, 5, 3, 10);
  prof_Op op = mk(PROF_OP_LSTM, 1, &x, sh(3, 5, 3, 40));
  op.hidden_size = 20;
  op.num_layers = 2;
  op.flags = PROF_OPF_BIAS | PROF_OPF_BIDIRECTIONAL;
  check_counts(&op, 216000, 468000, 0, 444000);
  T_EQ_INT(op.bytes_read, 60760);
  T_EQ_INT(op.bytes_written, 2400);
}

static void test_gru_batch_first(void) {
  /* nn.GRU(6, 5, batch_first=True, bias=False), x [N 2, T 4, 6]: G 15.
     DeepSpeed: (2·15·6 - 15) + (2·15·5 - 15) + 7·5 = 165 + 135 + 35 = 335, × 2·4 = 2680.
     exact: MACs 90 + 75 = 165, flops 330 + 17·5 = 415, × 8 steps: 1320 MACs, 3320 flops */
  prof_Operand x = sh(3, 2, 4, 6);
  prof_Op op = mk(PROF_OP_GRU, 1, &x, sh(3, 2, 4, 5));
  op.hidden_size = 5;
  op.flags = PROF_OPF_BATCH_FIRST;
  check_counts(&op, 1320, 3320, ANY, 2680);
}

static void test_rnn_tanh(void) {
  /* nn.RNN(4, 6, bias=True), x [3, 2, 4], with h0 [1, 2, 6] read too: G 6.
     DeepSpeed: (48 - 6) + (72 - 6) + 6 + 12 = 126, × 6 = 756.
     exact: MACs 24 + 36 = 60, flops 120 + 12 biases + 2·6 (add, tanh) = 144; × 6 steps */
  prof_Operand in[2] = {sh(3, 3, 2, 4), sh(3, 1, 2, 6)};
  prof_Op op = mk(PROF_OP_RNN, 2, in, sh(3, 3, 2, 6));
  op.hidden_size = 6;
  op.num_layers = 1;
  op.flags = PROF_OPF_BIAS;
  check_counts(&op, 360, 864, ANY, 756);
  T_EQ_INT(op.bytes_read, (24 + 12 + 24 + 36 + 12) * 4);  /* x, h0, w_ih, w_hh, biases */
}

static void test_rnn_unbatched(void) {
  /* unbatched x [T 5, I 4], RNN hidden 3, no bias. DeepSpeed multiplies by shape[0]·shape[1]
     = 5·4 = 20 (pinned: it reads the feature size as the sequence length):
     (24 - 3) + (18 - 3) + 3 = 39, × 20 = 780. exact: MACs 12 + 9 = 21 per step, × 5 = 105;
     flops 42 + 6 = 48, × 5 = 240 */
  prof_Operand x = sh(2, 5, 4);
  prof_Op op = mk(PROF_OP_RNN, 1, &x, sh(2, 5, 3));
  op.hidden_size = 3;
  check_counts(&op, 105, 240, ANY, 780);
}

static void test_rnn_cells(void) {
  const struct {
    prof_OpKind kind;
    prof_Operand x, out;
    int64_t hidden;
    uint32_t flags;
    int64_t macs, flops, ds_flops;
  } cases[] = {
    /* nn.LSTMCell(10, 20) on x [3, 10]: DeepSpeed per sample 5000 (layer 0 above), × 3 = 15 000;
       exact 2400 MACs and 5400 flops per sample: 7200, 16 200 */
    {PROF_OP_LSTM_CELL, sh(2, 3, 10), sh(2, 3, 20), 20, PROF_OPF_BIAS, 7200, 16200, 15000},
    /* nn.GRUCell(6, 5) on an unbatched x [6]: DeepSpeed (180 - 15) + (150 - 15) + 35 + 30 = 365,
       × shape[0] = 6 (pinned) = 2190; exact 165 MACs, 330 + 30 + 85 = 445 flops */
    {PROF_OP_GRU_CELL, sh(1, 6), sh(1, 5), 5, PROF_OPF_BIAS, 165, 445, 2190},
    /* nn.RNNCell(4, 6, bias=False) on x [2, 4]: DeepSpeed (48 - 6) + (72 - 6) + 6 = 114, × 2;
       exact 60 MACs, 132 flops per sample */
    {PROF_OP_RNN_CELL, sh(2, 2, 4), sh(2, 2, 6), 6, 0, 120, 264, 228},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof_Op op = mk(cases[i].kind, 1, &cases[i].x, cases[i].out);
    op.hidden_size = cases[i].hidden;
    op.flags = cases[i].flags;
    check_counts(&op, cases[i].macs, cases[i].flops, ANY, cases[i].ds_flops);
  }
}

static void test_rnn_errors(void) {
  prof_Operand x = sh(3, 5, 3, 10);
  prof_Op op = mk(PROF_OP_LSTM, 1, &x, sh(3, 5, 3, 20));
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "lstm: hidden_size 0");
  op.hidden_size = 20;
  op.num_layers = -2;
  T_EQ_INT(profF_count(DS, &op, err, sizeof err), PROF_ERRARG);
  op.num_layers = 1;
  op.in[0] = sh(4, 1, 5, 3, 10);
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  T_EQ_STR(err, "lstm: input [1, 5, 3, 10] must have 2 to 3 dims");
  op.kind = PROF_OP_LSTM_CELL;
  op.in[0] = sh(3, 1, 2, 3);
  T_EQ_INT(profF_count(EXACT, &op, err, sizeof err), PROF_ERRARG);
  /* a garbage layer count saturates instead of looping or overflowing */
  op.kind = PROF_OP_LSTM;
  op.in[0] = x;
  op.num_layers = INT64_MAX;
  T_EQ_INT(count(EXACT, &op), PROF_OK);
  T_EQ_INT(op.flops, INT64_MAX);
}

int main(void) {
  T_RUN(test_sdpa_full);
  T_RUN(test_sdpa_causal);
  T_RUN(test_sdpa_gqa);
  T_RUN(test_sdpa_mask_dropout);
  T_RUN(test_sdpa_gpt3_scale);
  T_RUN(test_sdpa_errors);
  T_RUN(test_lstm_bidirectional);
  T_RUN(test_gru_batch_first);
  T_RUN(test_rnn_tanh);
  T_RUN(test_rnn_unbatched);
  T_RUN(test_rnn_cells);
  T_RUN(test_rnn_errors);
  return T_DONE();
}
