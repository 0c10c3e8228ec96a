-- nn_conv_spec.lua — nn.Conv1d/2d/3d and ConvTranspose1d/2d/3d against PyTorch 1.13 (quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

describe("nn.ConvNd", function()
  it("has PyTorch's parameters", function()
    -- torch: nn.Conv2d(1, 6, 5) -> 156 [('weight', (6, 1, 5, 5)), ('bias', (6,))]
    local c = nn.Conv2d(1, 6, 5)
    assert.same({ { "weight", { 6, 1, 5, 5 } }, { "bias", { 6 } } }, S.params(c))
    assert.equal(156, c:num_parameters())
    -- torch: nn.Conv1d(16, 33, 3, stride=2) -> 1617 [('weight', (33, 16, 3)), ('bias', (33,))]
    assert.same({ { "weight", { 33, 16, 3 } }, { "bias", { 33 } } },
                S.params(nn.Conv1d(16, 33, 3, { stride = 2 })))
    -- torch: nn.Conv2d(16, 32, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1), groups=2,
    -- bias=False) -> 3840 [('weight', (32, 8, 3, 5))]
    local g = nn.Conv2d(16, 32, { 3, 5 }, { stride = { 2, 1 }, padding = { 4, 2 },
                                          dilation = { 3, 1 }, groups = 2, bias = false })
    assert.same({ { "weight", { 32, 8, 3, 5 } } }, S.params(g))
    assert.equal(3840, g:num_parameters())
    -- torch: nn.Conv3d(4, 8, 3, padding=1) -> 872 [('weight', (8, 4, 3, 3, 3)), ('bias', (8,))]
    assert.equal(872, nn.Conv3d(4, 8, 3, { padding = 1 }):num_parameters())
  end)

  it("takes PyTorch's positional order too", function()
    -- Conv2d(in, out, kernel_size, stride, padding, dilation, groups, bias)
    local c = nn.Conv2d(16, 32, 3, 2, 1, 1, 2, false)
    assert.equal("16, 32, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2, bias=False",
                 c:extra_repr())
  end)

  it("prints as PyTorch", function()
    -- torch: Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    assert.equal("Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))", tostring(nn.Conv2d(1, 6, 5)))
    -- torch: Conv1d(16, 33, kernel_size=(3,), stride=(2,))
    assert.equal("16, 33, kernel_size=(3,), stride=(2,)",
                 nn.Conv1d(16, 33, 3, { stride = 2 }):extra_repr())
    -- torch: Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=valid)
    assert.equal("3, 8, kernel_size=(3, 3), stride=(1, 1), padding=valid",
                 nn.Conv2d(3, 8, 3, { padding = "valid" }):extra_repr())
  end)

  it("calls the conv op of its rank with stride, padding, dilation and groups", function()
    local c = nn.Conv2d(3, 8, 3, { padding = "same" })
    local x, y = T.empty { 1, 3, 7, 9 }, nil
    local names, argv = S.trace(function() y = c(x) end)
    assert.same({ "conv2d" }, names)
    assert.is_true(rawequal(c.weight, argv[1][2]) and rawequal(c.bias, argv[1][3]))
    assert.same({ stride = { 1, 1 }, padding = "same", dilation = { 1, 1 }, groups = 1 },
                argv[1][4])
    -- torch: Conv2d(3,8,3,same) [1,3,7,9] -> (1, 8, 7, 9)
    assert.same({ 1, 8, 7, 9 }, y.shape)
    names = S.trace(function() nn.Conv1d(16, 33, 3)(T.empty { 2, 16, 9 }) end)
    assert.same({ "conv1d" }, S.only(names, { conv1d = true }))
  end)

  it("gives outputs shaped as torch's", function()
    -- torch: Conv1d(16,33,3,stride=2) [20,16,50] -> (20, 33, 24)
    local c1 = nn.Conv1d(16, 33, 3, { stride = 2 })
    assert.same({ 20, 33, 24 }, c1(T.empty { 20, 16, 50 }).shape)
    -- torch: Conv2d(16,32,(3,5),s=(2,1),p=(4,2),d=(3,1),g=2) [4,16,20,30] -> (4, 32, 11, 30)
    local g = nn.Conv2d(16, 32, { 3, 5 }, { stride = { 2, 1 }, padding = { 4, 2 },
                                          dilation = { 3, 1 }, groups = 2, bias = false })
    assert.same({ 4, 32, 11, 30 }, g(T.empty { 4, 16, 20, 30 }).shape)
    -- torch: Conv2d(3,8,4,same,dilation=2) [1,3,7,9] -> (1, 8, 7, 9)
    local same = nn.Conv2d(3, 8, 4, { padding = "same", dilation = 2 })
    assert.same({ 1, 8, 7, 9 }, same(T.empty { 1, 3, 7, 9 }).shape)
    -- torch: Conv2d(3,8,3,valid) [1,3,7,9] -> (1, 8, 5, 7)
    local valid = nn.Conv2d(3, 8, 3, { padding = "valid" })
    assert.same({ 1, 8, 5, 7 }, valid(T.empty { 1, 3, 7, 9 }).shape)
    -- torch: Conv3d(4,8,3,padding=1) [2,4,5,6,7] -> (2, 8, 5, 6, 7)
    local c3 = nn.Conv3d(4, 8, 3, { padding = 1 })
    assert.same({ 2, 8, 5, 6, 7 }, c3(T.empty { 2, 4, 5, 6, 7 }).shape)
  end)

  it("lets the op name both shapes when the channels do not fit", function()
    local ok, err = pcall(nn.Conv2d(3, 6, 5), T.empty { 1, 4, 8, 8 })
    assert.is_false(ok)
    assert.matches("input [1, 4, 8, 8] has 4 channels but weight [6, 3, 5, 5]", err, 1, true)
  end)

  it("checks its arguments as PyTorch does", function()
    assert.error_matches(function() nn.Conv2d(3, 8, 3, { groups = 2 }) end,
                         "in_channels must be divisible by groups", 1, true)
    assert.error_matches(function() nn.Conv2d(4, 7, 3, { groups = 2 }) end,
                         "out_channels must be divisible by groups", 1, true)
    assert.error_matches(function() nn.Conv2d(3, 8, 3, { padding = "full" }) end,
                         "invalid padding string 'full'", 1, true)
    assert.error_matches(function() nn.Conv2d(3, 8, 3, { padding = "same", stride = 2 }) end,
                         "padding='same' is not supported for strided convolutions", 1, true)
    -- PyTorch pads with F.pad for these; the runtime only pads with zeros (a clear error)
    assert.error_matches(function() nn.Conv2d(3, 8, 3, { padding_mode = "reflect" }) end,
                         "padding_mode='reflect' is not supported (only 'zeros')", 1, true)
    assert.error_matches(function() nn.Conv2d(3, 8, 3, { padding_mode = "mirror" }) end,
                         "padding_mode must be one of", 1, true)
  end)
