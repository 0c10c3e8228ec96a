-- ops_recorder.lua — records what ops do under a fresh profiling session, for the ops specs.
local core = require "prof.core"

local M = {}

-- A meta-device (by default) tensor of the shape: what the ops specs feed the ops.
function M.E(shape, dtype, device) return core.empty(shape, dtype, device) end

-- Runs fn under a fresh recorder (with conventions conv, in phase, where given) and returns the
-- totals of each phase named after them; fn's error is raised after the cleanup.
local function record(fn, conv, phase, ...)
  local S = core.new()
  if conv then S:set_conventions(conv) end
  S:start()
  if phase then S:set_phase(phase) end
  core.set_recorder(S)
  local ok, err = pcall(fn)
  core.set_recorder(nil)
  local totals = {}
  for i, name in ipairs { ... } do totals[i] = S:totals(name) end
  S:close()
  assert(ok, err)
  return table.unpack(totals)
end

-- The totals fn records in phase ("forward" unless given), under conventions conv if given.
function M.count(fn, conv, phase) return record(fn, conv, phase, phase or "forward") end

-- The totals of the forward and backward phases of fn.
function M.phases(fn) return record(fn, nil, nil, "forward", "backward") end

return M
