-- memory_timeline_spec.lua — p:export_memory_timeline and p:memory_peak_by_module on a CPU training step.
--
-- The model is Linear(4, 8) - ReLU - Linear(8, 2), float32, a batch of 3, loss = sum(output),
-- SGD with momentum (one momentum buffer per parameter, the parameter's size). By hand:
--   parameters       4*8*4 + 8*4 + 8*2*4 + 2*4           = 128 + 32 + 64 + 8 = 232 B
--   gradients        one per parameter                                       = 232 B
--   momentum         one per parameter                                       = 232 B
--   input x          3*4*4                                                   =  48 B
--   activations      what autograd saves that is neither parameter nor input:
--                    h = Linear0's output (saved by ReLU) 3*8*4 = 96, r = ReLU's output (saved
--                    by Linear2) 3*8*4 = 96                                  = 192 B
--   y                Linear2's output 3*2*4 = 24; loss 4; dL/dh (ReLU's backward) 3*8*4 = 96
-- The collector is stopped while the step runs so that blocks are freed where the runtime frees
-- them, not when Lua's collector happens to run; collectgarbage() frees the dead userdata's blocks.
local json = require "dkjson"
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"
local mt = require "prof.report.memory_timeline"

local PARAMS, INPUT, ACT = 232, 48, 192

local function tmpname()
  local p = os.tmpname()
  os.remove(p)
  return p .. ".json"
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function setup()
  core.set_default_device("cpu")
  T.manual_seed(1)
  local model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
  local opt = prof.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
  return model, opt, T.randn({ 3, 4 })
end

local function sum_row(row)
  local s = 0
  for i = 2, #row do s = s + row[i] end
  return s
end

local function by_module(rows)
  local out = {}
  for _, r in ipairs(rows) do out[r.module] = r end
  return out
end

