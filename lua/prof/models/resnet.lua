-- resnet.lua — torchvision 0.14's ResNet 18/34/50/101/152 (BasicBlock, Bottleneck); build{name = "resnet50"}.
local nn = require "prof.nn"
local T = require "prof.tensor"

local M = {}

-- Convention shared by the vision zoo files: build(opts) picks the variant by opts.name (one of
-- M.NAMES, default "resnet50"); the other opts are the PyTorch constructor's keywords.
M.NAMES = { "resnet18", "resnet34", "resnet50", "resnet101", "resnet152" }

local function conv3x3(in_planes, out_planes, stride)
  return nn.Conv2d(in_planes, out_planes, 3, { stride = stride or 1, padding = 1, bias = false })
end

local function conv1x1(in_planes, out_planes, stride)
  return nn.Conv2d(in_planes, out_planes, 1, { stride = stride or 1, bias = false })
end

-- BasicBlock(inplanes, planes, stride=1, downsample=nil). Attributes are assigned in
-- torchvision's order: it decides named_modules() and the printed tree.
local BasicBlock = nn.Module:extend("BasicBlock")
BasicBlock.expansion = 1
M.BasicBlock = BasicBlock

function BasicBlock:init(inplanes, planes, stride, downsample)
  self.conv1 = conv3x3(inplanes, planes, stride)
  self.bn1 = nn.BatchNorm2d(planes)
  self.relu = nn.ReLU { inplace = true }
  self.conv2 = conv3x3(planes, planes)
  self.bn2 = nn.BatchNorm2d(planes)
  self.downsample = downsample
  self.stride = stride or 1
end

function BasicBlock:forward(x)
  local identity = x
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.bn2(self.conv2(out))
  if self.downsample ~= nil then identity = self.downsample(x) end
  return self.relu(out + identity)
end

-- Bottleneck(inplanes, planes, stride=1, downsample=nil): the stride sits on the 3x3 conv
-- (ResNet V1.5, as torchvision has it).
local Bottleneck = nn.Module:extend("Bottleneck")
Bottleneck.expansion = 4
M.Bottleneck = Bottleneck

function Bottleneck:init(inplanes, planes, stride, downsample)
  local width = planes
  self.conv1 = conv1x1(inplanes, width)
  self.bn1 = nn.BatchNorm2d(width)
  self.conv2 = conv3x3(width, width, stride)
  self.bn2 = nn.BatchNorm2d(width)
  self.conv3 = conv1x1(width, planes * self.expansion)
  self.bn3 = nn.BatchNorm2d(planes * self.expansion)
  self.relu = nn.ReLU { inplace = true }
  self.downsample = downsample
  self.stride = stride or 1
end

function Bottleneck:forward(x)
  local identity = x
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.relu(self.bn2(self.conv2(out)))
  out = self.bn3(self.conv3(out))
  if self.downsample ~= nil then identity = self.downsample(x) end
  return self.relu(out + identity)
end

-- ResNet(block, layers, num_classes=1000, width=64): width (torchvision's 64) scales every stage,
-- for reduced models of the same structure.
local ResNet = nn.Module:extend("ResNet")
M.ResNet = ResNet

function ResNet:init(block, layers, num_classes, width)
  local w = width or 64
  self.inplanes = w
  self.conv1 = nn.Conv2d(3, w, 7, { stride = 2, padding = 3, bias = false })
  self.bn1 = nn.BatchNorm2d(w)
  self.relu = nn.ReLU { inplace = true }
  self.maxpool = nn.MaxPool2d { kernel_size = 3, stride = 2, padding = 1 }
  self.layer1 = self:make_layer(block, w, layers[1])
  self.layer2 = self:make_layer(block, 2 * w, layers[2], 2)
  self.layer3 = self:make_layer(block, 4 * w, layers[3], 2)
  self.layer4 = self:make_layer(block, 8 * w, layers[4], 2)
  self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
  self.fc = nn.Linear(8 * w * block.expansion, num_classes or 1000)
end

-- torchvision's _make_layer: the first block changes stride and width (with a 1x1 projection
-- on the shortcut), the rest keep them.
function ResNet:make_layer(block, planes, blocks, stride)
  stride = stride or 1
  local downsample
  if stride ~= 1 or self.inplanes ~= planes * block.expansion then
    downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                               nn.BatchNorm2d(planes * block.expansion))
  end
  local layers = { block(self.inplanes, planes, stride, downsample) }
  self.inplanes = planes * block.expansion
  for _ = 2, blocks do layers[#layers + 1] = block(self.inplanes, planes) end
  return nn.Sequential(layers)
end

function ResNet:forward(x)
  x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
  x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
  x = T.flatten(self.avgpool(x), 1)
  return self.fc(x)
end

local SPECS = {
  resnet18 = { BasicBlock, { 2, 2, 2, 2 } },
  resnet34 = { BasicBlock, { 3, 4, 6, 3 } },
  resnet50 = { Bottleneck, { 3, 4, 6, 3 } },
  resnet101 = { Bottleneck, { 3, 4, 23, 3 } },
  resnet152 = { Bottleneck, { 3, 8, 36, 3 } },
}

-- build{name = "resnet50", num_classes = 1000, width = 64}
function M.build(opts)
  opts = opts or {}
  local spec = SPECS[opts.name or "resnet50"]
  if spec == nil then
    error(string.format("resnet: unknown variant '%s' (known: %s)", tostring(opts.name),
                        table.concat(M.NAMES, ", ")), 2)
  end
  return ResNet(spec[1], spec[2], opts.num_classes, opts.width)
end

function M.input(opts)
  opts = opts or {}
  local s = opts.image or 224
  return { T.empty({ opts.batch or 1, 3, s, s }) }
end

return M
