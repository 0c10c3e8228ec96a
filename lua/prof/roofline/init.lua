-- prof.roofline — pure roofline arithmetic over a profile: intensity, achieved rates, shares of peak, bound.
--
-- The model (Williams, Waterman, Patterson 2009): a module doing F FLOPs and moving B bytes can run
-- no faster than t_roof = max(F / peak_flops, B / peak_bytes_per_s); at intensity I = F / B its
-- FLOP/s are bounded by min(peak_flops, I · peak_bytes_per_s). The ridge point
-- peak_flops / peak_bytes_per_s is the intensity where the two roofs meet.
--
-- Verdicts, for a module with forward latency t:
-- * "overhead" when t_roof / t < OVERHEAD_SHARE (10 %): the module is more than ten times slower
--   than either roof allows, so neither arithmetic nor memory traffic explains its time; what does
--   is what the roofline leaves out: per-call costs (Lua dispatch, op recording, allocation, thread
--   wake-up, shapes too small to fill the vector units) or, for one big call, a kernel far from
--   both roofs (scalar loop, one thread, strided access). 10 % is wide on purpose: the peaks are
--   measured, achievable rates (sgemm, memcpy), and kernels that are merely untuned still reach
--   30-90 % of the roof that limits them, so they keep their compute or memory verdict; below it,
--   speeding up the arithmetic or the traffic would not help. A module that did no counted work
--   but took time is overhead-bound too.
-- * else "compute" when I > ridge (or B = 0 < F: infinite intensity), "memory" otherwise.
-- * no latency (meta device, or 0 s): the bound its intensity predicts (compute or memory, never
--   overhead), bound_expected = true, achieved values nil.
-- * bytes unknown (nil): no intensity and no bound.
-- * the FLOPs are the exact convention's whatever the report prints: m.exact_flops when the
--   profile counted under deepspeed conventions (which count tanh, losses, operators... as 0), and
--   no verdict at all when that count is unknown (m.exact_flops == false).
-- Shares can exceed 1 when a module's data fits in cache: the memory roof is a DRAM copy's.
--
-- MFU (model FLOPs utilisation) is the FLOP/s a report prints divided by the device's peak
-- FLOP/s: per module, achieved_flops / peak (its flops_share, named as the field users look for);
-- for the forward, fwd_flops / fwd_latency_s / peak; for the step (the engine's iteration),
-- DeepSpeed's iteration FLOPS ((3 + recompute_fwd_factor) x fwd flops x micro-batches / iter
-- latency) / peak. The peak is the device's: on cpu the measured sgemm rate, on cuda the GPU's
-- GEMM rate for the dtype the model ran in (prof.device_peaks).
local M = {}

M.OVERHEAD_SHARE = 0.10

local function check_peaks(peaks, level)
  local f, b = type(peaks) == "table" and peaks.flops, type(peaks) == "table" and peaks.bytes_per_s
  -- x ~= x: NaN fails every comparison, so it is rejected explicitly
  if type(f) ~= "number" or f ~= f or f <= 0 or type(b) ~= "number" or b ~= b or b <= 0 then
    error("roofline: peaks must be {flops = FLOP/s > 0, bytes_per_s = B/s > 0}", level + 1)
  end
end

-- The ridge point in FLOP/B: intensities above it are compute-bound.
function M.ridge(peaks)
  check_peaks(peaks, 2)
  return peaks.flops / peaks.bytes_per_s
end

-- The roofline's attainable FLOP/s at intensity I (nil: no bytes, so the compute roof).
function M.attainable_flops(intensity, peaks)
  check_peaks(peaks, 2)
  if intensity == nil then return peaks.flops end
  return math.min(peaks.flops, intensity * peaks.bytes_per_s)
end

-- classify's body, into r, for peaks already checked.
local function classify_into(r, m, peaks)
  if m.exact_flops == false then return r end
  local flops, bytes = m.exact_flops or m.flops or 0, m.bytes
  local t = m.fwd_latency_s
  if t ~= nil and (t ~= t or t <= 0) then t = nil end   -- 0 s (or NaN) is "not timed"
  if bytes ~= nil and bytes > 0 then r.intensity = flops / bytes end
  if t ~= nil then
    r.achieved_flops = flops / t
    r.flops_share = r.achieved_flops / peaks.flops
    r.mfu = r.flops_share
    if bytes ~= nil then
      r.achieved_bytes_per_s = bytes / t
      r.bytes_share = r.achieved_bytes_per_s / peaks.bytes_per_s
      r.roof_share = math.max(flops / peaks.flops, bytes / peaks.bytes_per_s) / t
    end
  end
  if bytes == nil then return r end
  if flops == 0 and bytes == 0 then
    r.bound = t and "overhead" or nil
  elseif r.roof_share ~= nil and r.roof_share < M.OVERHEAD_SHARE then
    r.bound = "overhead"
  elseif r.intensity == nil or r.intensity > peaks.flops / peaks.bytes_per_s then
    r.bound = "compute"
  else
    r.bound = "memory"
  end
  r.bound_expected = r.bound ~= nil and t == nil
  return r
