-- opaque.lua — finds module types whose calls counted nothing although they hold parameters: their
-- forward ran code no op records (a kernel, Lua arithmetic on plain numbers), so their 0 is a blind
-- spot, not a fact. DeepSpeed's profiler has the same one (it sees only the torch functions it
-- patches, so a custom CUDA or Triton layer counts 0 there too); profrun says it, once per type.
local notes = require "prof.notes"

local M = {}

-- Module types (sorted) in rows (a session's S:modules(), or a function(i) giving its row i of n,
-- so that a million modules are read in slices) whose every call recorded no MACs, no flops and
-- no bytes, whose module object (objects[id]) holds parameters of its own, and that no flop rule
-- counts (its own or an ancestor's: a rule replaces its children's ops too) and no ignore list
-- hides.
function M.find(rows, objects, n)
  local get = rows
  if type(rows) ~= "function" then
    n = #rows
    get = function(i) return rows[i] end
  end
  -- one pass: rows come in pre-order, so a parent's "ruled" is known before its children's
  -- (each read of a million rows costs as much as the rest of this check)
  local seen, blind, ruled = {}, {}, {}
  for i = 1, n do
    local r = get(i)
    local under_rule = r.rule and true or (r.parent ~= nil and ruled[r.parent]) or false
    ruled[r.id] = under_rule
    local m = objects[r.id]
    local own = m ~= nil and #(rawget(m, "_params") or {}) > 0
    local f = r.fwd
    local silent = f.calls > 0 and f.macs == 0 and f.flops == 0 and f.bytes_read == 0 and f.bytes_written == 0
    if own and not r.ignored and not r.hidden and not under_rule then
      if seen[r.type] == nil then seen[r.type] = silent end
      seen[r.type] = seen[r.type] and silent
    end
  end
  for t, silent in pairs(seen) do
    if silent then blind[#blind + 1] = t end
  end
  table.sort(blind)
  return blind
end

-- Notes each blind type once per run, naming the hook that would count it.
function M.report(rows, objects, n)
  for _, t in ipairs(M.find(rows, objects, n)) do
    notes.once("opaque:" .. t, string.format("%s has parameters but its calls counted 0 MACs, 0 flops "
      .. "and 0 bytes: its forward runs code profrun cannot see (DeepSpeed's profiler counts it 0 too). "
      .. "Count it with a flop rule: list a script in flops_profiler.rules that returns "
      .. "{ %s = function(module, inputs, output, ctx) return { macs = ..., flops = ..., "
      .. "bytes_read = ..., bytes_written = ... } end }", t, t))
  end
end

return M
