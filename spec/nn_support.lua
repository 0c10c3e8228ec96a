-- nn_support.lua — shared by the nn_*_spec files: op tracing, parameter listings, counting runs.
local core = require "prof.core"
local prof = require "prof"
local T = require "prof.tensor"
local F = require "prof.nn.functional"

local S = {}

-- Runs fn with every function of F, T and prof.core wrapped; returns the names of the outermost
-- calls, in order, and their argument lists (table.pack'ed). Modules look their ops up per call,
-- so the wrappers see exactly what a forward calls (x:view and operators are not seen).
function S.trace(fn)
  local names, argv, saved, depth = {}, {}, {}, 0
  local function leave(...)
    depth = depth - 1
    return ...
  end
  for _, tbl in ipairs { F, T, core } do
    for name, f in pairs(tbl) do
      if type(f) == "function" then
        saved[#saved + 1] = { tbl, name, f }
        tbl[name] = function(...)
          if depth == 0 then
            names[#names + 1] = name
            argv[#argv + 1] = table.pack(...)
          end
          depth = depth + 1
          return leave(f(...))
        end
      end
    end
  end
  local ok, err = pcall(fn)
  for _, s in ipairs(saved) do s[1][s[2]] = s[3] end
  if not ok then error(err, 0) end
  return names, argv
end

-- The names in list that are also in keep (a set), in order.
function S.only(list, keep)
  local out = {}
  for _, n in ipairs(list) do
    if keep[n] then out[#out + 1] = n end
  end
  return out
end

-- {{name, shape}, ...} of named_parameters / named_buffers, as torch's listings print them.
function S.params(m)
  local out = {}
  for i, p in ipairs(m:named_parameters()) do out[i] = { p[1], p[2].shape } end
  return out
end

function S.buffers(m)
  local out = {}
  for i, b in ipairs(m:named_buffers()) do out[i] = { b[1], b[2].shape } end
  return out
end

function S.module_names(m)
  local out = {}
  for i, pair in ipairs(m:named_modules()) do out[i] = pair[1] end
  return out
end

-- Runs fn(model) under the flops profiler, every module registered; returns the forward totals
-- ({macs=, flops=, ...}) under the given conventions.
function S.count(model, fn, conventions)
  local p = prof.FlopsProfiler(model)
  p.conventions = conventions or "deepspeed"
  p:start_profile()
  local ok, err = pcall(fn, model)
  p:stop_profile()
  local totals = p.S:totals("forward")
  p:end_profile()
  if not ok then error(err, 0) end
  return totals
end

-- The names of m's direct children, in order (torch's `[n for n, _ in m.named_children()]`).
function S.child_names(m)
  local out = {}
  for i, pair in ipairs(m:named_children()) do out[i] = pair[1] end
  return out
end

return S
