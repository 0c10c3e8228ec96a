-- scripts/reports/deepspeed.lua: DeepSpeed's Flops Profiler text (print_model_profile), character for character.
--
-- Deliberate differences from DeepSpeed: "params of model" prints
-- params per GPU * mp_size also standalone; the aggregated section prints every depth including the
-- innermost, and a module_depth beyond the tree prints what exists; unknown latencies (meta device)
-- print "n/a" and a zero latency prints "0 FLOPS" instead of dividing by zero; hidden (ignored)
-- modules give their rows to their children; fold = true containers print "(0-23): 24 x ...".
-- A profile that carries the device's peaks (prof.roofline.annotate: on cuda, or when asked for
-- with mfu = true / peaks = {...}) also gets MFU, the FLOPS printed beside it over the peak: a
-- "fwd MFU" line after the fwd FLOPS, an "MFU per GPU" line after the iteration FLOPS, and
-- "N% MFU" after each module's FLOPS (DeepSpeed prints none of these).
local units = require "prof.report.units"
local tree = require "prof.report.tree"

local M = {}

local P = units.DEFAULT_PRECISION

local NOTATIONS = {
  "Notations:",
  "data parallel size (dp_size), model parallel size(mp_size),",
  "number of parameters (params), number of multiply-accumulate operations(MACs),",
  "number of floating-point operations (flops), floating-point operations per second (FLOPS),",
  "fwd latency (forward propagation latency), bwd latency (backward propagation latency),",
  "step (weights update latency), iter latency (sum of fwd, bwd and step latency)",
  "",
}

local DETAIL_HEAD = {
  "",
  "------------------------------ Detailed Profile per GPU ------------------------------",
  "Each module profile is listed after its name in the following order: ",
  "params, percentage of total params, MACs, percentage of total MACs, fwd latency, "
    .. "percentage of total fwd latency, fwd FLOPS",
  "",
  "Note: 1. A module can have torch.nn.module or torch.nn.functional to compute logits (e.g. "
    .. "CrossEntropyLoss). They are not counted as submodules, thus not to be printed out. However "
    .. "they make up the difference between a parent's MACs (or latency) and the sum of its submodules'.",
  "2. Number of floating-point operations is a theoretical estimation, thus FLOPS computed using that "
    .. "could be larger than the maximum system throughput.",
  "3. The fwd latency listed in the top module's profile is directly captured at the module forward "
    .. "function in PyTorch, thus it's less than the fwd latency shown above which is captured in DeepSpeed.",
  "",
}

