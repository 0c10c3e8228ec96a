-- prof.util.paths — where profrun's files are: the root of the tree this package was loaded from.
local M = {}

-- This file is <root>/lua/prof/util/paths.lua both in the source tree and once installed.
local here = debug.getinfo(1, "S").source:match("^@(.*)$") or "lua/prof/util/paths.lua"
M.root = here:match("^(.*)/lua/prof/util/paths%.lua$") or "."
M.scripts = M.root .. "/scripts"
M.configs = M.root .. "/configs"

-- Whether path is a directory. Linux opens one for reading like a file; "path/." opens only
-- when it is one (and reading nothing keeps a pipe such as <(...) intact for its reader).
function M.is_directory(path)
  local f = io.open(path .. "/.", "r")
  if f == nil then return false end
  f:close()
  return true
end

-- Whether path names a file this process can read (a directory is not one).
function M.readable(path)
  local f = io.open(path, "r")
  if f == nil then return false end
  f:close()
  return not M.is_directory(path)
end

-- The folder that holds file path ("." for a bare name), without its trailing slash.
function M.dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

--[[
The candidates for a policy script, in order: an absolute name as it is; a relative one against
base (a config file's folder; nil: the current directory), then scripts/<folder>/<name>, ".lua"
added when the name lacks it. Returns the first readable one, or nil and the list searched.
]]
function M.find(folder, name, base)
  local tried = {}
  if name:sub(1, 1) == "/" then
    tried[1] = name
  else
    tried[1] = (base ~= nil and base ~= "." and base .. "/" or "") .. name
    tried[2] = M.scripts .. "/" .. folder .. "/" .. name .. (name:match("%.lua$") and "" or ".lua")
  end
  for _, p in ipairs(tried) do
    if M.readable(p) then return p end
  end
  return nil, tried
end

-- A policy script by name or path, from the current directory or scripts/<folder>/; nil when
-- neither exists.
function M.script(folder, name)
  return (M.find(folder, name))
end

-- "'a', 'b'": the paths find searched, for "not found (searched ...)" messages.
function M.searched(tried)
  local q = {}
  for i, p in ipairs(tried) do q[i] = "'" .. p .. "'" end
  return table.concat(q, ", ")
end

return M
