-- flatten.lua — nn.Flatten and nn.Unflatten, printed as PyTorch 1.13's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"

local Module, fmt = module.Module, args.fmt

-- nn.Flatten(start_dim=1, end_dim=-1): keeps the batch dimension by default, unlike torch.flatten.
local Flatten = Module:extend("Flatten")

function Flatten:init(...)
  local a = args.parse(self.__name, { { "start_dim", 1 }, { "end_dim", -1 } }, ...)
  self.start_dim, self.end_dim = a.start_dim, a.end_dim
end

function Flatten:forward(x)
  return x:flatten(self.start_dim, self.end_dim)
end

function Flatten:extra_repr()
  return string.format("start_dim=%d, end_dim=%d", self.start_dim, self.end_dim)
end

-- nn.Unflatten(dim, unflattened_size): one dimension becomes several (one of them may be -1).
local Unflatten = Module:extend("Unflatten")

function Unflatten:init(...)
  local a = args.parse(self.__name, { "dim", "unflattened_size" }, ...)
  if type(a.unflattened_size) ~= "table" then
    error(string.format("%s: unflattened_size must be a list of integers, got %s", self.__name,
                        type(a.unflattened_size)), 3)
  end
  self.dim, self.unflattened_size = a.dim, args.ntuple(a.unflattened_size)
end

-- Tensor.unflatten is a view: the shape before dim, the new sizes, the shape after it.
function Unflatten:forward(x)
  local shape, nd = x.shape, x:dim()
  local d = self.dim < 0 and self.dim + nd or self.dim
  if d < 0 or d >= nd then
    error(string.format("%s: dim %d is out of range for input %s", self.__name, self.dim,
                        "[" .. table.concat(shape, ", ") .. "]"), 2)
  end
  local out = {}
  for i = 1, d do out[#out + 1] = shape[i] end
  for _, s in ipairs(self.unflattened_size) do out[#out + 1] = s end
  for i = d + 2, nd do out[#out + 1] = shape[i] end
  return x:view(out)
end

function Unflatten:extra_repr()
  return string.format("dim=%d, unflattened_size=%s", self.dim, fmt(self.unflattened_size))
end

return { Flatten = Flatten, Unflatten = Unflatten }
