-- cpu_sequence_spec.lua — cpu values and gradients of scaled dot-product attention, RNN, GRU and
-- LSTM layers and cells, and einsum, against PyTorch 1.13 (spec/fixtures/ops/nn.lua) and finite
-- differences.
local T = require "prof.tensor"
local F = require "prof.nn.functional"
local nn = require "prof.nn"
local core = require "prof.core"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"
local recorder = require "spec.support.ops_recorder"

local fixture = dofile("spec/fixtures/ops/nn.lua")
local sdpa = F.scaled_dot_product_attention

-- A bool cpu tensor from a flat list of booleans and a 2-D shape.
local function bools(flat, shape)
  local rows = {}
  for r = 1, shape[1] do
    rows[r] = {}
    for c = 1, shape[2] do rows[r][c] = flat[(r - 1) * shape[2] + c] end
  end
  return T.tensor(rows, { dtype = "bool", device = "cpu" })
end

local OPS = {
  sdpa = function(x) return sdpa(x[1], x[2], x[3]) end,
  sdpa_causal = function(x) return sdpa(x[1], x[2], x[3], { is_causal = true }) end,
  sdpa_bool_mask = function(x, a)
    return sdpa(x[1], x[2], x[3], { attn_mask = bools(a.mask, a.mask_shape) })
  end,
  sdpa_float_mask = function(x) return sdpa(x[1], x[2], x[3], { attn_mask = x[4] }) end,
  sdpa_gqa = function(x, a) return sdpa(x[1], x[2], x[3], { scale = a.scale }) end,
  sdpa_t = function(x) return sdpa(x[1]:transpose(1, 2), x[2], x[3]) end,
  einsum = function(x, a) return T.einsum(a.equation, x) end,
  einsum_t = function(x, a) return T.einsum(a.equation, x[1]:t(), x[2]) end,
}

-- {====================== cases with several results ======================}