local function ljust(s, width)
  if #s >= width then return s end
  return s .. string.rep(" ", width - #s)
end

-- DeepSpeed's line_fmt = '{:<70}  {:<8}'.
local function line(label, value)
  return ljust(label, 70) .. "  " .. ljust(value, 8)
end

-- work / latency as FLOPS; unknown latency is "n/a", zero latency "0 FLOPS" (DeepSpeed divides).
local function rate(work, latency)
  if work == nil or latency == nil then return "n/a" end
  if latency == 0 then return units.flops_to_string(0) end
  return units.flops_to_string(work / latency)
end

-- A share of the peak as a percentage ("n/a" when unknown).
local function mfu_text(share)
  if share == nil then return "n/a" end
  return string.format("%.2f%%", 100 * share)
end

-- Python's repr of a str: single quotes unless the text holds ' and no ".
local function pyrepr(s)
  local q = (s:find("'", 1, true) and not s:find('"', 1, true)) and '"' or "'"
  s = s:gsub("[%c\\" .. q .. "]", function(c)
    if c == "\\" or c == q then return "\\" .. c end
    if c == "\n" then return "\\n" end
    if c == "\r" then return "\\r" end
    if c == "\t" then return "\\t" end
    return string.format("\\x%02x", c:byte())
  end)
  return q .. s .. q
end

-- Python's repr of a {str: str} dict.
local function pydict(items)
  local parts = {}
  for i, kv in ipairs(items) do parts[i] = pyrepr(kv[1]) .. ": " .. pyrepr(kv[2]) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function summary(out, p, root, opts)
  out("")
  out("-------------------------- DeepSpeed Flops Profiler --------------------------")
  out("Profile Summary at step " .. units.pystr(opts.profile_step or p.profile_step or 1) .. ":")
  for _, l in ipairs(NOTATIONS) do out(l) end

  local mp = p.mp_size or 1
  if p.saturated then
    out("Warning: some counts passed 2^63 - 1 and stopped there (saturated); they are lower bounds")
  end
  if p.engine then
    out(line("world size: ", units.pystr(p.world_size or 1)))
    out(line("data parallel size: ", units.pystr(p.dp_size or 1)))
    out(line("model parallel size: ", units.pystr(mp)))
    out(line("batch size per GPU: ", units.pystr(p.batch_size)))
    -- under gradient accumulation the counts and fwd/bwd latencies are one micro-batch's, the
    -- iteration the whole optimizer step's (profrun's line: DeepSpeed prints none)
    if (p.gradient_accumulation_steps or 1) > 1 then
      out(line("gradient accumulation steps (micro-batches per iter): ",
        units.pystr(p.gradient_accumulation_steps)))
    end
  end
  local params = p.params or (root and root.params)
  local params_model = p.params_model or (params and params * mp)
  local flops = p.fwd_flops or (root and root.flops)
  local flops_model = p.fwd_flops_model or (flops and flops * mp)
  out(line("params per GPU: ", units.params_to_string(params)))
  out(line("params of model = params per GPU * mp_size: ", units.params_to_string(params_model)))
  out(line("fwd MACs per GPU: ", units.macs_to_string(p.fwd_macs or (root and root.macs))))
  out(line("fwd flops per GPU: ", units.number_to_string(flops)))
  out(line("fwd flops of model = fwd flops per GPU * mp_size: ", units.number_to_string(flops_model)))

  local fwd = p.fwd_latency_s
  if fwd == nil and root then fwd = tree.duration(p, root) end
  out(line("fwd latency: ", units.duration_to_string(fwd)))
  out(line("fwd FLOPS per GPU = fwd flops per GPU / fwd latency: ", rate(flops, fwd)))
  local peak = p.peak_flops
  if peak then
    out(line("peak FLOPS per GPU" .. (p.peaks_machine and " (" .. p.peaks_machine .. ")" or "") .. ": ",
      units.flops_to_string(peak)))
    out(line("fwd MFU per GPU = fwd FLOPS per GPU / peak FLOPS: ", mfu_text(p.fwd_mfu)))
  end

  if p.engine then
    local factor = 2 + (p.recompute_fwd_factor or 0.0)
    local bwd, step = p.bwd_latency_s, p.step_latency_s
    local fwd_bwd = (fwd and bwd) and fwd + bwd or nil
    local iter = p.iter_latency_s
    local gas = p.gradient_accumulation_steps or 1
    if iter == nil and fwd_bwd and step then iter = gas * fwd_bwd + step end
    local fb = units.g(factor)
    local fb1 = units.g(factor + 1)
    out(line("bwd latency: ", units.duration_to_string(bwd)))
    out(line("bwd FLOPS per GPU = " .. fb .. " * fwd flops per GPU / bwd latency: ",
      rate(flops and factor * flops, bwd)))
    out(line("fwd+bwd FLOPS per GPU = " .. fb1 .. " * fwd flops per GPU / (fwd+bwd latency): ",
      rate(flops and (factor + 1) * flops, fwd_bwd)))
    if p.bwd_flops ~= nil then
      -- profrun ran the backward op by op: its measured counts beside DeepSpeed's 2x estimate
      out(line("bwd flops per GPU (measured): ", units.number_to_string(p.bwd_flops)))
      out(line("bwd FLOPS per GPU (measured) = bwd flops per GPU / bwd latency: ",
        rate(p.bwd_flops, bwd)))
    end
    out(line("step latency: ", units.duration_to_string(step)))
    out(line("iter latency: ", units.duration_to_string(iter)))
    -- the iteration ran gas micro-batches: its work is gas times the one profiled
    local per_iter = gas > 1 and " * " .. units.pystr(gas) .. " micro-batches" or ""
    out(line("FLOPS per GPU = " .. fb1 .. " * fwd flops per GPU" .. per_iter .. " / iter latency: ",
      rate(flops and (factor + 1) * flops * gas, iter)))
    if peak then out(line("MFU per GPU = FLOPS per GPU / peak FLOPS: ", mfu_text(p.iter_mfu))) end
    local sps = p.samples_per_s
    out(line("samples/second: ", units.pystr(sps and units.round(sps, P))))
  end
