-- sequence_spec.lua — interpolate (every mode) and the recurrent layers (rnn, gru, lstm) on cuda
-- against the cpu backend, forward and backward, on the same random inputs (gpu-check.sh).
local T = require "prof.tensor"
local core = require "prof.core"
local cmp = require "spec.gpu.compare"

local F = setmetatable({}, { __index = function(_, k) return T[k] or core[k] end })
local F32 = cmp.TOL.float32

local function f(shape, extra)
  local s = { shape = shape, grad = true }
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

local function numel(t)
  local n = 1
  for _, d in ipairs(t.shape) do n = n * d end
  return n
end

-- every mode of cpu_resample.c, on 1-, 2- and 3-D inputs, with sizes and with scale factors
local RESAMPLE = {
  { "nearest 1d scale", { 2, 3, 7 }, { scale_factor = 1.6 } },
  { "nearest 2d size", { 2, 2, 5, 6 }, { size = { 9, 4 } } },
  { "linear align_corners", { 1, 3, 6 }, { size = 11, mode = "linear", align_corners = true } },
  { "bilinear scale", { 2, 2, 5, 4 }, { scale_factor = 2, mode = "bilinear" } },
  { "bilinear downsample", { 1, 2, 9, 8 }, { size = { 4, 3 }, mode = "bilinear" } },
  { "trilinear align_corners", { 1, 2, 3, 4, 3 },
    { scale_factor = 1.5, mode = "trilinear", align_corners = true } },
  { "bicubic", { 2, 2, 5, 6 }, { size = { 8, 9 }, mode = "bicubic" } },
  { "bicubic align_corners", { 1, 1, 4, 4 }, { size = { 7, 5 }, mode = "bicubic", align_corners = true } },
  { "area", { 2, 3, 7, 5 }, { size = { 3, 2 }, mode = "area" } },
}

-- the flat weight shapes of cpu_rnn.c's layout: per layer and direction w_ih, w_hh, b_ih, b_hh
local function weights(kind, I, H, L, D, bias)
  local g = ({ rnn = 1, gru = 3, lstm = 4 })[kind] * H
  local shapes = {}
  for l = 1, L do
    for _ = 1, D do
      local n = l == 1 and I or D * H
      shapes[#shapes + 1] = { g, n }
      shapes[#shapes + 1] = { g, H }
      if bias then
        shapes[#shapes + 1] = { g }
        shapes[#shapes + 1] = { g }
      end
    end
  end
  return shapes
end

--[[
One case: T steps, N samples, I inputs, options o. Inputs: x, h0, (c0 for the LSTM), then the
weights; the compared output is out, h_n (and c_n) flattened into one vector, so every result
and, through sum(out · w), every gradient is compared.
]]
local function rnn_case(kind, T_, N, I, o)
  local H, L, D = o.hidden_size, o.num_layers or 1, o.bidirectional and 2 or 1
  local bias = o.bias ~= false
  local specs = { f(o.batch_first and { N, T_, I } or { T_, N, I }), f { L * D, N, H } }
  if kind == "lstm" then specs[#specs + 1] = f { L * D, N, H } end
  local first = #specs + 1
  for _, s in ipairs(weights(kind, I, H, L, D, bias)) do specs[#specs + 1] = f(s) end
  local fn = function(x)
    local ws = { table.unpack(x, first) }
    local out, hn, cn = core.rnn(kind, x[1], o, x[2], kind == "lstm" and x[3] or nil, ws)
    local parts = { out:reshape { numel(out) }, hn:reshape { numel(hn) } }
    if cn then parts[#parts + 1] = cn:reshape { numel(cn) } end
    return F.cat(parts, 0)
  end
  return specs, fn
end

local RNN = {
  { "rnn tanh", "rnn", 5, 3, 4, { hidden_size = 6 } },
  { "rnn relu, no bias", "rnn", 4, 2, 3, { hidden_size = 5, nonlinearity = "relu", bias = false } },
  { "gru two layers bidirectional", "gru", 4, 3, 5,
    { hidden_size = 4, num_layers = 2, bidirectional = true } },
  { "gru batch first", "gru", 6, 2, 3, { hidden_size = 7, batch_first = true } },
  { "lstm", "lstm", 5, 3, 4, { hidden_size = 6 } },
  { "lstm two layers bidirectional batch first", "lstm", 4, 2, 3,
    { hidden_size = 5, num_layers = 2, bidirectional = true, batch_first = true } },
  { "lstm three layers dropout", "lstm", 3, 4, 2, { hidden_size = 3, num_layers = 3, dropout = 0.4 } },
  { "gru bidirectional dropout", "gru", 3, 2, 4,
    { hidden_size = 4, num_layers = 2, bidirectional = true, dropout = 0.5 } },
}

describe("cuda interpolate and recurrent layers against the cpu, forward and backward #gpu", function()
  setup(cmp.require_device)
  for _, c in ipairs(RESAMPLE) do
    it("resample: " .. c[1], function()
      local worst = cmp.same({ f(c[2]) }, function(x) return F.interpolate(x[1], c[3]) end, F32)
      cmp.record("resample", c[1], worst, F32)
    end)
  end
  for _, c in ipairs(RNN) do
    it("rnn: " .. c[1], function()
      local specs, fn = rnn_case(c[2], c[3], c[4], c[5], c[6])
      local worst = cmp.same(specs, fn, F32)
      cmp.record("rnn", c[1], worst, F32)
    end)
  end
end)
