-- init.lua — prof.nn: PyTorch's module classes, named, shaped and printed as PyTorch does.
local module = require "prof.nn.module"

local nn = {}
nn.Module = module.Module
nn.functional = require "prof.nn.functional"
nn.init = require "prof.nn.initializers"     -- torch.nn.init's spelling: nn.init.kaiming_uniform_

-- Each file returns a table of classes.
local FILES = {
  "containers", "linear", "conv", "pooling", "activation", "normalization", "sparse",
  "dropout", "flatten", "rnn", "attention",
}
for _, f in ipairs(FILES) do
  for k, v in pairs(require("prof.nn." .. f)) do nn[k] = v end
end

-- nn.Parameter(t): marks a tensor as a trainable parameter and returns it.
function nn.Parameter(t, requires_grad)
  if requires_grad == nil then requires_grad = true end
  return t:set_flags { parameter = true, requires_grad = requires_grad }
end

return nn
