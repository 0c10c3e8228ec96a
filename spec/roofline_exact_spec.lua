-- roofline_exact_spec.lua — the roofline verdict is about the work done, so it
-- uses the exact counts whatever conventions the report prints.
local json = require "dkjson"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"
local roofline_report = dofile("scripts/reports/roofline.lua")

-- Peaks with a ridge point of 0.1 FLOP/B: 1 GFLOP/s over 10 GB/s.
local PEAKS = { flops = 1e9, bytes_per_s = 1e10, machine = "spec" }

local tmp, saved

-- Linear(8, 8) then Tanh on a 4 x 8 batch, on meta (verdicts from intensity alone).
-- Tanh by hand: 32 evaluations (exact: 32 flops; deepspeed: 0), 32 floats read and 32 written =
-- 256 bytes: exact intensity 0.125 FLOP/B, above the 0.1 ridge.
local function profile_json(conventions)
  local out = tmp .. "/" .. conventions .. ".json"
  prof.get_model_profile { model = nn.Sequential(nn.Linear(8, 8), nn.Tanh()), input_shape = { 4, 8 },
    conventions = conventions, output_file = out, print_profile = true }
  return json.decode(assert(run.read(out)))
end

describe("the roofline verdict uses exact counts", function()
  setup(function()
    tmp = run.tmpdir()
    T.set_default_device("meta")
    saved = package.loaded["prof.roofline.peaks"]
    -- peaks stubbed for every entry the profiler reads (meta never measures: for_device asks get)
    package.loaded["prof.roofline.peaks"] = { get = function() return PEAKS end,
                                              for_device = function() return PEAKS end }
  end)
  teardown(function()
    package.loaded["prof.roofline.peaks"] = saved
    run.rmdir_all(tmp)
  end)

  it("under deepspeed conventions Tanh prints 0 FLOPs but is judged on its 32", function()
    local ds = profile_json("deepspeed")
    local tanh = ds.modules[3]
    assert.equal("Tanh", tanh.type)
    assert.same({ 0, 32, 256 }, { tanh.flops, tanh.exact_flops, tanh.bytes })
    assert.near(0.125, tanh.intensity, 1e-15)
    assert.equal("compute", tanh.bound)
    -- the same verdict as exact conventions give, where flops is the exact count itself
    local exact = profile_json("exact")
    assert.same({ 32, "compute" }, { exact.modules[3].flops, exact.modules[3].bound })
    assert.is_nil(exact.modules[3].exact_flops)
  end)

  it("gives no verdict where the exact count was not measured (a FlopsProfiler window)", function()
    local model = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    local p = prof.FlopsProfiler(model)
    p.conventions = "deepspeed"
    p:start_profile()
    model(T.empty({ 4, 8 }))
    p:stop_profile()
    local profile = p:profile()
    p:end_profile()
    local text = roofline_report(profile, { peaks = PEAKS })
    assert.truthy(text:find("\n  1      Tanh  +0  256 B  +n/a .- n/a\n"), text)
    assert.truthy(text:find("so the roofline needs the exact count", 1, true), text)
  end)
end)
