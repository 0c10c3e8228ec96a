-- ops_reduce_spec.lua — sum, mean, amax, var and the losses on the meta device: shapes, dtypes,
-- error messages and recorded counts. Shapes are cross-checked with torch 1.13 (quoted); counts
-- are derived by hand in the comments.
local core = require "prof.core"

local recorder = require "spec.support.ops_recorder"

local E, count = recorder.E, recorder.count

describe("reductions", function()
  it("reduce every dim, one dim or a list, with keepdim", function()
    local x = E{2, 3, 4}
    -- torch: x.sum().shape == []; x.sum(dim=[]).shape == [] (an empty list reduces everything)
    assert.same({}, core.sum(x).shape)
    assert.same({}, core.sum(x, {}).shape)
    assert.same({2, 4}, core.sum(x, 1).shape)
    assert.same({2, 4}, core.mean(x, -2).shape)
    assert.same({2, 1, 1}, core.sum(x, {1, -1}, {keepdim = true}).shape)
    -- options in place of dim: every dim, kept
    assert.same({1, 1, 1}, core.amax(x, {keepdim = true}).shape)
    -- torch: x.var(dim=[], keepdim=True).shape == [1, 1, 1]
    assert.same({1, 1, 1}, core.var(x, {}, {keepdim = true}).shape)
    assert.same({2, 4}, core.var(x, 1, {correction = 0}).shape)
    assert.same({2, 4}, core.var(x, 1, {unbiased = false}).shape)
    -- torch: a 0-d tensor reduces over dim 0 or -1
    assert.same({}, core.sum(E{}, 0).shape)
    assert.same({}, core.sum(E{}, -1, {keepdim = true}).shape)
    -- torch: empty(2,0,4).amax(0).shape == [0, 4]
    assert.same({0, 4}, core.amax(E{2, 0, 4}, 0).shape)
  end)

  it("follow torch's dtypes", function()
    -- torch: int32 and bool sums are int64
    assert.equal("int64", core.sum(E({2, 3}, "int32"), 1).dtype)
    assert.equal("int64", core.sum(E({2, 3}, "bool")).dtype)
    assert.equal("float16", core.sum(E({2, 3}, "float16")).dtype)
    assert.equal("int32", core.amax(E({2, 3}, "int32"), 1).dtype)
    assert.equal("bfloat16", core.mean(E({2, 3}, "bfloat16"), 1).dtype)
  end)

  it("reject what torch rejects", function()
    local x = E{2, 3, 4}
    -- torch: "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
    assert.has_error(function() core.sum(x, 3) end,
      "sum: dim 3 is out of range for input [2, 3, 4]")
    -- torch: "dim 1 appears multiple times in the list of dims"
    assert.has_error(function() core.sum(x, {1, -2}) end,
      "sum: dim 1 appears more than once in the list of dims")
    -- torch: "mean(): could not infer output dtype. Input dtype must be ... floating point ..."
    assert.has_error(function() core.mean(E({2, 3}, "int32"), 1) end,
      "mean: expected a floating-point input, got int32")
    -- torch: "std and var only support floating point and complex dtypes"
    assert.has_error(function() core.var(E({2, 3}, "int64"), 1) end,
      "var: expected a floating-point input, got int64")
    -- torch: "amax(): Expected reduction dim 1 to have non-zero size."
    assert.has_error(function() core.amax(E{2, 0, 4}, 1) end,
      "amax: dim 1 of input [2, 0, 4] is empty")
  end)

  it("count n - m adds (+ m divides for mean; 4n for var)", function()
    -- x [2,3,4] over dim 1: n = 24 in, m = 8 out
    local x = E{2, 3, 4}
    local t = count(function() core.sum(x, 1) end)
    assert.same({1, 0, 16, 96, 32}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    assert.equal(24, count(function() core.mean(x, 1) end).flops)   -- 16 adds + 8 divides
    assert.equal(23, count(function() core.amax(x) end).flops)      -- 23 comparisons
    assert.equal(96, count(function() core.var(x, 1) end).flops)    -- 4·24
    -- DeepSpeed does not patch reductions
    assert.equal(0, count(function() core.sum(x, 1) end, "deepspeed").flops)
  end)
end)

describe("cross_entropy", function()
  local L = function(shape) return E(shape, "int64") end

  it("gives a 0-d loss, or the target's shape unreduced", function()
    assert.same({}, core.cross_entropy(E{3, 5}, L{3}).shape)
    -- torch: cross_entropy(empty(3,5), zeros(3, long), reduction='none').shape == [3]
    assert.same({3}, core.cross_entropy(E{3, 5}, L{3}, {reduction = "none"}).shape)
    -- torch: [3,5,7] with target [3,7], 'none' -> [3, 7]
    assert.same({3, 7}, core.cross_entropy(E{3, 5, 7}, L{3, 7}, {reduction = "none"}).shape)
    -- torch: probability targets of the input's shape -> [3, 7]
    assert.same({3, 7}, core.cross_entropy(E{3, 5, 7}, E{3, 5, 7}, {reduction = "none"}).shape)
    -- torch: unbatched [5] with a 0-d target -> []
    assert.same({}, core.cross_entropy(E{5}, L{}, {reduction = "none"}).shape)
    assert.same({}, core.cross_entropy(E{5}, E{5}, {reduction = "none"}).shape)
    assert.same({}, core.cross_entropy(E{3, 5}, L{3}, {weight = E{5}, label_smoothing = 0.1,
      ignore_index = 0, reduction = "sum"}).shape)
    assert.equal("float16", core.cross_entropy(E({3, 5}, "float16"), L{3}).dtype)
  end)

  it("rejects what torch rejects", function()
    -- torch: "Expected input batch_size (3) to match target batch_size (4)."
    assert.has_error(function() core.cross_entropy(E{3, 5}, L{4}) end,
      "cross_entropy: input [3, 5] does not match target [4] (expected target [3])")
    -- torch: "Expected target size [3, 7], got [3, 6]"
    assert.has_error(function() core.cross_entropy(E{3, 5, 7}, L{3, 6}) end,
      "cross_entropy: input [3, 5, 7] does not match target [3, 6] (expected target [3, 7])")
    -- torch 1.13: "expected scalar type Long but found Int"
    assert.has_error(function() core.cross_entropy(E{3, 5}, E({3}, "int32")) end,
      "cross_entropy: target must be int64 class indices or float probabilities, got int32")
    assert.has_error(function() core.cross_entropy(E{3, 5}, E{3, 4}) end,
      "cross_entropy: probability target [3, 4] does not match input [3, 5]")
    -- torch: "label_smoothing must be between 0.0 and 1.0. Got: 1.5"
    assert.has_error(function() core.cross_entropy(E{3, 5}, L{3}, {label_smoothing = 1.5}) end,
      "cross_entropy: label_smoothing must be between 0 and 1, got 1.5")
    -- torch: "bogus is not a valid value for reduction"
    assert.has_error(function() core.cross_entropy(E{3, 5}, L{3}, {reduction = "bogus"}) end,
      "cross_entropy: reduction 'bogus' is not one of mean, sum, none")
    -- torch: "weight tensor should be defined either for all 5 classes or no classes ..."
    assert.has_error(function() core.cross_entropy(E{3, 5}, L{3}, {weight = E{4}}) end,
      "cross_entropy: weight [4] does not match the 5 classes of input [3, 5]")
    -- torch: "log_softmax_lastdim_kernel_impl" not implemented for 'Long'
    assert.has_error(function() core.cross_entropy(L{3, 5}, L{3}) end,
      "cross_entropy: expected a floating-point input, got int64")
    assert.has_error(function() core.cross_entropy(E{}, L{}) end,
      "cross_entropy: input [] needs a class dimension")
  end)

  it("counts log_softmax plus the picks", function()
    -- [3,5], class targets, mean: R = 3 rows of C = 5: log_softmax 3·(5·5 - 1) = 72,
    -- picks: 3 (2 adds + 1 negation) + 1 divide = 4: 76
    local t = count(function() core.cross_entropy(E{3, 5}, L{3}) end)
    -- reads 60 B input + 24 B target, writes one float32
    assert.same({1, 0, 76, 84, 4}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    -- none: 72 + 3 negations = 75
    assert.equal(75, count(function()
      core.cross_entropy(E{3, 5}, L{3}, {reduction = "none"})
    end).flops)
    -- class weights, mean: 76 + 3 multiplies + 2 adds of the weights = 81
    assert.equal(81, count(function() core.cross_entropy(E{3, 5}, L{3}, {weight = E{5}}) end).flops)
    -- probabilities [3,5], mean: 72 + 2·15 + (3 - 1) adds + 1 divide = 105
    assert.equal(105, count(function() core.cross_entropy(E{3, 5}, E{3, 5}) end).flops)
    -- [3,5,7] none: R = 21 rows: 21·24 + 21 = 525
    assert.equal(525, count(function()
      core.cross_entropy(E{3, 5, 7}, L{3, 7}, {reduction = "none"})
    end).flops)
    -- DeepSpeed does not patch losses
    assert.equal(0, count(function() core.cross_entropy(E{3, 5}, L{3}) end, "deepspeed").flops)
  end)
end)

describe("nll_loss", function()
  it("takes class indices only", function()
    assert.same({3, 7}, core.nll_loss(E{3, 5, 7}, E({3, 7}, "int64"), {reduction = "none"}).shape)
    -- torch: "0D or 1D target tensor expected, multi-target not supported"
    assert.has_error(function() core.nll_loss(E{3, 5}, E{3, 5}) end,
      "nll_loss: target must hold class indices (int64), got float32")
    -- [3,5] mean: 3 picks (2 adds + negation) + 1 divide = 4
    assert.equal(4, count(function() core.nll_loss(E{3, 5}, E({3}, "int64")) end).flops)
  end)
end)

describe("mse_loss", function()
  it("broadcasts input and target", function()
    assert.same({}, core.mse_loss(E{3, 5}, E{3, 5}).shape)
    -- torch (with a warning): mse_loss(empty(3,5), empty(5), reduction='none').shape == [3, 5]
    assert.same({3, 5}, core.mse_loss(E{3, 5}, E{5}, {reduction = "none"}).shape)
    -- torch: "The size of tensor a (5) must match the size of tensor b (4) ..."
    assert.has_error(function() core.mse_loss(E{3, 5}, E{4}) end,
      "mse_loss: shapes [3, 5] and [4] cannot be broadcast together")
    assert.has_error(function() core.mse_loss(E{3, 5}, E({3, 5}, "float64")) end,
      "mse_loss: expected all tensors of the same dtype, got float32 and float64")
  end)

  it("counts subtract, square and the reduction", function()
    -- n = 15: mean 3n = 45, sum 3n - 1 = 44, none 2n = 30
    assert.equal(45, count(function() core.mse_loss(E{3, 5}, E{3, 5}) end).flops)
    assert.equal(44, count(function()
      core.mse_loss(E{3, 5}, E{3, 5}, {reduction = "sum"})
    end).flops)
    local t = count(function() core.mse_loss(E{3, 5}, E{3, 5}, {reduction = "none"}) end)
    assert.same({30, 120, 60}, {t.flops, t.bytes_read, t.bytes_written})
  end)
end)
