-- alexnet.lua — torchvision's AlexNet (61,100,840 parameters for 1000 classes).
local nn = require "prof.nn"
local T = require "prof.tensor"

local M = {}

local AlexNet = nn.Module:extend("AlexNet")
M.AlexNet = AlexNet

function AlexNet:init(num_classes, dropout)
  num_classes = num_classes or 1000
  dropout = dropout or 0.5
  self.features = nn.Sequential(
    nn.Conv2d(3, 64, 11, { stride = 4, padding = 2 }), nn.ReLU { inplace = true },
    nn.MaxPool2d(3, { stride = 2 }),
    nn.Conv2d(64, 192, 5, { padding = 2 }), nn.ReLU { inplace = true },
    nn.MaxPool2d(3, { stride = 2 }),
    nn.Conv2d(192, 384, 3, { padding = 1 }), nn.ReLU { inplace = true },
    nn.Conv2d(384, 256, 3, { padding = 1 }), nn.ReLU { inplace = true },
    nn.Conv2d(256, 256, 3, { padding = 1 }), nn.ReLU { inplace = true },
    nn.MaxPool2d(3, { stride = 2 }))
  self.avgpool = nn.AdaptiveAvgPool2d({ 6, 6 })
  self.classifier = nn.Sequential(
    nn.Dropout(dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU { inplace = true },
    nn.Dropout(dropout), nn.Linear(4096, 4096), nn.ReLU { inplace = true },
    nn.Linear(4096, num_classes))
end

function AlexNet:forward(x)
  x = self.features(x)
  x = self.avgpool(x)
  x = T.flatten(x, 1)
  return self.classifier(x)
end

function M.build(opts)
  opts = opts or {}
  return AlexNet(opts.num_classes, opts.dropout)
end

function M.input(opts)
  opts = opts or {}
  local s = opts.image or 224
  return { T.empty({ opts.batch or 256, 3, s, s }) }
end

return M
