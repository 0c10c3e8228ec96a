-- nn_dropout_spec.lua — nn.Dropout against PyTorch 1.13 (torch's output quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

describe("nn.Dropout", function()
  it("prints as PyTorch", function()
    -- torch: Dropout(p=0.1, inplace=False); Dropout(p=0.5, inplace=False);
    -- Dropout(p=0.2, inplace=True)
    assert.equal("Dropout(p=0.1, inplace=False)", tostring(nn.Dropout(0.1)))
    assert.equal("Dropout(p=0.5, inplace=False)", tostring(nn.Dropout()))
    assert.equal("p=0.2, inplace=True", nn.Dropout { p = 0.2, inplace = true }:extra_repr())
    assert.equal(0, nn.Dropout():num_parameters())
  end)

  it("rejects a probability outside [0, 1] with PyTorch's message", function()
    -- torch: ValueError: dropout probability has to be between 0 and 1, but got 1.5
    assert.error_matches(function() nn.Dropout(1.5) end,
                         "dropout probability has to be between 0 and 1, but got 1.5", 1, true)
  end)

  it("calls dropout(x, p, training) and follows train()/eval()", function()
    local d = nn.Dropout(0.1)
    local x, y = T.empty { 4, 8 }, nil
    local names, argv = S.trace(function() y = d(x) end)
    assert.same({ "dropout" }, names)
    assert.equal(0.1, argv[1][2])
    assert.is_true(argv[1][3])
    assert.same({ 4, 8 }, y.shape)
    d:eval()
    names, argv = S.trace(function() d(x) end)
    assert.same({ "dropout" }, names)
    assert.is_false(argv[1][3])
    d:train()
    names, argv = S.trace(function() d(x) end)
    assert.same({ "dropout" }, names)
    assert.is_true(argv[1][3])
  end)

  it("is flipped by train()/eval() of an enclosing model", function()
    local model = nn.Sequential(nn.Linear(8, 8), nn.Sequential(nn.Dropout(0.1)))
    local x = T.empty { 2, 8 }
    model:eval()
    assert.is_false(model[2][1].training)
    local names, argv = S.trace(function() model(x) end)
    assert.same({ "linear", "dropout" }, names)
    assert.is_false(argv[2][3])
    model:train()
    names, argv = S.trace(function() model(x) end)
    assert.same({ "linear", "dropout" }, names)
    assert.is_true(argv[2][3])
  end)
end)

describe("a composite with dropout", function()
  it("prints like torch's print(model)", function()
    local expected = [[
Sequential(
  (0): Linear(in_features=8, out_features=8, bias=True)
  (1): Dropout(p=0.1, inplace=False)
  (2): Dropout(p=0.5, inplace=False)
  (3): Dropout(p=0.2, inplace=True)
)]]
    local model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1), nn.Dropout(),
                                nn.Dropout { p = 0.2, inplace = true })
    assert.equal(expected, tostring(model))
    -- torch: params: 72
    assert.equal(72, model:num_parameters())
  end)
end)
