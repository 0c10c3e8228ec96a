-- nn_pooling_spec.lua — nn.MaxPool, AvgPool and adaptive pools against PyTorch 1.13 (quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

describe("nn.MaxPoolNd", function()
  it("prints its arguments as given, stride defaulting to kernel_size", function()
    -- torch: MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    assert.equal("MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)",
                 tostring(nn.MaxPool2d(2)))
    -- torch: MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)
    assert.equal("kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False",
                 nn.MaxPool1d(3):extra_repr())
    -- torch: MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    assert.equal("kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False",
                 nn.MaxPool3d(2):extra_repr())
    assert.equal(0, nn.MaxPool2d(2):num_parameters())
  end)

  it("calls the max_pool op of its rank", function()
    local m = nn.MaxPool2d({ 3, 2 }, { stride = { 2, 1 }, padding = 1, dilation = 2,
                                       ceil_mode = true })
    local x, y = T.empty { 1, 3, 11, 9 }, nil
    local names, argv = S.trace(function() y = m(x) end)
    assert.same({ "max_pool2d" }, names)
    assert.same({ 3, 2 }, argv[1][2])
    assert.same({ stride = { 2, 1 }, padding = 1, dilation = 2, ceil_mode = true }, argv[1][3])
    -- torch: MaxPool2d((3,2),s=(2,1),p=1,d=2,ceil) [1,3,11,9] -> (1, 3, 5, 9)
    assert.same({ 1, 3, 5, 9 }, y.shape)
    -- torch: MaxPool1d(3) [2,4,10] -> (2, 4, 3); MaxPool3d(2) [1,2,4,6,8] -> (1, 2, 2, 3, 4)
    assert.same({ 2, 4, 3 }, nn.MaxPool1d(3)(T.empty { 2, 4, 10 }).shape)
    assert.same({ 1, 2, 2, 3, 4 }, nn.MaxPool3d(2)(T.empty { 1, 2, 4, 6, 8 }).shape)
  end)

  it("refuses return_indices (the op has one output)", function()
    assert.error_matches(function() nn.MaxPool2d(2, { return_indices = true }) end,
                         "return_indices=True is not supported", 1, true)
  end)
end)

describe("nn.AvgPoolNd", function()
  it("prints as PyTorch: tuples for 1d, values as given for 2d and 3d", function()
    -- torch: AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    assert.equal("AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))",
                 tostring(nn.AvgPool1d(2)))
    -- torch: AvgPool2d(kernel_size=2, stride=2, padding=0)
    assert.equal("AvgPool2d(kernel_size=2, stride=2, padding=0)", tostring(nn.AvgPool2d(2)))
    -- torch: AvgPool3d(kernel_size=2, stride=2, padding=0)
    assert.equal("kernel_size=2, stride=2, padding=0", nn.AvgPool3d(2):extra_repr())
  end)

  it("calls the avg_pool op of its rank, shaped as torch's", function()
    local m = nn.AvgPool2d(3, { stride = 2, padding = 1, ceil_mode = true })
    local x, y = T.empty { 1, 6, 28, 28 }, nil
    local names, argv = S.trace(function() y = m(x) end)
    assert.same({ "avg_pool2d" }, names)
    assert.same({ stride = 2, padding = 1, ceil_mode = true, count_include_pad = true }, argv[1][3])
    -- torch: AvgPool2d(3,s=2,p=1,ceil) [1,6,28,28] -> (1, 6, 15, 15)
    assert.same({ 1, 6, 15, 15 }, y.shape)
    -- torch: AvgPool1d(3,s=2,p=1) [2,4,10] -> (2, 4, 5)
    assert.same({ 2, 4, 5 }, nn.AvgPool1d(3, 2, 1)(T.empty { 2, 4, 10 }).shape)
    -- torch: AvgPool2d(2) [1,6,28,28] -> (1, 6, 14, 14); AvgPool3d(2) [1,2,4,6,8] -> (1,2,2,3,4)
    assert.same({ 1, 6, 14, 14 }, nn.AvgPool2d(2)(T.empty { 1, 6, 28, 28 }).shape)
    assert.same({ 1, 2, 2, 3, 4 }, nn.AvgPool3d(2)(T.empty { 1, 2, 4, 6, 8 }).shape)
  end)

  it("has no divisor_override on 1d; 2d takes it (values in cpu_pool_spec)", function()
    assert.error_matches(function() nn.AvgPool1d(2, { divisor_override = 3 }) end,
                         "unexpected keyword argument 'divisor_override'", 1, true)
    -- torch: AvgPool2d(2, divisor_override=3) [1,6,28,28] -> (1, 6, 14, 14)
    assert.same({ 1, 6, 14, 14 },
                nn.AvgPool2d(2, { divisor_override = 3 })(T.empty { 1, 6, 28, 28 }).shape)
  end)
end)

