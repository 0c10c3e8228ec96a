-- cpu_loss_spec.lua — cpu values and gradients of cross_entropy, nll_loss and mse_loss, against
-- PyTorch 1.13 (spec/fixtures/ops/nn.lua) and finite differences.
local T = require "prof.tensor"
local F = require "prof.nn.functional"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"

local fixture = dofile("spec/fixtures/ops/nn.lua")

local function opts(a, w)
  return { reduction = a.reduction, ignore_index = a.ignore_index,
           label_smoothing = a.label_smoothing, weight = w }
end

local OPS = {
  cross_entropy = function(x, a) return F.cross_entropy(x[1], x[2], opts(a)) end,
  cross_entropy_w = function(x, a) return F.cross_entropy(x[1], x[2], opts(a, x[3])) end,
  nll_loss = function(x, a) return F.nll_loss(x[1], x[2], opts(a)) end,
  nll_loss_w = function(x, a) return F.nll_loss(x[1], x[2], opts(a, x[3])) end,
  mse_loss = function(x, a) return F.mse_loss(x[1], x[2], { reduction = a.reduction }) end,
}

-- The one spatial case is recorded on a transposed input: [2, 3, 4] -> [2, 4, 3] (classes 4).
local function runner(c)
  if c.op == "cross_entropy" and #c.inputs[1].shape == 3 then
    return function(x, a) return F.cross_entropy(x[1]:transpose(1, 2), x[2], opts(a)) end
  end
  return OPS[c.op]
end

describe("losses against PyTorch 1.13", function()
  local function label(c) return c.name .. " " .. (c.args and (c.args.reduction or "") or "") end
  for _, t in ipairs(cases.tests(fixture, function(c) return OPS[c.op] and runner(c) end, label)) do
    it(t[1], t[2])
  end
end)

describe("loss gradients against finite differences", function()
  local t = T.tensor({ 2, 0, 1 }, { dtype = "int64", device = "cpu" })
  local w = gc.tensor({ 0.5, 2.0, 1.5 }, { 3 })
  local checks = {
    { "cross_entropy", function(x) return F.cross_entropy(x, t) end, { { 3, 3 } } },
    { "cross_entropy weighted, smoothed, ignoring", function(x)
      return F.cross_entropy(x, t, { weight = w, label_smoothing = 0.3, ignore_index = 0 })
    end, { { 3, 3 } } },
    { "cross_entropy probabilities (input and target)", function(x, p)
      return F.cross_entropy(x, p, { reduction = "sum", label_smoothing = 0.1 })
    end, { { 2, 3 }, { 2, 3 } } },
    { "nll_loss", function(x) return F.nll_loss(x, t, { weight = w, reduction = "none" }) end,
      { { 3, 3 } } },
    { "mse_loss broadcast", function(x, y) return F.mse_loss(x, y) end, { { 2, 3 }, { 3 } } },
  }
  for _, c in ipairs(checks) do
    it(c[1], function() assert.is_true(gc.check_shapes(c[2], c[3], 1)) end)
  end
end)

describe("losses on the cpu", function()
  it("divide the mean by the weights of the targets not ignored", function()
    -- logits 0 over 2 classes: every -log p = log 2; targets 0 (weight 1), 1 (weight 3), ignored
    local x = gc.tensor({ 0, 0, 0, 0, 0, 0 }, { 3, 2 })
    local t = T.tensor({ 0, 1, -100 }, { dtype = "int64", device = "cpu" })
    local w = gc.tensor({ 1, 3 }, { 2 })
    local v = F.cross_entropy(x, t, { weight = w }):item()
    assert.is_true(math.abs(v - math.log(2)) < 1e-6)
    v = F.cross_entropy(x, t, { weight = w, reduction = "sum" }):item()
    assert.is_true(math.abs(v - 4 * math.log(2)) < 1e-6)
  end)

  it("name a target out of bounds", function()
    local x = gc.tensor(gc.values(6, 3), { 2, 3 })
    local t = T.tensor({ 0, 3 }, { dtype = "int64", device = "cpu" })
    assert.has_error(function() F.cross_entropy(x, t) end,
      "cross_entropy: target 3 is out of bounds for 3 classes")
    assert.has_error(function() F.nll_loss(x, t) end,
      "nll_loss: target 3 is out of bounds for 3 classes")
  end)
end)
