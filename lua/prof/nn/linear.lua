-- linear.lua — nn.Identity and nn.Linear, shaped and printed as PyTorch 1.13's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local initializers = require "prof.nn.initializers"

local Module, fmt = module.Module, args.fmt

-- nn.Identity(...): takes and ignores any arguments, as PyTorch's does.
local Identity = Module:extend("Identity")

function Identity.init() end

function Identity.forward(_, x)
  return x
end

-- nn.Linear(in_features, out_features, bias=true, {device=, dtype=})
local Linear = Module:extend("Linear")

function Linear:init(...)
  local a = args.parse(self.__name, {
    "in_features", "out_features", { "bias", true }, { "device" }, { "dtype" },
  }, ...)
  self.in_features, self.out_features = a.in_features, a.out_features
  local fk = args.factory(a)
  self:register_parameter("weight", T.empty({ a.out_features, a.in_features }, fk))
  if a.bias then self:register_parameter("bias", T.empty({ a.out_features }, fk)) end
  self:reset_parameters()
end

-- Linear.reset_parameters: W ~ U(-1/√in, 1/√in) (kaiming_uniform_ with a = √5), bias the same.
-- Only cpu values are written: a meta weight has none.
function Linear:reset_parameters()
  if not initializers.has_values(self.weight) then return end
  initializers.kaiming_uniform_(self.weight, math.sqrt(5))
  if self.bias ~= nil then
    local fan_in = initializers.calculate_fan_in_and_fan_out(self.weight)
    local bound = fan_in > 0 and 1 / math.sqrt(fan_in) or 0
    initializers.uniform_(self.bias, -bound, bound)
  end
end

-- F.linear checks the shapes: its message names both (the profiler adds the module path).
function Linear:forward(x)
  return F.linear(x, self.weight, self.bias)
end

function Linear:extra_repr()
  return string.format("in_features=%d, out_features=%d, bias=%s", self.in_features,
                       self.out_features, fmt(self.bias ~= nil))
end

return { Identity = Identity, Linear = Linear }
