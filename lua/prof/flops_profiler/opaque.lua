-- prof.flops_profiler.opaque — finds module types whose calls counted nothing although they hold parameters: their
-- forward ran code no op records (a kernel, Lua arithmetic on plain numbers), so their 0 is a blind
-- spot, not a fact. DeepSpeed's profiler has the same one (it sees only the torch functions it
-- patches, so a custom CUDA or Triton layer counts 0 there too); profrun says it, once per type.
local notes = require "prof.util.notes"

local M = {}

-- Module types (sorted) of the session S whose every call recorded no MACs, no flops and no
-- bytes, whose module object (objects[id]) holds parameters of its own, and that no flop rule
-- counts (its own or an ancestor's: a rule replaces its children's ops too) and no ignore list
-- hides. The modules are read as columns (S:module_columns) a slice at a time: a million of them
-- as rows, or as whole columns, cost as much as the rest of the run's peak.
local COLUMNS = { "id", "parent", "type", "rule", "ignored", "hidden", "fwd.calls", "fwd.macs",
                  "fwd.flops", "fwd.bytes_read", "fwd.bytes_written" }
local SLICE = 4096

function M.find(S, objects)
  -- one pass: modules come in pre-order, so a parent's "ruled" is known before its children's
  -- (only the ruled ids are kept)
  local seen, blind, ruled = {}, {}, {}
  -- most modules of a large model hold no parameter of their own (a million ReLUs): with none
  -- that does, nothing can be blind and no column is read
  local any = false
  for _, m in pairs(objects) do
    if #(rawget(m, "_params") or {}) > 0 then
      any = true
      break
    end
  end
  if not any then return blind end
  for lo = 1, S:module_count(), SLICE do
    local c = S:module_columns(COLUMNS, lo, SLICE)
    local ids, parents, types, rule = c.id, c.parent, c.type, c.rule
    local calls, macs, flops, br, bw = c["fwd.calls"], c["fwd.macs"], c["fwd.flops"],
      c["fwd.bytes_read"], c["fwd.bytes_written"]
    for i = 1, #ids do
      local under_rule = rule[i] or (parents[i] and ruled[parents[i]]) or false
      if under_rule then ruled[ids[i]] = true end
      local m = objects[ids[i]]
      local own = m ~= nil and #(rawget(m, "_params") or {}) > 0
      local silent = calls[i] > 0 and macs[i] == 0 and flops[i] == 0 and br[i] == 0 and bw[i] == 0
      if own and not c.ignored[i] and not c.hidden[i] and not under_rule then
        local t = types[i]
        if seen[t] == nil then seen[t] = silent end
        seen[t] = seen[t] and silent
      end
    end
  end
  for t, silent in pairs(seen) do
    if silent then blind[#blind + 1] = t end
  end
  table.sort(blind)
  return blind
end

-- Notes each blind type once per run, naming the hook that would count it.
function M.report(S, objects)
  for _, t in ipairs(M.find(S, objects)) do
    notes.once("opaque:" .. t, string.format("%s has parameters but its calls counted 0 MACs, 0 flops "
      .. "and 0 bytes: its forward runs code profrun cannot see (DeepSpeed's profiler counts it 0 too). "
      .. "Count it with a flop rule: list a script in flops_profiler.rules that returns "
      .. "{ %s = function(module, inputs, output, ctx) return { macs = ..., flops = ..., "
      .. "bytes_read = ..., bytes_written = ... } end }", t, t))
  end
end

return M
