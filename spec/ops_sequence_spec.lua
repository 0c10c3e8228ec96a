-- ops_sequence_spec.lua — attention, recurrent layers and cells, and the helpers sequence models
-- use (chunk, split, stack, masked_fill, where, triu/tril, arange, full, ones, tensor): shapes,
-- dtypes, error messages and recorded counts. Shapes are cross-checked with torch 1.13 (quoted;
-- scaled_dot_product_attention is torch 2's, derived from its documentation); counts by hand.
local core = require "prof.core"

local recorder = require "spec.support.ops_recorder"

local E, count = recorder.E, recorder.count

local function shapes(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = select(i, ...).shape end
  return out
end

local sdpa = core.scaled_dot_product_attention

describe("scaled_dot_product_attention", function()
  it("gives [..., L, Ev]", function()
    assert.same({2, 4, 5, 16}, sdpa(E{2, 4, 5, 8}, E{2, 4, 7, 8}, E{2, 4, 7, 16}).shape)
    -- grouped-query attention: 8 query heads over 2 key/value heads
    assert.same({1, 8, 4, 16}, sdpa(E{1, 8, 4, 16}, E{1, 2, 6, 16}, E{1, 2, 6, 16}).shape)
    -- batch dims broadcast
    assert.same({3, 2, 4, 8}, sdpa(E{1, 2, 4, 8}, E{3, 2, 4, 8}, E{3, 2, 4, 8}).shape)
    assert.same({5, 8}, sdpa(E{5, 8}, E{7, 8}, E{7, 8}).shape)
    assert.same({1, 2, 4, 8}, sdpa(E{1, 2, 4, 8}, E{1, 2, 4, 8}, E{1, 2, 4, 8},
      {attn_mask = E({4, 4}, "bool"), dropout_p = 0.1, scale = 0.5}).shape)
    assert.equal("bfloat16", sdpa(E({2, 3, 8}, "bfloat16"), E({2, 3, 8}, "bfloat16"),
      E({2, 3, 8}, "bfloat16")).dtype)
  end)

  it("names the shapes in its errors", function()
    assert.has_error(function() sdpa(E{2, 4, 5, 8}, E{2, 4, 7, 7}, E{2, 4, 7, 16}) end,
      "scaled_dot_product_attention: query [2, 4, 5, 8] and key [2, 4, 7, 7] differ in the "
      .. "embedding size (8 != 7)")
    assert.has_error(function() sdpa(E{2, 4, 5, 8}, E{2, 4, 7, 8}, E{2, 4, 6, 16}) end,
      "scaled_dot_product_attention: key [2, 4, 7, 8] and value [2, 4, 6, 16] differ in the "
      .. "sequence length (7 != 6)")
    assert.has_error(function() sdpa(E{1, 6, 4, 8}, E{1, 4, 4, 8}, E{1, 4, 4, 8}) end,
      "scaled_dot_product_attention: query heads 6 are not a multiple of key heads 4 "
      .. "(query [1, 6, 4, 8], key [1, 4, 4, 8])")
    assert.has_error(function() sdpa(E{2, 4, 5, 8}, E{3, 4, 7, 8}, E{3, 4, 7, 8}) end,
      "scaled_dot_product_attention: batch dims of query [2, 4, 5, 8] and key [3, 4, 7, 8] "
      .. "cannot be broadcast together")
    -- torch: "_scaled_dot_product_attention: Explicit attn_mask should not be set when
    -- is_causal=True"
    local q = E{1, 2, 4, 8}
    assert.has_error(function()
      sdpa(q, q, q, {attn_mask = E({4, 4}, "bool"), is_causal = true})
    end,
      "scaled_dot_product_attention: is_causal and attn_mask cannot both be set")
    assert.has_error(function() sdpa(q, q, q, {attn_mask = E({2, 5}, "bool")}) end,
      "scaled_dot_product_attention: attn_mask [2, 5] does not broadcast to [1, 2, 4, 4]")
    assert.has_error(function() sdpa(q, q, q, {attn_mask = E({4, 4}, "int64")}) end,
      "scaled_dot_product_attention: attn_mask must be bool or float32 (the query's dtype), "
      .. "got int64")
    assert.has_error(function() sdpa(q, q, q, {dropout_p = 1.5}) end,
      "scaled_dot_product_attention: dropout_p must be between 0 and 1, got 1.5")
    assert.has_error(function() sdpa(E{8}, E{8}, E{8}) end,
      "scaled_dot_product_attention: query [8], key [8] and value [8] need at least 2 dims")
    assert.has_error(function() sdpa(q, q, E({1, 2, 4, 8}, "float64")) end,
      "scaled_dot_product_attention: expected all tensors of the same dtype, got float32 and "
      .. "float64")
  end)

  it("counts the two matmuls, scale, softmax, mask and dropout", function()
    -- q [2,4,5,8], k [2,4,7,8], v [2,4,7,16]: B·H = 8 heads of 5·7 = 35 scores: 280 scores.
    -- MACs 280·(8 + 16) = 6720; flops 2·6720 + 280 (scale) + softmax (5·280 - 2·40 rows)
    -- = 13440 + 280 + 1320 = 15040. DeepSpeed: prod(q)·S + prod(q[:-1])·S·Ev
    -- = 320·7 + 40·7·16 = 6720 MACs, 2·MACs flops.
    local f = function() sdpa(E{2, 4, 5, 8}, E{2, 4, 7, 8}, E{2, 4, 7, 16}) end
    local t = count(f)
    assert.same({1, 6720, 15040}, {t.calls, t.macs, t.flops})
    t = count(f, "deepspeed")
    assert.same({6720, 13440}, {t.macs, t.flops})
    -- q = k = v [1,2,4,8]: 2 heads · 16 scores = 32: MACs 32·16 = 512,
    -- flops 1024 + 32 + (160 - 2·8) = 1200
    local q = E{1, 2, 4, 8}
    assert.same({512, 1200}, {count(function() sdpa(q, q, q) end).macs,
                              count(function() sdpa(q, q, q) end).flops})
    -- causal: 4·5/2 = 10 kept per head, 20 in all: MACs 320, flops 640 + 20 + (100 - 16) = 744
    t = count(function() sdpa(q, q, q, {is_causal = true}) end)
    assert.same({320, 744}, {t.macs, t.flops})
    -- DeepSpeed ignores causality: still 2·(64·4 + 8·4·8) = 1024
    assert.equal(1024, count(function() sdpa(q, q, q, {is_causal = true}) end, "deepspeed").flops)
    -- a mask adds one add per score (1200 + 32), and its bytes (16 bools) are read
    local m = E({4, 4}, "bool")
    t = count(function() sdpa(q, q, q, {attn_mask = m}) end)
    assert.same({1232, 3 * 256 + 16, 256}, {t.flops, t.bytes_read, t.bytes_written})
    -- dropout draws and scales: 2 per score (1200 + 64)
    assert.equal(1264, count(function() sdpa(q, q, q, {dropout_p = 0.1}) end).flops)
  end)

  it("takes the heads from the query under grouped-query attention", function()
    -- q [1,8,4,16], k = v [1,2,6,16]: 8 heads · 24 scores = 192: MACs 192·32 = 6144,
    -- flops 12288 + 192 + (960 - 2·32) = 13376; DeepSpeed 512·6 + 32·6·16 = 6144 MACs.
    -- Bytes: q 2048 + k 768 + v 768 read, 2048 written.
    local f = function() sdpa(E{1, 8, 4, 16}, E{1, 2, 6, 16}, E{1, 2, 6, 16}) end
    local t = count(f)
    assert.same({6144, 13376, 3584, 2048}, {t.macs, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(6144, count(f, "deepspeed").macs)
    -- a query broadcast over 3 batches works as 3·2 heads: 6·16 scores · 16 = 1536 MACs
    assert.equal(1536, count(function() sdpa(E{1, 2, 4, 8}, E{3, 2, 4, 8}, E{3, 2, 4, 8}) end).macs)
  end)
end)

describe("rnn", function()
  it("returns PyTorch's output and state shapes", function()
    -- torch: nn.LSTM(10, 20, num_layers=2, bidirectional=True)(empty(5,3,10)):
    -- output [5, 3, 40], h_n [4, 3, 20], c_n [4, 3, 20]
    assert.same({{5, 3, 40}, {4, 3, 20}, {4, 3, 20}}, shapes(core.rnn("lstm", E{5, 3, 10},
      {input_size = 10, hidden_size = 20, num_layers = 2, bidirectional = true})))
    -- torch: nn.GRU(10, 20, num_layers=2, batch_first=True)(empty(3,5,10)): [3, 5, 20], [2, 3, 20]
    local gru = {input_size = 10, hidden_size = 20, num_layers = 2, batch_first = true}
    assert.same({{3, 5, 20}, {2, 3, 20}}, shapes(core.rnn("gru", E{3, 5, 10}, gru)))
    -- torch: unbatched empty(5,10): [5, 20], [2, 20]
    assert.same({{5, 20}, {2, 20}}, shapes(core.rnn("gru", E{5, 10}, gru)))
    assert.same({{3, 5, 20}, {2, 3, 20}}, shapes(core.rnn("gru", E{3, 5, 10}, gru, E{2, 3, 20})))
    assert.same({{4, 2, 5}, {1, 2, 5}}, shapes(core.rnn("rnn", E{4, 2, 3},
      {input_size = 3, hidden_size = 5, nonlinearity = "relu"})))
    -- LSTM states as a pair, as PyTorch's tuple
    local lstm = {input_size = 10, hidden_size = 20}
    assert.same({{5, 3, 20}, {1, 3, 20}, {1, 3, 20}}, shapes(core.rnn("lstm", E{5, 3, 10}, lstm,
      {E{1, 3, 20}, E{1, 3, 20}})))
  end)

  it("checks the input and the states", function()
    local gru = {input_size = 10, hidden_size = 20, num_layers = 2, batch_first = true}
    -- torch: "Expected hidden size (2, 3, 20), got [1, 3, 20]"
    assert.has_error(function() core.rnn("gru", E{3, 5, 10}, gru, E{1, 3, 20}) end,
      "gru: h0 [1, 3, 20] does not match the expected [2, 3, 20]")
    -- torch: "input.size(-1) must be equal to input_size. Expected 10, got 9"
    assert.has_error(function() core.rnn("gru", E{3, 5, 9}, gru) end,
      "gru: input [3, 5, 9] does not match input_size 10")
    -- torch: "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"
    assert.has_error(function() core.rnn("gru", E{5, 10}, gru, E{2, 1, 20}) end,
      "gru: h0 [2, 1, 20] does not match the expected [2, 20]")
    -- torch: "Unknown nonlinearity 'bogus'"
    assert.has_error(function() core.rnn("rnn", E{5, 3, 10}, {hidden_size = 4,
      nonlinearity = "bogus"}) end, "rnn: unknown nonlinearity 'bogus' (expected tanh or relu)")
    assert.has_error(function() core.rnn("lstm", E{5, 3, 10}, {hidden_size = 20}, E{1, 3, 20}) end,
      "lstm: give both the hidden and the cell state, or neither")
    assert.has_error(function() core.rnn("gru", E{5, 3, 10}, {hidden_size = 20}, E{1, 3, 20},
      E{1, 3, 20}) end, "gru: only an LSTM takes a cell state")
    assert.has_error(function() core.rnn("lstm", E{1, 5, 3, 10}, {hidden_size = 20}) end,
      "lstm: expected a 2-D (unbatched) or 3-D input, got [1, 5, 3, 10]")
    assert.has_error(function() core.rnn("lstm", E{5, 3, 10}, {hidden_size = 20,
      num_layers = 0}) end, "lstm: num_layers must be at least 1, got 0")
    assert.has_error(function() core.rnn("lstm", E{5, 3, 10}, {input_size = 10}) end,
      "lstm: option 'hidden_size' is required")
    assert.has_error(function() core.rnn("lstm", E({5, 3, 10}, "int64"), {hidden_size = 2}) end,
      "lstm: expected a floating-point input, got int64")
  end)

  it("records one op with the layer's counts", function()
    -- RNN (tanh), x [T=4, N=2, I=3], H = 5, bias: per step G·I + G·H = 15 + 25 = 40 MACs,
    -- 2·40 + biases 2·5 + cell (add, tanh) 2·5 = 100 flops; 8 steps: 320 MACs, 800 flops.
    -- Bytes: x 96 + weights (15 + 25 + 10)·4 = 200 read; output [4,2,5] 160 written.
    local f = function() core.rnn("rnn", E{4, 2, 3}, {input_size = 3, hidden_size = 5}) end
    local t = count(f)
    assert.same({1, 320, 800, 296, 160}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    -- DeepSpeed: (2·5·3 - 5) + (2·5·5 - 5) + 5 + 10 = 85 per step, · 4·2 = 680, 0 MACs
    t = count(f, "deepspeed")
    assert.same({0, 680}, {t.macs, t.flops})
    -- LSTM x [2,1,4], H = 3, 2 layers, bidirectional, no bias: G = 12.
    -- layer 0: 12·4 + 12·3 = 84 MACs, 2·84 + 22·3 = 234 flops per step; layer 1 (input 6):
    -- 72 + 36 = 108 MACs, 216 + 66 = 282 flops. × 2 steps × 2 directions: 768 MACs, 2064 flops.
    -- DeepSpeed: (96 - 12 + 72 - 12 + 30) + (144 - 12 + 72 - 12 + 30) = 396, × 2·1 × 2 = 1584
    f = function()
      core.rnn("lstm", E{2, 1, 4}, {input_size = 4, hidden_size = 3, num_layers = 2,
        bidirectional = true, bias = false})
    end
    t = count(f)
    assert.same({768, 2064}, {t.macs, t.flops})
    assert.equal(1584, count(f, "deepspeed").flops)
  end)
end)

describe("rnn_cell", function()
  it("returns h' (and c') of PyTorch's shapes", function()
    local o = {input_size = 10, hidden_size = 20}
    -- torch: nn.LSTMCell(10, 20)(empty(3,10)) -> [3, 20], [3, 20]; unbatched [10] -> [20], [20]
    assert.same({{3, 20}, {3, 20}}, shapes(core.rnn_cell("lstm", E{3, 10}, o)))
    assert.same({{20}, {20}}, shapes(core.rnn_cell("lstm", E{10}, o)))
    assert.same({{3, 20}, {3, 20}}, shapes(core.rnn_cell("lstm", E{3, 10}, E{3, 20}, E{3, 20}, o)))
    assert.same({{3, 20}}, shapes(core.rnn_cell("gru", E{3, 10}, E{3, 20}, o)))
    assert.same({{3, 20}}, shapes(core.rnn_cell("rnn", E{3, 10}, E{3, 20}, nil, o)))
  end)

  it("checks the input and the state", function()
    local o = {input_size = 10, hidden_size = 20}
    -- torch: "Input batch size 3 doesn't match hidden0 batch size 2"
    assert.has_error(function() core.rnn_cell("lstm", E{3, 10}, E{2, 20}, E{2, 20}, o) end,
      "lstm_cell: h [2, 20] does not match the expected [3, 20]")
    -- torch: "input has inconsistent input_size: got 9 expected 10"
    assert.has_error(function() core.rnn_cell("lstm", E{3, 9}, o) end,
      "lstm_cell: input [3, 9] does not match input_size 10")
    -- torch: "hidden0 has inconsistent hidden_size: got 21, expected 20"
    assert.has_error(function() core.rnn_cell("gru", E{3, 10}, E{3, 21}, o) end,
      "gru_cell: h [3, 21] does not match the expected [3, 20]")
    -- torch: "GRUCell: Expected input to be 1-D or 2-D but received 3-D tensor"
    assert.has_error(function() core.rnn_cell("gru", E{3, 4, 10}, o) end,
      "gru_cell: expected a 1-D or 2-D input, got [3, 4, 10]")
    assert.has_error(function() core.rnn_cell("cell", E{3, 10}, o) end)
  end)

  it("counts one step over the batch", function()
    -- GRU cell, x [2,3], H = 4, bias: G = 12: 36 + 48 = 84 MACs per sample, 168 in all;
    -- flops 2·84 + 2·12 + 17·4 = 260 per sample, 520. DeepSpeed: (72 - 12) + (96 - 12) + 28 + 24
    -- = 196 per sample, · 2 = 392
    local f = function() core.rnn_cell("gru", E{2, 3}, {input_size = 3, hidden_size = 4}) end
    local t = count(f)
    assert.same({1, 168, 520}, {t.calls, t.macs, t.flops})
    assert.equal(392, count(f, "deepspeed").flops)
  end)
end)

describe("chunk and split", function()
  it("return views of torch's piece sizes", function()
    -- torch: chunk(empty(5,3), 3) -> [2,3], [2,3], [1,3]; chunk(empty(6,3), 4) -> 3 × [2,3]
    assert.same({{2, 3}, {2, 3}, {1, 3}}, shapes(core.chunk(E{5, 3}, 3)))
    assert.same({{2, 3}, {2, 3}, {2, 3}}, shapes(core.chunk(E{6, 3}, 4)))
    -- torch: chunk(empty(0,3), 3) -> 3 × [0,3]; chunk(empty(5,3), 2, dim=-1) -> [5,2], [5,1]
    assert.same({{0, 3}, {0, 3}, {0, 3}}, shapes(core.chunk(E{0, 3}, 3)))
    assert.same({{5, 2}, {5, 1}}, shapes(core.chunk(E{5, 3}, 2, -1)))
    -- torch: split(empty(5,3), 2) -> [2,3], [2,3], [1,3]; split(empty(5,3), [1,4])
    assert.same({{2, 3}, {2, 3}, {1, 3}}, shapes(core.split(E{5, 3}, 2)))
    assert.same({{1, 3}, {4, 3}}, shapes(core.split(E{5, 3}, {1, 4})))
    -- torch: split(empty(0,3), 0) -> [0,3]; split(empty(4,3), 10) -> [4,3]
    assert.same({{0, 3}}, shapes(core.split(E{0, 3}, 0)))
    assert.same({{4, 3}}, shapes(core.split(E{4, 3}, 10)))
    local a, b = core.chunk(E({4, 6}, "float16"), 2, 1)
    assert.is_false(a:is_contiguous())
    assert.equal("float16", b.dtype)
  end)

  it("reject what torch rejects", function()
    -- torch: "chunk expects `chunks` to be greater than 0, got: 0"
    assert.has_error(function() core.chunk(E{5, 3}, 0) end, "chunk: chunks must be positive, got 0")
    -- torch: "split_size can only be 0 if dimension size is 0, but got dimension size of 4"
    assert.has_error(function() core.split(E{4, 3}, 0) end,
      "split: split_size 0 is invalid for dim 0 of input [4, 3]")
    -- torch: "split_with_sizes expects split_sizes to sum exactly to 4 ..."
    assert.has_error(function() core.split(E{4, 3}, {1, 2}) end,
      "split: sizes sum to 3 but dim 0 of input [4, 3] has size 4")
    assert.has_error(function() core.chunk(E{4, 3}, 2, 2) end,
      "chunk: dim 2 is out of range for input [4, 3]")
  end)

  it("record each piece as a view that moves nothing", function()
    local t = count(function() core.chunk(E{5, 3}, 3) end)
    assert.same({3, 0, 0, 0, 0}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(2, count(function() core.split(E{5, 3}, {1, 4}) end).calls)
  end)
end)

describe("stack", function()
  it("joins along a new dim", function()
    -- torch: stack([empty(2,3)]*2, 2).shape == [2, 3, 2]; dim=-1 too
    assert.same({2, 3, 2}, core.stack({E{2, 3}, E{2, 3}}, 2).shape)
    assert.same({2, 3, 2}, core.stack({E{2, 3}, E{2, 3}}, -1).shape)
    assert.same({3, 2, 3}, core.stack({E{2, 3}, E{2, 3}, E{2, 3}}).shape)
  end)

  it("rejects what torch rejects", function()
    -- torch: "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4]
    -- at entry 1"
    assert.has_error(function() core.stack({E{2, 3}, E{2, 4}}) end,
      "stack: tensor 1 of shape [2, 4] differs from tensor 0 of shape [2, 3]")
    -- torch: "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
    assert.has_error(function() core.stack({E{2, 3}}, 3) end,
      "stack: dim 3 is out of range for inputs [2, 3]")
    -- torch: "stack expects a non-empty TensorList"
    assert.has_error(function() core.stack({}) end, "stack: expected a non-empty list of tensors")
  end)

  it("records a copy", function()
    -- two [2,3] float32: 48 B read, 48 B written, no flops
    local t = count(function() core.stack({E{2, 3}, E{2, 3}}) end)
    assert.same({1, 0, 48, 48}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
  end)
end)

describe("masked_fill and where", function()
  it("broadcast the mask and the values", function()
    -- torch: empty(2,3).masked_fill(zeros(4,2,3, bool), 0).shape == [4, 2, 3]
    assert.same({4, 2, 3}, core.masked_fill(E{2, 3}, E({4, 2, 3}, "bool"), 0).shape)
    assert.same({2, 3}, core.masked_fill(E{2, 3}, E({3}, "bool"), -math.huge).shape)
    -- torch: where(zeros(3,1, bool), empty(4), 0.0).shape == [3, 4]
    local y = core.where(E({3, 1}, "bool"), E{4}, 0.0)
    assert.same({3, 4}, y.shape)
    assert.equal("float32", y.dtype)
    assert.equal("float64", core.where(E({2}, "bool"), 1, E({2}, "float64")).dtype)
    assert.same({2}, core.where(E({2}, "bool"), 1.0, 0.0).shape)
  end)

  it("reject masks that are not bool, and mixed dtypes", function()
    assert.has_error(function() core.masked_fill(E{2, 3}, E{2, 3}, 0) end,
      "masked_fill: mask must be a bool tensor, got float32")
    assert.has_error(function() core.masked_fill(E{2, 3}, E({4}, "bool"), 0) end,
      "masked_fill: shapes [2, 3] and [4] cannot be broadcast together")
    -- torch: "where expected condition to be a boolean tensor, but got a tensor with dtype Float"
    assert.has_error(function() core.where(E{3, 1}, E{4}, E{4}) end,
      "where: condition must be a bool tensor, got float32")
    assert.has_error(function() core.where(E({3, 1}, "bool"), E{4}, E({4}, "float64")) end,
      "where: expected both values of one dtype, got float32 and float64")
  end)

  it("count bytes, never flops", function()
    -- masked_fill x [2,3] float32 (24 B) + mask [2,3] bool (6 B) read, 24 B written
    local t = count(function() core.masked_fill(E{2, 3}, E({2, 3}, "bool"), 0) end)
    assert.same({1, 0, 0, 30, 24}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    -- where cond [3,1] bool (3 B) + a [4] float32 (16 B), scalar b: 19 B read, [3,4] 48 B written
    t = count(function() core.where(E({3, 1}, "bool"), E{4}, 0.0) end)
    assert.same({1, 0, 19, 48}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(0, count(function() core.masked_fill(E{2, 3}, E({2, 3}, "bool"), 0) end,
      "deepspeed").flops)
  end)
end)

describe("triu and tril", function()
  it("copy matrices", function()
    assert.same({2, 3, 4}, core.tril(E{2, 3, 4}).shape)
    assert.same({3, 3}, core.triu(E({3, 3}, "bool"), 1).shape)
    -- torch: triu(empty(3)) raises "Dimension out of range ..."
    assert.has_error(function() core.triu(E{3}) end, "triu: input [3] needs at least 2 dims")
    local t = count(function() core.tril(E{2, 3, 4}) end)
    assert.same({1, 0, 96, 96}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
  end)
end)

describe("constructors", function()
  it("arange follows torch's lengths and dtypes", function()
    -- torch: arange(5) -> [5] int64; arange(1, 2.5, 0.5) -> [3] float32; arange(0, 10, 3) -> [4]
    local a = core.arange(5)
    assert.same({{5}, "int64", "meta"}, {a.shape, a.dtype, a.device})
    a = core.arange(1, 2.5, 0.5)
    assert.same({{3}, "float32"}, {a.shape, a.dtype})
    assert.same({4}, core.arange(0, 10, 3).shape)
    assert.same({4}, core.arange(10, 0, -3).shape)
    assert.same({0}, core.arange(0).shape)
    a = core.arange(4, {dtype = "float64", device = "cpu"})
    assert.same({{4}, "float64", "cpu"}, {a.shape, a.dtype, a.device})
    -- torch: "step must be nonzero"; "upper bound and larger bound inconsistent with step sign"
    assert.has_error(function() core.arange(0, 10, 0) end,
      "arange: step must be nonzero and finite")
    assert.has_error(function() core.arange(10, 0, 1) end,
      "arange: start 10 and end 0 are inconsistent with step 1")
  end)

  it("full and ones infer torch's dtypes", function()
    -- torch: full((2,3), 3) is int64, full((2,3), 3.5) float32, full((2,3), True) bool
    assert.equal("int64", core.full({2, 3}, 3).dtype)
    assert.equal("float32", core.full({2, 3}, 3.5).dtype)
    assert.equal("bool", core.full({2, 3}, true).dtype)
    local f = core.full({2, 3}, 1, {dtype = "float16", device = "cpu"})
    assert.same({{2, 3}, "float16", "cpu"}, {f.shape, f.dtype, f.device})
    assert.same({2, 3}, core.ones({2, 3}).shape)
    assert.same({2, 3}, core.ones(2, 3).shape)
    assert.equal("int32", core.ones({2, 3}, {dtype = "int32"}).dtype)
    assert.equal("float32", core.ones({}, {device = "cpu"}).dtype)
    assert.has_error(function() core.ones({2}, {dtype = "float8"}) end, "unknown dtype 'float8'")
    assert.has_error(function() core.ones({2}, {device = "tpu"}) end,
      "unknown device 'tpu' (expected meta, cpu or cuda)")
  end)

  it("tensor takes nested lists as torch.tensor does", function()
    -- torch: tensor([[1,2],[3,4.5]]) -> [2, 2] float32; tensor(3) -> [] int64
    local t = core.tensor({{1, 2}, {3, 4.5}})
    assert.same({{2, 2}, "float32"}, {t.shape, t.dtype})
    t = core.tensor(3)
    assert.same({{}, "int64"}, {t.shape, t.dtype})
    -- torch: tensor([]) -> [0] float32; tensor([[],[]]) -> [2, 0]; tensor([True, False]) bool
    assert.same({{0}, "float32"}, {core.tensor({}).shape, core.tensor({}).dtype})
    assert.same({2, 0}, core.tensor({{}, {}}).shape)
    assert.equal("bool", core.tensor({true, false}).dtype)
    t = core.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = "float64", device = "cpu"})
    assert.same({{2, 3}, "float64", "cpu"}, {t.shape, t.dtype, t.device})
    -- torch: "expected sequence of length 2 at dim 1 (got 1)"
    assert.has_error(function() core.tensor({{1, 2}, {3}}) end,
      "tensor: expected a list of length 2 at dim 1 (got 1)")
    assert.has_error(function() core.tensor({{1, 2}, 3}) end,
      "tensor: expected a list of length 2 at dim 1, got a number")
    assert.has_error(function() core.tensor({1, "a"}) end,
      "tensor: elements must be numbers or booleans, got string")
  end)

  it("are not recorded: they read nothing", function()
    local t = count(function()
      core.arange(5)
      core.full({2}, 1)
      core.tensor({1, 2})
    end)
    assert.same({0, 0}, {t.calls, t.bytes_written})
  end)

  it("fill every dtype on cpu", function()
    for _, dt in ipairs{"float32", "float64", "float16", "bfloat16", "int64", "int32", "int8",
                        "uint8", "bool"} do
      assert.equal(dt, core.full({2}, 1.5, {dtype = dt, device = "cpu"}).dtype)
      assert.equal(dt, core.tensor({1, 2}, {dtype = dt, device = "cpu"}).dtype)
    end
  end)
end)