end)

describe("nn.ConvTransposeNd", function()
  it("has PyTorch's parameters: weight [in, out/groups, *k]", function()
    -- torch: nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
    -- -> 584 [('weight', (16, 4, 3, 3)), ('bias', (8,))]
    local t = nn.ConvTranspose2d(16, 8, 3, { stride = 2, padding = 1, output_padding = 1,
                                             groups = 2 })
    assert.same({ { "weight", { 16, 4, 3, 3 } }, { "bias", { 8 } } }, S.params(t))
    assert.equal(584, t:num_parameters())
    -- torch: nn.ConvTranspose3d(4, 2, 2, stride=2) -> 66 [('weight', (4, 2, 2, 2, 2)), ...]
    assert.equal(66, nn.ConvTranspose3d(4, 2, 2, { stride = 2 }):num_parameters())
    -- torch: nn.ConvTranspose1d(8, 4, 3) -> 100 [('weight', (8, 4, 3)), ('bias', (4,))]
    assert.same({ { "weight", { 8, 4, 3 } }, { "bias", { 4 } } },
                S.params(nn.ConvTranspose1d(8, 4, 3)))
  end)

  it("prints as PyTorch", function()
    -- torch: ConvTranspose2d(16, 8, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2), bias=False)
    assert.equal("ConvTranspose2d(16, 8, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2), "
                 .. "bias=False)",
                 tostring(nn.ConvTranspose2d(16, 8, 3, { stride = 2, bias = false, dilation = 2 })))
    -- positional order: in, out, k, stride, padding, output_padding, groups, bias, dilation
    assert.equal("16, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
                 .. "output_padding=(1, 1), groups=2",
                 nn.ConvTranspose2d(16, 8, 3, 2, 1, 1, 2):extra_repr())
  end)

  it("calls conv_transpose with the output_padding that gives output_size", function()
    local t = nn.ConvTranspose2d(16, 33, 3, { stride = 2, padding = 1 })
    local x, y = T.empty { 20, 16, 12, 12 }, nil
    local names, argv = S.trace(function() y = t(x, { 24, 24 }) end)
    assert.same({ "conv_transpose2d" }, names)
    assert.same({ 1, 1 }, argv[1][4].output_padding)
    -- torch: ConvTranspose2d(16,33,3,s=2,p=1) [20,16,12,12] output_size=[24,24] -> (20,33,24,24)
    assert.same({ 20, 33, 24, 24 }, y.shape)
    -- torch: ValueError: requested an output size of [25, 25], but valid sizes range from
    -- [23, 23] to [24, 24] (for an input of torch.Size([12, 12]))
    assert.error_matches(function() t(x, { 25, 25 }) end,
                         "valid sizes range from (23, 23) to (24, 24) (for an input of (12, 12))",
                         1, true)
  end)

  it("gives outputs shaped as torch's", function()
    -- torch: ConvTranspose1d(8,4,3) [2,8,10] -> (2, 4, 12)
    assert.same({ 2, 4, 12 }, nn.ConvTranspose1d(8, 4, 3)(T.empty { 2, 8, 10 }).shape)
    -- torch: ConvTranspose2d(16,8,3,s=2,p=1,op=1,g=2) [2,16,5,6] -> (2, 8, 10, 12)
    local t = nn.ConvTranspose2d(16, 8, 3, { stride = 2, padding = 1, output_padding = 1,
                                             groups = 2 })
    assert.same({ 2, 8, 10, 12 }, t(T.empty { 2, 16, 5, 6 }).shape)
    -- torch: ConvTranspose3d(4,2,2,s=2) [1,4,3,4,5] -> (1, 2, 6, 8, 10)
    assert.same({ 1, 2, 6, 8, 10 },
                nn.ConvTranspose3d(4, 2, 2, { stride = 2 })(T.empty { 1, 4, 3, 4, 5 }).shape)
  end)
