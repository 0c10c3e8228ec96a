-- opaque_spec.lua — a module type with parameters whose calls counted nothing is
-- named once per run, with the rule hook that would count it.
local notes = require "prof.util.notes"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"

-- Opaque: a weight, and a forward that runs nothing profrun records (as a custom kernel would).
local Opaque = nn.Module:extend("Opaque")
function Opaque:init() self.weight = nn.Parameter(T.ones({ 4, 4 })) end
function Opaque:forward(x) return x end

-- Shape: no parameters and nothing recorded either (a view-like module): nothing to say.
local Shape = nn.Module:extend("Shape")
function Shape:forward(x) return x end

local said, tmp

local function profile(model, o)
  o = o or {}
  prof.get_model_profile { model = model, input_shape = o.args == nil and { 2, 4 } or nil, args = o.args,
    print_profile = false, conventions = o.conventions, rules = o.rules }
end

describe("modules that counted nothing", function()
  local sink
  before_each(function()
    notes.reset()
    said = {}
    sink = notes.sink
    notes.sink = function(msg) said[#said + 1] = msg end
  end)
  after_each(function() notes.sink = sink end)
  setup(function() tmp = run.tmpdir() end)
  teardown(function() run.rmdir_all(tmp) end)

  it("names the type once per run, with the flop-rule hook", function()
    profile(nn.Sequential(nn.Linear(4, 4), Opaque(), Shape(), Opaque()))
    profile(nn.Sequential(nn.Linear(4, 4), Opaque()))
    assert.equal(1, #said)
    assert.truthy(said[1]:find("^Opaque has parameters but its calls counted 0 MACs, 0 flops and 0 bytes"),
      said[1])
    assert.truthy(said[1]:find("DeepSpeed's profiler counts it 0 too", 1, true))
    assert.truthy(said[1]:find("flops_profiler.rules", 1, true))
    assert.truthy(said[1]:find("{ Opaque = function(module, inputs, output, ctx)", 1, true))
  end)

  it("says nothing of counted modules, of DeepSpeed's deliberate zeros, or of ruled ones", function()
    -- under deepspeed conventions an embedding counts 0 flops by design, but its lookup moves bytes
    profile(nn.Sequential(nn.Embedding(10, 4)), { args = { T.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }) },
      conventions = "deepspeed" })
    local rule = tmp .. "/opaque_rule.lua"
    local f = assert(io.open(rule, "w"))
    f:write("return { Opaque = function(m, inputs) return { flops = 2 * inputs[1]:numel() } end }\n")
    f:close()
    profile(nn.Sequential(nn.Linear(4, 4), Opaque()), { rules = { rule } })
    -- a rule on a parent replaces its children's ops: an Opaque inside a ruled Box counted by it
    local box = tmp .. "/box_rule.lua"
    f = assert(io.open(box, "w"))
    f:write("return { Box = function() return { flops = 7 } end }\n")
    f:close()
    local Box = nn.Module:extend("Box")
    function Box:init() self.inner = Opaque() end
    function Box:forward(x) return self.inner(x) end
    profile(nn.Sequential(Box()), { rules = { box } })
    assert.same({}, said)
  end)
end)
