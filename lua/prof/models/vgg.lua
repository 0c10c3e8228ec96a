-- vgg.lua — torchvision 0.14's VGG 11/13/16/19, with and without BatchNorm; build{name = "vgg16_bn"}.
local nn = require "prof.nn"
local T = require "prof.tensor"

local M = {}

-- Convention shared by the vision zoo files: build(opts) picks the variant by opts.name (one of
-- M.NAMES, default "vgg16"); the other opts are the PyTorch constructor's keywords.
M.NAMES = { "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn" }

-- torchvision's cfgs: output channels of each 3x3 conv, "M" for a 2x2 max pool.
local CFGS = {
  A = { 64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M" },
  B = { 64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M" },
  D = { 64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M" },
  E = { 64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512,
        512, 512, "M" },
}
local CFG_OF = { vgg11 = "A", vgg13 = "B", vgg16 = "D", vgg19 = "E" }

local VGG = nn.Module:extend("VGG")
M.VGG = VGG

-- VGG(features, num_classes=1000, dropout=0.5): the feature extractor comes in built.
function VGG:init(features, num_classes, dropout)
  num_classes = num_classes or 1000
  dropout = dropout or 0.5
  self.features = features
  self.avgpool = nn.AdaptiveAvgPool2d({ 7, 7 })
  self.classifier = nn.Sequential(
    nn.Linear(512 * 7 * 7, 4096), nn.ReLU { inplace = true }, nn.Dropout { p = dropout },
    nn.Linear(4096, 4096), nn.ReLU { inplace = true }, nn.Dropout { p = dropout },
    nn.Linear(4096, num_classes))
end

function VGG:forward(x)
  x = self.features(x)
  x = self.avgpool(x)
  x = T.flatten(x, 1)
  return self.classifier(x)
end

-- torchvision's make_layers(cfg, batch_norm).
function M.make_layers(cfg, batch_norm)
  local layers, in_channels = {}, 3
  for _, v in ipairs(cfg) do
    if v == "M" then
      layers[#layers + 1] = nn.MaxPool2d { kernel_size = 2, stride = 2 }
    else
      layers[#layers + 1] = nn.Conv2d(in_channels, v, { kernel_size = 3, padding = 1 })
      if batch_norm then layers[#layers + 1] = nn.BatchNorm2d(v) end
      layers[#layers + 1] = nn.ReLU { inplace = true }
      in_channels = v
    end
  end
  return nn.Sequential(layers)
end

-- build{name = "vgg16", num_classes = 1000, dropout = 0.5}
function M.build(opts)
  opts = opts or {}
  local name = opts.name or "vgg16"
  local base, bn = name:match("^(vgg%d+)(.*)$")
  local cfg = base and CFG_OF[base]
  if cfg == nil or (bn ~= "" and bn ~= "_bn") then
    error(string.format("vgg: unknown variant '%s' (known: %s)", tostring(name),
                        table.concat(M.NAMES, ", ")), 2)
  end
  return VGG(M.make_layers(CFGS[cfg], bn == "_bn"), opts.num_classes, opts.dropout)
end

function M.input(opts)
  opts = opts or {}
  local s = opts.image or 224
  return { T.empty({ opts.batch or 1, 3, s, s }) }
end

return M