describe("nn.AdaptivePoolNd", function()
  it("prints output_size as given", function()
    -- torch: AdaptiveAvgPool2d(output_size=(6, 6)); AdaptiveAvgPool2d(output_size=1)
    assert.equal("AdaptiveAvgPool2d(output_size=(6, 6))", tostring(nn.AdaptiveAvgPool2d({ 6, 6 })))
    assert.equal("output_size=1", nn.AdaptiveAvgPool2d(1):extra_repr())
    -- torch: AdaptiveMaxPool1d(output_size=4); AdaptiveAvgPool3d(output_size=(1, 2, 3))
    assert.equal("AdaptiveMaxPool1d(output_size=4)", tostring(nn.AdaptiveMaxPool1d(4)))
    assert.equal("output_size=(1, 2, 3)", nn.AdaptiveAvgPool3d({ 1, 2, 3 }):extra_repr())
  end)

  it("calls the adaptive op of its kind and rank, shaped as torch's", function()
    local m = nn.AdaptiveAvgPool2d({ 6, 6 })
    local x, y = T.empty { 2, 256, 13, 13 }, nil
    local names = S.trace(function() y = m(x) end)
    assert.same({ "adaptive_avg_pool2d" }, names)
    -- torch: AdaptiveAvgPool2d((6,6)) [2,256,13,13] -> (2, 256, 6, 6)
    assert.same({ 2, 256, 6, 6 }, y.shape)
    local mx, x2 = nn.AdaptiveMaxPool2d(1), T.empty { 2, 8, 7, 7 }
    names = S.trace(function() y = mx(x2) end)
    assert.same({ "adaptive_max_pool2d" }, names)
    -- torch: AdaptiveMaxPool2d(1) [2,8,7,7] -> (2, 8, 1, 1)
    assert.same({ 2, 8, 1, 1 }, y.shape)
    -- torch: AdaptiveAvgPool1d(4) [2,3,17] -> (2, 3, 4)
    assert.same({ 2, 3, 4 }, nn.AdaptiveAvgPool1d(4)(T.empty { 2, 3, 17 }).shape)
    -- torch: AdaptiveAvgPool3d((1,2,3)) [2,3,4,5,6] -> (2, 3, 1, 2, 3)
    local a3 = nn.AdaptiveAvgPool3d({ 1, 2, 3 })
    assert.same({ 2, 3, 1, 2, 3 }, a3(T.empty { 2, 3, 4, 5, 6 }).shape)
  end)
end)

describe("a composite of pools", function()
  it("prints like torch's print(model)", function()
    local expected = [[
Sequential(
  (0): MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)
  (1): MaxPool2d(kernel_size=(3, 2), stride=(2, 1), padding=1, dilation=2, ceil_mode=True)
  (2): AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))
  (3): AvgPool2d(kernel_size=2, stride=2, padding=0)
  (4): AdaptiveAvgPool2d(output_size=(6, 6))
  (5): AdaptiveAvgPool1d(output_size=4)
  (6): AdaptiveMaxPool2d(output_size=1)
  (7): MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  (8): AvgPool3d(kernel_size=2, stride=2, padding=0)
)]]
    local model = nn.Sequential(
      nn.MaxPool2d { kernel_size = 3, stride = 2 },
      nn.MaxPool2d({ 3, 2 }, { stride = { 2, 1 }, padding = 1, dilation = 2, ceil_mode = true }),
      nn.AvgPool1d(3, { stride = 2, padding = 1 }), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d({ 6, 6 }),
      nn.AdaptiveAvgPool1d(4), nn.AdaptiveMaxPool2d(1), nn.MaxPool3d(2), nn.AvgPool3d(2))
    assert.equal(expected, tostring(model))
  end)

  it("counts numel of the input for every pool, as DeepSpeed does", function()
    -- DeepSpeed: pooling flops = numel(input); [1, 6, 28, 28] -> 4704 per pool
    local model = nn.Sequential(nn.MaxPool2d(2), nn.AvgPool2d(1))
    local t = S.count(model, function(m) m(T.empty { 1, 6, 28, 28 }) end)
    assert.equal(4704 + 1176, t.flops)
    assert.equal(0, t.macs)
  end)
end)
