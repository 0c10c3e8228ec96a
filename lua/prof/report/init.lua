-- prof.report — picks a report script (a built-in name or the path of a Lua file) and runs it.
local paths = require "prof.util.paths"
local config = require "prof.config"

local M = {}

local loaded = {}

-- The report format: as given, else from the output file's extension, else report.script, else
-- DeepSpeed's text.
function M.format_for(format, output_file)
  if format ~= nil and format ~= "" then return format end
  -- "o.JSON" is JSON: extensions are matched whatever their case
  local ext = type(output_file) == "string" and output_file:match("%.(%w+)$")
  ext = ext and ext:lower()
  if ext == "json" or ext == "csv" then return ext end
  if ext == "md" then return "markdown" end
  return config.value("report.script") or "deepspeed"
end

local readable = paths.readable

-- The report scripts that ship in scripts/reports/.
M.BUILTIN = { "deepspeed", "json", "csv", "markdown", "summary", "roofline" }

-- A built-in name ("json") or a path ("reports/mine.lua") -> the script's file path.
function M.script_path(format)
  if format:find("/", 1, true) or format:match("%.lua$") then
    if not readable(format) then error(string.format("report script '%s' not found", format), 0) end
    return format
  end
  local p = paths.scripts .. "/reports/" .. format .. ".lua"
  if not readable(p) then
    error(string.format("unknown report format '%s' (built in: %s; or the path of a .lua report script)",
      format, table.concat(M.BUILTIN, ", ")), 0)
  end
  return p
end

-- Loads a report script: a chunk returning function(profile, opts) -> text.
function M.load(path)
  if loaded[path] then return loaded[path] end
  local chunk, err = loadfile(path)
  if chunk == nil then error("report script " .. err, 0) end
  local ok, fn = pcall(chunk)
  if not ok then error(string.format("report script %s: %s", path, tostring(fn)), 0) end
  if type(fn) ~= "function" then
    error(string.format("report script %s must return a function(profile, opts), got %s", path,
      type(fn)), 0)
  end
  loaded[path] = fn
  return fn
end

-- Renders profile with the script opts.format/opts.output_file select; returns the text ("" when
-- opts.emit(piece) was given: the text went there).
function M.render_profile(profile, opts)
  local path = M.script_path(M.format_for(opts.format, opts.output_file))
  local fn = M.load(path)
  local ok, text = xpcall(fn, debug.traceback, profile, opts)
  if not ok then error(string.format("report script %s failed: %s", path, tostring(text)), 0) end
  if type(text) ~= "string" then
    error(string.format("report script %s returned %s instead of text", path, type(text)), 0)
  end
  -- opts.emit: the text goes there, in pieces where the script streams (json.lua), else whole
  if opts.emit and text ~= "" then
    opts.emit(text)
    return ""
  end
  return text
end

return M
