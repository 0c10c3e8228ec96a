-- scripts/reports/json.lua: the "profrun.profile/1" JSON document, as core/prof/report/profile_json.c writes it.
--
-- Summary keys in this order: schema, device, conventions, world_size, dp_size, mp_size,
-- batch_size, params, params_model, fwd_macs, fwd_flops, fwd_flops_model, bwd_flops,
-- fwd_latency_s, bwd_latency_s, step_latency_s, iter_latency_s, samples_per_s (null when not
-- measured), modules. Each module: id (0-based pre-order), parent (id or null), name (dotted
-- path, root ""), type, depth, params, macs, flops, bytes (only when known), fwd_latency_s,
-- bwd_latency_s, calls, then when known bwd_flops (measured), exact_flops (the forward under exact
-- conventions, which the roofline fields use, when the profile's are deepspeed), intensity (FLOP/B), achieved_flops,
-- achieved_bytes_per_s, mfu (achieved_flops / peak_flops), bound ("compute" | "memory" |
-- "overhead") and bound_expected (the verdict from intensity alone: nothing ran, e.g. on meta);
-- the summary then also has peak_flops, peak_bytes_per_s, ridge_intensity, peaks_machine and,
-- when a latency is known, mfu (the step's), fwd_mfu and iter_mfu (prof.roofline.mfu). Hidden
-- (ignored) modules are left out; their children take the nearest shown ancestor as parent.
local core = require "prof.core"
local enc = require "prof.report.json_encode"
local tree = require "prof.report.tree"

local M = {}

M.SUMMARY_KEYS = {
  "schema", "device", "conventions", "world_size", "dp_size", "mp_size", "batch_size",
  "params", "params_model", "fwd_macs", "fwd_flops", "fwd_flops_model", "bwd_flops",
  "fwd_latency_s", "bwd_latency_s", "step_latency_s", "iter_latency_s", "samples_per_s", "modules",
}

M.MODULE_KEYS = {
  "id", "parent", "name", "type", "depth", "params", "macs", "flops", "bytes",
  "fwd_latency_s", "bwd_latency_s", "calls",
  -- present only when known: the measured backward and the roofline verdict
  "bwd_flops", "exact_flops", "intensity", "achieved_flops", "achieved_bytes_per_s", "mfu", "bound",
  "bound_expected",
}

-- Summary keys present only when known: the engine's micro-batches per optimizer step (fwd counts
-- and latencies are one micro-batch's, iter latency and samples/s the step's), the machine's
-- peaks (from the roofline analysis), and saturated: true when some count passed 2^63 - 1 and
-- stopped there.
M.OPTIONAL_SUMMARY_KEYS = { "gradient_accumulation_steps", "peak_flops", "peak_bytes_per_s", "ridge_intensity",
  "peaks_machine", "mfu", "fwd_mfu", "iter_mfu", "saturated" }

-- The document with its modules array holding the one item text given (or none).
local function document(profile, items)
  local values, keys = {}, {}
  for _, k in ipairs(M.SUMMARY_KEYS) do
    if k == "modules" then
      for _, o in ipairs(M.OPTIONAL_SUMMARY_KEYS) do
        if profile[o] ~= nil then keys[#keys + 1] = o end
      end
    end
    keys[#keys + 1] = k
    values[k] = profile[k]
  end
  for _, o in ipairs(M.OPTIONAL_SUMMARY_KEYS) do values[o] = profile[o] end
  values.schema = "profrun.profile/1"
  values.modules = enc.raw_array(items)
  return enc.encode(enc.object(keys, values)) .. "\n"
end

-- Modules per emitted piece: a million modules in one string (and a million strings before it)
-- was most of a large run's peak memory.
local SLICE = 1024

-- The optional fields, in MODULE_KEYS order, and how each is known: present (~= nil), or truthy
-- (exact_flops is false when not measured).
local OPTIONAL_TAIL = { "bwd_flops", "exact_flops", "intensity", "achieved_flops", "achieved_bytes_per_s",
                        "mfu", "bound", "bound_expected" }

-- A module's JSON text, exactly as json_encode prints the object of MODULE_KEYS (nil optional
-- fields left out): the keys and values gathered in two reused tables, the text made by one C
-- call (core.json_object), not a table and a dozen strings per module.
local function module_text(profile, id, parent_id, m, keys, values)
  keys[1], values[1] = "id", id
  keys[2], values[2] = "parent", parent_id
  keys[3], values[3] = "name", tree.path(profile, m)
  keys[4], values[4] = "type", m.type
  keys[5], values[5] = "depth", m.depth
  keys[6], values[6] = "params", m.params
  keys[7], values[7] = "macs", m.macs
  keys[8], values[8] = "flops", m.flops
  local n = 8
  if m.bytes ~= nil then
    n = n + 1
    keys[n], values[n] = "bytes", m.bytes
  end
  keys[n + 1], values[n + 1] = "fwd_latency_s", m.fwd_latency_s
  keys[n + 2], values[n + 2] = "bwd_latency_s", m.bwd_latency_s
  keys[n + 3], values[n + 3] = "calls", m.calls
  n = n + 3
  for i = 1, #OPTIONAL_TAIL do
    local k = OPTIONAL_TAIL[i]
    local v = m[k]
    if v ~= nil and (k ~= "exact_flops" or v) then
      n = n + 1
      keys[n], values[n] = k, v
    end
  end
  return core.json_object(keys, values, n, "      ", "    ")
end

-- Emits the document in pieces, in order: the summary, the modules a slice at a time, the end.
-- "\1" marks where the modules go: encoded JSON never holds a raw control byte. The shown tree is
-- walked in place (tree.shown's list would be a table per module).
function M.stream(profile, emit)
  local root = profile.modules[1]
  if root == nil then
    emit(document(profile, {}))
    return
  end
  local head, tail = document(profile, { "\1" }):match("^(.-)\1(.*)$")
  emit(head)
  local mods, slice, keys, values, n, next_id = profile.modules, {}, {}, {}, 0, 0
  local visit
  -- a hidden child's own children take its place, under the nearest shown ancestor (parent_id)
  local function walk(list, parent_id)
    for _, c in ipairs(list) do
      local child = mods[c]
      if child.hidden then walk(child.children, parent_id) else visit(child, parent_id) end
    end
  end
  function visit(m, parent_id)
    local id = next_id
    next_id = id + 1
    n = n + 1
    slice[n] = (id > 0 and ",\n    " or "") .. module_text(profile, id, parent_id, m, keys, values)
    if n == SLICE then
      emit(table.concat(slice, "", 1, n))
      n = 0
      -- a step of the collector per slice: the pieces are garbage at once, and left to the
      -- default pace they doubled the heap of a large profile
      collectgarbage("step", 1024)
    end
    if m.children then walk(m.children, id) end
  end
  visit(root, nil)
  if n > 0 then emit(table.concat(slice, "", 1, n)) end
  emit(tail)
end

-- The document's text; with opts.emit, the text goes to emit in pieces and "" is returned.
function M.render(profile, opts)
  if opts and opts.emit then
    M.stream(profile, opts.emit)
    return ""
  end
  local parts = {}
  M.stream(profile, function(s) parts[#parts + 1] = s end)
  return table.concat(parts)
end

return M.render