end

local function aggregated(out, p, opts)
  out("")
  out("----------------------------- Aggregated Profile per GPU -----------------------------")
  local k = opts.top_modules
  out("Top " .. units.pystr(k) .. " modules in terms of params, MACs or fwd latency at different model depths:")
  local levels = tree.aggregate(p)
  local depth = opts.module_depth
  if depth < 0 or depth > #levels then depth = #levels end
  k = math.max(k, 0)
  local function dict(entries, field, fmt)
    local items = {}
    for i, e in ipairs(tree.top(entries, field, k)) do items[i] = { e.type, fmt(e[field]) } end
    return pydict(items)
  end
  for d = 0, depth - 1 do
    local entries = levels[d + 1]
    out("depth " .. d .. ":")
    out("    params      - " .. dict(entries, "params", units.params_to_string))
    out("    MACs        - " .. dict(entries, "macs", units.macs_to_string))
    out("    fwd latency - " .. dict(entries, "latency", units.duration_to_string))
  end
end

-- opts.detailed_backward (profrun's, off by default: DeepSpeed's tree is forward only): each
-- module's measured backward after its fwd FLOPS, "bwd <flops> flops, <latency>, <FLOPS>".
local function backward_item(m)
  if m.bwd_flops == nil and m.bwd_latency_s == nil then return "bwd n/a" end
  return string.format("bwd %s flops, %s, %s", (units.number_to_string(m.bwd_flops or 0):gsub(" $", "")),
    units.duration_to_string(m.bwd_latency_s), rate(m.bwd_flops, m.bwd_latency_s))
end

local function detailed(out, p, root, with_backward)
  local peak = p.peak_flops
  for i, l in ipairs(DETAIL_HEAD) do
    if i == 4 and peak then l = l .. ", fwd MFU (fwd FLOPS / peak FLOPS)" end
    if i == 4 and with_backward then l = l .. ", bwd flops, bwd latency, bwd FLOPS (measured)" end
    out(l)
  end
  local total_params, total_macs = root.params, root.macs
  local total_duration = tree.duration(p, root)
  local function flops_repr(m)
    local duration = tree.duration(p, m)
    local items = {
      units.params_to_string(m.params) .. " = " .. units.pct(m.params, total_params) .. "% Params",
      units.macs_to_string(m.macs) .. " = " .. units.pct(m.macs, total_macs) .. "% MACs",
    }
    if duration == nil then
      items[3] = "n/a latency"
      items[4] = "n/a FLOPS"
    else
      items[3] = units.duration_to_string(duration) .. " = " .. units.pct(duration, total_duration) .. "% latency"
      if duration == 0 or m.flops == nil then
        items[4] = units.flops_to_string(m.flops and 0)
      else
        items[4] = units.flops_to_string(units.round(m.flops / duration, P))
      end
    end
    if peak then
      local ok = duration ~= nil and duration > 0 and m.flops ~= nil
      items[#items + 1] = (ok and mfu_text(m.flops / duration / peak) or "n/a") .. " MFU"
    end
    if with_backward then items[#items + 1] = backward_item(m) end
    if m.extra_repr and m.extra_repr ~= "" then items[#items + 1] = m.extra_repr end
    return table.concat(items, ", ")
  end
  out(tree.repr(p, flops_repr))
end

-- The report: function(profile, opts) -> text. opts: module_depth (-1), top_modules (1), detailed
-- (true), detailed_backward (false).
function M.render(profile, opts)
  opts = opts or {}
  local o = {
    module_depth = opts.module_depth or -1,
    top_modules = opts.top_modules or 1,
    detailed = opts.detailed == nil or opts.detailed,
    profile_step = opts.profile_step,
    detailed_backward = opts.detailed_backward == true,
  }
  local lines = {}
  local function out(s) lines[#lines + 1] = s end
  local root = tree.root(profile)
  summary(out, profile, root, o)
  aggregated(out, profile, o)
  if o.detailed and root then detailed(out, profile, root, o.detailed_backward) end
  out("------------------------------------------------------------------------------")
  return table.concat(lines, "\n") .. "\n"
end

return M.render
