-- spec/roofline_spec.lua: roofline verdicts derived by hand from stated peaks, and the roofline report's exact text.
local build = dofile("spec/fixtures/reports/build.lua")
local roofline = require "prof.roofline"
local render = dofile("scripts/reports/roofline.lua")

-- Peaks chosen for round numbers: 100 GFLOP/s and 10 GB/s, so the ridge point is 1e11 / 1e10 = 10 FLOP/B.
local PEAKS = { flops = 1e11, bytes_per_s = 1e10, machine = "Test CPU (2 threads)",
  measured_at = "2025-01-01T00:00:00Z" }

-- A 1024x1024 · 1024x1024 float32 matmul: 2·1024³ = 2147483648 FLOPs; it reads A and B and writes C,
-- 3 · 4 MiB = 12582912 B, so I = 2147483648 / 12582912 = 170.67 FLOP/B (> 10). Timed at 80 GFLOP/s:
-- t = 2147483648 / 8e10 = 0.0268435456 s.
local GEMM = { name = "gemm", type = "Linear", flops = 2147483648, bytes = 12582912, lat = 0.0268435456 }
-- y = s·x + b over 2^24 float32: 2 FLOPs per element (mul, add) for 4 B read + 4 B written, so
-- I = 33554432 / 134217728 = 0.25 FLOP/B. At the full 10 GB/s: t = 134217728 / 1e10 = 0.0134217728 s.
local AFFINE = { name = "affine", type = "Affine", flops = 33554432, bytes = 134217728, lat = 0.0134217728 }
-- 1e5 FLOPs and 1000 B: 1 µs of compute (1e5 / 1e11) and 0.1 µs of traffic, but it took 1 ms.
local TINY = { name = "tiny", type = "Tiny", flops = 100000, bytes = 1000, lat = 0.001 }

local function one(node)
  return build.profile({ type = "Net", flops = node.flops, bytes = node.bytes, lat = node.lat,
    children = { node } }).modules[2]
end

