-- alexnet.lua — torchvision's AlexNet (61,100,840 parameters for 1000 classes).
local nn = require "prof.nn"
local T = require "prof.tensor"

local M = {}

local AlexNet = nn.Module:extend("AlexNet")
M.AlexNet = AlexNet

-- AlexNet(num_classes=1000, dropout=0.5, channels={64, 192, 384, 256, 256}, hidden=4096): the
-- widths are torchvision's unless given (reduced models keep the structure).
function AlexNet:init(num_classes, dropout, channels, hidden)
  num_classes = num_classes or 1000
  dropout = dropout or 0.5
  local c = channels or { 64, 192, 384, 256, 256 }
  hidden = hidden or 4096
  self.features = nn.Sequential(
    nn.Conv2d(3, c[1], 11, { stride = 4, padding = 2 }), nn.ReLU { inplace = true },
    nn.MaxPool2d(3, { stride = 2 }),
    nn.Conv2d(c[1], c[2], 5, { padding = 2 }), nn.ReLU { inplace = true },
    nn.MaxPool2d(3, { stride = 2 }),
    nn.Conv2d(c[2], c[3], 3, { padding = 1 }), nn.ReLU { inplace = true },
    nn.Conv2d(c[3], c[4], 3, { padding = 1 }), nn.ReLU { inplace = true },
    nn.Conv2d(c[4], c[5], 3, { padding = 1 }), nn.ReLU { inplace = true },
    nn.MaxPool2d(3, { stride = 2 }))
  self.avgpool = nn.AdaptiveAvgPool2d({ 6, 6 })
  self.classifier = nn.Sequential(
    nn.Dropout(dropout), nn.Linear(c[5] * 6 * 6, hidden), nn.ReLU { inplace = true },
    nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.ReLU { inplace = true },
    nn.Linear(hidden, num_classes))
end

function AlexNet:forward(x)
  x = self.features(x)
  x = self.avgpool(x)
  x = T.flatten(x, 1)
  return self.classifier(x)
end

function M.build(opts)
  opts = opts or {}
  return AlexNet(opts.num_classes, opts.dropout, opts.channels, opts.hidden)
end

function M.input(opts)
  opts = opts or {}
  local s = opts.image or 224
  return { T.empty({ opts.batch or 256, 3, s, s }) }
end

return M
