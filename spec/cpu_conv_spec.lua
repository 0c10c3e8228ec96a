-- cpu_conv_spec.lua — cpu values and gradients of conv and conv_transpose against PyTorch 1.13
-- (spec/fixtures/ops/conv.lua) and finite differences, and the counts of their backward work.
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local F = require "prof.nn.functional"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"

local fixture = dofile("spec/fixtures/ops/conv.lua")

local CONV = { F.conv1d, F.conv2d, F.conv3d }
local CONVT = { F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d }

local OPS = {
  conv = function(x, a)
    local input = x[1]
    if a.transpose then input = input:transpose(a.transpose[1], a.transpose[2]) end
    return CONV[a.nsp](input, x[2], x[3], a.opts)
  end,
  conv_transpose = function(x, a) return CONVT[a.nsp](x[1], x[2], x[3], a.opts) end,
}

describe("cpu convolutions against PyTorch 1.13", function()
  for _, t in ipairs(cases.tests(fixture, OPS)) do it(t[1], t[2]) end
end)

describe("convolution gradients against finite differences", function()
  local checks = {
    { "conv2d stride 2 padding 1", function(x, w, b) return F.conv2d(x, w, b, { stride = 2, padding = 1 }) end,
      { { 1, 2, 5, 5 }, { 3, 2, 3, 3 }, { 3 } } },
    { "conv2d groups dilation", function(x, w) return F.conv2d(x, w, nil, { groups = 2, dilation = 2 }) end,
      { { 1, 4, 6, 5 }, { 2, 2, 2, 2 } } },
    { "conv2d same even kernel", function(x, w) return F.conv2d(x, w, nil, { padding = "same" }) end,
      { { 1, 2, 4, 5 }, { 2, 2, 2, 4 } } },
    { "conv1d unbatched", function(x, w, b) return F.conv1d(x, w, b, { stride = 2 }) end,
      { { 2, 7 }, { 3, 2, 3 }, { 3 } } },
    { "conv3d", function(x, w) return F.conv3d(x, w, nil, { padding = 1, stride = 2 }) end,
      { { 1, 2, 3, 4, 3 }, { 2, 2, 2, 2, 2 } } },
    { "conv_transpose2d stride 2 output_padding", function(x, w, b)
        return F.conv_transpose2d(x, w, b, { stride = 2, padding = 1, output_padding = 1 })
      end, { { 1, 4, 3, 3 }, { 4, 3, 3, 3 }, { 3 } } },
    { "conv_transpose1d groups dilation", function(x, w)
        return F.conv_transpose1d(x, w, nil, { groups = 2, dilation = 2, stride = 2 })
      end, { { 2, 4, 4 }, { 4, 1, 3 } } },
  }
  for _, c in ipairs(checks) do
    it(c[1], function() assert.is_true(gc.check_shapes(c[2], c[3])) end)
  end
end)

-- Forward and backward totals of one module call with an explicit output gradient.
local function counts(m, x, gshape, device)
  local p = prof.FlopsProfiler(m)
  p.conventions = "exact"
  p:start_profile()
  local ok, err = pcall(function()
    m(x):backward(T.empty(gshape, { device = device }))
  end)
  local f, b = p.S:totals("forward"), p.S:totals("backward")
  p:stop_profile()
  p:end_profile()
  if not ok then error(err, 0) end
  return f, b
end

describe("convolution backward work", function()
  for _, device in ipairs { "meta", "cpu" } do
    it("counts the two GEMMs and the bias sum of conv2d on " .. device, function()
      local m = nn.Conv2d(4, 6, 3, { stride = 2, padding = 1, device = device })
      local x = T.empty({ 2, 4, 7, 7 }, { device = device })
      x.requires_grad = true
      local f, b = counts(m, x, { 2, 6, 4, 4 }, device)
      -- out [2, 6, 4, 4]: forward N·Cout·out·C·K = 2·6·16·4·9 = 6912 MACs, + 192 bias adds
      assert.equal(6912, f.macs)
      assert.equal(2 * 6912 + 192, f.flops)
      -- backward: input gradient Wᵀ·g (C·K × Cout) × (Cout × out) per sample = 6912 MACs,
      -- weight gradient g·colsᵀ (Cout × N·out) × (N·out × C·K) = 6·32·36 = 6912 MACs,
      -- bias gradient: 192 - 6 adds
      assert.equal(2 * 6912, b.macs)
      assert.equal(4 * 6912 + 186, b.flops)
    end)
  end

  it("counts grouped conv_transpose3d's input and weight gradients", function()
    local m = nn.ConvTranspose3d(4, 6, 2, { stride = 2, groups = 2, bias = false, device = "cpu" })
    local x = T.empty({ 1, 4, 2, 3, 2 }, { device = "cpu" })
    x.requires_grad = true
    local f, b = counts(m, x, { 1, 6, 4, 6, 4 }, "cpu")
    -- forward: every input position scatters into Cout/groups channels over K taps:
    -- N·C·in·(Cout/g)·K = 1·4·12·3·8 = 1152 MACs
    assert.equal(1152, f.macs)
    -- backward: the input gradient is a conv of the same size (1152 MACs) and the weight
    -- gradient a BMM over 2 groups of (C/g × N·in) × (N·in × Cout/g·K) = 2·2·12·24 = 1152 MACs
    assert.equal(2304, b.macs)
    assert.equal(4608, b.flops)
  end)

  it("keeps no input values when only the weight needs a gradient", function()
    local w = gc.leaf({ 2, 1, 3 }, 5)
    local x = gc.tensor(gc.values(10, 6), { 1, 1, 10 })
    local y = F.conv1d(x, w)
    T.sum(y):backward()
    assert.is_nil(x.grad)
    -- dL/dw[o, 0, k] = Σ_t x[t + k] for a sum loss
    local xs = gc.values(10, 6)
    for k = 1, 3 do
      local s = 0
      for t = 1, 8 do s = s + xs[t + k - 1] end
      assert.is_true(math.abs(w.grad:tolist()[1][1][k] - s) < 1e-5)
    end
  end)
end)