end

-- The roofline fields of one module record (reads flops, bytes, fwd_latency_s); a new table:
-- {intensity, achieved_flops, achieved_bytes_per_s, flops_share, bytes_share, roof_share, bound,
--  bound_expected}. Fields that cannot be known are nil.
function M.classify(m, peaks)
  check_peaks(peaks, 2)
  return classify_into({}, m, peaks)
end

M.MODULE_FIELDS = { "intensity", "achieved_flops", "achieved_bytes_per_s", "flops_share", "bytes_share",
  "roof_share", "mfu", "bound", "bound_expected" }

local function known(x)
  return type(x) == "number" and x == x and x > 0 and x < math.huge
end

-- The profile's MFU: fwd (the forward's FLOP/s / peak) and iter (the engine's iteration FLOP/s /
-- peak, nil outside the engine or without an iteration latency); nil where a latency is unknown.
-- The FLOPs are the profile's (the conventions it prints), as the FLOPS lines of its report.
function M.mfu(profile, peaks)
  check_peaks(peaks, 2)
  local flops = profile.fwd_flops
  if flops == nil and profile.modules and profile.modules[1] then flops = profile.modules[1].flops end
  if flops == nil then return {} end
  local out = {}
  local fwd = profile.fwd_latency_s
  if known(fwd) then out.fwd = flops / fwd / peaks.flops end
  local iter = profile.iter_latency_s
  if profile.engine and known(iter) then
    local work = (3 + (profile.recompute_fwd_factor or 0)) * flops * (profile.gradient_accumulation_steps or 1)
    out.iter = work / iter / peaks.flops
  end
  return out
end

-- annotate(profile, peaks) -> profile, mutated:
-- * profile: peak_flops (FLOP/s), peak_bytes_per_s (B/s, read + written), ridge_intensity (FLOP/B),
--   peaks_machine (peaks.machine, may be nil); fwd_mfu, iter_mfu (M.mfu's) and mfu, the step's:
--   iter_mfu where the engine timed an iteration, else fwd_mfu (nil when neither is known);
-- * every module (hidden ones too): the M.MODULE_FIELDS of M.classify — intensity (FLOP/B, nil when
--   bytes is 0 or unknown), achieved_flops and achieved_bytes_per_s (per second of forward latency,
--   nil without one), flops_share / bytes_share (achieved / peak, 0..1, may exceed 1 from cache),
--   roof_share (roofline time / measured time), mfu (= flops_share: achieved FLOP/s / peak),
--   bound ("compute" | "memory" | "overhead" | nil),
--   bound_expected (true when the bound comes from intensity alone).
-- Calling it again with other peaks overwrites every field (nil ones included).
function M.annotate(profile, peaks)
  check_peaks(peaks, 2)
  profile.peak_flops = peaks.flops
  profile.peak_bytes_per_s = peaks.bytes_per_s
  profile.ridge_intensity = peaks.flops / peaks.bytes_per_s
  profile.peaks_machine = peaks.machine
  local u = M.mfu(profile, peaks)
  profile.fwd_mfu, profile.iter_mfu = u.fwd, u.iter
  profile.mfu = u.iter or u.fwd
  -- every field again (a nil one clears an earlier annotate's), then classify's into the row
  -- itself: peaks were checked once above, and a million rows need no table each
  local fields = M.MODULE_FIELDS
  local function fill(m)
    for i = 1, #fields do m[fields[i]] = nil end
    classify_into(m, m, peaks)
  end
  local mods = profile.modules or {}
  -- a view over the session (prof.profile_view) stores no rows: it fills each as it builds it
  if getmetatable(mods) ~= nil and mods.decorate ~= nil then
    mods:decorate(fill)
  else
    for _, m in ipairs(mods) do fill(m) end
  end
  return profile
end

return M
