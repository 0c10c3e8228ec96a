-- flops_profiler_cuda_spec.lua — where a capture runs, the flops profiler's latencies are GPU time (replayed kernels).
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local module = require "prof.nn.module"
local schedule = require "prof.schedule"
local json = require "dkjson"
local run = require "spec.support.run"

-- A module whose forward launches one replayed kernel of `ns` nanoseconds at the current module
-- (S:capture_replay_launch), then runs a real Linear: the host time of the call is
-- whatever the cpu takes; the GPU time is ns exactly.
local Launch = nn.Module:extend("Launch")
function Launch:init(ns, name)
  self.ns, self.kernel = ns, name
  self.fc = nn.Linear(8, 8)
end
function Launch:forward(x)
  module.hooks.S:capture_replay_launch{ name = self.kernel, duration_ns = self.ns }
  local y = self.fc(x)
  if self.c then y = self.c(y) end   -- a nested Launch runs inside this call
  return y
end

-- Net: a (5 us) > a.fc, b (3 us + its child c's 2 us) ... by hand:
--   a: its own kernel 5000 ns; a.fc launches nothing: no GPU time (n/a, as an untimed module)
--   b: its kernel 3000 ns + c's 2000 ns = 5000 ns inclusive; c: 2000 ns
--   Net: 5000 + 5000 = 10000 ns = 10 us
local Net = nn.Module:extend("Net")
function Net:init()
  self.a = Launch(5000, "gemm_a")
  self.b = Launch(3000, "gemm_b")
  self.b.c = Launch(2000, "gemm_c")
end
function Net:forward(x)
  return self.b(self.a(x))
end

describe("the flops profiler's latency from GPU time", function()
  local real_warn
  before_each(function()
    real_warn = schedule.warn
    schedule.warn = function(msg) error("unexpected warning: " .. msg) end
    T.set_default_device("cpu")
  end)
  after_each(function() schedule.warn = real_warn end)

  it("gives each module the device time of the kernels attributed to it, children included", function()
    local model = Net()
    local p = prof.FlopsProfiler(model)
    p.capture = "replay"
    p:start_profile()
    model(T.randn({ 4, 8 }))
    p:stop_profile()
    local by = {}
    for _, m in ipairs(p:profile().modules) do by[m.path] = m end
    assert.equal(10000e-9, by[""].fwd_latency_s)
    assert.equal(5000e-9, by.a.fwd_latency_s)
    assert.is_nil(by["a.fc"].fwd_latency_s)
    assert.equal(5000e-9, by.b.fwd_latency_s)
    assert.equal(2000e-9, by["b.c"].fwd_latency_s)
    assert.equal(10000e-9, p:get_total_duration())
    -- exact time: host time around these calls (Lua, a real Linear) is never 5 us to the ns
    -- the counts are the host's as ever: a.fc's Linear(8, 8) on 4 rows, 2·4·8·8 + 4·8 = 544
    assert.equal(544, by.a.flops)
    p:end_profile()
  end)

  it("makes MFU of GPU time: the modules' FLOPs over their device time over the peak", function()
    local model = Net()
    local p = prof.FlopsProfiler(model)
    p.capture = "replay"
    p:start_profile()
    model(T.randn({ 4, 8 }))
    p:stop_profile()
    local dir = run.tmpdir()
    p:print_model_profile{ output_file = dir .. "/p.json", peaks = { flops = 1e12, bytes_per_s = 1e11 } }
    local d = json.decode(assert(run.read(dir .. "/p.json")))
    run.rmdir_all(dir)
    p:end_profile()
    -- three Linear(8, 8) of 544 FLOPs: 1632 in 10 us = 1.632e8 FLOP/s, 1.632e-4 of 1e12;
    -- a: 544 in 5 us = 1.088e-4; b: 1088 (its own Linear and c's) in 5 us = 2.176e-4
    assert.near(1.632e-4, d.mfu, 1e-16)
    assert.near(1.632e-4, d.modules[1].mfu, 1e-16)
    local by = {}
    for _, m in ipairs(d.modules) do by[m.name] = m end
    assert.near(1.088e-4, by.a.mfu, 1e-16)
    assert.near(2.176e-4, by.b.mfu, 1e-16)
    assert.is_nil(by["a.fc"].mfu)   -- no GPU time of its own: no rate, no MFU
  end)
  it("where CUPTI cannot run, warns with the capture's reason and reports no latency (never host time)", function()
    local capture = require "prof.profiler.capture"
    local available, why = capture.available()
    local warned = {}
    schedule.warn = function(msg) warned[#warned + 1] = msg end
    local model = nn.Sequential(nn.Linear(8, 8))
    local p = prof.FlopsProfiler(model)
    p.capture = "cupti"   -- what a model on cuda asks for
    p:start_profile()
    model(T.randn({ 4, 8 }))
    p:stop_profile()
    local root = p:profile().modules[1]
    if available then
      assert.same({}, warned)
    else
      assert.same({ "flops profiler: no GPU time on cuda: " .. why .. "; module latencies are n/a" },
        warned)
      assert.is_nil(root.fwd_latency_s)
      assert.is_nil(p:get_total_duration())
      assert.equal("n/a", p:get_total_duration(true))
      assert.equal(544, root.flops)   -- the counts do not need the GPU
    end
    p:end_profile()
  end)
end)
