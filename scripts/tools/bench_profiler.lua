-- bench_profiler.lua — the activity profiler's cost from Lua: ns per record_function, recorded.
-- Method as bench_lua.lua: the same loop with and without the range, in this run, medians of
-- repeated runs; the cost is stated beside a plain Lua function call measured the same way.
local prof = require "prof"

local N, RUNS = 200000, 11

local util = require "scripts.tools.bench_util"
local median, time = util.median, util.time

local function work() end
local function empty_loop() for _ = 1, N do end end
local function plain_calls() for _ = 1, N do work() end end
local function scoped()
  local rf = prof.record_function
  for _ = 1, N do
    local _ <close> = rf("step")
  end
end
local function with_fn()
  local rf = prof.record_function
  for _ = 1, N do rf("step", work) end
end

local call, scope, fn, idle = {}, {}, {}, {}
for r = 1, RUNS do
  local base = time(empty_loop)
  call[r] = (time(plain_calls) - base) / N
  idle[r] = (time(scoped) - base) / N             -- no profiler: nothing recorded
  local p = prof.profile{ capacity = 2 * N }
  scope[r] = (time(scoped) - base) / N
  p:stop()
  p = prof.profile{ capacity = 2 * N }
  fn[r] = (time(with_fn) - base) / N - call[r]    -- the call of fn itself is not the range's
  p:stop()
  assert(p:events_dropped() == 0)
end
local c, s, f, i = median(call), median(scope), median(fn), median(idle)
print(string.format("Lua record_function: %6.1f ns per <close> scope recorded (%.1fx a plain "
  .. "call, %.1f ns), %6.1f ns as record_function(name, fn); %6.1f ns outside a window",
  s, s / c, c, f, i))
