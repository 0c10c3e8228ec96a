-- nn_rnn_spec.lua — nn.RNN, GRU, LSTM and their cells against PyTorch 1.13 (torch's output quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

local function shapes(...)
  local out = {}
  for i, t in ipairs { ... } do out[i] = t.shape end
  return out
end

describe("nn.RNN, nn.GRU, nn.LSTM", function()
  it("have PyTorch's parameters, in PyTorch's order", function()
    -- torch: nn.RNN(10, 20) -> 640 [('weight_ih_l0', (20, 10)), ('weight_hh_l0', (20, 20)),
    -- ('bias_ih_l0', (20,)), ('bias_hh_l0', (20,))]
    local r = nn.RNN(10, 20)
    assert.same({ { "weight_ih_l0", { 20, 10 } }, { "weight_hh_l0", { 20, 20 } },
                  { "bias_ih_l0", { 20 } }, { "bias_hh_l0", { 20 } } }, S.params(r))
    assert.equal(640, r:num_parameters())
    -- torch: nn.LSTM(10, 20, 2, bidirectional=True) -> 15040 [('weight_ih_l0', (80, 10)),
    -- ('weight_hh_l0', (80, 20)), ('bias_ih_l0', (80,)), ('bias_hh_l0', (80,)),
    -- ('weight_ih_l0_reverse', (80, 10)), ('weight_hh_l0_reverse', (80, 20)),
    -- ('bias_ih_l0_reverse', (80,)), ('bias_hh_l0_reverse', (80,)), ('weight_ih_l1', (80, 40)),
    -- ('weight_hh_l1', (80, 20)), ('bias_ih_l1', (80,)), ('bias_hh_l1', (80,)),
    -- ('weight_ih_l1_reverse', (80, 40)), ('weight_hh_l1_reverse', (80, 20)),
    -- ('bias_ih_l1_reverse', (80,)), ('bias_hh_l1_reverse', (80,))]
    local l = nn.LSTM(10, 20, 2, { bidirectional = true })
    assert.same({
      { "weight_ih_l0", { 80, 10 } }, { "weight_hh_l0", { 80, 20 } }, { "bias_ih_l0", { 80 } },
      { "bias_hh_l0", { 80 } }, { "weight_ih_l0_reverse", { 80, 10 } },
      { "weight_hh_l0_reverse", { 80, 20 } }, { "bias_ih_l0_reverse", { 80 } },
      { "bias_hh_l0_reverse", { 80 } }, { "weight_ih_l1", { 80, 40 } },
      { "weight_hh_l1", { 80, 20 } }, { "bias_ih_l1", { 80 } }, { "bias_hh_l1", { 80 } },
      { "weight_ih_l1_reverse", { 80, 40 } }, { "weight_hh_l1_reverse", { 80, 20 } },
      { "bias_ih_l1_reverse", { 80 } }, { "bias_hh_l1_reverse", { 80 } },
    }, S.params(l))
    assert.equal(15040, l:num_parameters())
    -- torch: nn.GRU(10, 20, 2) -> 4440; weight_ih_l1 (60, 20)
    local g = nn.GRU(10, 20, 2)
    assert.equal(4440, g:num_parameters())
    assert.same({ 60, 20 }, g.weight_ih_l1.shape)
    -- torch: nn.RNN(10, 20, 2, nonlinearity='relu', bias=False, batch_first=True, dropout=0.5,
    -- bidirectional=True) -> 3600, no bias_* parameters
    local rr = nn.RNN(10, 20, 2, { nonlinearity = "relu", bias = false, batch_first = true,
                                   dropout = 0.5, bidirectional = true })
    assert.equal(3600, rr:num_parameters())
    assert.is_nil(rr.bias_ih_l0)
  end)

  it("LSTM with proj_size has weight_hr and projected hidden sizes", function()
    -- torch 1.13 RNNBase: w_hh (4H, proj_size), w_hr (proj_size, H), layer > 0 input
    -- proj_size * directions: nn.LSTM(10, 20, 2, proj_size=5) -> weight_hh_l0 (80, 5),
    -- weight_hr_l0 (5, 20), weight_ih_l1 (80, 5)
    local l = nn.LSTM(10, 20, 2, { proj_size = 5 })
    assert.same({ 80, 5 }, l.weight_hh_l0.shape)
    assert.same({ 5, 20 }, l.weight_hr_l0.shape)
    assert.same({ 80, 5 }, l.weight_ih_l1.shape)
    assert.error_matches(function() nn.LSTM(10, 20, { proj_size = 20 }) end,
                         "proj_size has to be smaller than hidden_size", 1, true)
    assert.error_matches(function() nn.GRU(10, 20, { proj_size = 5 }) end,
                         "unexpected keyword argument 'proj_size'", 1, true)
  end)

  it("print as PyTorch", function()
    -- torch: RNN(10, 20); GRU(10, 20, num_layers=2); LSTM(10, 20, batch_first=True)
    assert.equal("RNN(10, 20)", tostring(nn.RNN(10, 20)))
    assert.equal("GRU(10, 20, num_layers=2)", tostring(nn.GRU(10, 20, 2)))
    assert.equal("LSTM(10, 20, batch_first=True)",
                 tostring(nn.LSTM(10, 20, { batch_first = true })))
    -- torch: RNN(10, 20, num_layers=2, bias=False, batch_first=True, dropout=0.5,
    -- bidirectional=True) (nonlinearity is not printed)
    assert.equal("10, 20, num_layers=2, bias=False, batch_first=True, dropout=0.5, "
                 .. "bidirectional=True",
                 nn.RNN(10, 20, 2, false, true, 0.5, true, { nonlinearity = "relu" }):extra_repr())
  end)

  it("check their arguments as PyTorch does", function()
    assert.error_matches(function() nn.RNN(10, 20, { nonlinearity = "gelu" }) end,
                         "Unknown nonlinearity 'gelu'", 1, true)
    assert.error_matches(function() nn.LSTM(10, 20, 2, { dropout = 1.5 }) end,
                         "dropout should be a number in range [0, 1]", 1, true)
  end)

  it("LSTM calls the rnn op once and returns output, {h_n, c_n}", function()
    local l = nn.LSTM(10, 20, 2, { bidirectional = true })
    local x = T.empty { 5, 3, 10 }
    local out, hc
    local names, argv = S.trace(function() out, hc = l(x) end)
    assert.same({ "rnn" }, names)
    assert.equal("lstm", argv[1][1])
    assert.same({ input_size = 10, hidden_size = 20, num_layers = 2, bias = true,
                  batch_first = false, bidirectional = true }, argv[1][3])
    -- torch: LSTM(10,20,2,bi) [5,3,10] -> [(5, 3, 40), ((4, 3, 20), (4, 3, 20))]
    assert.same({ { 5, 3, 40 }, { 4, 3, 20 }, { 4, 3, 20 } }, shapes(out, hc[1], hc[2]))
    -- torch: LSTM(10,20,2,bi) unbatched [5,10] -> [(5, 40), ((4, 20), (4, 20))]
    out, hc = l(T.empty { 5, 10 })
    assert.same({ { 5, 40 }, { 4, 20 }, { 4, 20 } }, shapes(out, hc[1], hc[2]))
    -- torch: LSTM(10,20,bf) [3,5,10] (h0,c0) -> [(3, 5, 20), ((1, 3, 20), (1, 3, 20))]
    local bf = nn.LSTM(10, 20, { batch_first = true })
    out, hc = bf(T.empty { 3, 5, 10 }, { T.empty { 1, 3, 20 }, T.empty { 1, 3, 20 } })
    assert.same({ { 3, 5, 20 }, { 1, 3, 20 }, { 1, 3, 20 } }, shapes(out, hc[1], hc[2]))
  end)

  it("RNN and GRU return output, h_n shaped as torch's", function()
    -- torch: RNN(10,20) [5,3,10] -> [(5, 3, 20), (1, 3, 20)]
    local out, h = nn.RNN(10, 20)(T.empty { 5, 3, 10 })
    assert.same({ { 5, 3, 20 }, { 1, 3, 20 } }, shapes(out, h))
    -- torch: RNN(10,20,2,relu,bias=F,bf=T,bi=T) [3,5,10] -> [(3, 5, 40), (4, 3, 20)]
    local rr = nn.RNN(10, 20, 2, { nonlinearity = "relu", bias = false, batch_first = true,
                                   bidirectional = true })
    local x = T.empty { 3, 5, 10 }
    local _, argv = S.trace(function() out, h = rr(x) end)
    assert.equal("relu", argv[1][3].nonlinearity)
    assert.same({ { 3, 5, 40 }, { 4, 3, 20 } }, shapes(out, h))
    -- torch: GRU(10,20,2) [5,3,10] h0[2,3,20] -> [(5, 3, 20), (2, 3, 20)]
    out, h = nn.GRU(10, 20, 2)(T.empty { 5, 3, 10 }, T.empty { 2, 3, 20 })
    assert.same({ { 5, 3, 20 }, { 2, 3, 20 } }, shapes(out, h))
  end)

  it("count as DeepSpeed's RNN hook does", function()
    -- DeepSpeed _rnn_forward_hook, per layer and direction: (2*G*I - G) + (2*G*H - G) + cell
    -- + (bias ? 2G : 0), times x.shape[0] * x.shape[1]. LSTM(10, 20), x [5, 3, 10]: G = 80,
    -- cell = 10H = 200: 1520 + 3120 + 200 + 160 = 5000 per step, * 15 = 75000; MACs 0.
    local t = S.count(nn.LSTM(10, 20), function(m) m(T.empty { 5, 3, 10 }) end)
    assert.equal(75000, t.flops)
    assert.equal(0, t.macs)
  end)

  it("name the module and both sizes when the input does not fit", function()
    -- torch: RuntimeError: input.size(-1) must be equal to input_size. Expected 10, got 12
    assert.error_matches(function() nn.GRU(10, 20)(T.empty { 5, 3, 12 }) end,
                         "GRU: input.size(-1) must be equal to input_size. Expected 10, got 12",
                         1, true)
    -- torch: RuntimeError: Expected hidden size (2, 3, 20), got [1, 3, 20]
    local r2 = nn.RNN(10, 20, 2)
    assert.error_matches(function() r2(T.empty { 5, 3, 10 }, T.empty { 1, 3, 20 }) end,
                         "RNN: expected hidden size (2, 3, 20), got [1, 3, 20]", 1, true)
  end)
end)

describe("nn.RNNCell, nn.GRUCell, nn.LSTMCell", function()
  it("have PyTorch's parameters and reprs", function()
    -- torch: nn.RNNCell(10, 20) -> 640 [('weight_ih', (20, 10)), ('weight_hh', (20, 20)),
    -- ('bias_ih', (20,)), ('bias_hh', (20,))]; repr RNNCell(10, 20)
    local c = nn.RNNCell(10, 20)
    assert.same({ { "weight_ih", { 20, 10 } }, { "weight_hh", { 20, 20 } }, { "bias_ih", { 20 } },
                  { "bias_hh", { 20 } } }, S.params(c))
    assert.equal("RNNCell(10, 20)", tostring(c))
    -- torch: RNNCell(10, 20, bias=False, nonlinearity=relu) -> 600
    local r = nn.RNNCell(10, 20, false, "relu")
    assert.equal("RNNCell(10, 20, bias=False, nonlinearity=relu)", tostring(r))
    assert.equal(600, r:num_parameters())
    -- torch: GRUCell(10, 20) -> 1920; LSTMCell(10, 20, bias=False) -> 2400
    assert.equal(1920, nn.GRUCell(10, 20):num_parameters())
    local l = nn.LSTMCell(10, 20, { bias = false })
    assert.equal("LSTMCell(10, 20, bias=False)", tostring(l))
    assert.same({ { "weight_ih", { 80, 10 } }, { "weight_hh", { 80, 20 } } }, S.params(l))
  end)

  it("call the rnn_cell op, shaped as torch's", function()
    local l = nn.LSTMCell(10, 20)
    local x, h, c = T.empty { 3, 10 }, nil, nil
    local names, argv = S.trace(function() h, c = l(x) end)
    assert.same({ "rnn_cell" }, names)
    assert.equal("lstm", argv[1][1])
    assert.same({ input_size = 10, hidden_size = 20, bias = true }, argv[1][5])
    -- torch: LSTMCell(10,20) [3,10] -> [(3, 20), (3, 20)]
    assert.same({ { 3, 20 }, { 3, 20 } }, shapes(h, c))
    h, c = l(x, { h, c })
    assert.same({ { 3, 20 }, { 3, 20 } }, shapes(h, c))
    -- torch: RNNCell(10,20) [3,10] -> (3, 20); GRUCell(10,20) unbatched [10] -> (20,)
    assert.same({ 3, 20 }, nn.RNNCell(10, 20)(x).shape)
    assert.same({ 20 }, nn.GRUCell(10, 20)(T.empty { 10 }).shape)
    -- torch: AssertionError: RNNCell: Expected input to be 1-D or 2-D but received 3-D tensor
    assert.error_matches(function() nn.RNNCell(10, 20)(T.empty { 1, 3, 10 }) end,
                         "RNNCell: Expected input to be 1-D or 2-D but received 3-D tensor", 1,
                         true)
  end)
end)

describe("a composite of recurrent modules", function()
  it("prints like torch's print(model)", function()
    local expected = [[
Seq2Seq(
  (encoder): LSTM(10, 20, num_layers=2, bidirectional=True)
  (decoder): GRU(40, 20, batch_first=True)
  (rnn): RNN(10, 20, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)
  (cells): ModuleList(
    (0): RNNCell(10, 20, bias=False, nonlinearity=relu)
    (1): GRUCell(10, 20)
    (2): LSTMCell(10, 20)
  )
)]]
    local Seq2Seq = nn.Module:extend("Seq2Seq")
    function Seq2Seq:init()
      self.encoder = nn.LSTM(10, 20, 2, { bidirectional = true })
      self.decoder = nn.GRU(40, 20, { batch_first = true, dropout = 0.0 })
      self.rnn = nn.RNN(10, 20, 2, { nonlinearity = "relu", bias = false, batch_first = true,
                                     dropout = 0.5, bidirectional = true })
      self.cells = nn.ModuleList { nn.RNNCell(10, 20, { bias = false, nonlinearity = "relu" }),
                                   nn.GRUCell(10, 20), nn.LSTMCell(10, 20) }
    end
    local m = Seq2Seq()
    assert.equal(expected, tostring(m))
    -- torch: params: 27440; named_modules ['', 'encoder', 'decoder', 'rnn', 'cells', 'cells.0',
    -- 'cells.1', 'cells.2']
    assert.equal(27440, m:num_parameters())
    assert.same({ "", "encoder", "decoder", "rnn", "cells", "cells.0", "cells.1", "cells.2" },
                S.module_names(m))
  end)
end)
