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

-- One forward after a full collection: the collector's state is then the same for both kinds.
local function one()
  collectgarbage()
  local t0 = core.now_ns()
  T.no_grad(model, x)
  return (core.now_ns() - t0) / 1e9
end

-- Alternate single plain and profiled forwards so that drifts of a shared machine hit both alike.
local p = prof.FlopsProfiler(model)
local plain, profiled = {}, {}
one()
for r = 1, 101 do
  plain[r] = one()
  p:start_profile()
  profiled[r] = one()
  p:stop_profile()
end
p:end_profile()
local a, b = median(plain), median(profiled)
io.write(string.format("mlp200 plain %.6f profiled %.6f per_call_us %.3f\n", a, b,
  (b - a) / calls * 1e6))
