-- prof.flops_profiler.rules — flop rules as Lua scripts: per-type functions that count a module instead of its ops.
--
-- The rule API (README "Flop rules"). A rule script returns a table mapping module type names to
-- functions:
--   return { FusedScaleMaskSoftmax = function(module, inputs, output, ctx)
--              return { macs = 0, flops = 5 * inputs[1]:numel(),
--                       bytes_read = ctx.bytes(inputs[1]), bytes_written = ctx.bytes(output) } end }
-- A rule runs after each call of a module of its type; its counts replace those of the ops the
-- module ran (children included), so nothing is counted twice. Every field of the result is
-- optional (0). ctx (M.context) holds the call's facts:
--   conventions  "exact" | "deepspeed": the run's; a rule counts as that convention would
--   path, type   the module's dotted path ("" for the model) and type name
--   bytes(t)     t:numel() * t:element_size(), 0 for nil: a tensor's size in its dtype
local paths = require "prof.util.paths"

local M = {}

-- "megatron" -> scripts/rules/megatron.lua; a path is used as given.
function M.resolve(name)
  local p, tried = paths.find("rules", name)
  if p ~= nil then return p end
  error(string.format("flop rule script '%s' not found (searched %s)", name,
    paths.searched(tried)), 0)
end

-- Loads rule scripts; returns type name -> {fn = function, where = "file:line"}.
function M.load(list)
  local rules = {}
  for _, name in ipairs(list or {}) do
    local path = M.resolve(name)
    local chunk, err = loadfile(path)
    if chunk == nil then error("flop rule script " .. err, 0) end
    local ok, t = pcall(chunk)
    if not ok then error(string.format("flop rule script %s: %s", path, tostring(t)), 0) end
    if type(t) ~= "table" then
      error(string.format("flop rule script %s must return a table {TypeName = function(module, "
        .. "inputs, output) ... end}, got %s", path, type(t)), 0)
    end
    for typename, fn in pairs(t) do
      if type(typename) ~= "string" or type(fn) ~= "function" then
        error(string.format("flop rule script %s: entry %s must map a type name to a function",
          path, tostring(typename)), 0)
      end
      local info = debug.getinfo(fn, "S")
      local src = info.source:sub(1, 1) == "@" and info.source:sub(2) or info.short_src
      rules[typename] = { fn = fn, where = src .. ":" .. info.linedefined }
    end
  end
  return rules
end

local function bytes(t)
  if t == nil then return 0 end
  return t:numel() * t:element_size()
end

-- The ctx a rule receives (see the header).
function M.context(conventions, path, typename)
  return { conventions = conventions, path = path, type = typename, bytes = bytes }
end

-- A count is a whole number from 0 to 2^63 - 1: 1.5 is refused, not rounded (a rule that
-- divides has a bug worth seeing), and 2^63 or more does not fit the core's counters.
local function count(v, key, fail)
  if v == nil then return 0 end
  if type(v) ~= "number" or v ~= v or v < 0 then
    fail(string.format("returned %s = %s (expected a non-negative number)", key, tostring(v)))
  end
  local n = math.tointeger(v)
  if n == nil and v == math.floor(v) then
    fail(string.format("returned %s = %s, more than a count holds (at most 2^63 - 1 = %d)", key,
      tostring(v), math.maxinteger))
  elseif n == nil then
    fail(string.format("returned %s = %s (expected a whole number: counts are not rounded)", key,
      tostring(v)))
  end
  return n
end

-- Runs rule for one call; returns macs, flops, bytes_read, bytes_written. Errors name the rule's
-- file:line and the module. ctx tells the rule the run's facts ({conventions = "exact"}).
function M.apply(rule, module, path, inputs, output, ctx)
  local function fail(what)
    local where = path == "" and "in module " .. module.__name .. " (the model)"
      or string.format("in module '%s' (%s)", path, module.__name)
    error(string.format("%s: flop rule %s %s", where, rule.where, what), 0)
  end
  local ok, r = pcall(rule.fn, module, inputs, output, ctx)
  if not ok then fail("failed: " .. tostring(r)) end
  if type(r) ~= "table" then
    fail(string.format("returned %s (expected a table {macs=, flops=, bytes_read=, bytes_written=})",
      type(r)))
  end
  local macs, flops = count(r.macs, "macs", fail), count(r.flops, "flops", fail)
  local br, bw = count(r.bytes_read, "bytes_read", fail), count(r.bytes_written, "bytes_written", fail)
  -- bytes: the spelling of the first rule scripts, read as bytes_read
  if r.bytes ~= nil then
    local b = count(r.bytes, "bytes", fail)
    if br > math.maxinteger - b then
      fail(string.format("returned bytes + bytes_read = %d + %d, more than a count holds (at most "
        .. "2^63 - 1)", b, br))
    end
    br = br + b
  end
  return macs, flops, br, bw
end

return M
