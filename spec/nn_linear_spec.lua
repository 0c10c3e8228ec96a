-- nn_linear_spec.lua — nn.Identity and nn.Linear against PyTorch 1.13 (torch's output quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

describe("nn.Linear", function()
  it("has PyTorch's parameters", function()
    -- torch: nn.Linear(120, 84) -> 10164 [('weight', (84, 120)), ('bias', (84,))]
    local m = nn.Linear(120, 84)
    assert.same({ { "weight", { 84, 120 } }, { "bias", { 84 } } }, S.params(m))
    assert.equal(10164, m:num_parameters())
    -- torch: nn.Linear(10, 10, bias=False) -> 100 [('weight', (10, 10))]
    local nb = nn.Linear(10, 10, { bias = false })
    assert.same({ { "weight", { 10, 10 } } }, S.params(nb))
    assert.equal(100, nb:num_parameters())
    assert.is_nil(nb.bias)
  end)

  it("takes bias positionally or by keyword, and the factory keywords", function()
    assert.is_nil(nn.Linear(10, 10, false).bias)
    local m = nn.Linear { in_features = 3, out_features = 4, dtype = "float16" }
    assert.same({ 4, 3 }, m.weight.shape)
    assert.equal("float16", m.weight.dtype)
  end)

  it("prints as PyTorch", function()
    -- torch: Linear(in_features=120, out_features=84, bias=True)
    assert.equal("Linear(in_features=120, out_features=84, bias=True)",
                 tostring(nn.Linear(120, 84)))
    -- torch: Linear(in_features=10, out_features=10, bias=False)
    assert.equal("in_features=10, out_features=10, bias=False",
                 nn.Linear(10, 10, { bias = false }):extra_repr())
  end)

  it("calls F.linear with its weight and bias, output shaped as torch's", function()
    local m = nn.Linear(120, 84)
    local x, y = T.empty { 4, 7, 120 }, nil
    local names, argv = S.trace(function() y = m(x) end)
    assert.same({ "linear" }, names)
    assert.is_true(rawequal(m.weight, argv[1][2]))
    assert.is_true(rawequal(m.bias, argv[1][3]))
    -- torch: Linear(120,84) [4,7,120] -> (4, 7, 84); [2,120] -> (2, 84)
    assert.same({ 4, 7, 84 }, y.shape)
    assert.same({ 2, 84 }, m(T.empty { 2, 120 }).shape)
  end)

  it("lets the op name both shapes when the input does not fit", function()
    local ok, err = pcall(nn.Linear(3, 6), T.empty { 1, 4 })
    assert.is_false(ok)
    assert.matches("linear: input [1, 4] does not match weight [6, 3]", err, 1, true)
  end)

  it("rejects arguments Python would reject", function()
    assert.error_matches(function() nn.Linear(3) end, "missing required argument 'out_features'",
                         1, true)
    assert.error_matches(function() nn.Linear(3, 4, { bais = false }) end,
                         "unexpected keyword argument 'bais'", 1, true)
    assert.error_matches(function() nn.Linear(3, 4, true, { bias = false }) end,
                         "got multiple values for argument 'bias'", 1, true)
  end)
end)

describe("nn.Identity", function()
  it("ignores its arguments and returns its input", function()
    -- torch: nn.Identity() -> Identity(), 0 parameters
    local m = nn.Identity(54, { unused_argument1 = 0.1 })
    assert.equal("Identity()", tostring(m))
    assert.equal(0, m:num_parameters())
    local x = T.empty { 2, 3 }
    assert.is_true(rawequal(x, m(x)))
  end)
end)

describe("a composite of linear modules", function()
  it("prints like torch's print(model)", function()
    -- torch: print(nn.Sequential(nn.Linear(120, 84), nn.Identity(), nn.Linear(84, 10, bias=False)))
    local expected = [[
Sequential(
  (0): Linear(in_features=120, out_features=84, bias=True)
  (1): Identity()
  (2): Linear(in_features=84, out_features=10, bias=False)
)]]
    local model = nn.Sequential(nn.Linear(120, 84), nn.Identity(),
                                nn.Linear(84, 10, { bias = false }))
    assert.equal(expected, tostring(model))
    -- torch: params: 11004; [('0.weight', (84, 120)), ('0.bias', (84,)), ('2.weight', (10, 84))]
    assert.equal(11004, model:num_parameters())
    assert.same({ { "0.weight", { 84, 120 } }, { "0.bias", { 84 } }, { "2.weight", { 10, 84 } } },
                S.params(model))
  end)

  it("counts as DeepSpeed does (linear bias not counted)", function()
    -- DeepSpeed's engine test: Linear(10, 10), batch 1 -> flops 200, params 110
    local m = nn.Linear(10, 10)
    local t = S.count(m, function(mm) mm(T.empty { 1, 10 }) end)
    assert.equal(200, t.flops)
    assert.equal(100, t.macs)
    assert.equal(110, m:num_parameters())
  end)
end)
