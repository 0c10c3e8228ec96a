-- report-diff.lua — random profiles through the deepspeed and json report scripts, to compare two builds' writers.
--
-- In each of two built checkouts:
--   lua5.4 -e 'package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
--              package.cpath = "./build/lua/?.so;" .. package.cpath' scripts/tools/report-diff.lua [COUNT] > out
-- then diff the two outputs: a reshaping of a writer leaves every byte as it was. The profiles
-- (seeds 1 .. COUNT, 300 by default) have hidden, folded and repeated subtrees, multi-line reprs,
-- unknown and zero latencies, an engine or none, gradient accumulation and peaks.
local build = dofile("spec/fixtures/reports/build.lua")
local count = tonumber((...)) or 300
local deepspeed = dofile("scripts/reports/deepspeed.lua")
local json = dofile("scripts/reports/json.lua")

local TYPES = { "Linear", "ReLU", "Block", "ModuleList", "Conv2d", "We'ird", 'Q"t' }
local REPRS = { "", "", "k=3", "a\nb", "x, y" }

local function maybe(p, v)
  if math.random() < p then return v end
  return nil
end

local function latency()
  local r = math.random(4)
  if r == 1 then return nil end
  if r == 2 then return 0 end
  return math.random() * 0.01
end

local function node(depth)
  local n = {
    name = tostring(math.random(0, 5)), type = TYPES[math.random(#TYPES)],
    params = math.random(0, 5000) * (math.random(3) == 1 and 1000000 or 1),
    macs = math.random(0, 1e9), flops = math.random(0, 2e9), lat = latency(),
    bwd = maybe(1 / 3, math.random()), bwd_flops = maybe(1 / 3, math.random(0, 1e9)),
    hidden = math.random(6) == 1, fold = math.random(3) == 1, extra = REPRS[math.random(#REPRS)],
    bytes = maybe(1 / 2, math.random(0, 1e6)), children = {},
  }
  if depth < 4 then
    -- a repeated child (the same description twice) is what a folded container prints once
    local proto = math.random(2) == 1 and node(depth + 1) or nil
    for i = 1, math.random(0, 4) do
      n.children[i] = (proto and math.random(3) > 1) and proto or node(depth + 1)
    end
  end
  return n
end

for seed = 1, count do
  math.randomseed(seed)
  local summary = {
    engine = math.random(2) == 1, bwd_latency_s = latency(), step_latency_s = latency(),
    gradient_accumulation_steps = maybe(1 / 3, 4), samples_per_s = maybe(1 / 2, math.random() * 100),
    mp_size = math.random(2), batch_size = maybe(1 / 2, 8),
    recompute_fwd_factor = math.random(2) == 1 and 0.5 or 0.0,
  }
  if math.random(2) == 1 then
    summary.peak_flops, summary.peaks_machine, summary.fwd_mfu = 1e12, "m", math.random()
  end
  local p = build.profile(node(0), summary)
  if math.random(3) == 1 then build.meta(p) end
  local opts = {
    module_depth = math.random(-1, 4), top_modules = math.random(0, 3), detailed = math.random(5) > 1,
    detailed_backward = math.random(2) == 1, profile_step = maybe(1 / 3, 7),
  }
  io.write("=== ", seed, "\n", deepspeed(p, opts), json(p, {}))
end
