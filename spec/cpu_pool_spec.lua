-- cpu_pool_spec.lua — cpu values and gradients of the pools and interpolate against PyTorch 1.13
-- (spec/fixtures/ops/conv.lua) and finite differences, and the counts of their backward work.
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local F = require "prof.nn.functional"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"

local fixture = dofile("spec/fixtures/ops/conv.lua")

local OPS = {
  pool = function(x, a) return F[a.kind .. "_pool" .. a.nsp .. "d"](x[1], a.size, a.opts) end,
  interpolate = function(x, a) return F.interpolate(x[1], a.opts) end,
}

describe("cpu pools and interpolate against PyTorch 1.13", function()
  for _, t in ipairs(cases.tests(fixture, OPS)) do it(t[1], t[2]) end
end)

describe("pool and interpolate gradients against finite differences", function()
  -- distinct values keep every window's maximum away from ties within ±eps
  local function spread(shape)
    local n = 1
    for _, d in ipairs(shape) do n = n * d end
    local v = {}
    for i = 1, n do v[i] = ((i * 37) % n) / n end
    local t = gc.tensor(v, shape)
    t.requires_grad = true
    return t
  end
  local checks = {
    { "max_pool2d dilation ceil_mode", function(x)
        return F.max_pool2d(x, 3, { stride = 2, padding = 1, dilation = 2, ceil_mode = true })
      end, { 1, 2, 7, 6 }, true },
    { "max_pool3d", function(x) return F.max_pool3d(x, 2, { padding = 1 }) end, { 1, 1, 3, 4, 3 }, true },
    { "adaptive_max_pool1d", function(x) return F.adaptive_max_pool1d(x, 3) end, { 2, 1, 8 }, true },
    { "avg_pool2d exclude pad", function(x)
        return F.avg_pool2d(x, 3, { stride = 2, padding = 1, count_include_pad = false, ceil_mode = true })
      end, { 1, 2, 6, 5 } },
    { "avg_pool2d divisor_override", function(x)
        return F.avg_pool2d(x, { 3, 2 }, { stride = 2, padding = 1, ceil_mode = true, divisor_override = 7 })
      end, { 1, 2, 6, 5 } },
    { "avg_pool1d unbatched", function(x) return F.avg_pool1d(x, 3, { stride = 2, padding = 1 }) end, { 2, 7 } },
    { "adaptive_avg_pool3d", function(x) return F.adaptive_avg_pool3d(x, { 2, 3, 2 }) end, { 1, 1, 3, 4, 5 } },
    { "nearest", function(x) return F.interpolate(x, { scale_factor = 1.6 }) end, { 1, 2, 5 } },
    { "bilinear", function(x) return F.interpolate(x, { size = { 5, 3 }, mode = "bilinear" }) end, { 1, 1, 3, 4 } },
    { "trilinear align_corners", function(x)
        return F.interpolate(x, { scale_factor = 1.5, mode = "trilinear", align_corners = true })
      end, { 1, 1, 2, 3, 2 } },
    { "bicubic", function(x) return F.interpolate(x, { size = { 5, 6 }, mode = "bicubic" }) end, { 1, 1, 3, 4 } },
    { "area", function(x) return F.interpolate(x, { size = { 2, 3 }, mode = "area" }) end, { 1, 2, 5, 4 } },
  }
  for _, c in ipairs(checks) do
    it(c[1], function()
      local x = c[4] and spread(c[3]) or gc.leaf(c[3], 3)
      local ok, msg = gc.check(c[2], { x }, c[4] and { eps = 1e-3 } or nil)
      assert.is_true(ok, msg)
    end)
  end
end)

