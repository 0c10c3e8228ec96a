-- conv.lua — nn.Conv1d/2d/3d and nn.ConvTranspose1d/2d/3d, shaped and printed as PyTorch 1.13's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local initializers = require "prof.nn.initializers"

local Module, fmt = module.Module, args.fmt

local CONV_SPEC = {
  "in_channels", "out_channels", "kernel_size", { "stride", 1 }, { "padding", 0 },
  { "dilation", 1 }, { "groups", 1 }, { "bias", true }, { "padding_mode", "zeros" },
  { "device" }, { "dtype" },
}
-- ConvTranspose's positional order differs from Conv's (output_padding, then dilation last).
local TRANSPOSED_SPEC = {
  "in_channels", "out_channels", "kernel_size", { "stride", 1 }, { "padding", 0 },
  { "output_padding", 0 }, { "groups", 1 }, { "bias", true }, { "dilation", 1 },
  { "padding_mode", "zeros" }, { "device" }, { "dtype" },
}
local PADDING_MODES = { zeros = true, reflect = true, replicate = true, circular = true }

-- _ConvNd.__init__: the same checks and messages, then the weight [out, in/groups, *k]
-- (transposed: [in, out/groups, *k]) and the bias [out].
local function init(self, nsp, transposed, ...)
  local who = self.__name
  local a = args.parse(who, transposed and TRANSPOSED_SPEC or CONV_SPEC, ...)
  if a.groups <= 0 then error(who .. ": groups must be a positive integer", 3) end
  if a.in_channels % a.groups ~= 0 then
    error(who .. ": in_channels must be divisible by groups", 3)
  end
  if a.out_channels % a.groups ~= 0 then
    error(who .. ": out_channels must be divisible by groups", 3)
  end
  if not PADDING_MODES[a.padding_mode] then
    error(string.format("%s: padding_mode must be one of {'zeros', 'reflect', 'replicate', "
                        .. "'circular'}, but got padding_mode='%s'", who, a.padding_mode), 3)
  end
  -- Only zero padding exists in the runtime; PyTorch pads with F.pad for the others.
  if a.padding_mode ~= "zeros" then
    error(string.format("%s: padding_mode='%s' is not supported (only 'zeros')", who,
                        a.padding_mode), 3)
  end
  local stride = args.ntuple(a.stride, nsp)
  if type(a.padding) == "string" then
    if transposed or (a.padding ~= "same" and a.padding ~= "valid") then
      error(string.format("%s: invalid padding string '%s', should be one of {'valid', 'same'}",
                          who, a.padding), 3)
    end
    if a.padding == "same" and not args.all_equal(stride, 1) then
      error(who .. ": padding='same' is not supported for strided convolutions", 3)
    end
  end
  self.in_channels, self.out_channels = a.in_channels, a.out_channels
  self.kernel_size = args.ntuple(a.kernel_size, nsp)
  self.stride = stride
  self.padding = type(a.padding) == "string" and a.padding or args.ntuple(a.padding, nsp)
  self.dilation = args.ntuple(a.dilation, nsp)
  self.transposed = transposed
  self.output_padding = args.ntuple(transposed and a.output_padding or 0, nsp)
  self.groups = a.groups
  self.padding_mode = a.padding_mode
  local shape = transposed and { a.in_channels, a.out_channels // a.groups }
                or { a.out_channels, a.in_channels // a.groups }
  for _, k in ipairs(self.kernel_size) do shape[#shape + 1] = k end
  local fk = args.factory(a)
  self:register_parameter("weight", T.empty(shape, fk))
  if a.bias then self:register_parameter("bias", T.empty({ a.out_channels }, fk)) end
  self:reset_parameters()
end

-- _ConvNd.reset_parameters: kaiming_uniform_ with a = √5 and the bias U(-1/√fan_in, 1/√fan_in),
-- fan_in from the weight as torch computes it (for a transposed conv that is out/groups·k).
local function reset_parameters(self)
  if not initializers.has_values(self.weight) then return end
  initializers.kaiming_uniform_(self.weight, math.sqrt(5))
  if self.bias ~= nil then
    local fan_in = initializers.calculate_fan_in_and_fan_out(self.weight)
    if fan_in ~= 0 then
      local bound = 1 / math.sqrt(fan_in)
      initializers.uniform_(self.bias, -bound, bound)
    end
  end
end

-- _ConvNd.extra_repr: defaults are left out, as PyTorch does.
local function extra_repr(self)
  local s = string.format("%d, %d, kernel_size=%s, stride=%s", self.in_channels,
                          self.out_channels, fmt(self.kernel_size), fmt(self.stride))
  if type(self.padding) == "string" or not args.all_equal(self.padding, 0) then
    s = s .. ", padding=" .. fmt(self.padding)
  end
  if not args.all_equal(self.dilation, 1) then s = s .. ", dilation=" .. fmt(self.dilation) end
  if not args.all_equal(self.output_padding, 0) then
    s = s .. ", output_padding=" .. fmt(self.output_padding)
  end
  if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
  if self.bias == nil then s = s .. ", bias=False" end
  if self.padding_mode ~= "zeros" then s = s .. ", padding_mode=" .. self.padding_mode end
  return s
end

-- _ConvTransposeNd._output_padding: the output_padding that makes the output output_size.
local function output_padding(self, x, output_size, nsp)
  if output_size == nil then return self.output_padding end
  local size = {}
  local lead = x:dim() == nsp + 2 and 2 or 1
  local first = #output_size == lead + nsp and lead + 1 or 1
  for i = first, #output_size do size[#size + 1] = output_size[i] end
  if #size ~= nsp then
    error(string.format("%s: for %dD input, output_size must have %d or %d elements (got %d)",
                        self.__name, x:dim(), nsp, nsp + lead, #output_size), 3)
  end
  local lo, hi, res = {}, {}, {}
  for d = 1, nsp do
    lo[d] = (x:size(lead + d - 1) - 1) * self.stride[d] - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1) + 1
    hi[d] = lo[d] + self.stride[d] - 1
  end
  for d = 1, nsp do
    if size[d] < lo[d] or size[d] > hi[d] then
      local sp = {}
      for i = lead + 1, x:dim() do sp[#sp + 1] = x.shape[i] end
      error(string.format("%s: requested an output size of %s, but valid sizes range from %s "
                          .. "to %s (for an input of %s)", self.__name, fmt(size), fmt(lo),
                          fmt(hi), fmt(sp)), 3)
    end
    res[d] = size[d] - lo[d]
  end
  return res
end

local classes = {}

for nsp = 1, 3 do
  local conv_op, tconv_op = "conv" .. nsp .. "d", "conv_transpose" .. nsp .. "d"

  -- nn.ConvNd(in, out, kernel_size, stride, padding, dilation, groups, bias, padding_mode)
  local Conv = Module:extend("Conv" .. nsp .. "d")
  function Conv:init(...) return init(self, nsp, false, ...) end
  Conv.extra_repr, Conv.reset_parameters = extra_repr, reset_parameters
  -- The op checks channels and sizes and names both shapes in its message.
  function Conv:forward(x)
    return F[conv_op](x, self.weight, self.bias, {
      stride = self.stride, padding = self.padding, dilation = self.dilation, groups = self.groups,
    })
  end
  classes[Conv.__name] = Conv

  -- nn.ConvTransposeNd(in, out, kernel_size, stride, padding, output_padding, groups, bias,
  -- dilation, padding_mode); forward(x, output_size) as PyTorch's.
  local ConvT = Module:extend("ConvTranspose" .. nsp .. "d")
  function ConvT:init(...) return init(self, nsp, true, ...) end
  ConvT.extra_repr, ConvT.reset_parameters = extra_repr, reset_parameters
  function ConvT:forward(x, output_size)
    return F[tconv_op](x, self.weight, self.bias, {
      stride = self.stride, padding = self.padding,
      output_padding = output_padding(self, x, output_size, nsp), groups = self.groups,
      dilation = self.dilation,
    })
  end
  classes[ConvT.__name] = ConvT
end

return classes
