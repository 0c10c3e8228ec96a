-- prof.util.errors — error messages that say which module of the model failed, and script tracebacks.
local module = require "prof.nn.module"
local paths = require "prof.util.paths"

local M = {}

local hooks = module.hooks

-- The module's dotted path in the model being profiled, else through the parents it was assigned to.
function M.module_path(m)
  local S, ids = hooks.S, hooks.ids
  if S ~= nil and ids ~= nil and ids[m] ~= nil then return S:path(ids[m]) end
  return m:path()
end

-- A path as messages print it: a deep model's (thousands of levels) keeps its whole parts within
-- the first and last 60 characters around the number of levels left out, so the reason after it
-- stays readable: "0.0.0.(... 55431 more levels ...).0.0".
function M.short_path(path)
  if #path <= 160 then return path end
  local head = path:sub(1, 61):match("^(.*)%.") or path:sub(1, 60)
  local tail = path:sub(-61):match("%.(.*)$") or path:sub(-60)
  local _, left = path:sub(#head + 2, -#tail - 2):gsub("[^.]+", "")
  return string.format("%s.(... %d more levels ...).%s", head, left, tail)
end

--[[
A traceback must cost little however deep the stack: debug.getinfo(level) walks `level` frames,
so reading every frame of a 200,000-deep stack overflow is quadratic (minutes). Only the INNER
frames nearest the error and the OUTER ones nearest the main chunk are read, as luaL_traceback
does; the depth between is found by doubling then bisecting.
]]
local INNER, OUTER = 24, 8

local package_dir = paths.root .. "/lua/prof/"

-- Whether a frame is profrun's own (its Lua package, or C): hidden unless --verbose.
local function internal(info)
  if info.what == "C" then return true end
  return info.source:sub(1, 1) == "@" and info.source:sub(2, #package_dir + 1) == package_dir
end

local function where(info)
  local src = info.source:sub(1, 1) == "@" and info.source:sub(2) or info.short_src
  if info.currentline and info.currentline > 0 then return src .. ":" .. info.currentline end
  return src
end

local function frame_line(info)
  local what
  if info.what == "main" then
    what = "main chunk"
  elseif info.name ~= nil then
    what = string.format("%s '%s'", info.namewhat ~= "" and info.namewhat ~= "global"
      and info.namewhat or "function", info.name)
  elseif info.what == "C" then
    what = "?"
  else
    what = string.format("function <%s:%d>", where({ source = info.source,
      short_src = info.short_src }), info.linedefined)
  end
  local at = info.what == "C" and "[C]" or where(info)
  return "\t" .. at .. ": in " .. what
end

-- Whether messages and tracebacks show profrun's own files and frames (profrun --verbose).
M.verbose = false

-- A message placed in profrun's files ("…/lua/prof/nn/linear.lua:47: …") is placed at the
-- innermost frame of the user's code among the INNER above level instead (level 1: the caller
-- of place), unless verbose (default: M.verbose): that is the line to fix. Returns msg unchanged
-- otherwise.
function M.place(msg, level, verbose)
  if verbose == nil then verbose = M.verbose end
  if verbose or type(msg) ~= "string" then return msg end
  local src = msg:match("^(.-):%d+: ")
  if src == nil or src:sub(1, #package_dir) ~= package_dir then return msg end
  for l = level + 1, level + INNER do
    local info = debug.getinfo(l, "Sl")
    if info == nil then break end
    if not internal(info) and info.currentline > 0 then
      return where(info) .. ": " .. msg:gsub("^.-:%d+: ", "", 1)
    end
  end
  return msg
end

local function describe(m)
  local path = M.short_path(M.module_path(m))
  if path == "" then return m.__name .. " (the model)" end
  return string.format("'%s' (%s)", path, m.__name)
end

-- The stack an error inside the model had where it happened: with_module_context runs there and
-- keeps it, so the script's traceback, made after the error crossed the model's protected call,
-- still shows the forward's and its helpers' lines. One slot: one error propagates at a time.
local at_error = { msg = nil, lines = nil }

-- Message handler: prefixes the innermost module being called ("in module 'features.0' (Conv2d): ").
-- When the error is about a nil and the module call that returned just before returned nil, that
-- module is named too: the module that received the nil is rarely the one to fix.
function M.with_module_context(msg)
  local m = module.innermost(2)
  if m == nil or type(msg) ~= "string" or msg:find("^in module ") then return msg end
  local culprit = hooks.returned_nil
  -- a sibling's output is what a forward passes on; any other module's nil is not this one's input
  if culprit ~= nil and culprit ~= m and rawget(culprit, "_parent") == rawget(m, "_parent")
      and (msg:find("got nil", 1, true) or msg:find("a nil value", 1, true)) then
    msg = string.format("%s (module %s returned nil just before: does its forward return its output?)",
      msg, describe(culprit))
  end
  msg = "in module " .. describe(m) .. ": " .. M.place(msg, 2)
  at_error.msg, at_error.lines = msg, M.traceback_lines(2, M.verbose)
  return msg
end

-- The deepest level that exists, from level `from` (which does): O(depth log depth) in all.
local function last_level(from)
  local lo, hi = from, from + 1
  while debug.getinfo(hi, "l") ~= nil do
    lo = hi
    hi = hi * 2
  end
  while hi - lo > 1 do
    local mid = (lo + hi) // 2
    if debug.getinfo(mid, "l") ~= nil then lo = mid else hi = mid end
  end
  return lo
end

--[[
The traceback lines of the caller's stack from level (1: the caller of traceback_lines): the
script's frames, profrun's own left out (and counted) unless verbose; at most INNER + OUTER frames
are read.
]]
function M.traceback_lines(level, verbose)
  level = level + 2   -- as add and last_level count: they run one call below this function
  local lines, hidden = {}, 0
  local last = last_level(level)
  local function add(l)
    local info = debug.getinfo(l, "Slnt")
    if info == nil then return end
    if internal(info) and not verbose then
      hidden = hidden + 1
      return
    end
    lines[#lines + 1] = frame_line(info)
    -- a tail call left no frame of its caller (`return helper(x)` in a forward), as Lua says
    if info.istailcall then lines[#lines + 1] = "\t(...tail calls...)" end
  end
  if last - level + 1 <= INNER + OUTER then
    for l = level, last do add(l) end
  else
    for l = level, level + INNER - 1 do add(l) end
    lines[#lines + 1] = string.format("\t... (%d frames skipped)", last - level + 1 - INNER - OUTER)
    for l = last - OUTER + 1, last do add(l) end
  end
  if hidden > 0 then
    lines[#lines + 1] = string.format("\t(%d frames of profrun hidden; --verbose shows them)", hidden)
  end
  return lines
end

--[[
The message handler profrun runs scripts under: the message placed at the script's line (M.place)
with its module context, then "stack traceback:" with the script's frames (all with verbose).
]]
function M.script_traceback(verbose)
  return function(msg)
    if type(msg) ~= "string" then msg = tostring(msg) end
    -- an error that crossed the model's protected call: the stack it had where it happened
    local kept = msg == at_error.msg and at_error.lines or nil
    at_error.msg, at_error.lines = nil, nil
    msg = M.with_module_context(M.place(msg, 2, verbose))
    local lines = kept or M.traceback_lines(2, verbose)
    return msg .. "\nstack traceback:\n" .. table.concat(lines, "\n")
  end
end

-- Message handler for whole scripts: module context plus every frame's traceback (prof.traceback).
M.traceback = M.script_traceback(true)

return M
