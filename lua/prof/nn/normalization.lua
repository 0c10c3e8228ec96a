-- normalization.lua — nn.BatchNorm, InstanceNorm (1d/2d/3d), LayerNorm, GroupNorm and RMSNorm.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local initializers = require "prof.nn.initializers"

local Module, fmt = module.Module, args.fmt

local classes = {}

local function dim_error(self, x, expected)
  error(string.format("%s: expected %s input (got %dD input %s)", self.__name, expected, x:dim(),
                      args.shape_str(x)), 3)
end

-- _NormBase.__init__: weight and bias [C] when affine; running_mean, running_var [C] and the
-- int64 scalar num_batches_tracked when tracking, registered in PyTorch's order.
-- momentum=false stands for Python's None (a nil in a keyword table cannot be told from absent).
local function norm_base(self, defaults, ...)
  local a = args.parse(self.__name, {
    "num_features", { "eps", 1e-5 }, { "momentum", 0.1 }, { "affine", defaults.affine },
    { "track_running_stats", defaults.track }, { "device" }, { "dtype" },
  }, ...)
  local c = a.num_features
  self.num_features, self.eps = c, a.eps
  self.momentum = a.momentum or nil
  self.affine, self.track_running_stats = a.affine, a.track_running_stats
  local fk = args.factory(a)
  if a.affine then
    self:register_parameter("weight", T.empty({ c }, fk))
    self:register_parameter("bias", T.empty({ c }, fk))
  end
  if a.track_running_stats then
    self:register_buffer("running_mean", T.empty({ c }, fk))
    self:register_buffer("running_var", T.empty({ c }, fk))
    self:register_buffer("num_batches_tracked", T.empty({}, { dtype = "int64", device = a.device }))
    self.batches_seen = 0
  end
  self:reset_parameters()
end

-- _NormBase.reset_running_stats and reset_parameters: mean 0, variance 1, no batches seen;
-- weight 1, bias 0. Only cpu values are written (meta tensors have none).
local function reset_running_stats(self)
  if not self.track_running_stats then return end
  self.batches_seen = 0
  if initializers.has_values(self.running_mean) then
    initializers.zeros_(self.running_mean)
    initializers.ones_(self.running_var)
  end
end

-- weight 1 and bias 0 where the module has them (LayerNorm, GroupNorm and RMSNorm too)
local function reset_affine(self)
  if initializers.has_values(self.weight) then initializers.ones_(self.weight) end
  if initializers.has_values(self.bias) then initializers.zeros_(self.bias) end
end

local function norm_reset_parameters(self)
  self:reset_running_stats()
  reset_affine(self)
end

local function norm_repr(self)
  return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
                       self.num_features, fmt(self.eps), fmt(self.momentum), fmt(self.affine),
                       fmt(self.track_running_stats))
end

-- _BatchNorm.forward: batch statistics in training (or without running stats), running stats
-- passed only when they are used or updated.
local function batch_norm_forward(self, x)
  self:check_input_dim(x)
  local factor = self.momentum or 0.0
  if self.training and self.track_running_stats then
    -- PyTorch adds 1 to num_batches_tracked in place; the count lives here until the runtime
    -- has in-place ops (it only matters for momentum=None's cumulative average)
    self.batches_seen = self.batches_seen + 1
    if self.momentum == nil then factor = 1.0 / self.batches_seen end
  end
  local bn_training = self.training or (self.running_mean == nil and self.running_var == nil)
  local use_stats = not self.training or self.track_running_stats
  return F.batch_norm(x, use_stats and self.running_mean or nil,
                      use_stats and self.running_var or nil, self.weight, self.bias,
                      { training = bn_training, momentum = factor, eps = self.eps })
end

-- Input ranks PyTorch's _check_input_dim accepts, per class.
local BATCH_DIMS = { { 2, 3, "2D or 3D" }, { 4, 4, "4D" }, { 5, 5, "5D" } }

for nsp = 1, 3 do
  -- nn.BatchNormNd(num_features, eps=1e-5, momentum=0.1, affine=true, track_running_stats=true)
  local BN = Module:extend("BatchNorm" .. nsp .. "d")
  local lo, hi, what = table.unpack(BATCH_DIMS[nsp])
  function BN:init(...) return norm_base(self, { affine = true, track = true }, ...) end
  function BN:check_input_dim(x)
    if x:dim() < lo or x:dim() > hi then dim_error(self, x, what) end
  end
  BN.forward = batch_norm_forward
  BN.extra_repr = norm_repr
  BN.reset_running_stats, BN.reset_parameters = reset_running_stats, norm_reset_parameters
  classes[BN.__name] = BN

  -- nn.InstanceNormNd(num_features, eps=1e-5, momentum=0.1, affine=false,
  -- track_running_stats=false); unbatched input ([C, *]) is run as a batch of one.
  local IN = Module:extend("InstanceNorm" .. nsp .. "d")
  local no_batch = nsp + 1
  function IN:init(...) return norm_base(self, { affine = false, track = false }, ...) end
  function IN:forward(x)
    if x:dim() ~= no_batch and x:dim() ~= no_batch + 1 then
      dim_error(self, x, string.format("%dD or %dD", no_batch, no_batch + 1))
    end
    local unbatched = x:dim() == no_batch
    if unbatched then x = x:unsqueeze(0) end
    local y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, {
      use_input_stats = self.training or not self.track_running_stats,
      momentum = self.momentum, eps = self.eps,
    })
    if unbatched then y = y:squeeze(0) end
    return y
  end
  IN.extra_repr = norm_repr
  IN.reset_running_stats, IN.reset_parameters = reset_running_stats, norm_reset_parameters
  classes[IN.__name] = IN
