-- prof.util.notes — one-line notes on stderr, each said once per run (no --verbose needed): what a run
-- accepted but did not apply, or counted that may surprise.
local M = {}

local said = {}

-- Where notes go; specs replace it to watch them.
function M.sink(msg)
  io.stderr:write("profrun: note: ", msg, "\n")
end

-- Says msg once per run under key (the same key again says nothing).
function M.once(key, msg)
  if said[key] then return false end
  said[key] = true
  M.sink(msg)
  return true
end

-- Forgets what was said (specs).
function M.reset()
  said = {}
end

return M
