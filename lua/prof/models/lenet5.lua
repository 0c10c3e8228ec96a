-- lenet5.lua — LeNet-5 as in DeepSpeed's flops-profiler unit test (input N×1×32×32, 10 classes).
local nn = require "prof.nn"
local F = nn.functional
local T = require "prof.tensor"

local M = {}

local LeNet5 = nn.Module:extend("LeNet5")
M.LeNet5 = LeNet5

function LeNet5:init(n_classes)
  n_classes = n_classes or 10
  self.feature_extractor = nn.Sequential(
    nn.Conv2d(1, 6, 5, { stride = 1 }), nn.Tanh(), nn.AvgPool2d(2),
    nn.Conv2d(6, 16, 5, { stride = 1 }), nn.Tanh(), nn.AvgPool2d(2),
    nn.Conv2d(16, 120, 5, { stride = 1 }), nn.Tanh())
  self.classifier = nn.Sequential(nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, n_classes))
end

-- Returns logits and probabilities, as the test model does (the softmax is a functional call).
function LeNet5:forward(x)
  x = self.feature_extractor(x)
  x = T.flatten(x, 1)
  local logits = self.classifier(x)
  return logits, F.softmax(logits, 1)
end

function M.build(opts)
  return LeNet5((opts or {}).num_classes)
end

function M.input(opts)
  opts = opts or {}
  return { T.empty({ opts.batch or 1024, 1, 32, 32 }) }
end

return M
