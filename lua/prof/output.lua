-- output.lua — output files are written atomically; under profrun they appear only if the run succeeds.
local core = require "prof.core"

local M = {}

local pending   -- {tmp, path} pairs while profrun holds a transaction open

function M.begin()
  pending = {}
end

-- Writes text to path (or, inside a transaction, beside it until commit). Raises on failure.
function M.write(path, text)
  if pending == nil then
    local ok, err = core.write_atomic(path, text)
    if not ok then error(err, 0) end
    return
  end
  local tmp = path .. ".profrun-pending"
  local ok, err = core.write_atomic(tmp, text)
  if not ok then error(err, 0) end
  for _, p in ipairs(pending) do
    if p[2] == path then return end   -- rewritten: the newest text is already in tmp
  end
  pending[#pending + 1] = { tmp, path }
end

-- Moves every pending file into place; returns true or nil, message.
function M.commit()
  local list = pending or {}
  pending = nil
  for _, p in ipairs(list) do
    local ok, err = os.rename(p[1], p[2])
    if not ok then
      for _, q in ipairs(list) do os.remove(q[1]) end
      return nil, err
    end
  end
  return true
end

-- Drops every pending file: a failed run leaves nothing behind.
function M.abort()
  for _, p in ipairs(pending or {}) do os.remove(p[1]) end
  pending = nil
end

return M