-- The inputs of a case, nil where torch got None (h0, c0); n: their number.
local function inputs(c)
  local xs, n = {}, #c.inputs
  local present = {}
  for i = 1, n do
    if c.inputs[i].shape ~= nil then present[#present + 1] = c.inputs[i] end
  end
  local made = cases.inputs({ inputs = present })
  local k = 0
  for i = 1, n do
    if c.inputs[i].shape ~= nil then
      k = k + 1
      xs[i] = made[k]
    end
  end
  return xs, n
end

local function rnn_opts(a)
  return { hidden_size = a.hidden_size, num_layers = a.num_layers, bias = a.bias,
           batch_first = a.batch_first, bidirectional = a.bidirectional,
           nonlinearity = a.relu and "relu" or "tanh" }
end

local MULTI = {
  rnn = function(x, a, n)
    return core.rnn(a.kind, x[1], rnn_opts(a), x[2], x[3], { table.unpack(x, 4, n) })
  end,
  rnn_cell = function(x, a, n)
    return core.rnn_cell(a.kind, x[1], x[2], x[3], rnn_opts(a), { table.unpack(x, 4, n) })
  end,
}

-- Worst relative error of every result and of the gradients of sum_i sum(out_i * w_i).
local function run_multi(c, fn)
  local xs, n = inputs(c)
  local outs = table.pack(fn(xs, c.args, n))
  local worst, where = 0, ""
  local loss
  for i, want in ipairs(c.outs) do
    local e = gc.max_rel(outs[i]:tolist(), want.values)
    if e > worst then worst, where = e, "output " .. i end
    local term = T.sum(outs[i] * gc.tensor(c.ws[i], want.shape))
    loss = loss and loss + term or term
  end
  loss:backward()
  for i, item in ipairs(c.inputs) do
    if item.grad ~= nil then
      if xs[i].grad == nil then return math.huge, "no gradient for input " .. i end
      local e = gc.max_rel(xs[i].grad:tolist(), item.grad)
      if e > worst then worst, where = e, "gradient of input " .. i end
    end
  end
  return worst, where
end

describe("attention, recurrent layers and einsum against PyTorch 1.13", function()
  for i, c in ipairs(fixture) do
    if OPS[c.op] or MULTI[c.op] then
      local what = c.args and (c.args.equation or c.args.kind) or ""
      it(string.format("%d %s %s: values and gradients within 1e-4", i, c.name, what), function()
        if MULTI[c.op] then cases.assert_close(run_multi(c, MULTI[c.op]))
        else cases.check(c, OPS[c.op]) end
      end)
    end
  end
end)

-- {====================== finite differences ======================}

local function check(f, shapes) return gc.check_shapes(f, shapes, 7) end

describe("sequence gradients against finite differences", function()
  it("scaled_dot_product_attention, causal, masked, grouped and with dropout", function()
    assert(check(function(q, k, v) return sdpa(q, k, v, { is_causal = true }) end,
                 { { 1, 4, 3, 2 }, { 1, 2, 4, 2 }, { 1, 2, 4, 3 } }))
    local m = bools({ true, false, true, true, true, false }, { 2, 3 })
    assert(check(function(q, k, v) return sdpa(q, k, v, { attn_mask = m }) end,
                 { { 2, 2, 2 }, { 3, 2 }, { 3, 2 } }))
    -- a fixed seed draws the same dropout mask at every evaluation
    assert(check(function(q, k, v)
      T.manual_seed(7)
      return sdpa(q, k, v, { dropout_p = 0.4 })
    end, { { 2, 3, 2 }, { 2, 4, 2 }, { 2, 4, 2 } }))
  end)

  local function weights(kind, I, H, L, D)
    local g = ({ rnn = 1, gru = 3, lstm = 4 })[kind] * H
    local shapes = {}
    for l = 1, L do
      for _ = 1, D do
        local n = l == 1 and I or D * H
        for _, s in ipairs({ { g, n }, { g, H }, { g }, { g } }) do shapes[#shapes + 1] = s end
      end
    end
    return shapes
  end

  for _, kind in ipairs({ "rnn", "gru", "lstm" }) do
    it(kind .. ": two bidirectional layers, batch first, through time", function()
      local o = { hidden_size = 2, num_layers = 2, bidirectional = true, batch_first = true }
      local shapes = { { 2, 3, 2 }, { 4, 2, 2 }, { 4, 2, 2 } }
      for _, s in ipairs(weights(kind, 2, 2, 2, 2)) do shapes[#shapes + 1] = s end
      -- c0 only for the LSTM
      if kind ~= "lstm" then table.remove(shapes, 3) end
      local f = function(x, h0, ...)
        local ws, c0 = { ... }, nil
        if kind == "lstm" then c0 = table.remove(ws, 1) end
        local out, hn, cn = core.rnn(kind, x, o, h0, c0, ws)
        local y = T.sum(out * out) + T.sum(hn * 2.0)
        if cn then y = y + T.sum(cn * 3.0) end
        return y
      end
      local ok, msg = check(f, shapes)
      assert.is_true(ok, msg)
    end)
  end

  -- a fixed seed re-applied per evaluation draws the same masks, so the objective is smooth
  local function dropout_check(kind, o, I, N)
    local H, L, D = o.hidden_size, o.num_layers, o.bidirectional and 2 or 1
    local shapes = { { 3, N, I }, { L * D, N, H }, { L * D, N, H } }
    for _, s in ipairs(weights(kind, I, H, L, D)) do shapes[#shapes + 1] = s end
    if kind ~= "lstm" then table.remove(shapes, 3) end
    local f = function(x, h0, ...)
      local ws, c0 = { ... }, nil
      if kind == "lstm" then c0 = table.remove(ws, 1) end
      T.manual_seed(11)
      local out, hn = core.rnn(kind, x, o, h0, c0, ws)
      return T.sum(out * out) + T.sum(hn * 2.0)
    end
    local ok, msg = check(f, shapes)
    assert.is_true(ok, msg)
  end

  it("lstm, two layers with dropout 0.5 between them", function()
    dropout_check("lstm", { hidden_size = 3, num_layers = 2, dropout = 0.5 }, 2, 2)
  end)

  it("gru, three bidirectional layers with dropout 0.4 (two masks)", function()
    dropout_check("gru", { hidden_size = 2, num_layers = 3, dropout = 0.4, bidirectional = true },
                  2, 2)
  end)

  it("lstm_cell", function()
    local f = function(x, h, c, wi, wh, bi, bh)
      local h1, c1 = core.rnn_cell("lstm", x, h, c, { hidden_size = 3 }, { wi, wh, bi, bh })
      return T.sum(h1 * h1) + T.sum(c1)
    end
    local ok, msg = check(f, { { 2, 2 }, { 2, 3 }, { 2, 3 }, { 12, 2 }, { 12, 3 }, { 12 }, { 12 } })
    assert.is_true(ok, msg)
  end)

  it("einsum with a diagonal, an ellipsis and a summed-out letter", function()
    assert(check(function(a, b) return T.einsum("iij,jk->ik", a, b) end, { { 2, 2, 3 }, { 3, 2 } }))
    assert(check(function(a, b) return T.einsum("...ij,jk->...k", a, b) end,
                 { { 2, 1, 2, 3 }, { 3, 2 } }))
    assert(check(function(a) return T.einsum("ijk->j", a) end, { { 2, 3, 2 } }))
  end)
end)

-- {====================== profiling ======================}

local phases = recorder.phases

describe("sequence ops on the cpu", function()
  it("record attention's backward products as matmuls", function()
    local q, k, v = gc.leaf({ 2, 3, 4 }, 1), gc.leaf({ 2, 5, 4 }, 2), gc.leaf({ 2, 5, 6 }, 3)
    local fwd, bwd = phases(function() T.sum(sdpa(q, k, v)):backward() end)
    -- forward MACs 2·15·(4 + 6) = 300; backward gO·Vᵀ 2·3·6·5, Aᵀ·gO 2·5·3·6, gS·K 2·3·5·4,
    -- gSᵀ·Q 2·5·3·4: 180 + 180 + 120 + 120 = 600
    assert.equal(300, fwd.macs)
    assert.equal(600, bwd.macs)
  end)

  it("record BPTT's products", function()
    local x = gc.leaf({ 3, 2, 4 }, 1)
    local w = { gc.leaf({ 9, 4 }, 2), gc.leaf({ 9, 3 }, 3), gc.leaf({ 9 }, 4), gc.leaf({ 9 }, 5) }
    local fwd, bwd = phases(function()
      local out = core.rnn("gru", x, { hidden_size = 3 }, nil, nil, w)
      T.sum(out):backward()
    end)
    -- GRU, T·N = 6 rows, G = 9, H = 3, I = 4: forward 6·(9·4 + 9·3) = 378 MACs; backward
    -- dh·W_hh 6·9·3 = 162, dx = dxi·W_ih 6·9·4 = 216, dW_ih 9·6·4 = 216, dW_hh 9·6·3 = 162
    assert.equal(378, fwd.macs)
    assert.equal(162 + 216 + 216 + 162, bwd.macs)
  end)

  it("updates nothing it should not: the output and h_n share BPTT", function()
    local x = gc.leaf({ 2, 1, 1 }, 1)
    local wi, wh = gc.tensor({ 1 }, { 1, 1 }), gc.tensor({ 0 }, { 1, 1 })
    wi.requires_grad, wh.requires_grad = true, true
    -- h_t = tanh(x_t) with W_hh 0: the output is [tanh x1, tanh x2], h_n = tanh x2
    local out, hn = core.rnn("rnn", x, { hidden_size = 1, bias = false }, nil, nil, { wi, wh })
    local xs = gc.flat(x:tolist())
    local t2 = 1 - 2 / (math.exp(2 * xs[2]) + 1)   -- tanh x2 (Lua 5.4 has no math.tanh)
    assert.is_true(math.abs(gc.flat(out:tolist())[2] - t2) < 1e-6)
    T.sum(out + hn):backward()
    -- out + hn broadcasts hn over both steps: tanh x1 + 3·tanh x2, so d/dx2 = 3·(1 - tanh² x2)
    local want = 3 * (1 - t2 ^ 2)
    assert.is_true(math.abs(gc.flat(x.grad:tolist())[2] - want) < 1e-5)
  end)

  it("needs the weights on the cpu", function()
    assert.has_error(function() core.rnn("gru", gc.leaf({ 2, 1, 3 }, 1), { hidden_size = 2 }) end,
      "gru: the cpu kernel needs the weights (core.rnn(kind, x, options, h0, c0, weights) with "
      .. "PyTorch's _flat_weights)")
  end)
end)

-- {====================== dropout between layers ======================}

describe("nn.LSTM dropout between layers on the cpu", function()
  local steps, batch, I, H = 1, 1000, 3, 8

  --[[
  A 2-layer LSTM whose second layer sees each inter-layer activation alone: weight_ih_l1 gives
  every gate of unit j the weight w on input j only, weight_hh_l1 and the layer's biases are 0,
  so with zero initial states h_j = o·tanh(i·tanh(w·x_j)) is exactly 0 where x_j was dropped and
  nonzero elsewhere. One step: later ones would carry c through the forget gate. Layer 0 keeps
  its random initialisation.
  ]]
  local function probe(dropout, w)
    T.manual_seed(3)
    local m = nn.LSTM(I, H, 2, { dropout = dropout, device = "cpu" })
    local d = {}
    for r = 0, 4 * H - 1 do
      for c = 0, H - 1 do d[#d + 1] = (r % H == c) and w or 0 end
    end
    m.weight_ih_l1:copy_(gc.tensor(d, { 4 * H, H }))
    m.weight_hh_l1:copy_(T.zeros({ 4 * H, H }, { device = "cpu" }))
    m.bias_ih_l1:copy_(T.zeros({ 4 * H }, { device = "cpu" }))
    m.bias_hh_l1:copy_(T.zeros({ 4 * H }, { device = "cpu" }))
    return m
  end
  local x = gc.tensor(gc.values(steps * batch * I, 5), { steps, batch, I })

  it("drops p of the activations and scales the rest by 1/(1 - p)", function()
    local out = gc.flat(probe(0.5, 2.0)(x):tolist())
    -- the kept activations, scaled by 2, are what weight 2·2 sees without dropout
    local want = gc.flat(probe(0.0, 4.0):eval()(x):tolist())
    local zeros = 0
    for i, v in ipairs(out) do
      if v == 0 then zeros = zeros + 1
      else assert.is_true(math.abs(v - want[i]) <= 1e-6, "element " .. i) end
    end
    -- Binomial(8000, 0.5): sigma = sqrt(0.25 / 8000) = 0.00559 of the fraction
    local n = steps * batch * H
    assert.equal(n, #out)
    assert.is_true(math.abs(zeros / n - 0.5) <= 3 * math.sqrt(0.25 / n), "dropped " .. zeros)
  end)

  it("draws the same masks for the same seed, others for another", function()
    local m = probe(0.5, 2.0)
    T.manual_seed(8)
    local a = m(x):tolist()
    T.manual_seed(8)
    local b = m(x):tolist()
    T.manual_seed(9)
    local c = m(x):tolist()
    assert.same(a, b)
    assert.are_not.same(a, c)
  end)

  it("computes nothing in eval mode: the output of dropout 0", function()
    local plain = probe(0.0, 2.0)(x):tolist()
    local m = probe(0.5, 2.0)
    m:eval()
    assert.same(plain, m(x):tolist())
    local out = gc.flat(plain)
    for i, v in ipairs(out) do assert.is_true(v ~= 0, "element " .. i) end
  end)

  it("checks the probability, as PyTorch's RNNBase does", function()
    local xm = core.empty({ 2, 1, 3 }, "float32", "meta")
    assert.has_error(function()
      core.rnn("rnn", xm, { hidden_size = 2, num_layers = 2, dropout = 1.5 })
    end, "rnn: dropout must be between 0 and 1, got 1.5")
  end)

  it("records the same counts on meta and draws nothing there", function()
    local function run(dropout)
      local m = nn.LSTM(16, 32, 3, { dropout = dropout, device = "meta" })
      local xm = core.empty({ 5, 4, 16 }, "float32", "meta")
      xm.requires_grad = true
      return phases(function()
        local out = m(xm)
        T.sum(out):backward()
      end)
    end
    T.manual_seed(21)
    local f1, b1 = run(0.5)
    local after = T.rand({ 4 }, { device = "cpu" }):tolist()
    local f0, b0 = run(0.0)
    T.manual_seed(21)
    assert.same(T.rand({ 4 }, { device = "cpu" }):tolist(), after)
    assert.same(f0, f1)
    assert.same(b0, b1)
    assert.is_true(f1.macs > 0 and b1.macs > 0)
  end)
end)
