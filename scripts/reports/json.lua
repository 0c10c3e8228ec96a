-- scripts/reports/json.lua: the "profrun.profile/1" JSON document (DESIGN.md "JSON profile"), as core/profile_json.c.
--
-- Summary keys in this order: schema, device, conventions, world_size, dp_size, mp_size,
-- batch_size, params, params_model, fwd_macs, fwd_flops, fwd_flops_model, bwd_flops,
-- fwd_latency_s, bwd_latency_s, step_latency_s, iter_latency_s, samples_per_s (null when not
-- measured), modules. Each module: id (0-based pre-order), parent (id or null), name (dotted
-- path, root ""), type, depth, params, macs, flops, bytes (only when known), fwd_latency_s,
-- bwd_latency_s, calls, then when known bwd_flops (measured), exact_flops (the forward under exact
-- conventions, which the roofline fields use, when the profile's are deepspeed), intensity (FLOP/B), achieved_flops,
-- achieved_bytes_per_s, bound ("compute" | "memory" | "overhead") and bound_expected (the verdict
-- from intensity alone: nothing ran, e.g. on meta); the summary then also has peak_flops,
-- peak_bytes_per_s, ridge_intensity and peaks_machine. Hidden (ignored) modules are left out;
-- their children take the nearest shown ancestor as parent.
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
  "bwd_flops", "exact_flops", "intensity", "achieved_flops", "achieved_bytes_per_s", "bound", "bound_expected",
}

-- Summary keys present only when known: the engine's micro-batches per optimizer step (fwd counts
-- and latencies are one micro-batch's, iter latency and samples/s the step's), the machine's
-- peaks (from the roofline analysis), and saturated: true when some count passed 2^63 - 1 and
-- stopped there.
M.OPTIONAL_SUMMARY_KEYS = { "gradient_accumulation_steps", "peak_flops", "peak_bytes_per_s", "ridge_intensity",
  "peaks_machine", "saturated" }

local OPTIONAL = { bytes = true, bwd_flops = true, exact_flops = true, intensity = true, achieved_flops = true,
                   achieved_bytes_per_s = true, bound = true, bound_expected = true }

local function module_object(profile, rec)
  local m = rec.module
  local v = {
    id = rec.id, parent = rec.parent and rec.parent.id, name = tree.path(profile, m), type = m.type,
    depth = m.depth, params = m.params, macs = m.macs, flops = m.flops, bytes = m.bytes,
    fwd_latency_s = m.fwd_latency_s, bwd_latency_s = m.bwd_latency_s, calls = m.calls,
    bwd_flops = m.bwd_flops, exact_flops = m.exact_flops or nil, intensity = m.intensity,
    achieved_flops = m.achieved_flops,
    achieved_bytes_per_s = m.achieved_bytes_per_s, bound = m.bound, bound_expected = m.bound_expected,
  }
  local keys = {}
  for _, k in ipairs(M.MODULE_KEYS) do
    if not OPTIONAL[k] or v[k] ~= nil then keys[#keys + 1] = k end
  end
  return enc.object(keys, v)
end

function M.render(profile)
  local modules = {}
  -- each module encoded at once, at its place in the document (its items are indented by 4)
  for i, rec in ipairs(tree.shown(profile)) do modules[i] = enc.encode_at(module_object(profile, rec), "    ") end
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
  values.modules = enc.raw_array(modules)
  return enc.encode(enc.object(keys, values)) .. "\n"
end

return M.render