describe("prof.roofline", function()
  it("puts the ridge point where the roofs meet: peak FLOP/s over peak B/s", function()
    assert.are.equal(10, roofline.ridge(PEAKS))
    assert.are.equal(2.5e9, roofline.attainable_flops(0.25, PEAKS))   -- 0.25 · 1e10, under the roof
    assert.are.equal(1e11, roofline.attainable_flops(170, PEAKS))     -- capped by peak compute
    assert.are.equal(1e11, roofline.attainable_flops(nil, PEAKS))     -- no bytes: compute roof
  end)

  it("calls a big GEMM at 80 GFLOP/s compute-bound", function()
    local r = roofline.classify(one(GEMM), PEAKS)
    assert.is_near(2147483648 / 12582912, r.intensity, 1e-12)
    assert.is_near(8e10, r.achieved_flops, 1)
    assert.is_near(0.8, r.flops_share, 1e-12)
    -- 12582912 B / 0.0268435456 s = 468.75 MB/s, 4.6875 % of the bandwidth
    assert.is_near(468750000, r.achieved_bytes_per_s, 1e-3)
    assert.is_near(0.046875, r.bytes_share, 1e-12)
    -- roofline time = max(0.02147483648 s compute, 0.0012582912 s memory); 0.0214.. / 0.0268.. = 0.8
    assert.is_near(0.8, r.roof_share, 1e-12)
    assert.are.equal("compute", r.bound)
    assert.is_false(r.bound_expected)
  end)

  it("calls an elementwise op of 0.25 FLOP/B at full bandwidth memory-bound", function()
    local r = roofline.classify(one(AFFINE), PEAKS)
    assert.are.equal(0.25, r.intensity)
    assert.is_near(1e10, r.achieved_bytes_per_s, 1e-3)
    assert.is_near(1, r.bytes_share, 1e-12)
    -- 33554432 / 0.0134217728 = 2.5e9 FLOP/s: 2.5 % of peak, yet 100 % of its roof (0.25 · 1e10)
    assert.is_near(0.025, r.flops_share, 1e-12)
    assert.is_near(1, r.roof_share, 1e-12)
    assert.are.equal("memory", r.bound)
  end)

  it("calls 1 µs of work that took 1 ms overhead-bound, though its intensity is above the ridge", function()
    local r = roofline.classify(one(TINY), PEAKS)
    assert.are.equal(100, r.intensity)                     -- 1e5 / 1000 > 10
    -- roofline time max(1e-6, 1e-7) = 1e-6 s over 1e-3 s = 0.1 % of the roof, under 10 %
    assert.is_near(0.001, r.roof_share, 1e-12)
    assert.are.equal("overhead", r.bound)
  end)

  it("draws the overhead line at 10 % of the roof", function()
    -- a pure copy of 1e8 B: 0.01 s at 10 GB/s
    local at = function(t) return roofline.classify({ flops = 0, bytes = 1e8, fwd_latency_s = t }, PEAKS) end
    assert.is_near(0.08, at(0.125).roof_share, 1e-12)
    assert.are.equal("overhead", at(0.125).bound)          -- 8 % of the roof
    assert.is_near(0.16, at(0.0625).roof_share, 1e-12)
    assert.are.equal("memory", at(0.0625).bound)           -- 16 % of the roof; intensity 0 is memory's side
    assert.are.equal(0.10, roofline.OVERHEAD_SHARE)
  end)

  it("calls an intensity exactly at the ridge memory-bound (compute needs to be above it)", function()
    local r = roofline.classify({ flops = 1e9, bytes = 1e8, fwd_latency_s = 0.01 }, PEAKS)
    assert.are.equal(10, r.intensity)
    assert.are.equal("memory", r.bound)
  end)

  it("gives meta modules the bound their intensity predicts and no achieved values", function()
    local p = build.meta(build.profile({ type = "Net", flops = 2181038080, bytes = 146800640,
      children = { GEMM, AFFINE } }))
    local g, a = roofline.classify(p.modules[2], PEAKS), roofline.classify(p.modules[3], PEAKS)
    assert.are.equal("compute", g.bound)                   -- 170.67 > 10
    assert.are.equal("memory", a.bound)                    -- 0.25 <= 10
    assert.is_true(g.bound_expected)
    assert.is_true(a.bound_expected)
    for _, r in ipairs({ g, a }) do
      assert.is_nil(r.achieved_flops)
      assert.is_nil(r.achieved_bytes_per_s)
      assert.is_nil(r.flops_share)
      assert.is_nil(r.bytes_share)
      assert.is_nil(r.roof_share)
    end
  end)

  it("divides safely: no bytes, no latency, no work, unknown bytes", function()
    -- 0 bytes, 1e9 FLOPs in 0.02 s: infinite intensity (nil), compute roof 0.01 s = 50 % -> compute
    local r = roofline.classify({ flops = 1e9, bytes = 0, fwd_latency_s = 0.02 }, PEAKS)
    assert.is_nil(r.intensity)
    assert.are.equal(0, r.achieved_bytes_per_s)
    assert.is_near(0.5, r.roof_share, 1e-12)
    assert.are.equal("compute", r.bound)
    -- 0 s is "not timed": expected bound, nothing achieved
    r = roofline.classify({ flops = 1e9, bytes = 1e9, fwd_latency_s = 0 }, PEAKS)
    assert.is_nil(r.achieved_flops)
    assert.are.equal("memory", r.bound)                    -- 1 FLOP/B
    assert.is_true(r.bound_expected)
    -- no work at all: timed, all of its time is overhead; untimed, nothing to judge
    assert.are.equal("overhead", roofline.classify({ flops = 0, bytes = 0, fwd_latency_s = 1e-4 }, PEAKS).bound)
    r = roofline.classify({ flops = 0, bytes = 0 }, PEAKS)
    assert.is_nil(r.bound)
    assert.is_false(r.bound_expected)
    -- bytes unknown: the FLOP rate is known, the bound is not
    r = roofline.classify({ flops = 1e9, fwd_latency_s = 0.02 }, PEAKS)
    assert.are.equal(5e10, r.achieved_flops)
    assert.is_nil(r.intensity)
    assert.is_nil(r.roof_share)
    assert.is_nil(r.bound)
  end)

  it("rejects peaks that would divide by zero", function()
    assert.has_error(function() roofline.ridge({ flops = 1e11, bytes_per_s = 0 }) end,
      "roofline: peaks must be {flops = FLOP/s > 0, bytes_per_s = B/s > 0}")
    assert.has_error(function() roofline.annotate({ modules = {} }, { flops = 0 / 0, bytes_per_s = 1 }) end)
  end)

  it("annotate mutates and returns the profile, for the profile and every module", function()
    local p = build.profile({ type = "Net", flops = 2181138080, bytes = 146801640, lat = 0.05,
      children = { GEMM, AFFINE, TINY } })
    assert.are.equal(p, roofline.annotate(p, PEAKS))
    assert.are.equal(1e11, p.peak_flops)
    assert.are.equal(1e10, p.peak_bytes_per_s)
    assert.are.equal(10, p.ridge_intensity)
    assert.are.equal("Test CPU (2 threads)", p.peaks_machine)
    local bounds = {}
    for i, m in ipairs(p.modules) do bounds[i] = m.bound end
    -- root: I = 2181138080 / 146801640 = 14.86 > 10; roof time 0.02181 s of 0.05 s = 43.6 % -> compute
    assert.are.same({ "compute", "compute", "memory", "overhead" }, bounds)
    assert.is_near(0.436227616, p.modules[1].roof_share, 1e-12)
    -- again on meta peaks-free fields: re-annotating clears what no longer holds
    build.meta(p)
    roofline.annotate(p, PEAKS)
    assert.is_nil(p.modules[2].achieved_flops)
    assert.is_true(p.modules[2].bound_expected)
    assert.are.equal("compute", p.modules[4].bound)        -- tiny: overhead needs a latency; I = 100
  end)
end)

