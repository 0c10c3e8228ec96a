-- pooling.lua — nn.MaxPool, AvgPool, AdaptiveAvgPool and AdaptiveMaxPool in 1, 2 and 3 dims.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"

local Module, fmt = module.Module, args.fmt

local classes = {}

local function unsupported(who, what)
  error(string.format("%s: %s is not supported", who, what), 4)
end

for nsp = 1, 3 do
  -- nn.MaxPoolNd(kernel_size, stride=kernel_size, padding=0, dilation=1, return_indices=false,
  -- ceil_mode=false): PyTorch keeps the values as given (2 stays 2, not (2, 2)).
  local MaxPool = Module:extend("MaxPool" .. nsp .. "d")
  local max_op = "max_pool" .. nsp .. "d"
  function MaxPool:init(...)
    local a = args.parse(self.__name, {
      "kernel_size", { "stride" }, { "padding", 0 }, { "dilation", 1 },
      { "return_indices", false }, { "ceil_mode", false },
    }, ...)
    -- the ops return one tensor; indices would need a second output
    if a.return_indices then unsupported(self.__name, "return_indices=True") end
    self.kernel_size = a.kernel_size
    self.stride = a.stride == nil and a.kernel_size or a.stride
    self.padding, self.dilation = a.padding, a.dilation
    self.return_indices, self.ceil_mode = a.return_indices, a.ceil_mode
  end
  function MaxPool:forward(x)
    return F[max_op](x, self.kernel_size, {
      stride = self.stride, padding = self.padding, dilation = self.dilation,
      ceil_mode = self.ceil_mode,
    })
  end
  function MaxPool:extra_repr()
    return string.format("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s",
                         fmt(self.kernel_size), fmt(self.stride), fmt(self.padding),
                         fmt(self.dilation), fmt(self.ceil_mode))
  end
  classes[MaxPool.__name] = MaxPool

  -- nn.AvgPoolNd(kernel_size, stride=kernel_size, padding=0, ceil_mode=false,
  -- count_include_pad=true[, divisor_override=nil for 2d and 3d]). AvgPool1d stores tuples,
  -- AvgPool2d/3d the values as given: their reprs differ in PyTorch too. divisor_override is
  -- left out of the repr, as torch 1.13's _AvgPoolNd.extra_repr leaves it out.
  local AvgPool = Module:extend("AvgPool" .. nsp .. "d")
  local avg_op = "avg_pool" .. nsp .. "d"
  local avg_spec = {
    "kernel_size", { "stride" }, { "padding", 0 }, { "ceil_mode", false },
    { "count_include_pad", true },
  }
  if nsp > 1 then avg_spec[#avg_spec + 1] = { "divisor_override" } end
  function AvgPool:init(...)
    local a = args.parse(self.__name, avg_spec, ...)
    local stride = a.stride == nil and a.kernel_size or a.stride
    if nsp == 1 then
      self.kernel_size, self.stride = args.ntuple(a.kernel_size, 1), args.ntuple(stride, 1)
      self.padding = args.ntuple(a.padding, 1)
    else
      self.kernel_size, self.stride, self.padding = a.kernel_size, stride, a.padding
    end
    self.ceil_mode, self.count_include_pad = a.ceil_mode, a.count_include_pad
    if nsp > 1 then self.divisor_override = a.divisor_override end
  end
  function AvgPool:forward(x)
    return F[avg_op](x, self.kernel_size, {
      stride = self.stride, padding = self.padding, ceil_mode = self.ceil_mode,
      count_include_pad = self.count_include_pad, divisor_override = self.divisor_override,
    })
  end
  function AvgPool:extra_repr()
    return string.format("kernel_size=%s, stride=%s, padding=%s", fmt(self.kernel_size),
                         fmt(self.stride), fmt(self.padding))
  end
  classes[AvgPool.__name] = AvgPool

  -- nn.AdaptiveAvgPoolNd(output_size), nn.AdaptiveMaxPoolNd(output_size, return_indices=false)
  for _, kind in ipairs { "Avg", "Max" } do
    local Adaptive = Module:extend("Adaptive" .. kind .. "Pool" .. nsp .. "d")
    local op = "adaptive_" .. kind:lower() .. "_pool" .. nsp .. "d"
    local spec = { "output_size" }
    if kind == "Max" then spec[2] = { "return_indices", false } end
    function Adaptive:init(...)
      local a = args.parse(self.__name, spec, ...)
      if a.return_indices then unsupported(self.__name, "return_indices=True") end
      self.output_size = a.output_size
      if kind == "Max" then self.return_indices = a.return_indices end
    end
    function Adaptive:forward(x)
      return F[op](x, self.output_size)
    end
    function Adaptive:extra_repr()
      return "output_size=" .. fmt(self.output_size)
    end
    classes[Adaptive.__name] = Adaptive
  end
end

return classes
