-- ops_basic_spec.lua — the runtime's first ops on the meta device: linear, convolutions, pooling,
-- pointwise functions and operators, and the shape ops. Shapes are cross-checked with torch 1.13
-- (quoted); counts are derived by hand in the comments.
local core = require "prof.core"

local recorder = require "spec.support.ops_recorder"

local E, count = recorder.E, recorder.count

describe("linear", function()
  it("maps the last dim", function()
    assert.same({2, 3, 5}, core.linear(E{2, 3, 4}, E{5, 4}, E{5}).shape)
    assert.same({5}, core.linear(E{4}, E{5, 4}).shape)
    assert.equal("bfloat16", core.linear(E({2, 4}, "bfloat16"), E({5, 4}, "bfloat16")).dtype)
  end)

  it("names the shapes in its errors", function()
    assert.has_error(function() core.linear(E{2, 3}, E{5, 4}) end,
      "linear: input [2, 3] does not match weight [5, 4] (expected input [..., 4])")
    assert.has_error(function() core.linear(E{2, 4}, E{5, 4}, E{4}) end,
      "linear: bias [4] does not match weight [5, 4]")
    assert.has_error(function() core.linear(E{2, 4}, E({5, 4}, "float64")) end,
      "linear: expected all tensors of the same dtype, got float32 and float64")
  end)

  it("counts the bias under exact conventions only", function()
    -- x [2,3,4], weight [5,4]: 6 rows · 4 · 5 = 120 MACs; exact + 30 bias adds = 270 flops.
    -- Bytes: x 96 + weight 80 + bias 20 read, [2,3,5] 120 written.
    local f = function() core.linear(E{2, 3, 4}, E{5, 4}, E{5}) end
    local t = count(f)
    assert.same({1, 120, 270, 196, 120}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    -- DeepSpeed: numel(x)·out = 120 MACs, 240 flops (its bias is never counted)
    t = count(f, "deepspeed")
    assert.same({120, 240}, {t.macs, t.flops})
    assert.equal(240, count(function() core.linear(E{2, 3, 4}, E{5, 4}) end).flops)
  end)
end)

describe("convolutions", function()
  it("compute PyTorch's output sizes", function()
    local x, w = E{1, 3, 8, 8}, E{4, 3, 3, 3}
    -- torch: conv2d(empty(1,3,8,8), empty(4,3,3,3), padding=1) -> [1, 4, 8, 8]
    assert.same({1, 4, 8, 8}, core.conv2d(x, w, E{4}, {padding = 1}).shape)
    -- torch: stride=2, padding=1 -> [1, 4, 4, 4]; 'same' -> [1,4,8,8]; 'valid' -> [1,4,6,6]
    assert.same({1, 4, 4, 4}, core.conv2d(x, w, nil, {stride = 2, padding = 1}).shape)
    assert.same({1, 4, 8, 8}, core.conv2d(x, w, nil, {padding = "same"}).shape)
    assert.same({1, 4, 6, 6}, core.conv2d(x, w, nil, {padding = "valid"}).shape)
    -- torch: groups=3 with weight [6,1,3,3] -> [1, 6, 6, 6]; dilation=2 -> [1, 4, 4, 4]
    assert.same({1, 6, 6, 6}, core.conv2d(x, E{6, 1, 3, 3}, nil, {groups = 3}).shape)
    assert.same({1, 4, 4, 4}, core.conv2d(x, w, nil, {dilation = 2}).shape)
    -- torch: conv1d [2,3,10] * [5,3,3] -> [2, 5, 8];
    -- conv3d [1,2,4,4,4] * [3,2,3,3,3] -> [1, 3, 2, 2, 2]
    assert.same({2, 5, 8}, core.conv1d(E{2, 3, 10}, E{5, 3, 3}).shape)
    assert.same({1, 3, 2, 2, 2}, core.conv3d(E{1, 2, 4, 4, 4}, E{3, 2, 3, 3, 3}).shape)
    -- torch: conv_transpose2d [1,4,5,5] * [4,2,3,3], stride 2 -> [1, 2, 11, 11];
    -- output_padding=1 -> [1, 2, 12, 12]; depthwise [4,1,3,3], groups 4 -> [1, 4, 7, 7]
    local xt = E{1, 4, 5, 5}
    assert.same({1, 2, 11, 11}, core.conv_transpose2d(xt, E{4, 2, 3, 3}, nil, {stride = 2}).shape)
    assert.same({1, 2, 12, 12}, core.conv_transpose2d(xt, E{4, 2, 3, 3}, nil,
      {stride = 2, output_padding = 1}).shape)
    assert.same({1, 4, 7, 7}, core.conv_transpose2d(xt, E{4, 1, 3, 3}, nil, {groups = 4}).shape)
  end)

  it("reject inconsistent operands", function()
    local x = E{1, 3, 8, 8}
    assert.has_error(function() core.conv2d(x, E{4, 2, 3, 3}) end,
      "conv2d: input [1, 3, 8, 8] has 3 channels but weight [4, 2, 3, 3] with groups=1 expects 2")
    assert.has_error(function() core.conv2d(E{1, 3, 2, 2}, E{4, 3, 3, 3}) end,
      "conv2d: input [1, 3, 2, 2] is smaller than the kernel [4, 3, 3, 3] after padding")
    assert.has_error(function()
      core.conv2d(x, E{4, 3, 3, 3}, nil, {padding = "same", stride = 2})
    end,
      "conv2d: padding='same' needs stride 1")
    assert.has_error(function() core.conv2d(x, E{4, 3, 3, 3}, nil, {padding = "full"}) end,
      "option 'padding': expected a number, a list, 'same' or 'valid', got 'full'")
    assert.has_error(function() core.conv_transpose2d(E{1, 4, 5, 5}, E{4, 2, 3, 3}, nil,
      {stride = 2, output_padding = 2}) end,
      "conv_transpose2d: output_padding 2 must be smaller than stride or dilation")
  end)

  it("count MACs, bias adds, and DeepSpeed's transposed-conv defect", function()
    -- conv2d [1,3,8,8] * [4,3,3,3], padding 1, bias: 4·8·8 = 256 outputs of 3·3·3 = 27 MACs:
    -- 6912 MACs, 2·6912 + 256 = 14080 flops; DeepSpeed agrees here
    local f = function() core.conv2d(E{1, 3, 8, 8}, E{4, 3, 3, 3}, E{4}, {padding = 1}) end
    local t = count(f)
    assert.same({1, 6912, 14080}, {t.calls, t.macs, t.flops})
    t = count(f, "deepspeed")
    assert.same({6912, 14080}, {t.macs, t.flops})
    -- conv_transpose2d [1,4,5,5] * [4,2,3,3], stride 2, bias: 25 inputs · 4 channels · 2 out ·
    -- 9 taps = 1800 MACs; + bias on the 2·11·11 = 242 outputs: 3842 flops
    f = function() core.conv_transpose2d(E{1, 4, 5, 5}, E{4, 2, 3, 3}, E{2}, {stride = 2}) end
    t = count(f)
    assert.same({1800, 3842}, {t.macs, t.flops})
    -- DeepSpeed's bias uses the forward output size ((5 - 3) // 2 + 1)^2 = 4: 3600 + 2·4 = 3608
    assert.equal(3608, count(f, "deepspeed").flops)
    -- depthwise transposed: 25·4·1·9 = 900 MACs; DeepSpeed divides by groups twice: 0
    f = function() core.conv_transpose2d(E{1, 4, 5, 5}, E{4, 1, 3, 3}, nil, {groups = 4}) end
    assert.equal(900, count(f).macs)
    assert.equal(0, count(f, "deepspeed").macs)
  end)
end)

describe("pooling", function()
  it("computes PyTorch's output sizes", function()
    local x = E{1, 3, 8, 8}
    -- torch: max_pool2d(x, 2) -> [1,3,4,4]; (3, stride 2) -> [1,3,3,3], with ceil_mode [1,3,4,4]
    assert.same({1, 3, 4, 4}, core.max_pool2d(x, 2).shape)
    assert.same({1, 3, 3, 3}, core.max_pool2d(x, 3, {stride = 2}).shape)
    assert.same({1, 3, 4, 4}, core.max_pool2d(x, 3, {stride = 2, ceil_mode = true}).shape)
    -- torch: unbatched [3,8,8] -> [3, 4, 4]
    assert.same({3, 4, 4}, core.max_pool2d(E{3, 8, 8}, 2).shape)
    -- torch: avg_pool2d(x, 3, stride=1, padding=1) -> [1, 3, 8, 8]
    assert.same({1, 3, 8, 8}, core.avg_pool2d(x, 3, {stride = 1, padding = 1}).shape)
    -- torch: adaptive_avg_pool2d(empty(1,3,7,7), (3,3)) -> [1,3,3,3]; (None, 2) -> [1,3,7,2]
    assert.same({1, 3, 3, 3}, core.adaptive_avg_pool2d(E{1, 3, 7, 7}, {3, 3}).shape)
    assert.same({1, 3, 7, 2}, core.adaptive_max_pool2d(E{1, 3, 7, 7}, {0, 2}).shape)
    assert.same({2, 4, 1}, core.adaptive_avg_pool1d(E{2, 4, 9}, 1).shape)
  end)

  it("rejects what torch rejects", function()
    -- torch: "pad should be at most half of kernel size, but got pad=2 and kernel_size=3"
    assert.has_error(function() core.max_pool2d(E{1, 3, 8, 8}, 3, {padding = 2}) end,
      "max_pool2d: padding 2 must be at most half the kernel size 3")
    assert.has_error(function() core.max_pool2d(E{1, 3, 1, 1}, 2) end,
      "max_pool2d: input [1, 3, 1, 1] is too small for kernel 2")
    assert.has_error(function() core.avg_pool2d(E{8, 8}, 2) end,
      "avg_pool2d: expected a 3-d or 4-d input, got [8, 8]")
  end)

  it("counts window work (exact) or input elements (DeepSpeed)", function()
    local x = E{1, 3, 8, 8}     -- 192 elements
    -- max_pool 3x3 stride 1: [1,3,6,6] = 108 outputs · 9 comparisons = 972; DeepSpeed 192
    local f = function() core.max_pool2d(x, 3, {stride = 1}) end
    assert.equal(972, count(f).flops)
    assert.equal(192, count(f, "deepspeed").flops)
    -- avg_pool 2x2: 48 outputs · (3 adds + 1 divide) = 192
    assert.equal(192, count(function() core.avg_pool2d(x, 2) end).flops)
    -- adaptive avg 7 -> 3 per axis: windows cover 7 + 3 - gcd(7, 3) = 9 inputs per axis:
    -- 3 channels · 9 · 9 = 243; DeepSpeed numel 147
    f = function() core.adaptive_avg_pool2d(E{1, 3, 7, 7}, {3, 3}) end
    assert.equal(243, count(f).flops)
    assert.equal(147, count(f, "deepspeed").flops)
  end)
end)

describe("pointwise functions", function()
  it("keep the input's shape and dtype", function()
    local x = E({2, 3}, "float16")
    for _, name in ipairs{"relu", "gelu", "silu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt",
                          "abs", "neg", "erf", "reciprocal", "hardswish", "mish", "softplus"} do
      local y = core[name](x)
      assert.same({{2, 3}, "float16"}, {y.shape, y.dtype}, name)
    end
    assert.same({2, 3}, core.leaky_relu(x, 0.1).shape)
    assert.same({2, 3}, core.clamp(x, 0, 1).shape)
    assert.same({2, 3}, core.clamp(x, nil, 1).shape)
    assert.same({2, 3}, core.prelu(E{2, 3}, E{3}).shape)
    assert.same({2, 5}, core.softmax(E{2, 5}, -1).shape)
  end)

  it("check their arguments", function()
    assert.has_error(function() core.clamp(E{2}, 2, 1) end, "clamp: min 2 is larger than max 1")
    -- torch: "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2
    -- and channel size = 3."
    assert.has_error(function() core.prelu(E{2, 3}, E{2}) end,
      "prelu: weight [2] must have 1 or 3 (channels of input [2, 3]) elements")
    assert.has_error(function() core.softmax(E{2, 5}, 2) end,
      "softmax: dim 2 is out of range for input [2, 5]")
  end)

  it("count per element, and what DeepSpeed patches", function()
    local x = E{2, 3}
    -- relu: 1 per element; gelu 5 exact, DeepSpeed 1; tanh: DeepSpeed 0 (not patched)
    assert.equal(6, count(function() core.relu(x) end).flops)
    assert.equal(30, count(function() core.gelu(x) end).flops)
    assert.equal(6, count(function() core.gelu(x) end, "deepspeed").flops)
    assert.equal(0, count(function() core.tanh(x) end, "deepspeed").flops)
    assert.equal(6, count(function() core.exp(x) end).flops)
    -- softmax [2,5]: per row of 5: max 4, subtract 5, exp 5, sum 4, divide 5 = 23; 2 rows 46
    -- log_softmax: 5n - 1 = 24 per row, 48; DeepSpeed: softmax numel 10, log_softmax 0
    local sm = function() core.softmax(E{2, 5}, -1) end
    local lsm = function() core.log_softmax(E{2, 5}, 1) end
    assert.same({46, 48}, {count(sm).flops, count(lsm).flops})
    assert.same({10, 0}, {count(sm, "deepspeed").flops, count(lsm, "deepspeed").flops})
  end)
end)

describe("binary ops and operators", function()
  it("broadcast and promote", function()
    local x, y = E{2, 3}, E{3}
    assert.same({2, 3}, core.add(x, y).shape)
    assert.same({2, 3}, (x + y).shape)
    assert.same({2, 3}, (x * 2).shape)
    assert.same({2, 3}, (2 - x).shape)
    assert.same({2, 3}, (x / y).shape)
    assert.same({2, 3}, (x ^ 2).shape)
    assert.same({2, 3}, (-x).shape)
    assert.same({4, 2, 3}, core.maximum(x, E{4, 1, 1}).shape)
    -- torch: add(int64 [2,3], float32 [2,3]).dtype == float32
    assert.equal("float32", core.add(E({2, 3}, "int64"), x).dtype)
    assert.equal("float32", core.mul(x, E({2, 3}, "int64")).dtype)
  end)

  it("reject shapes that do not broadcast", function()
    assert.has_error(function() core.add(E{2, 3}, E{4}) end,
      "add: shapes [2, 3] and [4] cannot be broadcast together")
    assert.has_error(function() return E{2, 3} * E{2} end,
      "mul: shapes [2, 3] and [2] cannot be broadcast together")
    assert.has_error(function() core.add(E{2}, E({2}, nil, "cpu")) end,
      "add: expected both tensors on the same device, got meta and cpu")
  end)

  it("count the broadcast output; DeepSpeed only the function forms of add and mul", function()
    local x, y = E{2, 3}, E{3}
    -- exact: one flop per output element, 6; bytes 24 + 12 read, 24 written
    local t = count(function() core.add(x, y) end)
    assert.same({1, 6, 36, 24}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(6, count(function() return x + y end).flops)
    -- DeepSpeed aligns shapes from the left: [2,3] with [3] -> max(2,3)·max(3,1) = 9
    assert.equal(9, count(function() core.add(x, y) end, "deepspeed").flops)
    -- operators are not patched; sub neither; a scalar operand counts numel(tensor)
    assert.equal(0, count(function() return x + y end, "deepspeed").flops)
    assert.equal(0, count(function() core.sub(x, y) end, "deepspeed").flops)
    assert.equal(6, count(function() core.mul(x, 2) end, "deepspeed").flops)
    assert.equal(6, count(function() return -x end).flops)
  end)
end)

describe("shape ops", function()
  local x = E{2, 3, 4}

  it("view and reshape", function()
    assert.same({6, 4}, core.view(x, {6, 4}).shape)
    assert.same({24}, core.view(x, -1).shape)
    assert.same({4, 6}, core.view(x, 4, -1).shape)
    assert.same({4, 6}, core.reshape(core.transpose(x, 0, 1), 4, 6).shape)
    assert.has_error(function() core.view(x, -1, -1) end,
      "view: only one dimension can be inferred (-1)")
    assert.has_error(function() core.view(x, 5, 5) end,
      "view: shape of 25 elements is invalid for input [2, 3, 4] of 24 elements")
    assert.has_error(function() core.view(x, 5, -1) end,
      "view: shape with -1 is invalid for input [2, 3, 4] of 24 elements")
    -- torch: "view size is not compatible with input tensor's size and stride ..."
    assert.has_error(function() core.view(core.transpose(x, 0, 1), 24) end,
      "view: the size and stride of input [3, 2, 4] are not compatible with the new shape; "
        .. "use reshape or contiguous() first")
  end)

  it("flatten, transpose, permute, unsqueeze, squeeze, expand", function()
    assert.same({24}, core.flatten(x).shape)
    assert.same({2, 12}, core.flatten(x, 1).shape)
    assert.has_error(function() core.flatten(x, 2, 1) end,
      "flatten: start_dim 2 and end_dim 1 are invalid for input [2, 3, 4]")
    local t = core.transpose(x, 0, 2)
    assert.same({{4, 3, 2}, {1, 4, 12}, false}, {t.shape, t:stride(), t:is_contiguous()})
    assert.has_error(function() core.transpose(x, 0, 3) end,
      "transpose: dims 0, 3 out of range for input [2, 3, 4]")
    assert.same({4, 2, 3}, core.permute(x, {2, 0, 1}).shape)
    assert.same({4, 2, 3}, core.permute(x, 2, 0, 1).shape)
    assert.has_error(function() core.permute(x, {0, 0, 1}) end,
      "permute: dims are not a permutation of 3 dimensions")
    assert.has_error(function() core.permute(x, {0, 1}) end,
      "permute: 2 dims given for input [2, 3, 4]")
    assert.same({2, 3, 4, 1}, core.unsqueeze(x, -1).shape)
    assert.same({1, 2, 3, 4}, core.unsqueeze(x, 0).shape)
    assert.has_error(function() core.unsqueeze(x, 5) end,
      "unsqueeze: dim 5 out of range for input [2, 3, 4]")
    assert.same({3}, core.squeeze(E{1, 3, 1}).shape)
    assert.same({3, 1}, core.squeeze(E{1, 3, 1}, 0).shape)
    assert.same({2, 3, 4}, core.expand(E{3, 1}, {2, 3, 4}).shape)
    assert.same({3, 4}, core.expand(E{3, 1}, -1, 4).shape)
    -- torch: "The expanded size of the tensor (4) must match the existing size (2) ..."
    assert.has_error(function() core.expand(E{3, 2}, {3, 4}) end,
      "expand: input [3, 2] cannot be expanded: dimension 1 is 2, not 1")
  end)

  it("select, narrow, contiguous, cat", function()
    assert.same({2, 4}, core.select(x, 1, 0).shape)
    assert.same({2, 4}, core.select(x, 1, -1).shape)
    assert.has_error(function() core.select(x, 1, 3) end,
      "select: index 3 out of range for dimension 1 of input [2, 3, 4]")
    assert.same({2, 3, 2}, core.narrow(x, 2, 1, 2).shape)
    assert.has_error(function() core.narrow(x, 2, 3, 2) end,
      "narrow: [3, 5) is outside dimension 2 of input [2, 3, 4]")
    assert.is_true(core.contiguous(core.transpose(x, 0, 1)):is_contiguous())
    assert.same({2, 8}, core.cat({E{2, 3}, E{2, 5}}, 1).shape)
    assert.same({5, 3}, core.cat({E{2, 3}, E{3, 3}}).shape)
    -- torch: "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3"
    assert.has_error(function() core.cat({E{2, 3}, E{3, 5}}, 1) end,
      "cat: tensor 1 of shape [3, 5] does not match [2, 3] outside dimension 1")
    assert.has_error(function() core.cat({}) end, "cat: expected a non-empty list of tensors")
  end)

  it("record views as free and copies as bytes", function()
    -- a view: one call, nothing moved
    local t = count(function() core.transpose(x, 0, 1) end)
    assert.same({1, 0, 0, 0}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
    -- reshape of a contiguous tensor is a view; of a transposed one a copy of 96 B
    assert.equal(0, count(function() core.reshape(x, 4, 6) end).bytes_read)
    local xt = core.transpose(x, 0, 1)
    t = count(function() core.reshape(xt, 4, 6) end)
    assert.same({1, 96, 96}, {t.calls, t.bytes_read, t.bytes_written})
    t = count(function() core.contiguous(xt) end)
    assert.same({96, 96}, {t.bytes_read, t.bytes_written})
    -- cat of [2,3] and [2,5]: reads what it writes, 16 floats
    t = count(function() core.cat({E{2, 3}, E{2, 5}}, 1) end)
    assert.same({1, 0, 64, 64}, {t.calls, t.flops, t.bytes_read, t.bytes_written})
  end)
end)
