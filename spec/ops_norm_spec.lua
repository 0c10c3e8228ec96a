-- ops_norm_spec.lua — batch, instance, layer, group and RMS norm, embedding and dropout on the meta
-- device: shapes, dtypes, error messages and recorded counts. Shapes are cross-checked with
-- torch 1.13 (quoted); counts are derived by hand in the comments.
local core = require "prof.core"

local recorder = require "spec.support.ops_recorder"

local E, count = recorder.E, recorder.count

describe("batch_norm", function()
  it("keeps the input's shape and dtype", function()
    local y = core.batch_norm(E{2, 4, 5}, E{4}, E{4}, E{4}, E{4})
    assert.same({2, 4, 5}, y.shape)
    assert.equal("float32", y.dtype)
    -- training needs no running statistics
    assert.same({2, 4}, core.batch_norm(E{2, 4}, nil, nil, nil, nil, {training = true}).shape)
    assert.equal("float16", core.batch_norm(E({2, 4}, "float16"), E({4}, "float16"),
      E({4}, "float16")).dtype)
  end)

  it("rejects what torch rejects", function()
    -- torch: "Expected more than 1 value per channel when training, got input size [1, 4]"
    assert.has_error(function()
      core.batch_norm(E{1, 4}, E{4}, E{4}, nil, nil, {training = true})
    end,
      "batch_norm: expected more than 1 value per channel when training, got input [1, 4]")
    -- torch: "running_mean must be defined in evaluation mode"
    assert.has_error(function() core.batch_norm(E{2, 4, 5}) end,
      "batch_norm: running_mean and running_var are needed in evaluation mode")
    -- torch: "running_mean should contain 4 elements not 3"
    assert.has_error(function() core.batch_norm(E{2, 4, 5}, E{3}, E{4}) end,
      "batch_norm: running_mean [3] does not match the expected shape [4]")
    assert.has_error(function() core.batch_norm(E{2, 4, 5}, E{4}, E{4}, E{5}) end,
      "batch_norm: weight [5] does not match the expected shape [4]")
    assert.has_error(function() core.batch_norm(E{4}, E{4}, E{4}) end,
      "batch_norm: expected an input [N, C, ...] of at least 2 dims, got [4]")
    assert.has_error(function() core.batch_norm(E({2, 4}, "int64"), E{4}, E{4}) end,
      "batch_norm: expected a floating-point input, got int64")
    assert.has_error(function() core.batch_norm(E{2, 4}, E{4}, E{4}, E({4}, "float64")) end,
      "batch_norm: expected all tensors of the same dtype, got float32 and float64")
  end)

  it("counts eval and training as the conventions say", function()
    -- x [2,4,5] (40 elements, 4 channels), weight and bias.
    -- exact eval: 2 per element + 2 per channel (eps add, rsqrt) + weight 40 + bias 40 = 168
    local eval = function() core.batch_norm(E{2, 4, 5}, E{4}, E{4}, E{4}, E{4}) end
    local t = count(eval)
    -- reads x 160 B + weight 16 + bias 16 (the operands), writes 160
    assert.same({1, 0, 168, 192, 160}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    -- DeepSpeed eval with a weight: numel·2 = 80
    assert.equal(80, count(eval, "deepspeed").flops)
    -- exact training: 6 per element + 2 per channel + 80 = 240 + 8 + 80 = 328; DeepSpeed 5·40
    local train = function()
      core.batch_norm(E{2, 4, 5}, E{4}, E{4}, E{4}, E{4}, {training = true})
    end
    assert.equal(328, count(train).flops)
    assert.equal(200, count(train, "deepspeed").flops)
    -- DeepSpeed training without a weight: 4 per element = 160
    assert.equal(160, count(function()
      core.batch_norm(E{2, 4, 5}, nil, nil, nil, nil, {training = true})
    end, "deepspeed").flops)
  end)
end)

describe("instance_norm", function()
  it("computes shapes and checks the spatial size", function()
    assert.same({2, 3, 4}, core.instance_norm(E{2, 3, 4}).shape)
    -- torch: "Expected more than 1 spatial element when training, got input size [2, 3]"
    assert.has_error(function() core.instance_norm(E{2, 3}) end,
      "instance_norm: expected more than 1 spatial element when using input statistics, got "
      .. "input [2, 3]")
    assert.has_error(function() core.instance_norm(E{2, 3, 1}) end,
      "instance_norm: expected more than 1 spatial element when using input statistics, got "
      .. "input [2, 3, 1]")
    -- torch: "Expected running_mean and running_var to be defined when use_input_stats is false"
    assert.has_error(function() core.instance_norm(E{2, 3, 4}, nil, nil, nil, nil,
      {use_input_stats = false}) end,
      "instance_norm: running_mean and running_var are needed when use_input_stats is false")
    assert.same({2, 3, 4}, core.instance_norm(E{2, 3, 4}, E{3}, E{3}, nil, nil,
      {use_input_stats = false}).shape)
  end)

  it("counts per sample and channel", function()
    -- x [2,3,4]: 24 elements in N·C = 6 groups: 6·24 + 2·6 = 156; DeepSpeed 4 per element = 96
    local f = function() core.instance_norm(E{2, 3, 4}) end
    assert.equal(156, count(f).flops)
    assert.equal(96, count(f, "deepspeed").flops)
  end)
end)

describe("layer_norm", function()
  it("normalises trailing dims given as an int or a list", function()
    assert.same({2, 3, 4}, core.layer_norm(E{2, 3, 4}, 4).shape)
    assert.same({2, 3, 4},
      core.layer_norm(E{2, 3, 4}, {3, 4}, E{3, 4}, E{3, 4}, {eps = 1e-6}).shape)
    assert.equal("bfloat16", core.layer_norm(E({2, 4}, "bfloat16"), {4}).dtype)
  end)

  it("rejects shapes that do not fit", function()
    -- torch: "Given normalized_shape=[4], expected input with shape [*, 4], but got ... [2, 5]"
    assert.has_error(function() core.layer_norm(E{2, 5}, {4}) end,
      "layer_norm: input [2, 5] does not end with normalized_shape [4]")
    assert.has_error(function() core.layer_norm(E{5}, {2, 5}) end,
      "layer_norm: input [5] does not end with normalized_shape [2, 5]")
    -- torch: "Expected weight to be of same shape as normalized_shape, but got weight of shape
    -- [4] and normalized_shape = [5]"
    assert.has_error(function() core.layer_norm(E{2, 5}, 5, E{4}) end,
      "layer_norm: weight [4] does not match the expected shape [5]")
    assert.has_error(function() core.layer_norm(E{2, 5}, 5, E{5}, E{5, 1}) end,
      "layer_norm: bias [5, 1] does not match the expected shape [5]")
  end)

  it("records the number of normalised dims", function()
    -- x [2,3,4] over [3,4]: 2 rows of n = 12: (6n + 2)·2 = 148, + weight 24 + bias 24 = 196
    local f = function() core.layer_norm(E{2, 3, 4}, {3, 4}, E{3, 4}, E{3, 4}) end
    assert.equal(196, count(f).flops)
    -- DeepSpeed: 5 per element with a weight = 120
    assert.equal(120, count(f, "deepspeed").flops)
    -- over [4] only: 6 rows of n = 4: (24 + 2)·6 = 156 (no affine)
    assert.equal(156, count(function() core.layer_norm(E{2, 3, 4}, 4) end).flops)
  end)
end)

describe("rms_norm", function()
  it("computes shapes and counts", function()
    assert.same({2, 3, 8}, core.rms_norm(E{2, 3, 8}, 8, E{8}).shape)
    assert.has_error(function() core.rms_norm(E{2, 3, 8}, 4) end,
      "rms_norm: input [2, 3, 8] does not end with normalized_shape [4]")
    -- 6 rows of n = 8: squares 8, adds 7, divide, eps, rsqrt (2n + 2 = 18), scale 8 = 26 per
    -- row = 156; weight 48: 204. DeepSpeed does not patch it: 0
    local f = function() core.rms_norm(E{2, 3, 8}, 8, E{8}, {eps = 1e-6}) end
    assert.equal(204, count(f).flops)
    assert.equal(0, count(f, "deepspeed").flops)
  end)
end)

describe("group_norm", function()
  it("checks the groups against the channels", function()
    assert.same({2, 6, 4}, core.group_norm(E{2, 6, 4}, 3, E{6}, E{6}).shape)
    -- torch: group_norm(empty(2,6), 3).shape == [2, 6]
    assert.same({2, 6}, core.group_norm(E{2, 6}, 3).shape)
    -- torch: "Expected number of channels in input to be divisible by num_groups, but got input
    -- of shape [2, 6, 4] and num_groups=4"
    assert.has_error(function() core.group_norm(E{2, 6, 4}, 4) end,
      "group_norm: input [2, 6, 4] has 6 channels, not divisible by num_groups 4")
    assert.has_error(function() core.group_norm(E{2, 6, 4}, 3, E{3}) end,
      "group_norm: weight [3] does not match the expected shape [6]")
  end)

  it("records its groups", function()
    -- x [2,6,4], 3 groups: N·G = 6 statistics groups over 48 elements: 6·48 + 2·6 = 300,
    -- + weight 48 + bias 48 = 396; DeepSpeed 5·48 = 240
    local f = function() core.group_norm(E{2, 6, 4}, 3, E{6}, E{6}) end
    assert.equal(396, count(f).flops)
    assert.equal(240, count(f, "deepspeed").flops)
    -- 2 groups: 4 statistics groups: 288 + 8 = 296 (no affine)
    assert.equal(296, count(function() core.group_norm(E{2, 6, 4}, 2) end).flops)
  end)
end)

describe("embedding", function()
  it("appends the embedding dim to the indices' shape, in the weight's dtype", function()
    -- torch: embedding(zeros(2,3, long), empty(10,4)).shape == [2, 3, 4]
    local y = core.embedding(E({2, 3}, "int64"), E{10, 4})
    assert.same({2, 3, 4}, y.shape)
    assert.equal("float32", y.dtype)
    assert.same({2, 3, 4}, core.embedding(E({2, 3}, "int32"), E{10, 4}).shape)
    -- torch: 0-d indices give [4]
    assert.same({4}, core.embedding(E({}, "int64"), E{10, 4}).shape)
    assert.equal("bfloat16", core.embedding(E({5}, "int64"), E({10, 4}, "bfloat16")).dtype)
    assert.same({2, 3, 4}, core.embedding(E({2, 3}, "int64"), E{10, 4}, {padding_idx = -10}).shape)
  end)

  it("rejects bad indices and padding_idx", function()
    assert.has_error(function() core.embedding(E{2, 3}, E{10, 4}) end,
      "embedding: indices must be int64 or int32, got float32")
    -- torch: "Padding_idx must be within num_embeddings"
    assert.has_error(function()
      core.embedding(E({2, 3}, "int64"), E{10, 4}, {padding_idx = 10})
    end,
      "embedding: padding_idx 10 is out of range for 10 embeddings")
    assert.has_error(function() core.embedding(E({2, 3}, "int64"), E{10}) end,
      "embedding: weight [10] must be 2-D [num_embeddings, embedding_dim]")
    assert.has_error(function() core.embedding(E({2}, "int64", "cpu"), E{10, 4}) end,
      "embedding: expected all tensors on the same device, got cpu and meta")
  end)

  it("reads the indices and the gathered rows only", function()
    -- indices [2,3] int64 = 48 B, 6 rows of 4 float32 = 96 B read; 96 B written; no flops
    local t = count(function() core.embedding(E({2, 3}, "int64"), E{10, 4}) end)
    assert.same({1, 0, 0, 144, 96}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
  end)
end)

describe("dropout", function()
  it("keeps the shape and checks p", function()
    assert.same({4, 5}, core.dropout(E{4, 5}, 0.1, true).shape)
    assert.same({4, 5}, core.dropout(E{4, 5}, 0.1, false).shape)
    assert.same({4, 5}, core.dropout(E{4, 5}, {p = 0.2}).shape)
    -- torch: "dropout probability has to be between 0 and 1, but got 1.5"
    assert.has_error(function() core.dropout(E{4, 5}, 1.5, true) end,
      "dropout: probability has to be between 0 and 1, got 1.5")
  end)

  it("counts only when it really drops", function()
    -- training, p = 0.5 (the defaults): compare and scale, 2·20 = 40 flops; 80 B in, 80 B out
    local t = count(function() core.dropout(E{4, 5}) end)
    assert.same({1, 40, 80, 80}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
    -- eval, or p = 0: the identity moves nothing
    t = count(function() core.dropout(E{4, 5}, 0.5, false) end)
    assert.same({1, 0, 0, 0}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(0, count(function() core.dropout(E{4, 5}, 0, true) end).flops)
    -- DeepSpeed does not patch dropout
    assert.equal(0, count(function() core.dropout(E{4, 5}, 0.5, true) end, "deepspeed").flops)
  end)
end)
