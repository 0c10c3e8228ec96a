-- bench_long_run.lua — a scheduled run of 1,000 cycles (repeat=0, one active step each, a trace
-- written per cycle): after cycle 100 and after cycle 1,000, resident memory (which glibc's
-- allocator moves by a few hundred KB either way) and the Lua heap, which holds the core's
-- allocations too (they go through Lua's allocator) and must not grow.
local prof = require "prof"
local T = require "prof.tensor"

local function rss_kb()
  local f = assert(io.open("/proc/self/status", "r"))
  local kb
  for line in f:lines() do
    kb = kb or tonumber(line:match("^VmRSS:%s+(%d+)"))
  end
  f:close()
  return kb
end

local path = os.tmpname()
local p = prof.profile{
  schedule = prof.schedule{ wait = 0, warmup = 1, active = 1, ["repeat"] = 0 },
  record_shapes = true, with_stack = true, profile_memory = true, capacity = 4096,
  on_trace_ready = function(q) assert(q:export_chrome_trace(path)) end,
}
T.set_default_device("cpu")
local x = T.ones({ 64, 64 })
local at, heap = {}, {}
for step = 1, 2000 do
  prof.record_function("work", function() return x:matmul(x):relu() end)
  p:step()
  if step == 200 or step == 2000 then
    collectgarbage()
    at[#at + 1] = rss_kb()
    heap[#heap + 1] = collectgarbage("count")
  end
end
p:stop()
os.remove(path)
io.write(string.format("long run, 1,000 cycles with a trace each: resident %d KB after 100 cycles, %d KB "
  .. "after 1,000 (%+d KB); Lua heap with the core's memory %.1f KB, %.1f KB (%+.0f bytes)\n",
  at[1], at[2], at[2] - at[1], heap[1], heap[2], (heap[2] - heap[1]) * 1024))
