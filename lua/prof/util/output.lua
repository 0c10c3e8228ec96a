-- prof.util.output — output files are written atomically: each appears whole, once it is complete, or not at all.
--
-- Every output goes to a temporary beside it that is renamed into place when the call writing it
-- returns (the core's staging, whose temporaries profrun's exit guard removes if the run is
-- interrupted meanwhile). So a file exists as soon as its writer returns (an on_trace_ready
-- handler can read back what it wrote; TensorBoard can watch a live run), and a run that fails
-- later keeps it. A device or FIFO (/dev/null, a pipe) is written in place.
local core = require "prof.core"

local M = {}

-- "KEY: message" when the output has a key (flops_profiler.output_file), else the message.
local function keyed(key, msg)
  if key == nil then return msg end
  return key .. ": " .. msg
end

-- Writes text to path. key, when given, is the setting the path came from and starts the
-- message. Raises on failure.
function M.write(path, text, key)
  local ok, err = core.write_atomic(path, text)
  if not ok then error(keyed(key, err), 0) end
end

-- Writes what render(emit) emits, piece by piece, straight into the temporary (a large report is
-- never one string), then renames it into place; a device or FIFO takes the whole text as write
-- does. Raises on failure, as write; render's own error is raised as it is.
function M.write_stream(path, key, render)
  local staged, err = core.stage_file(path, "")
  if staged == nil then error(keyed(key, err), 0) end
  if staged.tmp == "" then
    core.discard_file(staged)
    local parts = {}
    render(function(s) parts[#parts + 1] = s end)
    return M.write(path, table.concat(parts), key)
  end
  local f, ferr = io.open(staged.tmp, "wb")
  local failed
  if f ~= nil then
    -- a failed write is kept, not raised: the report script's own error wrapping would bury it
    local ok, werr = pcall(render, function(s)
      if failed then return end
      local wrote, e = f:write(s)
      if not wrote then failed = path .. ": cannot write: " .. tostring(e) end
    end)
    local closed, cerr = f:close()
    if not ok then
      core.discard_file(staged)
      error(werr, 0)
    end
    if not closed then failed = failed or path .. ": cannot write: " .. tostring(cerr) end
  else
    failed = path .. ": cannot write: " .. (tostring(ferr):gsub("^.-: ", ""))
  end
  if failed then
    core.discard_file(staged)
    error(keyed(key, failed), 0)
  end
  local cok, cerr = core.commit_file(path, staged)
  if not cok then error(keyed(key, cerr), 0) end
end

return M