describe("memory timeline", function()
  before_each(function() collectgarbage() collectgarbage("stop") end)
  after_each(function()
    collectgarbage("restart")
    core.set_default_device("meta")
  end)

  it("sums its categories at the peak to the allocator's peak, to the byte", function()
    -- everything, the model too, is allocated inside the window: nothing pre-exists
    local p = prof.profile{ profile_memory = true }
    local model, opt, x = setup()
    local loss = T.sum(model(x))
    loss:backward()
    opt:step()
    p:stop()
    local who = { model = model, optimizer = opt, inputs = { x } }
    local tl = mt.build(p:events(), who)
    -- derived from the parameters themselves: numel x 4 bytes each
    local numel = 0
    for _, w in ipairs(model:parameters()) do numel = numel + w:numel() end
    assert.equal(PARAMS, numel * 4)
    local c = tl.peak.by_category
    -- nothing is freed but the backward's own temporaries: the peak is the end of the step, with
    -- y (24) and loss (4) as the temporaries still held
    assert.same({ numel * 4, PARAMS, INPUT, 24 + 4, ACT, PARAMS, 0, 0 },
      { c.parameter, c.optimizer_state, c.input, c.temporary, c.activation, c.gradient,
        c.autograd_detail, c.unknown })
    local sum = 0
    for _, cat in ipairs(mt.CATEGORIES) do sum = sum + c[cat] end
    assert.equal(p:memory_peak("cpu"), sum)
    assert.equal(0, tl.preexisting_bytes)
    assert.equal(964, tl.peak.bytes)   -- 3 x 232 + 48 + 192 + 28
    assert.equal(964, p:memory_peak("cpu"))
    -- made inside the window, every block but the batch was tagged as it became what it is
    -- (parameters by nn, momentum by the optimizer, .grad and saved tensors by autograd): without
    -- naming anything the categories hold, and x, which Linear0 saves and nobody calls the
    -- input, is an activation
    local bare = mt.build(p:events(), {}).peak.by_category
    assert.same({ PARAMS, PARAMS, 0, 24 + 4, ACT + INPUT, PARAMS, 0 },
      { bare.parameter, bare.optimizer_state, bare.input, bare.temporary, bare.activation,
        bare.gradient, bare.unknown })
  end)

  it("finds the peak inside the backward of a steady-state step, per category and per module", function()
    local model, opt, x = setup()
    local function step()
      opt:zero_grad()
      local loss = T.sum(model(x))
      loss:backward()
      loss = nil   -- luacheck: ignore 311 (the last reference goes before the collection)
      collectgarbage()
      opt:step()
    end
    step()   -- the momentum buffers exist from the first step on
    collectgarbage()
    local p = prof.profile{ profile_memory = true }
    step()
    p:stop()
    local who = { model = model, optimizer = opt, inputs = { x } }
    local tl = mt.build(p:events(), who)
    -- parameters, momentum and x were live before the window: the timeline starts with them
    assert.equal(PARAMS + PARAMS + INPUT, tl.preexisting_bytes)
    -- the peak: Linear0's backward has just made b's gradient (the last of the four), dL/dh is
    -- not yet freed, the activations are still held (the collection comes after the backward)
    local c = tl.peak.by_category
    assert.same({ PARAMS, PARAMS, INPUT, 24 + 4 + 96, ACT, PARAMS, 0, 0 },
      { c.parameter, c.optimizer_state, c.input, c.temporary, c.activation, c.gradient,
        c.autograd_detail, c.unknown })
    assert.equal(1060, tl.peak.bytes)
    -- the allocator counts from the window's start: what pre-existed is the difference
    assert.equal(p:memory_peak("cpu"), tl.peak.bytes - tl.preexisting_bytes)
    assert.equal(548, p:memory_peak("cpu"))

    local rows = p:memory_peak_by_module(who)
    local m = by_module(rows)
    -- Linear0: weight 128 + bias 32 as parameter, momentum and gradient; h (its output) 96
    assert.same({ "Linear", 160, 160, 160, 96, 0, 576 },
      { m["0"].type, m["0"].parameter, m["0"].optimizer_state, m["0"].gradient, m["0"].activation,
        m["0"].temporary, m["0"].total })
    -- Linear2: 64 + 8 three times over, and y (24) it allocated
    assert.same({ "Linear", 72, 72, 72, 0, 24, 240 },
      { m["2"].type, m["2"].parameter, m["2"].optimizer_state, m["2"].gradient, m["2"].activation,
        m["2"].temporary, m["2"].total })
    -- ReLU: r (its output, saved by Linear2) and dL/dh (its backward's output)
    assert.same({ "ReLU", 96, 96, 192 },
      { m["1"].type, m["1"].activation, m["1"].temporary, m["1"].total })
    -- outside every module: x, and the loss (sum ran outside the model)
    assert.same({ 48, 4, 52 }, { m["(outside modules)"].input, m["(outside modules)"].temporary,
      m["(outside modules)"].total })
    assert.same({ "0", "2", "1", "(outside modules)" },
      { rows[1].module, rows[2].module, rows[3].module, rows[4].module })   -- sorted by bytes
    local total = 0
    for _, r in ipairs(rows) do total = total + r.total end
    assert.equal(tl.peak.bytes, total)
    local text = rows:table()
    assert.matches("\n0 +Linear +160 +160 +160 +96 +0 +0 +0 +576\n", text)
    assert.matches("\nTotal +232 +232 +232 +192 +48 +124 +0 +1060\n", text)

    -- the JSON parses; its last sample is what is live at the end: parameters, gradients,
    -- momentum and x (the step's temporaries and activations were collected)
    local path = tmpname()
    p:export_memory_timeline(path, who)
    local body = read(path)
    local doc = assert(json.decode(body))
    os.remove(path)
    assert.equal("profrun.memory_timeline/1", doc.schema)
    assert.equal(0, doc.events_dropped)
    assert.same(mt.CATEGORIES, doc.categories)
    local times, sizes = doc.timeline[1], doc.timeline[2]
    assert.equal(#times, #sizes)
    assert.equal(PARAMS * 3 + INPUT, sum_row(sizes[#sizes]))
    assert.equal(0, sizes[#sizes][1])   -- torch's rows start with a 0 column
    assert.same({ 0, PARAMS, PARAMS, INPUT, 0, 0, PARAMS, 0, 0 }, sizes[#sizes])
    for i = 2, #times do assert.is_true(times[i] > times[i - 1]) end
    -- µs with exactly three decimals (ns precision), as the trace's ts; the peak's is a sample's
    assert.matches('"timeline": %[%[%d+%.%d%d%d,%d+%.%d%d%d,', body)
    local at
    for i, row in ipairs(sizes) do if at == nil and sum_row(row) == 1060 then at = i end end
    assert.equal(times[at], doc.peak.t_us)
    local top = 0
    for _, row in ipairs(sizes) do top = math.max(top, sum_row(row)) end
    assert.equal(1060, top)
    assert.equal(1060, doc.peak.bytes)
    assert.equal(548, doc.peak.allocator_peak)
    assert.equal(4, #doc.peak_by_module)
    assert.equal(576, doc.peak_by_module[1].total)

    -- torch's own layout: the bare [times, sizes]
    p:export_memory_timeline(path, { model = model, optimizer = opt, inputs = { x }, layout = "torch" })
    local bare = assert(json.decode(read(path)))
    os.remove(path)
    assert.equal(2, #bare)
    assert.same(sizes[#sizes], bare[2][#bare[2]])
  end)

  it("keeps a gradient freed inside the window a gradient (autograd tags the .grad it makes)", function()
    local model, opt, x = setup()
    local function step()
      opt:zero_grad()
      T.sum(model(x)):backward()
      collectgarbage()
      opt:step()
    end
    step()
    collectgarbage()
    local p = prof.profile{ profile_memory = true }
    step()   -- A: its gradients are made in the window ...
    step()   -- B: ... and freed by B's zero_grad, before B's are made
    p:stop()
    local tl = mt.build(p:events(), { model = model, optimizer = opt, inputs = { x } })
    local TEMP, GRAD = 1 + 4, 1 + 6   -- columns of a sizes row (torch's leading 0 first)
    local top_temp, drops = 0, 0
    for i, row in ipairs(tl.sizes) do
      top_temp = math.max(top_temp, row[TEMP])
      assert.is_true(row[GRAD] <= PARAMS)
      if i > 1 and tl.sizes[i - 1][GRAD] == PARAMS and row[GRAD] < PARAMS then drops = drops + 1 end
    end
    -- A's gradients leave as gradients: the column falls once from a full set, and the temporary
    -- column never holds them. Its top is inside each backward, when ReLU's backward has made
    -- dL/dh (96) and Linear2's dL/dr (96) is not yet freed, beside y (24) and loss (4): 220,
    -- below the 232 that untagged gradients would add.
    assert.equal(1, drops)
    assert.equal(24 + 4 + 96 + 96, top_temp)
    -- the peak is A's backward, as in the one-step window; B's equals it and comes later
    assert.equal(1060, tl.peak.bytes)
    assert.equal(548, p:memory_peak("cpu"))
    assert.same({ 0, PARAMS, PARAMS, INPUT, 0, 0, PARAMS, 0, 0 }, tl.sizes[#tl.sizes])
  end)

  it("counts a batch made and freed inside the window as input when it is tagged", function()
    local model, opt = setup()
    local function step(x)
      opt:zero_grad()
      T.sum(model(x)):backward()
      collectgarbage()
      opt:step()
    end
    step(T.randn({ 3, 4 }))
    collectgarbage()
    local p = prof.profile{ profile_memory = true }
    local x = T.randn({ 3, 4 }):tag_memory("input")
    step(x)
    x = nil   -- luacheck: ignore 311 (the batch dies inside the window)
    collectgarbage()
    p:stop()
    local tl = mt.build(p:events(), { model = model, optimizer = opt })
    -- only parameters and momentum pre-exist now; the batch's 48 B count from its allocation
    assert.equal(PARAMS * 2, tl.preexisting_bytes)
    assert.equal(1060, tl.peak.bytes)
    assert.equal(INPUT, tl.peak.by_category.input)
    assert.equal(1060 - PARAMS * 2, p:memory_peak("cpu"))
    assert.equal(INPUT, by_module(tl.by_module)["(outside modules)"].input)
    -- freed before the end: the last sample holds parameters, momentum and gradients only
    assert.same({ 0, PARAMS, PARAMS, 0, 0, 0, PARAMS, 0, 0 }, tl.sizes[#tl.sizes])
    assert.error_matches(function() T.randn({ 2 }):tag_memory("weights") end, "expected a memory category")
  end)

  it("counts a free of a block made before the window as unknown, from the start", function()
    -- crafted events, as a C host that reports every block would give them
    local evs = {
      { kind = "memory", device = "cpu", address = 16, value = -100, t_begin_ns = 1000 },
      { kind = "memory", device = "cpu", address = 32, value = 40, t_begin_ns = 2000, module_path = "enc" },
      { kind = "memory_tag", device = "cpu", address = 32, category = "activation", t_begin_ns = 2000 },
      { kind = "memory", device = "cpu", address = 16, value = 8, t_begin_ns = 3000 },
      { kind = "module", module_path = "enc", name = "Encoder", t_begin_ns = 0 },
    }
    local tl = mt.build(evs, {})
    assert.equal(100, tl.preexisting_bytes)
    -- from the window's first event (the module's, at 0): 100 unknown, then -100, +40
    -- (activation: tagged), +8 (temporary: the address's new block, untagged)
    assert.same({ 0, 1, 2, 3 }, tl.times)
    assert.same({ 0, 0, 0, 0, 0, 0, 0, 0, 100 }, tl.sizes[1])
    assert.same({ 0, 0, 0, 0, 0, 0, 0, 0, 0 }, tl.sizes[2])
    assert.same({ 0, 0, 0, 0, 0, 40, 0, 0, 0 }, tl.sizes[3])
    assert.same({ 0, 0, 0, 0, 8, 40, 0, 0, 0 }, tl.sizes[4])
    assert.same({ 100, 0 }, { tl.peak.bytes, tl.peak.t_ns })
    assert.equal(48, tl.final_bytes)
    assert.same({ { "(outside modules)", 100, 100 } },
      { { tl.by_module[1].module, tl.by_module[1].unknown, tl.by_module[1].total } })
    -- without the pre-existing block the peak is the end, and the activation is the encoder's
    local later = mt.build({ evs[2], evs[3], evs[5] }, {}).by_module
    assert.same({ "enc", "Encoder", 40, 40 },
      { later[1].module, later[1].type, later[1].activation, later[1].total })
  end)

  it("says in the JSON how many events a full buffer dropped", function()
    local model, _, x = setup()
    local function window(capacity)
      model:zero_grad()   -- every window's backward makes the gradients afresh
      local p = prof.profile{ profile_memory = true, capacity = capacity }
      T.sum(model(x)):backward()
      p:stop()
      collectgarbage()
      return p
    end
    local all = #window(nil):events()
    local p = window(3)
    assert.equal(all - 3, p:events_dropped())
    assert.is_true(all - 3 > 0)
    local path = tmpname()
    p:export_memory_timeline(path, { model = model })
    local doc = assert(json.decode(read(path)))
    os.remove(path)
    assert.equal(all - 3, doc.events_dropped)
  end)

  it("refuses a window recorded without profile_memory", function()
    local p = prof.profile{}
    p:stop()
    assert.error_matches(function() p:export_memory_timeline("x.json") end, "profile_memory=true")
    assert.error_matches(function() p:memory_peak_by_module() end, "profile_memory=true")
    assert.error_matches(function() p:export_memory_timeline("m.html") end, "writes %.json")
  end)
end)
