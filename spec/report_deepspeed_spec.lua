-- spec/report_deepspeed_spec.lua: the DeepSpeed text report against DeepSpeed's real output and hand-derived layouts.
local build = dofile("spec/fixtures/reports/build.lua")
local render = dofile("scripts/reports/deepspeed.lua")

local REPORTS = "spec/fixtures/reports/"
-- DeepSpeed v0.19.6's own text for LeNet5 at batch 1024 (torch 1.13, CPU), as it printed it
local REFERENCE = REPORTS .. "deepspeed_lenet5_b1024_cpu.txt"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function lines(s)
  local out = {}
  for l in s:gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

local function lenet() return dofile(REPORTS .. "lenet5.lua") end

-- Blanks the fields that depend on the machine's clock, and nothing else.
local function normalise(text)
  local out = {}
  for _, l in ipairs(lines(text)) do
    if l:match("^fwd latency: ") or l:match("^fwd FLOPS per GPU = ") then
      l = l:sub(1, 72) .. "<t>"
    elseif l:match("^    fwd latency %- ") then
      l = "    fwd latency - <t>"
    else
      l = l:gsub("[%d.]+ [mu]?s = [%d.]+%% latency, [%d.]+ [KMGT]?FLOPS", "<t> = <p>%% latency, <F>")
    end
    out[#out + 1] = l
  end
  return out
end

local function has(text, s)
  return text:find(s, 1, true) ~= nil
end

local function find_line(text, prefix)
  for _, l in ipairs(lines(text)) do
    if l:sub(1, #prefix) == prefix then return l end
  end
end

local function section(text, first, last)
  local out, on = {}, false
  for _, l in ipairs(lines(text)) do
    if l == first then on = true end
    if on then out[#out + 1] = l end
    if on and l == last then break end
  end
  return table.concat(out, "\n")
end

describe("scripts/reports/deepspeed.lua", function()
  describe("LeNet5, batch 1024, top_modules 3 (DeepSpeed's own reference run)", function()
    local text = render(lenet(), { top_modules = 3 })

    it("matches DeepSpeed's output byte for byte, but for timings and the two documented fixes", function()
      local ref = read(REFERENCE)
      assert.is_true(has(ref, "\n    fwd latency - {'Sequential': '113.11 ms'}\n"))
      -- documented difference 1: params of model = params per GPU * mp_size prints the real product
      local expected = ref:gsub("(params of model = params per GPU %* mp_size: +)0       \n", "%161.71 K \n")
      -- documented difference 2: the innermost depth is printed. By hand from the fixture:
      -- depth 2 groups (first encounter) Conv2d 156+2416+48120 = 50692, 120422400+245760000+49152000
      -- = 415334400 MACs; Tanh 0; AvgPool2d 0; Linear 10164+850 = 11014, 10321920+860160 = 11182080.
      -- Ties at 0 keep first-encounter order (Tanh before AvgPool2d).
      expected = expected:gsub("(    fwd latency %- {'Sequential': '113.11 ms'}\n)", "%1"
        .. "depth 2:\n"
        .. "    params      - {'Conv2d': '50.69 K', 'Linear': '11.01 K', 'Tanh': '0'}\n"
        .. "    MACs        - {'Conv2d': '415.33 MMACs', 'Linear': '11.18 MMACs', 'Tanh': '0 MACs'}\n"
        .. "    fwd latency - {'Conv2d': '66.71 ms', 'Tanh': '26.07 ms', 'AvgPool2d': '17.03 ms'}\n")
      local want, got = normalise(expected), normalise(text)
      for i = 1, math.max(#want, #got) do
        assert.are.equal(want[i], got[i], "line " .. i)
      end
    end)

    it("prints the timing-derived values DeepSpeed's formulas give for the fixture's latencies", function()
      -- the whole text, as DeepSpeed's print_model_profile (run in python3, with the two fixes)
      -- prints it for the fixture's numbers
      assert.are.equal(read(REPORTS .. "lenet5_cpu_top3.txt"), text)
      -- a few by hand: 112.34/113.3 = 99.153% ; 4816896 flops / 13.8 ms = 349.05 MFLOPS;
      -- depth 2 latencies: Conv2d 48.17+13.98+4.56 = 66.71 ms, Tanh 21.53+3.98+0.31471+0.24056 = 26.07 ms
      assert.is_true(has(text, "50.69 K = 82.15% Params, 415.33 MMACs = 97.38% MACs, "
        .. "112.34 ms = 99.15% latency, 7.51 GFLOPS\n"))
      assert.is_true(has(text, "(2): AvgPool2d(0 = 0% Params, 0 MACs = 0% MACs, "
        .. "13.8 ms = 12.18% latency, 349.05 MFLOPS, kernel_size=2"))
      assert.is_true(has(text, "'Conv2d': '66.71 ms', 'Tanh': '26.07 ms', 'AvgPool2d': '17.03 ms'"))
      assert.are.equal("fwd FLOPS per GPU = fwd flops per GPU / fwd latency:                    7.64 GFLOPS",
        find_line(text, "fwd FLOPS per GPU"))
    end)

    it("keeps DeepSpeed's trailing spaces and 70-column alignment", function()
      assert.are.equal("params per GPU:" .. string.rep(" ", 57) .. "61.71 K ", find_line(text, "params per GPU:"))
      assert.are.equal("Each module profile is listed after its name in the following order: ",
        find_line(text, "Each module profile"))
      assert.are.equal("", lines(text)[1])
      assert.are.equal(string.rep("-", 78), lines(text)[#lines(text)])
    end)
  end)

  it("pins the meta-device variant: n/a latencies, no division", function()
    local text = render(build.meta(lenet()), { top_modules = 3 })
    assert.are.equal(read(REPORTS .. "lenet5_meta_top3.txt"), text)
    assert.are.equal("fwd latency:" .. string.rep(" ", 60) .. "n/a     ", find_line(text, "fwd latency:"))
    assert.are.equal("fwd FLOPS per GPU = fwd flops per GPU / fwd latency:                    n/a     ",
      find_line(text, "fwd FLOPS per GPU"))
    assert.is_true(has(text, "\n    (0): Conv2d(156 = 0.25% Params, 120.42 MMACs = 28.23% MACs, "
      .. "n/a latency, n/a FLOPS, "
      .. "1, 6, kernel_size=(5, 5), stride=(1, 1))\n"))
    assert.is_true(has(text, "\n    fwd latency - {'Conv2d': 'n/a', 'Tanh': 'n/a', 'AvgPool2d': 'n/a'}\n"))
  end)

  describe("module_depth", function()
    local function depths(text)
      local out = {}
      for d in text:gmatch("\ndepth (%d+):\n") do out[#out + 1] = tonumber(d) end
      return out
    end
    it("-1 prints every depth, the innermost included", function()
      assert.are.same({ 0, 1, 2 }, depths(render(lenet(), {})))
    end)
    it("1 prints depth 0 only (DeepSpeed's range(module_depth))", function()
      assert.are.same({ 0 }, depths(render(lenet(), { module_depth = 1 })))
    end)
    it("0 prints only the header", function()
      local text = render(lenet(), { module_depth = 0 })
      assert.are.same({}, depths(text))
      assert.is_true(has(text, "at different model depths:\n\n------------------------------ Detailed"))
    end)
    it("beyond the tree prints what exists instead of failing", function()
      assert.are.same({ 0, 1, 2 }, depths(render(lenet(), { module_depth = 10 })))
    end)
  end)

  it("defaults to top_modules 1 and a detailed section; detailed = false leaves it out", function()
    local text = render(lenet())
    assert.is_true(has(text, "\nTop 1 modules in terms of"))
    assert.is_true(has(text, "\n    params      - {'Conv2d': '50.69 K'}\n"))
    local short = render(lenet(), { detailed = false })
    assert.is_false(has(short, "Detailed Profile"))
    assert.are.equal("    fwd latency - {'Conv2d': '66.71 ms'}\n" .. string.rep("-", 78) .. "\n",
      short:sub(-#"    fwd latency - {'Conv2d': '66.71 ms'}\n" - 79))
  end)

  it("keeps first-encounter order for top-k ties, like Python's stable sorted(reverse=True)", function()
    local p = build.profile({ type = "Net", params = 24, lat = 1.0, children = {
      { name = "a", type = "A", params = 5, lat = 0.25 },
      { name = "b", type = "B", params = 7, lat = 0.25 },
      { name = "c", type = "C", params = 5, lat = 0.25 },
      { name = "d", type = "D", params = 7, lat = 0.25 },
    } })
    local text = render(p, { top_modules = 3, detailed = false })
    assert.is_true(has(text, "\n    params      - {'B': '7', 'D': '7', 'A': '5'}\n"))
    assert.is_true(has(text, "\n    MACs        - {'A': '0 MACs', 'B': '0 MACs', 'C': '0 MACs'}\n"))
    assert.is_true(has(text, "\n    fwd latency - {'A': '250 ms', 'B': '250 ms', 'C': '250 ms'}\n"))
  end)

  -- a folded run says its numbers are one layer's ("each:")
  describe("folding (torch 2.x ModuleList style)", function()
    -- Net: layers = ModuleList of 3 x Linear(4, 4) on a batch of 2 (20 params, 2*4*4 = 32 MACs
    -- each), head = Linear(4, 2) (10 params, 16 MACs). Totals 70 params, 112 MACs.
    local LIN = "in_features=4, out_features=4, bias=True"
    local function net(lats, fold)
      return build.profile({ type = "Net", params = 70, macs = 112, flops = 224, lat = lats and 0.01,
        children = {
          { name = "layers", type = "ModuleList", params = 60, macs = 96, flops = 192, fold = fold,
            children = {
              { name = "0", type = "Linear", params = 20, macs = 32, flops = 64, lat = lats and lats[1], extra = LIN },
              { name = "1", type = "Linear", params = 20, macs = 32, flops = 64, lat = lats and lats[2], extra = LIN },
              { name = "2", type = "Linear", params = 20, macs = 32, flops = 64, lat = lats and lats[3], extra = LIN },
            } },
          { name = "head", type = "Linear", params = 10, macs = 16, flops = 32, lat = lats and 0.001,
            extra = "in_features=4, out_features=2, bias=True" },
        } }, lats == nil and { device = "meta" } or nil)
    end
    local function tree_text(text)
      return section(text, "Net(", ")")
    end

    it("folds identical consecutive children on meta and keeps the container's stats line", function()
      -- 60/70 = 85.71%, 20/70 = 28.57%, 10/70 = 14.29%; MACs 96/112, 32/112, 16/112 alike
      assert.are.equal(table.concat({
        "Net(",
        "  70 = 100% Params, 112 MACs = 100% MACs, n/a latency, n/a FLOPS",
        "  (layers): ModuleList(",
        "    60 = 85.71% Params, 96 MACs = 85.71% MACs, n/a latency, n/a FLOPS",
        "    (0-2): 3 x Linear(each: 20 = 28.57% Params, 32 MACs = 28.57% MACs, n/a latency, n/a FLOPS, " .. LIN .. ")",
        "  )",
        "  (head): Linear(10 = 14.29% Params, 16 MACs = 14.29% MACs, n/a latency, n/a FLOPS, "
          .. "in_features=4, out_features=2, bias=True)",
        ")",
      }, "\n"), tree_text(render(net(nil, true))))
    end)

    it("does not fold when latencies differ, and folds only the identical run", function()
      local text = render(net({ 0.003, 0.002, 0.001 }, true))
      assert.is_true(has(text, "\n    (0): Linear(20 = 28.57% Params, 32 MACs = 28.57% MACs, "
        .. "3 ms = 30% latency, 21.33 KFLOPS, "))
      assert.is_true(has(text, "\n    (1): Linear("))
      assert.is_true(has(text, "\n    (2): Linear("))
      local partial = render(net({ 0.002, 0.002, 0.001 }, true))
      assert.is_true(has(partial, "\n    (0-1): 2 x Linear(each: 20 = 28.57% Params, 32 MACs = 28.57% MACs, "
        .. "2 ms = 20% latency, 32 KFLOPS, "))
      assert.is_true(has(partial, "\n    (2): Linear(20 = 28.57% Params, 32 MACs = 28.57% MACs, "
        .. "1 ms = 10% latency, 64 KFLOPS, "))
    end)

    it("leaves containers without fold unfolded", function()
      local text = render(net(nil, false))
      assert.is_false(has(text, " x Linear"))
      assert.is_true(has(text, "\n    (2): Linear(20 = 28.57% Params"))
    end)

    it("folds multi-line children with PyTorch's indentation", function()
      local function block(name)
        return { name = name, type = "Block", params = 20, macs = 32, children = {
          { name = "fc", type = "Linear", params = 20, macs = 32, extra = LIN } } }
      end
      local p = build.meta(build.profile({ type = "Net", params = 40, macs = 64, children = {
        { name = "blocks", type = "ModuleList", params = 40, macs = 64, fold = true,
          children = { block("0"), block("1") } } } }))
      assert.are.equal(table.concat({
        "Net(",
        "  40 = 100% Params, 64 MACs = 100% MACs, n/a latency, n/a FLOPS",
        "  (blocks): ModuleList(",
        "    40 = 100% Params, 64 MACs = 100% MACs, n/a latency, n/a FLOPS",
        "    (0-1): 2 x Block(each:",
        "      20 = 50% Params, 32 MACs = 50% MACs, n/a latency, n/a FLOPS",
        "      (fc): Linear(20 = 50% Params, 32 MACs = 50% MACs, n/a latency, n/a FLOPS, " .. LIN .. ")",
        "    )",
        "  )",
        ")",
      }, "\n"), section(render(p), "Net(", ")"))
    end)
  end)

  it("prints a hidden module's children in its place, and aggregates the shown tree", function()
    -- Root(enc: Encoder [ignored] (a: Linear(8, 8), b: ReLU), out: Linear(8, 1)), batch 1
    local p = build.profile({ type = "Root", params = 81, macs = 72, flops = 152, lat = 0.004, children = {
      { name = "enc", type = "Encoder", params = 72, macs = 64, flops = 136, lat = 0.003, hidden = true,
        children = {
          { name = "a", type = "Linear", params = 72, macs = 64, flops = 128, lat = 0.002,
            extra = "in_features=8, out_features=8, bias=True" },
          { name = "b", type = "ReLU", flops = 8, lat = 0.001 },
        } },
      { name = "out", type = "Linear", params = 9, macs = 8, flops = 16, lat = 0.001,
        extra = "in_features=8, out_features=1, bias=True" },
    } })
    local text = render(p, { top_modules = 3 })
    assert.are.equal(table.concat({
      "Root(",
      "  81 = 100% Params, 72 MACs = 100% MACs, 4 ms = 100% latency, 38 KFLOPS",
      "  (a): Linear(72 = 88.89% Params, 64 MACs = 88.89% MACs, 2 ms = 50% latency, 64 KFLOPS, "
        .. "in_features=8, out_features=8, bias=True)",
      "  (b): ReLU(0 = 0% Params, 0 MACs = 0% MACs, 1 ms = 25% latency, 8 KFLOPS)",
      "  (out): Linear(9 = 11.11% Params, 8 MACs = 11.11% MACs, 1 ms = 25% latency, 16 KFLOPS, "
        .. "in_features=8, out_features=1, bias=True)",
      ")",
    }, "\n"), section(text, "Root(", ")"))
    assert.is_false(has(text, "Encoder"))
    -- depth 1 of the shown tree: Linear (a + out = 81 params, 72 MACs, 3 ms), ReLU
    assert.is_true(has(text, "\ndepth 1:\n    params      - {'Linear': '81', 'ReLU': '0'}\n"
      .. "    MACs        - {'Linear': '72 MACs', 'ReLU': '0 MACs'}\n"
      .. "    fwd latency - {'Linear': '3 ms', 'ReLU': '1 ms'}\n"))
    assert.is_false(has(text, "\ndepth 2:"))
  end)

  it("prints a zero latency as DeepSpeed does, without dividing by it", function()
    local p = lenet()
    p.fwd_latency_s = 0
    for _, m in ipairs(p.modules) do m.fwd_latency_s = 0 end
    local text = render(p)
    assert.are.equal("fwd latency:" .. string.rep(" ", 60) .. "0 s     ", find_line(text, "fwd latency:"))
    assert.are.equal("fwd FLOPS per GPU = fwd flops per GPU / fwd latency:                    0 FLOPS ",
      find_line(text, "fwd FLOPS per GPU"))
    assert.is_true(has(text, "\n  61.71 K = 100% Params, 426.52 MMACs = 100% MACs, 0 s = 0% latency, 0 FLOPS\n"))
  end)

  it("prints the engine summary with bwd, step and iter lines and 2 + r factors", function()
    -- expected lines printed by python3 with DeepSpeed's line_fmt and formatters:
    -- flops 866076672, fwd 0.1 s, bwd 0.2 s, step 0.05 s, r = 0.5, world 8, dp 4, mp 2, batch 16
    local p = lenet()
    p.engine, p.profile_step = true, 10
    p.world_size, p.dp_size, p.mp_size, p.batch_size = 8, 4, 2, 16
    p.params_model, p.fwd_flops_model = 61706 * 2, 866076672 * 2
    p.recompute_fwd_factor = 0.5
    p.fwd_latency_s, p.bwd_latency_s, p.step_latency_s = 0.1, 0.2, 0.05
    p.samples_per_s = 16 * 8 / (0.1 + 0.2 + 0.05)
    local text = render(p)
    assert.is_true(has(text, "\nProfile Summary at step 10:\n"))
    local summary = section(text, "world size:" .. string.rep(" ", 61) .. "8       ", "samples/second:"
      .. string.rep(" ", 57) .. "365.71  ")
    assert.are.equal(table.concat({
      "world size:                                                             8       ",
      "data parallel size:                                                     4       ",
      "model parallel size:                                                    2       ",
      "batch size per GPU:                                                     16      ",
      "params per GPU:                                                         61.71 K ",
      "params of model = params per GPU * mp_size:                             123.41 K",
      "fwd MACs per GPU:                                                       426.52 MMACs",
      "fwd flops per GPU:                                                      866.08 M",
      "fwd flops of model = fwd flops per GPU * mp_size:                       1.73 G  ",
      "fwd latency:                                                            100 ms  ",
      "fwd FLOPS per GPU = fwd flops per GPU / fwd latency:                    8.66 GFLOPS",
      "bwd latency:                                                            200 ms  ",
      "bwd FLOPS per GPU = 2.5 * fwd flops per GPU / bwd latency:              10.83 GFLOPS",
      "fwd+bwd FLOPS per GPU = 3.5 * fwd flops per GPU / (fwd+bwd latency):    10.1 GFLOPS",
      "step latency:                                                           50 ms   ",
      "iter latency:                                                           350 ms  ",
      "FLOPS per GPU = 3.5 * fwd flops per GPU / iter latency:                 8.66 GFLOPS",
      "samples/second:                                                         365.71  ",
    }, "\n"), summary)
  end)

  it("prints no engine lines standalone", function()
    local text = render(lenet())
    assert.is_false(has(text, "world size:"))
    assert.is_false(has(text, "bwd latency:"))
  end)
end)
