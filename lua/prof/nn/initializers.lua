-- initializers.lua — torch.nn.init's initialisers: PyTorch's fans, gains and distributions, in place.
local args = require "prof.nn.args"

local M = {}

-- Only cpu float32 tensors hold values the fills can write; on meta there is nothing to write
-- (the fills return at once there), so modules skip initialisation altogether.
function M.has_values(t)
  return t ~= nil and t.device == "cpu" and t.dtype == "float32"
end

-- Optional arguments given positionally (Python's order) or as one keyword table:
-- kaiming_uniform_(w, math.sqrt(5)) or kaiming_uniform_(w, {a = math.sqrt(5)}).
local function options(who, names, defaults, ...)
  local first = ...
  local out = {}
  if select("#", ...) == 1 and args.is_keywords(first) then
    for k in pairs(first) do
      if defaults[k] == nil then
        error(string.format("%s: unexpected keyword argument '%s'", who, tostring(k)), 3)
      end
    end
    for _, k in ipairs(names) do
      local v = first[k]
      if v == nil then v = defaults[k] end
      out[k] = v
    end
    return out
  end
  for i, k in ipairs(names) do
    local v = select(i, ...)
    if v == nil then v = defaults[k] end
    out[k] = v
  end
  return out
end

-- calculate_gain(nonlinearity, param): the gain torch recommends for a nonlinearity.
local LINEAR_FNS = { linear = true, conv1d = true, conv2d = true, conv3d = true,
                     conv_transpose1d = true, conv_transpose2d = true, conv_transpose3d = true,
                     sigmoid = true }
function M.calculate_gain(nonlinearity, param)
  if LINEAR_FNS[nonlinearity] then return 1 end
  if nonlinearity == "tanh" then return 5.0 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2.0) end
  if nonlinearity == "leaky_relu" then
    local slope = 0.01
    if param ~= nil then
      if type(param) ~= "number" then
        error(string.format("negative_slope %s not a valid number", tostring(param)), 2)
      end
      slope = param
    end
    return math.sqrt(2.0 / (1 + slope ^ 2))
  end
  if nonlinearity == "selu" then return 3.0 / 4 end
  error("Unsupported nonlinearity " .. tostring(nonlinearity), 2)
end

-- torch's _calculate_fan_in_and_fan_out: dim 1 is the input, dim 0 the output, the trailing
-- dims the receptive field (conv weights [out, in/groups, k...]; a transposed conv's weight
-- [in, out/groups, k...] gets them the other way round, as in torch).
function M.calculate_fan_in_and_fan_out(t, level)
  if t:dim() < 2 then
    error("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
          (level or 1) + 1)
  end
  local receptive = 1
  for d = 2, t:dim() - 1 do receptive = receptive * t:size(d) end
  return t:size(1) * receptive, t:size(0) * receptive
end
M._calculate_fan_in_and_fan_out = M.calculate_fan_in_and_fan_out

local function correct_fan(t, mode)
  mode = mode:lower()
  if mode ~= "fan_in" and mode ~= "fan_out" then
    error(string.format("Mode %s not supported, please use one of ['fan_in', 'fan_out']", mode), 3)
  end
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t, 3)
  return mode == "fan_in" and fan_in or fan_out
end

local function has_zero_dim(t)
  for _, d in ipairs(t.shape) do
    if d == 0 then return true end
  end
  return false
end

-- uniform_(t, a=0, b=1), normal_(t, mean=0, std=1): values drawn from the runtime's generator.
function M.uniform_(t, ...)
  local o = options("uniform_", { "a", "b" }, { a = 0.0, b = 1.0 }, ...)
  return t:uniform_(o.a, o.b)
end

function M.normal_(t, ...)
  local o = options("normal_", { "mean", "std" }, { mean = 0.0, std = 1.0 }, ...)
  return t:normal_(o.mean, o.std)
end

function M.constant_(t, val)
  return t:fill_(val)
end

function M.ones_(t) return t:fill_(1) end
function M.zeros_(t) return t:fill_(0) end

-- xavier_uniform_(t, gain=1): U(-a, a), a = gain·√(6 / (fan_in + fan_out)).
function M.xavier_uniform_(t, ...)
  local o = options("xavier_uniform_", { "gain" }, { gain = 1.0 }, ...)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t, 2)
  local std = o.gain * math.sqrt(2.0 / (fan_in + fan_out))
  local a = math.sqrt(3.0) * std
  return t:uniform_(-a, a)
end

-- xavier_normal_(t, gain=1): N(0, std²), std = gain·√(2 / (fan_in + fan_out)).
function M.xavier_normal_(t, ...)
  local o = options("xavier_normal_", { "gain" }, { gain = 1.0 }, ...)
  local fan_in, fan_out = M.calculate_fan_in_and_fan_out(t, 2)
  return t:normal_(0, o.gain * math.sqrt(2.0 / (fan_in + fan_out)))
end

local KAIMING = { "a", "mode", "nonlinearity" }
local KAIMING_DEFAULTS = { a = 0, mode = "fan_in", nonlinearity = "leaky_relu" }

-- kaiming_uniform_(t, a=0, mode='fan_in', nonlinearity='leaky_relu'):
-- U(-b, b), b = gain·√(3 / fan); with a = √5 (Linear, Conv) b = 1/√fan_in.
function M.kaiming_uniform_(t, ...)
  local o = options("kaiming_uniform_", KAIMING, KAIMING_DEFAULTS, ...)
  if has_zero_dim(t) then
    warn("Initializing zero-element tensors is a no-op")
    return t
  end
  local fan = correct_fan(t, o.mode)
  local bound = math.sqrt(3.0) * M.calculate_gain(o.nonlinearity, o.a) / math.sqrt(fan)
  return t:uniform_(-bound, bound)
end

-- kaiming_normal_(t, a=0, mode='fan_in', nonlinearity='leaky_relu'): N(0, (gain/√fan)²).
function M.kaiming_normal_(t, ...)
  local o = options("kaiming_normal_", KAIMING, KAIMING_DEFAULTS, ...)
  if has_zero_dim(t) then
    warn("Initializing zero-element tensors is a no-op")
    return t
  end
  local fan = correct_fan(t, o.mode)
  return t:normal_(0, M.calculate_gain(o.nonlinearity, o.a) / math.sqrt(fan))
end

return M