describe("scripts/reports/roofline.lua", function()
  local function net()
    return build.profile({ type = "Net", flops = 2181138080, bytes = 146801640, lat = 0.05,
      children = { GEMM, AFFINE, TINY } })
  end

  it("prints the peaks, the ridge point and one row per module", function()
    local p = net()
    local text = render(p, { peaks = PEAKS })
    assert.are.equal([[
Roofline of Net on Test CPU (2 threads)
peak 100 GFLOPS · bandwidth 10 GB/s (read + written) · ridge point 10 FLOP/B · measured 2025-01-01T00:00:00Z
bound: compute above the ridge point, memory at or below it, overhead under 10% of the roof

module    type      FLOPs      bytes  FLOP/B  achieved FLOPS  achieved B/s  % peak FLOPS  % peak B/s  % roof  bound
(model)   Net      2.18 G   146.8 MB   14.86    43.62 GFLOPS     2.94 GB/s        43.62%      29.36%  43.62%  compute
  gemm    Linear   2.15 G   12.58 MB  170.67       80 GFLOPS   468.75 MB/s           80%       4.69%     80%  compute
  affine  Affine  33.55 M  134.22 MB    0.25      2.5 GFLOPS       10 GB/s          2.5%        100%    100%  memory
  tiny    Tiny      100 K       1 KB     100      100 MFLOPS        1 MB/s          0.1%       0.01%    0.1%  overhead
]], text)
    assert.is_nil(p.modules[1].bound)                      -- the report leaves the profile alone
  end)

  it("marks bounds expected from intensity alone and says n/a for what was not timed", function()
    local text = render(build.meta(net()), { peaks = PEAKS })
    assert.matches("\n  gemm    Linear   2.15 G   12.58 MB  170.67             n/a           n/a           n/a"
      .. "         n/a     n/a  compute*\n", text, 1, true)
    assert.matches("\n  tiny    Tiny      100 K       1 KB     100             n/a           n/a           n/a"
      .. "         n/a     n/a  compute*\n", text, 1, true)
    assert.matches("\n* expected from intensity alone: nothing was timed\n$", text)
  end)

  it("takes the peaks from an annotated profile", function()
    local p = roofline.annotate(net(), PEAKS)
    assert.matches("ridge point 10 FLOP/B\n", render(p, {}), 1, true)
  end)
end)
