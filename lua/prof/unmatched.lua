-- unmatched.lua — warnings for ignore entries and flop-rule types that match no module of the model.
--[[
A misspelt entry ("Dropuot") silently ignores nothing and a rule for a type the model lacks never
runs: both look like success. When profiling starts, each entry is checked against the model's
types and paths and, when nothing matches, one warning names it and the closest type or path.
Each warning is written once per run (the engine starts a profile every step).
]]
local closest = require "prof.closest"
local paths_mod = require "prof.paths"

local M = {}

local warned = {}

-- Where warnings go (specs replace it).
M.sink = function(line) io.stderr:write(line, "\n") end

-- Forgets what was warned about (a new run; specs).
function M.reset()
  warned = {}
end

local function warn(line)
  if warned[line] then return end
  warned[line] = true
  M.sink(line)
end

-- The model's type names and paths (root excepted: its path is ""), each once, in tree order.
local function names(model)
  local types, paths, seen = {}, {}, {}
  for _, pair in ipairs(model:named_modules()) do
    local path, m = pair[1], pair[2]
    if not seen[m.__name] then
      seen[m.__name] = true
      types[#types + 1] = m.__name
    end
    if path ~= "" then paths[#paths + 1] = path end
  end
  return types, paths
end

local function suggestion(entry, types, paths)
  if entry:sub(-2) == ".*" then   -- a prefix: the path it meant, as a prefix again
    local p = closest.closest(entry:sub(1, -3), paths)
    return p ~= nil and string.format(" (closest module path: '%s.*')", p) or ""
  end
  local t = closest.closest(entry, types)
  if t ~= nil then return string.format(" (closest module type: '%s')", t) end
  local p = closest.closest(entry, paths)
  if p ~= nil then return string.format(" (closest module path: '%s')", p) end
  return ""
end

-- Whether an ignore entry (a string ignore.lua reads as a type, path or prefix) matches.
local function entry_matches(e, model)
  for _, pair in ipairs(model:named_modules()) do
    local path, m = pair[1], pair[2]
    if e:sub(1, 1) == "^" then
      if path:find(e) then return true end
    elseif e:sub(-2) == ".*" then
      local p = e:sub(1, -2)
      if path:sub(1, #p) == p and #path > #p then return true end
    elseif m.__name == e or path == e then
      return true
    end
  end
  return false
end

--[[
Warns about the entries of ignore_list (classes, type names, paths, prefixes, patterns; scripts
are computed lists and are left to their authors) and the types of rules ({TypeName = {where=}})
that match no module of model.
]]
function M.check(model, ignore_list, rules)
  local types, paths
  for i, e in ipairs(ignore_list or {}) do
    local text = type(e) == "table" and e.__name or e
    if type(text) == "string" and not text:match("%.lua$") then
      local ok = type(e) == "table" and entry_matches(text, model) or entry_matches(e, model)
      if not ok then
        if types == nil then types, paths = names(model) end
        warn(string.format("profrun: warning: ignore_modules[%d] '%s' matches no module of %s%s",
          i, text, model.__name, suggestion(text, types, paths)))
      end
    end
  end
  local have = {}
  for _, pair in ipairs(model:named_modules()) do have[pair[2].__name] = true end
  -- A shipped script (scripts/rules/) is a library for a family of models: its types are checked
  -- only together (none used is the mistake); a user's script names its own model's types.
  local by_file, files = {}, {}
  for typename, rule in pairs(rules or {}) do
    local file = (rule.where or "?"):match("^(.*):%d+$") or rule.where or "?"
    if by_file[file] == nil then
      by_file[file] = { used = false, missing = {} }
      files[#files + 1] = file
    end
    local f = by_file[file]
    if have[typename] then f.used = true else f.missing[#f.missing + 1] = typename end
  end
  table.sort(files)
  for _, file in ipairs(files) do
    local f = by_file[file]
    table.sort(f.missing)
    local base = file:match("scripts/rules/([^/]+)$")
    local shipped = base ~= nil and paths_mod.readable(paths_mod.scripts .. "/rules/" .. base)
    if not (shipped and f.used) then
      for _, typename in ipairs(f.missing) do
        if types == nil then types = names(model) end
        warn(string.format("profrun: warning: the flop rule for type '%s' (%s) matches no module "
          .. "of %s%s", typename, rules[typename].where or file, model.__name,
          suggestion(typename, types, {})))
      end
    end
  end
end

return M
