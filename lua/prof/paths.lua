-- paths.lua — where profrun's files are: the root of the tree this package was loaded from.
local M = {}

-- This file is <root>/lua/prof/paths.lua both in the source tree and once installed.
local here = debug.getinfo(1, "S").source:match("^@(.*)$") or "lua/prof/paths.lua"
M.root = here:match("^(.*)/lua/prof/paths%.lua$") or "."
M.scripts = M.root .. "/scripts"
M.configs = M.root .. "/configs"

-- Whether path names a file this process can read.
function M.readable(path)
  local f = io.open(path, "r")
  if f == nil then return false end
  f:close()
  return true
end

-- A policy script by name or path: name itself when it is a readable file, else
-- scripts/<folder>/<name>.lua; nil when neither exists.
function M.script(folder, name)
  if M.readable(name) then return name end
  local p = M.scripts .. "/" .. folder .. "/" .. name .. (name:match("%.lua$") and "" or ".lua")
  if M.readable(p) then return p end
  return nil
end

return M
