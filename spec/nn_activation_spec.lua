-- nn_activation_spec.lua — nn activations, Softmax and LogSoftmax against PyTorch 1.13 (quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

-- torch's repr of each module (python3: repr(nn.X(...))), and the function its forward calls.
local CASES = {
  { nn.ReLU(), "ReLU()", "relu" },
  { nn.ReLU { inplace = true }, "ReLU(inplace=True)", "relu" },
  -- nn.ReLU6 is Hardtanh(0., 6.): F.hardtanh, which is our clamp (DeepSpeed counts neither)
  { nn.ReLU6(), "ReLU6()", "clamp" },
  { nn.ReLU6(true), "ReLU6(inplace=True)", "clamp" },
  { nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)", "leaky_relu" },
  { nn.LeakyReLU(0.2, { inplace = true }), "LeakyReLU(negative_slope=0.2, inplace=True)",
    "leaky_relu" },
  { nn.PReLU(), "PReLU(num_parameters=1)", "prelu" },
  { nn.ELU(), "ELU(alpha=1.0)", "elu" },
  { nn.ELU { alpha = 0.5, inplace = true }, "ELU(alpha=0.5, inplace=True)", "elu" },
  { nn.GELU(), "GELU(approximate='none')", "gelu" },
  { nn.GELU { approximate = "tanh" }, "GELU(approximate='tanh')", "gelu" },
  { nn.SiLU(), "SiLU()", "silu" },
  { nn.SiLU { inplace = true }, "SiLU(inplace=True)", "silu" },
  { nn.Tanh(), "Tanh()", "tanh" },
  { nn.Sigmoid(), "Sigmoid()", "sigmoid" },
  { nn.Softplus(), "Softplus(beta=1, threshold=20)", "softplus" },
  { nn.Softplus { beta = 2, threshold = 10.0 }, "Softplus(beta=2, threshold=10.0)", "softplus" },
  { nn.Hardswish(), "Hardswish()", "hardswish" },
  -- torch 1.13: Hardswish(inplace=True) prints "Hardswish()" (it has no extra_repr)
  { nn.Hardswish { inplace = true }, "Hardswish()", "hardswish" },
  { nn.Mish(), "Mish()", "mish" },
  { nn.Mish { inplace = true }, "Mish(inplace=True)", "mish" },
  { nn.Softmax(), "Softmax(dim=None)", "softmax" },
  { nn.Softmax { dim = -1 }, "Softmax(dim=-1)", "softmax" },
  { nn.LogSoftmax { dim = 1 }, "LogSoftmax(dim=1)", "log_softmax" },
}

describe("nn activations", function()
  it("print as PyTorch", function()
    for _, c in ipairs(CASES) do assert.equal(c[2], tostring(c[1])) end
  end)

  it("call the functional op PyTorch's forward calls, shape unchanged", function()
    for _, c in ipairs(CASES) do
      local x, y = T.empty { 2, 3, 4 }, nil
      local names = S.trace(function() y = c[1](x) end)
      assert.same({ c[3] }, names, c[2])
      assert.same({ 2, 3, 4 }, y.shape)
    end
  end)

  it("pass their arguments to the op", function()
    local x = T.empty { 2, 3 }
    local function args_of(m)
      local names, argv = S.trace(function() m(x) end)
      assert.equal(1, #names)
      return argv[1]
    end
    assert.equal(0.2, args_of(nn.LeakyReLU(0.2))[2])
    assert.equal(0.5, args_of(nn.ELU(0.5))[2])
    assert.equal(2, args_of(nn.Softplus(2))[2])
    local a = args_of(nn.ReLU6())
    assert.same({ 0.0, 6.0 }, { a[2], a[3] })
    local p = nn.PReLU(3)
    assert.is_true(rawequal(p.weight, args_of(p)[2]))
  end)

  it("PReLU has one weight per channel", function()
    -- torch: nn.PReLU(64) -> 64 [('weight', (64,))]; nn.PReLU() -> 1 [('weight', (1,))]
    assert.same({ { "weight", { 64 } } }, S.params(nn.PReLU(64)))
    assert.same({ { "weight", { 1 } } }, S.params(nn.PReLU()))
    -- torch: PReLU(3) [2,3,4] -> (2, 3, 4)
    assert.same({ 2, 3, 4 }, nn.PReLU(3)(T.empty { 2, 3, 4 }).shape)
  end)

  it("GELU rejects an unknown approximation", function()
    assert.error_matches(function() nn.GELU("fast") end,
                         "approximate argument must be either none or tanh", 1, true)
  end)
end)

describe("nn.Softmax with dim=None", function()
  -- torch 1.13 functional.py _get_softmax_dim: `if ndim == 0 or ndim == 1 or ndim == 3: ret = 0
  -- else: ret = 1`
  it("uses PyTorch's legacy dimension rule", function()
    local expected = { [1] = 0, [2] = 1, [3] = 0, [4] = 1 }
    for nd, dim in pairs(expected) do
      local shape = {}
      for i = 1, nd do shape[i] = i + 1 end
      local x = T.empty(shape)
      for _, m in ipairs { nn.Softmax(), nn.LogSoftmax() } do
        local _, argv = S.trace(function() m(x) end)
        assert.equal(dim, argv[1][2])
      end
    end
  end)

  it("passes an explicit dim through", function()
    local x, m = T.empty { 2, 3, 4 }, nn.Softmax(-1)
    local _, argv = S.trace(function() m(x) end)
    assert.equal(-1, argv[1][2])
  end)
end)

describe("a composite of activations", function()
  it("prints like torch's print(model)", function()
    local expected = [[
Sequential(
  (0): ReLU()
  (1): ReLU(inplace=True)
  (2): ReLU6()
  (3): LeakyReLU(negative_slope=0.2, inplace=True)
  (4): PReLU(num_parameters=64)
  (5): ELU(alpha=1.0)
  (6): GELU(approximate='tanh')
  (7): SiLU()
  (8): Tanh()
  (9): Sigmoid()
  (10): Softplus(beta=2, threshold=10.0)
  (11): Hardswish()
  (12): Mish()
  (13): Softmax(dim=None)
  (14): Softmax(dim=-1)
  (15): LogSoftmax(dim=1)
)]]
    local model = nn.Sequential(
      nn.ReLU(), nn.ReLU { inplace = true }, nn.ReLU6(), nn.LeakyReLU(0.2, { inplace = true }),
      nn.PReLU(64), nn.ELU(), nn.GELU { approximate = "tanh" }, nn.SiLU(), nn.Tanh(),
      nn.Sigmoid(), nn.Softplus { beta = 2, threshold = 10.0 }, nn.Hardswish(), nn.Mish(),
      nn.Softmax(), nn.Softmax { dim = -1 }, nn.LogSoftmax { dim = 1 })
    assert.equal(expected, tostring(model))
    -- torch: params: 64
    assert.equal(64, model:num_parameters())
  end)

  it("counts as DeepSpeed does: relu numel, tanh and ReLU6 (hardtanh) nothing", function()
    -- x [4, 10]: relu 40 flops, softmax 40 flops; tanh, sigmoid and F.hardtanh are not patched
    local model = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.ReLU6(), nn.Sigmoid(), nn.Softmax(-1))
    local t = S.count(model, function(m) m(T.empty { 4, 10 }) end)
    assert.equal(80, t.flops)
  end)
end)
