-- prof.flops_profiler.unmatched — warnings for ignore entries and flop-rule types that match no module of the model.
--[[
A misspelt entry ("Dropuot") silently ignores nothing and a rule for a type the model lacks never
runs: both look like success. When profiling starts, each entry is checked against the model's
types and paths and, when nothing matches, one warning names it and the closest type or path.
Each warning is written once per run (the engine starts a profile every step).
]]
local closest = require "prof.util.closest"
local paths_mod = require "prof.util.paths"

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

-- What the checks look at, read from the model once: its type names and paths (root excepted:
-- its path is ""), each once in tree order, and both as sets.
local function survey(model)
  local s = { types = {}, paths = {}, has_type = {}, has_path = {} }
  for _, pair in ipairs(model:named_modules()) do
    local path, name = pair[1], pair[2].__name
    if not s.has_type[name] then
      s.has_type[name] = true
      s.types[#s.types + 1] = name
    end
    if path ~= "" then
      s.has_path[path] = true
      s.paths[#s.paths + 1] = path
    end
  end
  return s
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

-- Whether an ignore entry (a string as ignore.lua reads it: type, path, prefix or pattern) matches.
local function entry_matches(e, s)
  if e:sub(1, 1) == "^" then
    for _, path in ipairs(s.paths) do
      if path:find(e) then return true end
    end
    return false
  elseif e:sub(-2) == ".*" then
    local p = e:sub(1, -2)
    for _, path in ipairs(s.paths) do
      if path:sub(1, #p) == p and #path > #p then return true end
    end
    return false
  end
  return s.has_type[e] == true or s.has_path[e] == true
end

local function check_ignore(model, s, ignore_list)
  for i, e in ipairs(ignore_list) do
    local text = type(e) == "table" and e.__name or e   -- a class stands for its type name
    if type(text) == "string" and not text:match("%.lua$") and not entry_matches(text, s) then
      warn(string.format("profrun: warning: ignore_modules[%d] '%s' matches no module of %s%s",
        i, text, model.__name, suggestion(text, s.types, s.paths)))
    end
  end
end

-- A shipped script (scripts/rules/) is a library for a family of models: its types are checked
-- only together (none used is the mistake); a user's script names its own model's types.
local function check_rules(model, s, rules)
  local by_file, files = {}, {}
  for typename, rule in pairs(rules) do
    local file = (rule.where or "?"):match("^(.*):%d+$") or rule.where or "?"
    if by_file[file] == nil then
      by_file[file] = { used = false, missing = {} }
      files[#files + 1] = file
    end
    local f = by_file[file]
    if s.has_type[typename] then f.used = true else f.missing[#f.missing + 1] = typename end
  end
  table.sort(files)
  for _, file in ipairs(files) do
    local f = by_file[file]
    table.sort(f.missing)
    local base = file:match("scripts/rules/([^/]+)$")
    local shipped = base ~= nil and paths_mod.readable(paths_mod.scripts .. "/rules/" .. base)
    if not (shipped and f.used) then
      for _, typename in ipairs(f.missing) do
        warn(string.format("profrun: warning: the flop rule for type '%s' (%s) matches no module "
          .. "of %s%s", typename, rules[typename].where or file, model.__name,
          suggestion(typename, s.types, {})))
      end
    end
  end
end

--[[
Warns about the entries of ignore_list (classes, type names, paths, prefixes, patterns; scripts
are computed lists and are left to their authors) and the types of rules ({TypeName = {where=}})
that match no module of model. Nothing to check costs nothing; else one walk of the model.
]]
function M.check(model, ignore_list, rules)
  ignore_list, rules = ignore_list or {}, rules or {}
  if #ignore_list == 0 and next(rules) == nil then return end
  local s = survey(model)
  check_ignore(model, s, ignore_list)
  check_rules(model, s, rules)
end

return M
