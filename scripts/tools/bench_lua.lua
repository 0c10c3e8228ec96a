-- bench_lua.lua — the profiler's cost seen from Lua: ns per module call and per op record.
-- Method (Tracy's): time the same loop profiled and plain in this run; the difference over the
-- number of calls is the cost. Medians of repeated runs, since these machines are shared.
local core = require "prof.core"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"

local N, RUNS = 200000, 11

local util = require "scripts.tools.bench_util"
local median, time = util.median, util.time

-- A module that runs no op: its call cost is the hooks alone.
local Pass = nn.Module:extend("Pass")
function Pass:forward(x) return x end
local Wrap = nn.Module:extend("Wrap")
function Wrap:init() self.inner = Pass() end
function Wrap:forward(x) return self.inner(x) end

local model = Wrap()
local x = T.empty({ 8, 64 }, { device = "meta" })
local function calls() for _ = 1, N do model.inner(x) end end
local function ops() for _ = 1, N do T.relu(x) end end

local call_cost, call_plain, op_cost, op_plain = {}, {}, {}, {}
for r = 1, RUNS do
  local plain = time(calls)
  local p = prof.FlopsProfiler(model)
  p:start_profile()
  local profiled = time(calls)
  p:end_profile()
  call_plain[r], call_cost[r] = plain / N, (profiled - plain) / N

  local oplain = time(ops)
  local S = core.new()
  S:start()
  core.set_recorder(S)
  local orec = time(ops)
  core.set_recorder(nil)
  S:close()
  op_plain[r], op_cost[r] = oplain / N, (orec - oplain) / N
end

local cp, cc, op, oc = median(call_plain), median(call_cost), median(op_plain), median(op_cost)
print(string.format("Lua module call: %6.1f ns plain, +%6.1f ns profiled (x%.2f)", cp, cc, (cp + cc) / cp))
print(string.format("Lua op (relu, meta): %6.1f ns plain, +%6.1f ns recorded (x%.2f)", op, oc, (op + oc) / op))
