-- nn_flatten_spec.lua — nn.Flatten and nn.Unflatten against PyTorch 1.13 (torch's output quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"

describe("nn.Flatten", function()
  it("prints as PyTorch", function()
    -- torch: Flatten(start_dim=1, end_dim=-1); Flatten(start_dim=0, end_dim=2)
    assert.equal("Flatten(start_dim=1, end_dim=-1)", tostring(nn.Flatten()))
    assert.equal("start_dim=0, end_dim=2", nn.Flatten(0, 2):extra_repr())
  end)

  it("flattens from start_dim to end_dim", function()
    -- torch: Flatten() [2,3,4,5] -> (2, 60); Flatten(0,2) [2,3,4,5] -> (24, 5)
    assert.same({ 2, 60 }, nn.Flatten()(T.empty { 2, 3, 4, 5 }).shape)
    assert.same({ 24, 5 }, nn.Flatten(0, 2)(T.empty { 2, 3, 4, 5 }).shape)
  end)
end)

describe("nn.Unflatten", function()
  it("prints as PyTorch", function()
    -- torch: Unflatten(dim=1, unflattened_size=(2, 5)); Unflatten(dim=-1,
    -- unflattened_size=(2, -1))
    assert.equal("Unflatten(dim=1, unflattened_size=(2, 5))", tostring(nn.Unflatten(1, { 2, 5 })))
    assert.equal("dim=-1, unflattened_size=(2, -1)", nn.Unflatten(-1, { 2, -1 }):extra_repr())
  end)

  it("splits one dimension into several", function()
    -- torch: Unflatten(1,(2,5)) [3,10] -> (3, 2, 5); Unflatten(-1,(2,-1)) [3,4,10] -> (3, 4, 2, 5)
    assert.same({ 3, 2, 5 }, nn.Unflatten(1, { 2, 5 })(T.empty { 3, 10 }).shape)
    assert.same({ 3, 4, 2, 5 }, nn.Unflatten(-1, { 2, -1 })(T.empty { 3, 4, 10 }).shape)
    assert.error_matches(function() nn.Unflatten(1, 5) end,
                         "unflattened_size must be a list of integers", 1, true)
  end)
end)

describe("a composite of flattens", function()
  it("prints like torch's print(model)", function()
    local expected = [[
Sequential(
  (0): Flatten(start_dim=1, end_dim=-1)
  (1): Unflatten(dim=1, unflattened_size=(2, 5))
  (2): Flatten(start_dim=0, end_dim=2)
)]]
    local model = nn.Sequential(nn.Flatten(), nn.Unflatten(1, { 2, 5 }), nn.Flatten(0, 2))
    assert.equal(expected, tostring(model))
    -- [4, 10] -> [4, 10] -> [4, 2, 5] -> [40]
    assert.same({ 40 }, model(T.empty { 4, 10 }).shape)
  end)
end)
