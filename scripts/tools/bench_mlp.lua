-- bench_mlp.lua — the flops profiler's cost per module call on a 200-layer MLP (width 64, batch 8,
-- Linear + ReLU pairs) on the cpu: profiled minus plain forward time over the number of calls.
local core = require "prof.core"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"

T.set_default_device("cpu")
local layers = {}
for _ = 1, 200 do
  layers[#layers + 1] = nn.Linear(64, 64)
  layers[#layers + 1] = nn.ReLU()
end
local model = nn.Sequential(table.unpack(layers))
model:eval()
local x = T.randn({ 8, 64 })
local calls = #layers + 1               -- every layer and the Sequential itself

local function median(v)
  table.sort(v)
  return v[(#v + 1) // 2]
end

local function time(n)
  local runs = {}
  T.no_grad(model, x)
  for i = 1, n do
    local t0 = core.now_ns()
    T.no_grad(model, x)
    runs[i] = (core.now_ns() - t0) / 1e9
  end
  return median(runs)
end

local plain, profiled = {}, {}
for r = 1, 7 do
  plain[r] = time(5)
  local p = prof.FlopsProfiler(model)
  p:start_profile()
  profiled[r] = time(5)
  p:end_profile()
end
local a, b = median(plain), median(profiled)
io.write(string.format("mlp200 plain %.6f profiled %.6f per_call_us %.3f\n", a, b,
  (b - a) / calls * 1e6))
