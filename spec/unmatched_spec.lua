-- unmatched_spec.lua — ignore entries and rule types that match no module of the
-- model are warned about once, with the closest module type or path.
local env = require "spec.support.env"
local run = require "spec.support.run"
local prof = require "prof"
local models = require "prof.models"
local unmatched = require "prof.flops_profiler.unmatched"

describe("unmatched ignore entries and rule types", function()
  local real, lines
  env.on_meta(setup, teardown)

  before_each(function()
    real = unmatched.sink
    lines = {}
    unmatched.sink = function(l) lines[#lines + 1] = l end
    unmatched.reset()
  end)
  after_each(function() unmatched.sink = real end)

  local function profile(opts)
    opts.model = opts.model or models.lenet5()
    opts.input_shape = opts.input_shape or { 2, 1, 32, 32 }
    opts.print_profile = false
    return prof.get_model_profile(opts)
  end

  it("names the entry and the closest module type or path (LeNet5's)", function()
    -- LeNet5's modules: feature_extractor.{0..7} (Conv2d, Tanh, AvgPool2d, ...), classifier.{0,1,2}
    profile({ ignore_modules = { "Tanh", "Tahn", "feature_extractor.9", "classifer.*", "^nomatch$",
      "classifier.0" } })
    assert.same({
      "profrun: warning: ignore_modules[2] 'Tahn' matches no module of LeNet5 (closest module type: 'Tanh')",
      "profrun: warning: ignore_modules[3] 'feature_extractor.9' matches no module of LeNet5 "
        .. "(closest module path: 'feature_extractor.0')",
      "profrun: warning: ignore_modules[4] 'classifer.*' matches no module of LeNet5 "
        .. "(closest module path: 'classifier.*')",
      "profrun: warning: ignore_modules[5] '^nomatch$' matches no module of LeNet5",
    }, lines)
  end)

  it("takes classes as their type names", function()
    local nn = require "prof.nn"
    profile({ ignore_modules = { nn.Tanh, nn.Dropout } })
    assert.same({ "profrun: warning: ignore_modules[2] 'Dropout' matches no module of LeNet5" }, lines)
  end)

  it("says 'Dropuot' meant Dropout, and says it once per run", function()
    local nn = require "prof.nn"
    local model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1), nn.Linear(4, 2))
    for _ = 1, 3 do profile({ model = model, input_shape = { 1, 4 }, ignore_modules = { "Dropuot" } }) end
    assert.same({ "profrun: warning: ignore_modules[1] 'Dropuot' matches no module of Sequential "
      .. "(closest module type: 'Dropout')" }, lines)
  end)

  it("a rule for a type the model lacks, with the rule's file:line and the closest type", function()
    local tmp = run.tmpdir()
    local path = tmp .. "/typo_rule.lua"
    local f = assert(io.open(path, "w"))
    f:write("return {\n  Conv2D = function() return { macs = 1 } end,\n"
      .. "  Linear = function() return { macs = 2 } end,\n}\n")
    f:close()
    profile({ rules = { path } })
    run.rmdir_all(tmp)
    -- Conv2D (line 2) matches nothing: LeNet5 has Conv2d; Linear (line 3) matches its classifier
    assert.same({ "profrun: warning: the flop rule for type 'Conv2D' (" .. path .. ":2) matches no "
      .. "module of LeNet5 (closest module type: 'Conv2d')" }, lines)
  end)

  it("a shipped rule library is quiet when some of its types are used, not when none is", function()
    -- scripts/rules/megatron.lua covers Megatron's family; LeNet5 uses none of its types
    profile({ rules = { "megatron" } })
    assert.is_true(#lines >= 1)
    for _, l in ipairs(lines) do
      assert.truthy(l:match("^profrun: warning: the flop rule for type '%w+' %(.*scripts/rules/"
        .. "megatron%.lua:%d+%) matches no module of LeNet5"), l)
    end
  end)

  it("the shipped Megatron example warns about nothing", function()
    local r = run.profrun({ "configs/megatron.json", "examples/megatron_gpt2.lua" })
    assert.equal(0, r.code, r.stderr)
    assert.falsy(env.has(r.stderr, "warning"), r.stderr)
  end)
end)