end

-- nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=true)
local LayerNorm = Module:extend("LayerNorm")
function LayerNorm:init(...)
  local a = args.parse(self.__name, {
    "normalized_shape", { "eps", 1e-5 }, { "elementwise_affine", true }, { "device" },
    { "dtype" },
  }, ...)
  self.normalized_shape = args.ntuple(a.normalized_shape, 1)
  self.eps, self.elementwise_affine = a.eps, a.elementwise_affine
  if a.elementwise_affine then
    local fk = args.factory(a)
    self:register_parameter("weight", T.empty(self.normalized_shape, fk))
    self:register_parameter("bias", T.empty(self.normalized_shape, fk))
  end
  self:reset_parameters()
end
LayerNorm.reset_parameters = reset_affine
function LayerNorm:forward(x)
  return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, { eps = self.eps })
end
function LayerNorm:extra_repr()
  return string.format("%s, eps=%s, elementwise_affine=%s", fmt(self.normalized_shape),
                       fmt(self.eps), fmt(self.elementwise_affine))
end
classes.LayerNorm = LayerNorm

-- nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=true)
local GroupNorm = Module:extend("GroupNorm")
function GroupNorm:init(...)
  local a = args.parse(self.__name, {
    "num_groups", "num_channels", { "eps", 1e-5 }, { "affine", true }, { "device" }, { "dtype" },
  }, ...)
  if a.num_channels % a.num_groups ~= 0 then
    error(self.__name .. ": num_channels must be divisible by num_groups", 3)
  end
  self.num_groups, self.num_channels = a.num_groups, a.num_channels
  self.eps, self.affine = a.eps, a.affine
  if a.affine then
    local fk = args.factory(a)
    self:register_parameter("weight", T.empty({ a.num_channels }, fk))
    self:register_parameter("bias", T.empty({ a.num_channels }, fk))
  end
  self:reset_parameters()
end
GroupNorm.reset_parameters = reset_affine
function GroupNorm:forward(x)
  return F.group_norm(x, self.num_groups, self.weight, self.bias, { eps = self.eps })
end
function GroupNorm:extra_repr()
  return string.format("%d, %d, eps=%s, affine=%s", self.num_groups, self.num_channels,
                       fmt(self.eps), fmt(self.affine))
end
classes.GroupNorm = GroupNorm

-- nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=true): PyTorch >= 2.4's class (1.13
-- has none); eps=None means the dtype's machine epsilon, which the op applies.
local RMSNorm = Module:extend("RMSNorm")
function RMSNorm:init(...)
  local a = args.parse(self.__name, {
    "normalized_shape", { "eps" }, { "elementwise_affine", true }, { "device" }, { "dtype" },
  }, ...)
  self.normalized_shape = args.ntuple(a.normalized_shape, 1)
  self.eps, self.elementwise_affine = a.eps, a.elementwise_affine
  if a.elementwise_affine then
    self:register_parameter("weight", T.empty(self.normalized_shape, args.factory(a)))
  end
  self:reset_parameters()
end
RMSNorm.reset_parameters = reset_affine
function RMSNorm:forward(x)
  return F.rms_norm(x, self.normalized_shape, self.weight, { eps = self.eps })
end
RMSNorm.extra_repr = LayerNorm.extra_repr
classes.RMSNorm = RMSNorm

return classes