describe("pooling", function()
  it("sends a tied window's gradient to its first maximum, as PyTorch does", function()
    local x = gc.tensor({ 1, 3, 3, 0, 2, 2, 2, 2 }, { 1, 1, 8 })
    x.requires_grad = true
    local y = F.max_pool1d(x, 4)
    assert.same({ { { 3, 2 } } }, y:tolist())
    T.sum(y):backward()
    assert.same({ { { 0, 1, 0, 0, 1, 0, 0, 0 } } }, x.grad:tolist())
  end)

  it("pads max pools with -inf and average pools with zeros (count_include_pad)", function()
    local x = gc.tensor({ -1, -2, -3 }, { 1, 1, 3 })
    -- windows [pad, -1], [-2, -3]: max -1 and -2; averages (0 + -1) / 2 and (-2 + -3) / 2
    assert.same({ { { -1, -2 } } }, F.max_pool1d(x, 2, { stride = 2, padding = 1 }):tolist())
    assert.same({ { { -0.5, -2.5 } } }, F.avg_pool1d(x, 2, { stride = 2, padding = 1 }):tolist())
    assert.same({ { { -1, -2.5 } } },
      F.avg_pool1d(x, 2, { stride = 2, padding = 1, count_include_pad = false }):tolist())
  end)

  it("divides every window by divisor_override, padded or clipped, as PyTorch does", function()
    local x = gc.tensor({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, { 1, 1, 3, 3 })
    -- k 2, s 2, p 1: windows {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}, each sum over 4 whatever it holds
    -- (torch: F.avg_pool2d(x, 2, 2, 1, divisor_override=4) -> [[0.25, 1.25], [2.75, 7.0]])
    assert.same({ { { { 0.25, 1.25 }, { 2.75, 7 } } } },
      F.avg_pool2d(x, 2, { stride = 2, padding = 1, divisor_override = 4 }):tolist())
    assert.same({ { { { 0.25, 1.25 }, { 2.75, 7 } } } },
      F.avg_pool2d(x, 2, { stride = 2, padding = 1, divisor_override = 4,
                           count_include_pad = false }):tolist())
    x.requires_grad = true
    T.sum(F.avg_pool2d(x, 2, { stride = 2, padding = 1, divisor_override = -2 })):backward()
    assert.same({ { { { -0.5, -0.5, -0.5 }, { -0.5, -0.5, -0.5 }, { -0.5, -0.5, -0.5 } } } },
                x.grad:tolist())
  end)

  it("refuses divisor_override 0 and on avg_pool1d, as PyTorch does", function()
    local x = gc.tensor({ 1, 2, 3, 4 }, { 1, 1, 2, 2 })
    -- torch: RuntimeError: divisor must be not zero
    assert.error_matches(function() F.avg_pool2d(x, 2, { divisor_override = 0 }) end,
                         "divisor must be not zero", 1, true)
    -- torch: avg_pool1d() got an unexpected keyword argument 'divisor_override'
    assert.error_matches(function() F.avg_pool1d(x:flatten(1), 2, { divisor_override = 2 }) end,
                         "unexpected option 'divisor_override'", 1, true)
    assert.error_matches(function() nn.AvgPool1d(2, { divisor_override = 2 }) end,
                         "unexpected keyword argument 'divisor_override'", 1, true)
  end)

  it("nn.AvgPool2d and 3d take divisor_override and leave it out of the repr", function()
    local m = nn.AvgPool2d(2, { divisor_override = 3 })
    -- torch 1.13: AvgPool2d(kernel_size=2, stride=2, padding=0)
    assert.equal("AvgPool2d(kernel_size=2, stride=2, padding=0)", tostring(m))
    assert.equal(3, m.divisor_override)
    local x = gc.tensor({ 1, 2, 3, 6 }, { 1, 1, 2, 2 })
    assert.same({ { { { 4 } } } }, m(x):tolist())
    local m3 = nn.AvgPool3d(2, 1, 0, false, true, 2)
    assert.equal("AvgPool3d(kernel_size=2, stride=1, padding=0)", tostring(m3))
    assert.same({ { { { { 18 } } } } }, m3(gc.tensor({ 1, 2, 3, 4, 5, 6, 7, 8 }, { 1, 1, 2, 2, 2 })):tolist())
  end)

  it("uses adaptive windows [floor(i·in/out), ceil((i+1)·in/out))", function()
    -- in 5, out 3: windows [0, 2), [1, 4), [3, 5)
    local x = gc.tensor({ 1, 2, 3, 4, 5 }, { 1, 1, 5 })
    assert.same({ { { 1.5, 3, 4.5 } } }, F.adaptive_avg_pool1d(x, 3):tolist())
    assert.same({ { { 2, 4, 5 } } }, F.adaptive_max_pool1d(x, 3):tolist())
  end)
end)

describe("pool backward work", function()
  local function backward_counts(m, x, gshape)
    local p = prof.FlopsProfiler(m)
    p.conventions = "exact"
    p:start_profile()
    local ok, err = pcall(function() m(x):backward(T.empty(gshape, { device = x.device })) end)
    local f, b = p.S:totals("forward"), p.S:totals("backward")
    p:stop_profile()
    p:end_profile()
    if not ok then error(err, 0) end
    return f, b
  end

  for _, device in ipairs { "meta", "cpu" } do
    it("moves max pool gradients without arithmetic and re-adds avg pool windows on " .. device, function()
      local function leaf()
        local x = T.empty({ 2, 3, 8, 8 }, { device = device })
        x.requires_grad = true   -- a fresh leaf: a second backward into x.grad would add an add
        return x
      end
      local _, b = backward_counts(nn.MaxPool2d(2), leaf(), { 2, 3, 4, 4 })
      -- a copy: reads g (96 floats) and the int64 argmax (96), writes gx (384 floats)
      assert.equal(0, b.flops)
      assert.equal(96 * 4 + 96 * 8, b.bytes_read)
      assert.equal(384 * 4, b.bytes_written)
      local f2, b2 = backward_counts(nn.AvgPool2d(2), leaf(), { 2, 3, 4, 4 })
      -- forward: 96 outputs of 4 taps = 384; the backward adds each tap back
      assert.equal(384, f2.flops)
      assert.equal(384, b2.flops)
    end)
  end

  it("re-adds interpolate's weighted taps", function()
    local Up = nn.Module:extend("Up")
    function Up:forward(x) return F.interpolate(x, { scale_factor = 2, mode = "bilinear" }) end
    local x = T.empty({ 1, 2, 3, 4 }, { device = "cpu" })
    x.requires_grad = true
    local f, b = backward_counts(Up(), x, { 1, 2, 6, 8 })
    -- 96 outputs, 3 lerps of 3 flops each; the backward spreads each output over its taps
    assert.equal(96 * 9, f.flops)
    assert.equal(96 * 9, b.flops)
    assert.equal(96 * 4, b.bytes_read)
    assert.equal(24 * 4, b.bytes_written)
  end)
end)
