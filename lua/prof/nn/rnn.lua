-- rnn.lua — nn.RNN, GRU, LSTM and their cells, shaped and printed as PyTorch 1.13's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local core = require "prof.core"
local initializers = require "prof.nn.initializers"

local Module, fmt = module.Module, args.fmt

local GATES = { RNN = 1, GRU = 3, LSTM = 4 }

-- The recurrent ops live in prof.core; looked up per call so that a missing op is named.
local function op(name)
  local f = F[name] or core[name]
  if f == nil then error(string.format("prof.core has no '%s' op yet", name), 2) end
  return f
end

local function shape_of(t)
  return "[" .. table.concat(t.shape, ", ") .. "]"
end

-- RNNBase.__init__: per layer and direction weight_ih_l{k}, weight_hh_l{k}[, bias_ih_l{k},
-- bias_hh_l{k}][, weight_hr_l{k}], "_reverse" for the second direction, in PyTorch's order.
local function rnn_init(self, mode, ...)
  local who = self.__name
  local spec = {
    "input_size", "hidden_size", { "num_layers", 1 }, { "bias", true }, { "batch_first", false },
    { "dropout", 0.0 }, { "bidirectional", false },
  }
  -- proj_size is LSTM's (positional there); RNN's nonlinearity is keyword-only in PyTorch
  if mode == "LSTM" then spec[#spec + 1] = { "proj_size", 0 } end
  if mode == "RNN" then spec[#spec + 1] = { "nonlinearity", "tanh" } end
  spec[#spec + 1] = { "device" }
  spec[#spec + 1] = { "dtype" }
  local a = args.parse(who, spec, ...)
  if type(a.dropout) ~= "number" or a.dropout < 0 or a.dropout > 1 then
    error(who .. ": dropout should be a number in range [0, 1] representing the probability of "
          .. "an element being zeroed", 3)
  end
  local proj = a.proj_size or 0
  if proj < 0 then
    error(who .. ": proj_size should be a positive integer or zero to disable projections", 3)
  end
  if proj >= a.hidden_size then
    error(who .. ": proj_size has to be smaller than hidden_size", 3)
  end
  if mode == "RNN" and a.nonlinearity ~= "tanh" and a.nonlinearity ~= "relu" then
    error(string.format("%s: Unknown nonlinearity '%s'", who, tostring(a.nonlinearity)), 3)
  end
  self.mode, self.nonlinearity = mode, a.nonlinearity
  self.input_size, self.hidden_size, self.num_layers = a.input_size, a.hidden_size, a.num_layers
  self.bias, self.batch_first = a.bias, a.batch_first
  self.dropout = a.dropout + 0.0
  self.bidirectional, self.proj_size = a.bidirectional, proj
  local dirs = a.bidirectional and 2 or 1
  local gate = GATES[mode] * a.hidden_size
  local real_hidden = proj > 0 and proj or a.hidden_size
  local fk = args.factory(a)
  for layer = 0, a.num_layers - 1 do
    for dir = 1, dirs do
      local sfx = layer .. (dir == 2 and "_reverse" or "")
      local in_size = layer == 0 and a.input_size or real_hidden * dirs
      self:register_parameter("weight_ih_l" .. sfx, T.empty({ gate, in_size }, fk))
      self:register_parameter("weight_hh_l" .. sfx, T.empty({ gate, real_hidden }, fk))
      if a.bias then
        self:register_parameter("bias_ih_l" .. sfx, T.empty({ gate }, fk))
        self:register_parameter("bias_hh_l" .. sfx, T.empty({ gate }, fk))
      end
      if proj > 0 then
        self:register_parameter("weight_hr_l" .. sfx, T.empty({ proj, a.hidden_size }, fk))
      end
    end
  end
  self:reset_parameters()
end

-- RNNBase and RNNCellBase.reset_parameters: every weight and bias ~ U(-1/√H, 1/√H) (0 when
-- hidden_size is 0); only cpu values are written.
local function reset_parameters(self)
  local stdv = self.hidden_size > 0 and 1.0 / math.sqrt(self.hidden_size) or 0
  for _, p in ipairs(self:parameters()) do
    if initializers.has_values(p) then initializers.uniform_(p, -stdv, stdv) end
  end
end

-- RNNBase.extra_repr: defaults are left out (nonlinearity is never printed).
local function rnn_repr(self)
  local s = string.format("%d, %d", self.input_size, self.hidden_size)
  if self.proj_size ~= 0 then s = s .. ", proj_size=" .. self.proj_size end
  if self.num_layers ~= 1 then s = s .. ", num_layers=" .. self.num_layers end
  if self.bias ~= true then s = s .. ", bias=" .. fmt(self.bias) end
  if self.batch_first ~= false then s = s .. ", batch_first=" .. fmt(self.batch_first) end
  if self.dropout ~= 0 then s = s .. ", dropout=" .. fmt(self.dropout) end
  if self.bidirectional ~= false then s = s .. ", bidirectional=" .. fmt(self.bidirectional) end
  return s
end

-- RNNBase.check_forward_args: PyTorch's messages, with the class name and the shapes.
local function check_hidden(self, h, expected, which)
  local got = h.shape
  if #got ~= 3 or got[1] ~= expected[1] or got[2] ~= expected[2] or got[3] ~= expected[3] then
    error(string.format("%s: expected %s size %s, got %s", self.__name, which, fmt(expected),
                        shape_of(h)), 4)
  end
end

-- The weights in PyTorch's _flat_weights order: per layer and direction w_ih, w_hh[, b_ih, b_hh].
local function flat_weights(self, dirs)
  local w = {}
  for layer = 0, self.num_layers - 1 do
    for dir = 1, dirs do
      local sfx = layer .. (dir == 2 and "_reverse" or "")
      w[#w + 1] = self["weight_ih_l" .. sfx]
      w[#w + 1] = self["weight_hh_l" .. sfx]
      if self.bias then
        w[#w + 1] = self["bias_ih_l" .. sfx]
        w[#w + 1] = self["bias_hh_l" .. sfx]
      end
    end
  end
  return w
end

-- forward(x, hx): x [T, N, I] ([N, T, I] with batch_first) or unbatched [T, I]; hx is h0 for
-- RNN/GRU and {h0, c0} for LSTM. Returns output, h_n (LSTM: output, {h_n, c_n}).
local function rnn_forward(self, x, hx)
  local who, lstm = self.__name, self.mode == "LSTM"
  if x:dim() ~= 2 and x:dim() ~= 3 then
    error(string.format("%s: expected input of 2 or 3 dimensions, got %s", who, shape_of(x)), 3)
  end
  local h0, c0
  if lstm and hx ~= nil then h0, c0 = hx[1], hx[2] else h0 = hx end
  local batched = x:dim() == 3
  local batch_dim = self.batch_first and 0 or 1
  if not batched then
    -- PyTorch runs unbatched input as a batch of one and squeezes the results
    x = x:unsqueeze(batch_dim)
    if h0 ~= nil then h0 = h0:unsqueeze(1) end
    if c0 ~= nil then c0 = c0:unsqueeze(1) end
  end
  if x:size(-1) ~= self.input_size then
    error(string.format("%s: input.size(-1) must be equal to input_size. Expected %d, got %d "
                        .. "(input %s)", who, self.input_size, x:size(-1), shape_of(x)), 3)
  end
  if self.proj_size > 0 then
    error(who .. ": proj_size > 0 is not supported by the rnn op yet", 3)
  end
  local dirs = self.bidirectional and 2 or 1
  local n = x:size(batch_dim)
  local expected = { self.num_layers * dirs, n, self.hidden_size }
  if h0 ~= nil then check_hidden(self, h0, expected, lstm and "hidden[0]" or "hidden") end
  if c0 ~= nil then check_hidden(self, c0, expected, "hidden[1]") end
  local out, hn, cn = op("rnn")(self.mode:lower(), x, {
    input_size = self.input_size, hidden_size = self.hidden_size, num_layers = self.num_layers,
    bias = self.bias, batch_first = self.batch_first, bidirectional = self.bidirectional,
    nonlinearity = self.nonlinearity,
    -- PyTorch's train flag: between layers only while training (meta draws nothing); left
    -- out when it does nothing
    dropout = self.training and self.dropout > 0 and self.dropout or nil,
  }, h0, c0, flat_weights(self, dirs))
  if not batched then
    out = out:squeeze(batch_dim)
    hn = hn:squeeze(1)
    if cn ~= nil then cn = cn:squeeze(1) end
  end
  if lstm then return out, { hn, cn } end
  return out, hn
end

-- RNNCellBase: weight_ih [G, I], weight_hh [G, H][, bias_ih [G], bias_hh [G]].
local function cell_init(self, mode, ...)
  local spec = { "input_size", "hidden_size", { "bias", true } }
  if mode == "RNN" then spec[#spec + 1] = { "nonlinearity", "tanh" } end
  spec[#spec + 1] = { "device" }
  spec[#spec + 1] = { "dtype" }
  local a = args.parse(self.__name, spec, ...)
  if mode == "RNN" and a.nonlinearity ~= "tanh" and a.nonlinearity ~= "relu" then
    error(string.format("%s: Unknown nonlinearity: %s", self.__name, tostring(a.nonlinearity)), 3)
  end
  self.mode, self.nonlinearity = mode, a.nonlinearity
  self.input_size, self.hidden_size, self.bias = a.input_size, a.hidden_size, a.bias
  local gate, fk = GATES[mode] * a.hidden_size, args.factory(a)
  self:register_parameter("weight_ih", T.empty({ gate, a.input_size }, fk))
  self:register_parameter("weight_hh", T.empty({ gate, a.hidden_size }, fk))
  if a.bias then
    self:register_parameter("bias_ih", T.empty({ gate }, fk))
    self:register_parameter("bias_hh", T.empty({ gate }, fk))
  end
  self:reset_parameters()
end

local function cell_repr(self)
  local s = string.format("%d, %d", self.input_size, self.hidden_size)
  if self.bias ~= true then s = s .. ", bias=" .. fmt(self.bias) end
  if self.nonlinearity ~= nil and self.nonlinearity ~= "tanh" then
    s = s .. ", nonlinearity=" .. self.nonlinearity
  end
  return s
end

-- forward(x, hx): x [N, I] or [I]; hx is h for RNNCell/GRUCell, {h, c} for LSTMCell.
-- Returns h' (LSTMCell: h', c').
local function cell_forward(self, x, hx)
  if x:dim() ~= 1 and x:dim() ~= 2 then
    error(string.format("%s: Expected input to be 1-D or 2-D but received %d-D tensor %s",
                        self.__name, x:dim(), shape_of(x)), 3)
  end
  local h0, c0
  if self.mode == "LSTM" and hx ~= nil then h0, c0 = hx[1], hx[2] else h0 = hx end
  local batched = x:dim() == 2
  if not batched then
    x = x:unsqueeze(0)
    if h0 ~= nil then h0 = h0:unsqueeze(0) end
    if c0 ~= nil then c0 = c0:unsqueeze(0) end
  end
  local w = { self.weight_ih, self.weight_hh }
  if self.bias then w[3], w[4] = self.bias_ih, self.bias_hh end
  local h, c = op("rnn_cell")(self.mode:lower(), x, h0, c0, {
    input_size = self.input_size, hidden_size = self.hidden_size, bias = self.bias,
    nonlinearity = self.nonlinearity,
  }, w)
  if not batched then
    h = h:squeeze(0)
    if c ~= nil then c = c:squeeze(0) end
  end
  if self.mode == "LSTM" then return h, c end
  return h
end

local classes = {}

for mode in pairs(GATES) do
  -- nn.RNN/GRU/LSTM(input_size, hidden_size, num_layers=1, bias=true, batch_first=false,
  -- dropout=0, bidirectional=false[, proj_size=0 for LSTM]{, nonlinearity= for RNN})
  local cls = Module:extend(mode)
  function cls:init(...) return rnn_init(self, mode, ...) end
  cls.forward, cls.extra_repr, cls.reset_parameters = rnn_forward, rnn_repr, reset_parameters
  classes[mode] = cls

  -- nn.RNNCell(input_size, hidden_size, bias=true, nonlinearity='tanh'), GRUCell, LSTMCell
  local cell = Module:extend(mode .. "Cell")
  function cell:init(...) return cell_init(self, mode, ...) end
  cell.forward, cell.extra_repr, cell.reset_parameters = cell_forward, cell_repr, reset_parameters
  classes[mode .. "Cell"] = cell
end

return classes
