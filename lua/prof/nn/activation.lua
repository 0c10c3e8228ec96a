-- activation.lua — nn activations (ReLU ... Mish) and nn.Softmax/LogSoftmax, as PyTorch 1.13's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local initializers = require "prof.nn.initializers"

local Module, fmt = module.Module, args.fmt

local classes = {}

local function class(name)
  local cls = Module:extend(name)
  classes[name] = cls
  return cls
end

-- "inplace=True" only when set, as ReLU, ReLU6, SiLU and Mish print it.
local function inplace_only(self)
  return self.inplace and "inplace=True" or ""
end

-- ", inplace=True" after the other arguments (LeakyReLU, ELU).
local function inplace_suffix(self)
  return self.inplace and ", inplace=True" or ""
end

-- Classes whose only argument is inplace, each calling one function of F.
local INPLACE = {
  { "ReLU", "relu", inplace_only }, { "SiLU", "silu", inplace_only },
  { "Mish", "mish", inplace_only },
  -- Hardswish keeps inplace but prints nothing (PyTorch 1.13 gives it no extra_repr).
  { "Hardswish", "hardswish" },
}
local INPLACE_ARGS = { { "inplace", false } }
for _, c in ipairs(INPLACE) do
  local cls, op = class(c[1]), c[2]
  function cls:init(...)
    -- no arguments (nn.ReLU()): the default without parsing, which makes two tables a call
    if select("#", ...) == 0 then
      self.inplace = false
    else
      self.inplace = args.parse(self.__name, INPLACE_ARGS, ...).inplace
    end
  end
  function cls.forward(_, x) return F[op](x) end
  if c[3] then cls.extra_repr = c[3] end
end

-- nn.ReLU6 is a Hardtanh(0, 6) in PyTorch: its forward calls F.hardtanh, not F.relu6, so
-- DeepSpeed (which patches relu6 but not hardtanh) counts nothing for it. clamp is our hardtanh.
local ReLU6 = class("ReLU6")
function ReLU6:init(...)
  self.inplace = args.parse(self.__name, { { "inplace", false } }, ...).inplace
  self.min_val, self.max_val = 0.0, 6.0
end
function ReLU6:forward(x) return T.clamp(x, self.min_val, self.max_val) end
ReLU6.extra_repr = inplace_only

-- Tanh and Sigmoid call torch.tanh/torch.sigmoid: no arguments, nothing printed.
for name, op in pairs { Tanh = "tanh", Sigmoid = "sigmoid" } do
  local cls = class(name)
  function cls:init(...) args.parse(self.__name, {}, ...) end
  function cls.forward(_, x) return T[op](x) end
end

-- nn.LeakyReLU(negative_slope=0.01, inplace=false)
local LeakyReLU = class("LeakyReLU")
function LeakyReLU:init(...)
  local a = args.parse(self.__name, { { "negative_slope", 0.01 }, { "inplace", false } }, ...)
  self.negative_slope, self.inplace = a.negative_slope, a.inplace
end
function LeakyReLU:forward(x) return F.leaky_relu(x, self.negative_slope) end
function LeakyReLU:extra_repr()
  return "negative_slope=" .. fmt(self.negative_slope) .. inplace_suffix(self)
end

-- nn.ELU(alpha=1.0, inplace=false)
local ELU = class("ELU")
function ELU:init(...)
  local a = args.parse(self.__name, { { "alpha", 1.0 }, { "inplace", false } }, ...)
  self.alpha, self.inplace = a.alpha, a.inplace
end
function ELU:forward(x) return F.elu(x, self.alpha) end
function ELU:extra_repr() return "alpha=" .. fmt(self.alpha) .. inplace_suffix(self) end

-- nn.PReLU(num_parameters=1, init=0.25, {device=, dtype=}): one slope per channel (or shared).
local PReLU = class("PReLU")
function PReLU:init(...)
  local a = args.parse(self.__name, {
    { "num_parameters", 1 }, { "init", 0.25 }, { "device" }, { "dtype" },
  }, ...)
  self.num_parameters, self.init_value = a.num_parameters, a.init
  self:register_parameter("weight", T.empty({ a.num_parameters }, args.factory(a)))
  self:reset_parameters()
end
-- PReLU.reset_parameters: every slope = init (0.25); only cpu values are written.
function PReLU:reset_parameters()
  if initializers.has_values(self.weight) then initializers.constant_(self.weight, self.init_value) end
end
function PReLU:forward(x) return F.prelu(x, self.weight) end
function PReLU:extra_repr() return "num_parameters=" .. self.num_parameters end

-- nn.GELU(approximate='none' | 'tanh'). Both forms are one op kind; the count is the same.
local GELU = class("GELU")
function GELU:init(...)
  local a = args.parse(self.__name, { { "approximate", "none" } }, ...)
  if a.approximate ~= "none" and a.approximate ~= "tanh" then
    error(string.format("%s: approximate argument must be either none or tanh, got '%s'",
                        self.__name, tostring(a.approximate)), 3)
  end
  self.approximate = a.approximate
end
function GELU:forward(x) return F.gelu(x, self.approximate) end
function GELU:extra_repr() return "approximate='" .. self.approximate .. "'" end

-- nn.Softplus(beta=1, threshold=20)
local Softplus = class("Softplus")
function Softplus:init(...)
  local a = args.parse(self.__name, { { "beta", 1 }, { "threshold", 20 } }, ...)
  self.beta, self.threshold = a.beta, a.threshold
end
function Softplus:forward(x) return F.softplus(x, self.beta, self.threshold) end
function Softplus:extra_repr()
  return string.format("beta=%s, threshold=%s", fmt(self.beta), fmt(self.threshold))
end

-- PyTorch's _get_softmax_dim for dim=None (legacy): 0 for 0-, 1- and 3-d input, else 1.
-- PyTorch also warns; we do not (the choice is documented and deterministic).
local function softmax_dim(dim, x)
  if dim ~= nil then return dim end
  local nd = x:dim()
  return (nd == 0 or nd == 1 or nd == 3) and 0 or 1
end

-- nn.Softmax(dim=None), nn.LogSoftmax(dim=None)
for name, op in pairs { Softmax = "softmax", LogSoftmax = "log_softmax" } do
  local cls = class(name)
  function cls:init(...)
    self.dim = args.parse(self.__name, { { "dim" } }, ...).dim
  end
  function cls:forward(x) return F[op](x, softmax_dim(self.dim, x)) end
  function cls:extra_repr() return "dim=" .. fmt(self.dim) end
end

return classes
