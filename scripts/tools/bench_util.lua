-- bench_util.lua — what the Lua benchmarks share: a timer on the core's clock and medians.
local core = require "prof.core"

local M = {}

function M.median(v)
  table.sort(v)
  return v[(#v + 1) // 2]
end

-- Nanoseconds fn() took.
function M.time(fn)
  local t0 = core.now_ns()
  fn()
  return core.now_ns() - t0
end

return M
