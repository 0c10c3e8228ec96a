-- mobilenet_v2.lua — torchvision 0.14's MobileNetV2 (InvertedResidual, Conv2dNormActivation); build{}.
local nn = require "prof.nn"
local F = nn.functional
local T = require "prof.tensor"

local M = {}

-- Convention shared by the vision zoo files: build(opts) picks the variant by opts.name (here
-- only "mobilenet_v2"); the other opts are the PyTorch constructor's keywords.
M.NAMES = { "mobilenet_v2" }

-- torchvision's _make_divisible: v rounded to the nearest multiple of divisor, never down by
-- more than 10%.
local function make_divisible(v, divisor)
  local new_v = math.max(divisor, math.floor(v + divisor / 2) // divisor * divisor)
  if new_v < 0.9 * v then new_v = new_v + divisor end
  return math.tointeger(new_v)
end
M.make_divisible = make_divisible

-- torchvision.ops.Conv2dNormActivation: a Sequential of conv (no bias when normalised),
-- BatchNorm2d and an activation, padded to keep the size at stride 1. Only the options
-- MobileNetV2 uses: activation is a class called with {inplace = true}.
local Conv2dNormActivation = nn.Module.extend(nn.Sequential, "Conv2dNormActivation")
M.Conv2dNormActivation = Conv2dNormActivation

function Conv2dNormActivation:init(in_channels, out_channels, o)
  o = o or {}
  local k = o.kernel_size or 3
  local conv = nn.Conv2d(in_channels, out_channels, k, {
    stride = o.stride or 1, padding = (k - 1) // 2, groups = o.groups or 1, bias = false,
  })
  nn.Sequential.init(self, conv, nn.BatchNorm2d(out_channels),
                     (o.activation_layer or nn.ReLU) { inplace = true })
  self.out_channels = out_channels
end

-- InvertedResidual(inp, oup, stride, expand_ratio): 1x1 expansion (unless the ratio is 1),
-- depthwise 3x3, linear 1x1 projection; the input is added back when the shape allows it.
local InvertedResidual = nn.Module:extend("InvertedResidual")
M.InvertedResidual = InvertedResidual

function InvertedResidual:init(inp, oup, stride, expand_ratio)
  if stride ~= 1 and stride ~= 2 then
    error(string.format("InvertedResidual: stride should be 1 or 2 insted of %s",
                        tostring(stride)), 3)
  end
  self.stride = stride
  -- int(round(inp * expand_ratio)); floor(x + 0.5) equals Python's round for the integer
  -- ratios torchvision uses
  local hidden_dim = math.tointeger(math.floor(inp * expand_ratio + 0.5))
  self.use_res_connect = stride == 1 and inp == oup
  local layers = {}
  if expand_ratio ~= 1 then
    layers[#layers + 1] = Conv2dNormActivation(inp, hidden_dim, {
      kernel_size = 1, activation_layer = nn.ReLU6,
    })
  end
  layers[#layers + 1] = Conv2dNormActivation(hidden_dim, hidden_dim, {
    stride = stride, groups = hidden_dim, activation_layer = nn.ReLU6,
  })
  layers[#layers + 1] = nn.Conv2d(hidden_dim, oup, 1, { stride = 1, padding = 0, bias = false })
  layers[#layers + 1] = nn.BatchNorm2d(oup)
  self.conv = nn.Sequential(layers)
  self.out_channels = oup
  self._is_cn = stride > 1
end

function InvertedResidual:forward(x)
  if self.use_res_connect then return x + self.conv(x) end
  return self.conv(x)
end

-- t (expansion), c (output channels), n (repeats), s (stride of the first repeat).
local SETTING = {
  { 1, 16, 1, 1 }, { 6, 24, 2, 2 }, { 6, 32, 3, 2 }, { 6, 64, 4, 2 }, { 6, 96, 3, 1 },
  { 6, 160, 3, 2 }, { 6, 320, 1, 1 },
}

-- MobileNetV2(num_classes=1000, width_mult=1.0, round_nearest=8, dropout=0.2)
local MobileNetV2 = nn.Module:extend("MobileNetV2")
M.MobileNetV2 = MobileNetV2

function MobileNetV2:init(num_classes, width_mult, round_nearest, dropout)
  num_classes, width_mult = num_classes or 1000, width_mult or 1.0
  round_nearest, dropout = round_nearest or 8, dropout or 0.2
  local input_channel = make_divisible(32 * width_mult, round_nearest)
  self.last_channel = make_divisible(1280 * math.max(1.0, width_mult), round_nearest)
  local features = {
    Conv2dNormActivation(3, input_channel, { stride = 2, activation_layer = nn.ReLU6 }),
  }
  for _, row in ipairs(SETTING) do
    local t, c, n, s = table.unpack(row)
    local output_channel = make_divisible(c * width_mult, round_nearest)
    for i = 1, n do
      features[#features + 1] = InvertedResidual(input_channel, output_channel,
                                                 i == 1 and s or 1, t)
      input_channel = output_channel
    end
  end
  features[#features + 1] = Conv2dNormActivation(input_channel, self.last_channel, {
    kernel_size = 1, activation_layer = nn.ReLU6,
  })
  self.features = nn.Sequential(features)
  self.classifier = nn.Sequential(nn.Dropout { p = dropout },
                                  nn.Linear(self.last_channel, num_classes))
end

-- The global pool is a functional call in torchvision: no avgpool module in the tree.
function MobileNetV2:forward(x)
  x = self.features(x)
  x = F.adaptive_avg_pool2d(x, { 1, 1 })
  x = T.flatten(x, 1)
  return self.classifier(x)
end

-- build{num_classes = 1000, width_mult = 1.0, round_nearest = 8, dropout = 0.2}
function M.build(opts)
  opts = opts or {}
  if opts.name ~= nil and opts.name ~= "mobilenet_v2" then
    error(string.format("mobilenet_v2: unknown variant '%s' (known: mobilenet_v2)",
                        tostring(opts.name)), 2)
  end
  return MobileNetV2(opts.num_classes, opts.width_mult, opts.round_nearest, opts.dropout)
end

function M.input(opts)
  opts = opts or {}
  local s = opts.image or 224
  return { T.empty({ opts.batch or 1, 3, s, s }) }
end

return M
