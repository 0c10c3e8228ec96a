-- mfu_spec.lua — MFU (achieved FLOP/s / the device's peak) per module and per step, in the JSON and DeepSpeed reports.
local json = require "dkjson"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local roofline = require "prof.roofline"
local run = require "spec.support.run"
local build = dofile("spec/fixtures/reports/build.lua")
local deepspeed = dofile("scripts/reports/deepspeed.lua")

-- an injected peak, so that no number depends on this machine's: 1 TFLOP/s, 100 GB/s
local PEAKS = { flops = 1e12, bytes_per_s = 1e11, machine = "spec GPU" }

local function lines_of(text)
  local out = {}
  for l in text:gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

local function find_line(text, prefix)
  for _, l in ipairs(lines_of(text)) do
    if l:sub(1, #prefix) == prefix then return l end
  end
  return nil
end

describe("prof.roofline's MFU", function()
  it("is a module's achieved FLOP/s over the peak", function()
    -- 3e9 FLOPs in 10 ms = 3e11 FLOP/s; over 1.2e12: 0.25
    local r = roofline.classify({ flops = 3e9, bytes = 1e6, fwd_latency_s = 0.01 },
      { flops = 1.2e12, bytes_per_s = 1e11 })
    assert.near(0.25, r.mfu, 1e-15)
    assert.equal(r.flops_share, r.mfu)
    -- not timed (meta): no MFU
    assert.is_nil(roofline.classify({ flops = 3e9, bytes = 1e6 }, PEAKS).mfu)
  end)

  it("gives the forward's and the engine iteration's, DeepSpeed's iteration FLOPS over the peak", function()
    -- forward only: 2e9 FLOPs in 10 ms = 2e11 FLOP/s = 20 % of 1e12; no iteration
    local fwd_only = build.profile({ type = "Net", flops = 2e9, lat = 0.01 })
    local u = roofline.mfu(fwd_only, PEAKS)
    assert.near(0.2, u.fwd, 1e-15)
    assert.is_nil(u.iter)
    -- the engine: 1e9 fwd FLOPs, recompute 0.5, 2 micro-batches, 35 ms per iteration:
    -- (3 + 0.5) x 1e9 x 2 = 7e9 FLOPs / 0.035 s = 2e11 FLOP/s = 20 %; fwd 1e9 / 4 ms = 25 %
    local engine = build.profile({ type = "Net", flops = 1e9, lat = 0.004 }, { engine = true,
      recompute_fwd_factor = 0.5, gradient_accumulation_steps = 2, iter_latency_s = 0.035 })
    u = roofline.mfu(engine, PEAKS)
    assert.near(0.25, u.fwd, 1e-15)
    assert.near(0.2, u.iter, 1e-15)
    roofline.annotate(engine, PEAKS)
    assert.near(0.2, engine.mfu, 1e-15)     -- the step's: the iteration where there is one
    roofline.annotate(fwd_only, PEAKS)
    assert.near(0.2, fwd_only.mfu, 1e-15)   -- else the forward's
  end)
end)

describe("the DeepSpeed text with MFU", function()
  -- Net: 2e9 FLOPs in 10 ms (200 GFLOPS = 20 % of 1 TFLOPS); fc: 1.5e9 in 5 ms (300 G = 30 %);
  -- act: 0 FLOPs in 1 ms (0 %)
  local function profile()
    return build.profile({ type = "Net", flops = 2e9, lat = 0.01, children = {
      { name = "fc", type = "Linear", flops = 1.5e9, lat = 0.005 },
      { name = "act", type = "ReLU", flops = 0, lat = 0.001 } } })
  end

  it("prints the peak and the forward's MFU in the summary and N% MFU per module", function()
    local p = roofline.annotate(profile(), PEAKS)
    local text = deepspeed(p, {})
    -- DeepSpeed's line_fmt '{:<70}  {:<8}': the label and the value left-justified
    local function ds_line(label, value)
      return label .. string.rep(" ", 70 - #label) .. "  " .. value .. string.rep(" ", 8 - #value)
    end
    assert.equal(ds_line("peak FLOPS per GPU (spec GPU): ", "1 TFLOPS"), find_line(text, "peak FLOPS"))
    assert.equal(ds_line("fwd MFU per GPU = fwd FLOPS per GPU / peak FLOPS: ", "20.00%"),
      find_line(text, "fwd MFU"))
    assert.truthy(text:find("(fc): Linear(0 = 0% Params, 0 MACs = 0% MACs, 5 ms = 50% latency, "
      .. "300 GFLOPS, 30.00% MFU)", 1, true))
    assert.truthy(text:find("(act): ReLU(0 = 0% Params, 0 MACs = 0% MACs, 1 ms = 10% latency, "
      .. "0 FLOPS, 0.00% MFU)", 1, true))
    assert.truthy(text:find("fwd latency, fwd FLOPS, fwd MFU (fwd FLOPS / peak FLOPS)", 1, true))
  end)

  it("prints the iteration's MFU after the iteration FLOPS in the engine's summary", function()
    -- 1e9 fwd FLOPs, 3 x 1e9 / 20 ms = 150 GFLOPS = 15 %
    local p = build.profile({ type = "Net", flops = 1e9, lat = 0.004 }, { engine = true,
      bwd_latency_s = 0.01, step_latency_s = 0.006, iter_latency_s = 0.02 })
    local text = deepspeed(roofline.annotate(p, PEAKS), {})
    local mfu = find_line(text, "MFU per GPU = FLOPS per GPU / peak FLOPS: ")
    assert.truthy(mfu)
    assert.matches("  15%.00%%  $", mfu)
    local l = lines_of(text)
    for i, line in ipairs(l) do
      if line == mfu then assert.matches("^FLOPS per GPU = 3 %* fwd flops per GPU / iter latency: ", l[i - 1]) end
    end
  end)

  it("stays DeepSpeed's text, without a word of MFU, when the profile has no peaks", function()
    assert.is_nil(deepspeed(profile(), {}):find("MFU", 1, true))
  end)
end)

describe("MFU from a real cpu run with an injected peak", function()
  local tmp
  before_each(function()
    tmp = run.tmpdir()
    T.set_default_device("cpu")
  end)
  after_each(function() run.rmdir_all(tmp) end)

  -- Linear(64, 64) with bias on a 32 x 64 batch, exact conventions, by hand:
  -- MACs 32 x 64 x 64 = 131072; FLOPs 2 x 131072 + 32 x 64 (bias adds) = 264192
  local function model() return nn.Sequential(nn.Linear(64, 64)) end

  it("writes mfu = flops / fwd_latency_s / peak per module and for the step in the JSON", function()
    local out = tmp .. "/p.json"
    prof.get_model_profile { model = model(), input_shape = { 32, 64 }, output_file = out,
      peaks = PEAKS, print_profile = true, conventions = "exact" }
    local d = json.decode(assert(run.read(out)))
    assert.equal(1e12, d.peak_flops)
    local fc = d.modules[2]
    assert.equal(264192, fc.flops)
    assert.is_true(fc.fwd_latency_s > 0)
    assert.near(264192 / fc.fwd_latency_s / 1e12, fc.mfu, 1e-12 * fc.mfu)
    local root = d.modules[1]
    assert.near(264192 / root.fwd_latency_s / 1e12, root.mfu, 1e-12 * root.mfu)
    assert.near(d.fwd_flops / d.fwd_latency_s / 1e12, d.fwd_mfu, 1e-12 * d.fwd_mfu)
    assert.equal(d.fwd_mfu, d.mfu)   -- no engine: the step is the forward
    assert.is_nil(d.iter_mfu)
  end)

  it("prints MFU in the DeepSpeed text on cpu when asked (mfu = true)", function()
    local m = model()
    local x = T.randn({ 32, 64 })
    local p = prof.FlopsProfiler(m)
    p:start_profile()
    m(x)
    p:stop_profile()
    local out = tmp .. "/p.txt"
    p:print_model_profile{ mfu = true, peaks = PEAKS, output_file = out, format = "deepspeed" }
    local expect = string.format("%.2f%%", 100 * p:get_total_flops() / p:get_total_duration() / 1e12)
    local text = assert(run.read(out))
    assert.equal(expect, find_line(text, "fwd MFU per GPU"):match("(%S+)%s*$"))
    p:end_profile()
  end)
end)

describe("the device's peaks (prof.device_peaks)", function()
  local peaks = require "prof.roofline.peaks"
  local device_peaks = require "prof.roofline.device_peaks"
  local real_gpu
  before_each(function() real_gpu = peaks.gpu end)
  after_each(function() peaks.gpu = real_gpu end)

  -- the GPU's peaks as the cuda backend's prof.peaks.gpu() gives them (values of an H200-class
  -- device, made up: only the choice among them is under test)
  local function gpu()
    return { by_dtype = { float32 = 60e12, tf32 = 400e12, bfloat16 = 800e12, float16 = 790e12 },
      flops = 60e12, bytes_per_s = 4.0e12, machine = "spec H200" }
  end

  it("on cuda are the GPU's GEMM rate in the model's dtype, and the roofline report judges against them", function()
    peaks.gpu = gpu
    assert.equal(800e12, device_peaks.for_device("cuda", "bfloat16").flops)
    assert.equal(790e12, device_peaks.for_device("cuda", "float16").flops)
    local f32 = device_peaks.for_device("cuda", "float32")
    assert.same({ 60e12, 4.0e12, "spec H200, float32 GEMM" }, { f32.flops, f32.bytes_per_s, f32.machine })
    -- float32 takes the rate the GPU's peaks chose (tf32's under device_options.tf32)
    peaks.gpu = function() local g = gpu() g.flops = g.by_dtype.tf32 return g end
    assert.equal(400e12, device_peaks.for_device("cuda", "float32").flops)
    peaks.gpu = gpu
    local roofline_report = dofile("scripts/reports/roofline.lua")
    local p = build.profile({ type = "Net", flops = 2e9, lat = 0.01 }, { device = "cuda", dtype = "float16" })
    local text = roofline_report(p, {})
    assert.equal("Roofline of Net on spec H200, float16 GEMM", text:match("^[^\n]*"))
    -- its % peak FLOPS column is the MFU: 2e9 / 0.01 s / 790e12 = 0.025 %, printed to 2 decimals
    assert.truthy(text:find("  0.03%  ", 1, true))
  end)

  it("on cuda without the GPU's peaks is nil and a reason, never the cpu's", function()
    peaks.gpu = function() return nil, "no CUDA driver (spec)" end
    assert.same({ nil, "no CUDA driver (spec)" }, { device_peaks.for_device("cuda", "float32") })
    peaks.gpu = nil   -- a build without the cuda backend's peaks
    assert.same({ nil, "the GPU's peaks need a build with the cuda backend" },
      { device_peaks.for_device("cuda", "bfloat16") })
    peaks.gpu = function() local g = gpu() g.by_dtype.float16 = nil return g end
    assert.same({ nil, "the GPU's peaks have no GEMM rate for float16" },
      { device_peaks.for_device("cuda", "float16") })
  end)
end)
