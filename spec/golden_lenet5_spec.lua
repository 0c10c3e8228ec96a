-- golden_lenet5_spec.lua — profrun end to end (model, ops, core, report, CLI) vs DeepSpeed LeNet5.
--
-- The reference is spec/fixtures/reports/deepspeed_lenet5_b1024_cpu.txt: DeepSpeed v0.19.6's
-- get_model_profile(LeNet5, (1024, 1, 32, 32), detailed, top_modules=3) on a CPU with torch 1.13
-- (recorded once, kept as it printed). spec/report_deepspeed_spec.lua renders a hand-built profile
-- table; this spec runs build/bin/profrun on a script instead, so every layer is exercised.
local run = require "spec.support.run"

local REFERENCE = run.ROOT .. "/spec/fixtures/reports/deepspeed_lenet5_b1024_cpu.txt"
local CONFIG = run.FIXTURES .. "/deepspeed_meta.json"   -- deepspeed conventions, device meta
local SCRIPT = run.FIXTURES .. "/lenet5_golden.lua"

-- '{:<70}  {:<8}': a summary value starts at byte 73.
local LABEL = 72

--[[
Normalised on both sides, and only these (each depends on the clock; profrun runs on meta, where
nothing runs and it prints n/a, DeepSpeed ran on a CPU):
  * the summary `fwd latency:` value, and `fwd FLOPS per GPU = ...` (flops / latency);
  * the values of the aggregated `    fwd latency - {...}` dicts (the class names stay compared);
  * in the detailed tree, each module's `<latency> = <pct>% latency, <FLOPS>`: the latency, its
    share of the total latency and FLOPS = flops / latency. DeepSpeed prints `0 FLOPS` for a module
    with 0 flops; profrun prints `n/a FLOPS` for every module on meta.
`Profile Summary at step 1` is not normalised: both ran one warm-up pass, so the step is 1 on both.
]]
local SUMMARY_TIMED = { "fwd latency: ", "fwd FLOPS per GPU = fwd flops per GPU / fwd latency: " }

local function normalise(lines)
  local out, count = {}, 0
  for i, l in ipairs(lines) do
    local n
    if l:sub(1, #SUMMARY_TIMED[1]) == SUMMARY_TIMED[1]
      or l:sub(1, #SUMMARY_TIMED[2]) == SUMMARY_TIMED[2] then
      l, n = l:sub(1, LABEL) .. "<t>", 1
    elseif l:match("^    fwd latency %- {") then
      l, n = l:gsub("(': )'[^']*'", "%1'<t>'")
    else
      local a, b
      l, a = l:gsub("[%d.]+ [mu]?s = [%d.]+%% latency, [%d.]+ [KMGTP]?FLOPS", "<t> latency, <F>")
      l, b = l:gsub("n/a latency, n/a FLOPS", "<t> latency, <F>")
      n = a + b
    end
    if n > 0 then count = count + 1 end
    out[i] = l
  end
  return out, count
end

local function find(lines, prefix)
  for i, l in ipairs(lines) do
    if l:sub(1, #prefix) == prefix then return i end
  end
end

describe("golden: profrun on DeepSpeed's LeNet5 test", function()
  local ours, ref

  setup(function()
    local r = run.profrun({ CONFIG, SCRIPT })
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
    ours = r.stdout
    ref = assert(run.read(REFERENCE))
  end)

  it("ends with a newline, as DeepSpeed's print does", function()
    assert.equal("\n", ref:sub(-1))
    assert.equal("\n", ours:sub(-1))
  end)

  it("differs only in timing fields and the two documented improvements", function()
    local a, na = normalise(run.lines(ours:sub(1, -2)))
    local b, nb = normalise(run.lines(ref:sub(1, -2)))
    -- 2 summary lines + the depth 0 and 1 latency dicts + 14 module rows, on each side
    -- (profrun's extra depth 2 dict is normalised too and removed below)
    assert.equal(18, nb)
    assert.equal(19, na)

    -- Deliberate difference 1 (README "Reports"): DeepSpeed prints 0 for the model's params
    -- outside its engine; profrun prints params per GPU * mp_size = 61,706 * 1 = "61.71 K".
    local label = "params of model = params per GPU * mp_size:"
    local pad = (" "):rep(LABEL - #label)
    local ia, ib = find(a, label), find(b, label)
    assert.equal(label .. pad .. "0       ", b[ib])
    assert.equal(label .. pad .. "61.71 K ", a[ia])
    a[ia], b[ib] = "<params of model>", "<params of model>"

    -- Deliberate difference 2: DeepSpeed's aggregated loop stops one depth short; profrun shows
    -- the innermost depth. LeNet5's depth 2, top 3 by params: Conv2d 156 + 2,416 + 48,120 =
    -- 50.69 K, Linear 10,164 + 850 = 11.01 K, then the first 0 seen (Tanh, feature_extractor.1);
    -- MACs: Conv2d 415,334,400, Linear 11,182,080, Tanh 0.
    local d2 = find(a, "depth 2:")
    assert.is_nil(find(b, "depth 2:"))
    assert.equal("    params      - {'Conv2d': '50.69 K', 'Linear': '11.01 K', 'Tanh': '0'}",
      a[d2 + 1])
    assert.equal(
      "    MACs        - {'Conv2d': '415.33 MMACs', 'Linear': '11.18 MMACs', 'Tanh': '0 MACs'}",
      a[d2 + 2])
    local t = "'%w+': '<t>'"
    assert.truthy(a[d2 + 3]:match("^    fwd latency %- {" .. t .. ", " .. t .. ", " .. t .. "}$"))
    assert.equal("", a[d2 + 4])                   -- then the blank line before the detailed banner
    for _ = 1, 4 do table.remove(a, d2) end

    -- Everything else byte for byte, trailing spaces included.
    for i = 1, math.max(#a, #b) do
      assert.equal(b[i], a[i], "line " .. i .. " differs")
    end
  end)

  it("prints DeepSpeed's totals unnormalised", function()
    -- flops 866,076,672, MACs 426,516,480, params 61,706 (DeepSpeed's unit test; models_spec.lua)
    assert.truthy(ours:find("\nfwd MACs per GPU:" .. (" "):rep(55) .. "426.52 MMACs\n", 1, true))
    assert.truthy(ours:find("\nfwd flops per GPU:" .. (" "):rep(54) .. "866.08 M\n", 1, true))
    assert.truthy(ours:find("\nparams per GPU:" .. (" "):rep(57) .. "61.71 K \n", 1, true))
  end)
end)