end)

describe("a composite of convolutions", function()
  it("prints like torch's print(model)", function()
    -- torch: print(nn.Sequential(<the seven layers below>)); params: 31585
    local expected = [[
Sequential(
  (0): Conv1d(16, 33, kernel_size=(3,), stride=(2,))
  (1): Conv2d(3, 64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2))
  (2): Conv2d(16, 32, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1), groups=2, bias=False)
  (3): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=same)
  (4): Conv3d(4, 8, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
  (5): ConvTranspose2d(16, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1), groups=2)
  (6): ConvTranspose2d(16, 8, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2), bias=False)
)]]
    local model = nn.Sequential(
      nn.Conv1d(16, 33, 3, { stride = 2 }), nn.Conv2d(3, 64, 11, { stride = 4, padding = 2 }),
      nn.Conv2d(16, 32, { 3, 5 }, { stride = { 2, 1 }, padding = { 4, 2 }, dilation = { 3, 1 },
                                   groups = 2, bias = false }),
      nn.Conv2d(3, 8, 3, { padding = "same" }), nn.Conv3d(4, 8, 3, { padding = 1 }),
      nn.ConvTranspose2d(16, 8, 3, { stride = 2, padding = 1, output_padding = 1, groups = 2 }),
      nn.ConvTranspose2d(16, 8, 3, { stride = 2, bias = false, dilation = 2 }))
    assert.equal(expected, tostring(model))
    assert.equal(31585, model:num_parameters())
  end)
end)
