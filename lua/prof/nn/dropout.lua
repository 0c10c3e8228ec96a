-- dropout.lua — nn.Dropout, printed as PyTorch 1.13's; it drops only while training.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"

local Module, fmt = module.Module, args.fmt

-- nn.Dropout(p=0.5, inplace=false)
local Dropout = Module:extend("Dropout")

function Dropout:init(...)
  local a = args.parse(self.__name, { { "p", 0.5 }, { "inplace", false } }, ...)
  if type(a.p) ~= "number" or a.p < 0 or a.p > 1 then
    error(string.format("%s: dropout probability has to be between 0 and 1, but got %s",
                        self.__name, fmt(a.p)), 3)
  end
  self.p, self.inplace = a.p, a.inplace
end

-- F.dropout(x, p, training): in eval mode the op passes x through (and records no work).
function Dropout:forward(x)
  return F.dropout(x, self.p, self.training)
end

function Dropout:extra_repr()
  return string.format("p=%s, inplace=%s", fmt(self.p), fmt(self.inplace))
end

return { Dropout = Dropout }
