-- ops_resample_spec.lua — interpolate on the meta device: output sizes, PyTorch's checks and the
-- recorded counts. Shapes are cross-checked with torch 1.13 (quoted); counts are derived by hand.
local core = require "prof.core"

local recorder = require "spec.support.ops_recorder"

local E, count = recorder.E, recorder.count

describe("interpolate", function()
  it("computes output sizes as torch does", function()
    -- torch: interpolate(empty(1,3,4,4), scale_factor=2.5).shape == [1, 3, 10, 10]
    assert.same({1, 3, 10, 10}, core.interpolate(E{1, 3, 4, 4}, {scale_factor = 2.5}).shape)
    -- torch: [1,3,5], scale_factor=0.5, linear -> [1, 3, 2] (floor)
    assert.same({1, 3, 2},
      core.interpolate(E{1, 3, 5}, {scale_factor = 0.5, mode = "linear"}).shape)
    -- torch: size=3 bilinear -> [1, 3, 3, 3]
    assert.same({1, 3, 3, 3}, core.interpolate(E{1, 3, 4, 4}, {size = 3, mode = "bilinear"}).shape)
    -- torch: size=[3,5] bicubic, align_corners -> [1, 3, 3, 5]
    assert.same({1, 3, 3, 5}, core.interpolate(E{1, 3, 4, 4}, {size = {3, 5}, mode = "bicubic",
      align_corners = true}).shape)
    -- torch: [1,3,4,4,4], scale_factor=[2,1,0.5], trilinear -> [1, 3, 8, 4, 2]
    assert.same({1, 3, 8, 4, 2}, core.interpolate(E{1, 3, 4, 4, 4}, {scale_factor = {2, 1, 0.5},
      mode = "trilinear"}).shape)
    -- torch: scale_factor=[2,3], area -> [1, 3, 8, 12]
    assert.same({1, 3, 8, 12}, core.interpolate(E{1, 3, 4, 4}, {scale_factor = {2, 3},
      mode = "area"}).shape)
    assert.equal("float16", core.interpolate(E({1, 3, 4}, "float16"), {size = 8}).dtype)
  end)

  it("rejects what torch rejects", function()
    local x = E{1, 3, 4, 4}
    -- torch: "Input and output must have the same number of spatial dimensions, but got input
    -- with spatial dimensions of [4, 4] and output size of [8]. ..."
    assert.has_error(function() core.interpolate(x, {size = {8}}) end,
      "interpolate: input [1, 3, 4, 4] has 2 spatial dims but 1 sizes were given")
    -- torch: "Input and scale_factor must have the same number of spatial dimensions ..."
    assert.has_error(function() core.interpolate(x, {scale_factor = {2.0}}) end,
      "interpolate: input [1, 3, 4, 4] has 2 spatial dims but 1 scale factors were given")
    -- torch: "only one of size or scale_factor should be defined"
    assert.has_error(function() core.interpolate(x, {size = 4, scale_factor = 2}) end,
      "interpolate: give only one of size and scale_factor")
    -- torch: "either size or scale_factor should be defined"
    assert.has_error(function() core.interpolate(x) end,
      "interpolate: give either size or scale_factor")
    -- torch: "Got 4D input, but linear mode needs 3D input"
    assert.has_error(function() core.interpolate(x, {size = 4, mode = "linear"}) end,
      "interpolate: mode 'linear' needs a 3-D input, got [1, 3, 4, 4]")
    -- torch: "Got 3D input, but bilinear mode needs 4D input"
    assert.has_error(function() core.interpolate(E{1, 3, 4}, {size = 4, mode = "bilinear"}) end,
      "interpolate: mode 'bilinear' needs a 4-D input, got [1, 3, 4]")
    -- torch: "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) ..."
    assert.has_error(function() core.interpolate(E{3, 4}, {size = 4}) end,
      "interpolate: expected a 3-D, 4-D or 5-D input [N, C, ...], got [3, 4]")
    -- torch: "align_corners option can only be set with the interpolating modes: linear | ..."
    assert.has_error(function() core.interpolate(x, {size = 4, align_corners = true}) end,
      "interpolate: align_corners can only be set with the interpolating modes linear, "
      .. "bilinear, bicubic and trilinear, not 'nearest'")
    -- torch: "Input and output sizes should be greater than 0, but got input (H: 4, W: 4)
    -- output (H: 0, W: 0)"
    assert.has_error(function() core.interpolate(x, {scale_factor = 0.1}) end,
      "interpolate: input and output sizes must be positive, got output size 0 for spatial "
      .. "dim 0 of input [1, 3, 4, 4]")
    assert.has_error(function() core.interpolate(x, {size = 4, mode = "bogus"}) end,
      "interpolate: unknown mode 'bogus' (expected nearest, linear, bilinear, bicubic, "
      .. "trilinear or area)")
    assert.has_error(function() core.interpolate(E({1, 3, 4}, "int64"), {size = 8}) end,
      "interpolate: expected a floating-point input, got int64")
  end)

  it("counts per output element (exact) and DeepSpeed's way", function()
    local x = E{1, 3, 4, 4}    -- 48 elements
    -- nearest x2: a gather, 0 flops; DeepSpeed numel·2^2 = 192 (= the output numel)
    local f = function() core.interpolate(x, {scale_factor = 2}) end
    local t = count(f)
    assert.same({1, 0, 0, 192, 768}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(192, count(f, "deepspeed").flops)
    -- scale 2.5 nearest: DeepSpeed 48·2.5^2 = 300
    assert.equal(300, count(function() core.interpolate(x, {scale_factor = 2.5}) end,
      "deepspeed").flops)
    -- scale [2, 3]: DeepSpeed numel·int(2·3) = 288
    assert.equal(288, count(function() core.interpolate(x, {scale_factor = {2, 3}}) end,
      "deepspeed").flops)
    -- bilinear to [8, 8]: 3 lerps of 3 flops per output element: 9·192 = 1728;
    -- DeepSpeed counts prod(size) = 64 only (its missing N·C), and a scalar size as itself: 8
    f = function() core.interpolate(x, {size = {8, 8}, mode = "bilinear"}) end
    assert.equal(1728, count(f).flops)
    assert.equal(64, count(f, "deepspeed").flops)
    f = function() core.interpolate(x, {size = 8, mode = "bilinear"}) end
    assert.equal(1728, count(f).flops)
    assert.equal(8, count(f, "deepspeed").flops)
    -- linear [1,3,5] x2 -> 30 outputs, 3 flops each: 90
    assert.equal(90, count(function()
      core.interpolate(E{1, 3, 5}, {scale_factor = 2, mode = "linear"})
    end).flops)
    -- trilinear [1,1,2,2,2] to 4^3 = 64 outputs, 7 lerps · 3 = 21 each: 1344
    assert.equal(1344, count(function()
      core.interpolate(E{1, 1, 2, 2, 2}, {size = 4, mode = "trilinear"})
    end).flops)
    -- bicubic to [2, 2]: 4 outputs · 35 = 140
    assert.equal(140, count(function()
      core.interpolate(E{1, 1, 4, 4}, {size = {2, 2}, mode = "bicubic"})
    end).flops)
    -- area [4,4] -> [2,2]: adaptive average pooling, each output averages 4 inputs: 16
    assert.equal(16, count(function()
      core.interpolate(E{1, 1, 4, 4}, {size = {2, 2}, mode = "area"})
    end).flops)
  end)
end)
