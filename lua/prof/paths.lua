-- paths.lua — where profrun's files are: the root of the tree this package was loaded from.
local M = {}

-- This file is <root>/lua/prof/paths.lua both in the source tree and once installed.
local here = debug.getinfo(1, "S").source:match("^@(.*)$") or "lua/prof/paths.lua"
M.root = here:match("^(.*)/lua/prof/paths%.lua$") or "."
M.scripts = M.root .. "/scripts"
M.configs = M.root .. "/configs"

return M
