-- fp16_meta_training_spec.lua — on meta, an fp16 / bf16 engine trains (forward,
-- backward, step), every gradient in the model's dtype, the optimizer stepping the cast weights.
local core = require "prof.core"
local config = require "prof.config"
local prof = require "prof"
local models = require "prof.models"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"

local F = nn.functional

-- The engine with the config's sections (meta, the optimizer passed by the script).
local function engine_for(model, section, opt_name)
  local cfg = assert(config.load(nil, { "device=meta", section }))
  config.set(cfg)
  local params = model:parameters()
  local opt = opt_name == "AdamW" and prof.optim.AdamW(params, { lr = 1e-3 })
    or prof.optim.SGD(params, { lr = 0.1, momentum = 0.9 })
  return prof.initialize { model = model, optimizer = opt, config = cfg }, opt
end

-- The parameters whose gradient is missing or not in dt, as "index:dtype" (empty: all fine).
local function bad_grads(model, dt)
  local bad = {}
  for i, p in ipairs(model:parameters()) do
    if p.dtype ~= dt or p.grad == nil or p.grad.dtype ~= dt then
      bad[#bad + 1] = i .. ":" .. tostring(p.grad and p.grad.dtype)
    end
  end
  return bad
end

describe("fp16 / bf16 training on meta", function()
  setup(function() T.set_default_device("meta") end)
  teardown(function()
    config.set(assert(core.load_config(nil, {})))
    T.set_default_device("cpu")
  end)

  it("profrun --set fp16.enabled=true examples/train_engine.lua runs (it failed in the backward: "
    .. "matmul: expected all tensors of the same dtype, got float32 and float16)", function()
    for _, s in ipairs({ 'fp16={"enabled": true}', 'bf16={"enabled": true}' }) do
      local r = run.profrun({ "--set", s, "examples/train_engine.lua" })
      assert.equal(0, r.code, r.stderr)
      assert.is_nil(r.stderr:find("stack traceback", 1, true), r.stderr)
    end
  end)

  for _, dt in ipairs({ "float16", "bfloat16" }) do
    local section = dt == "float16" and 'fp16={"enabled": true}' or 'bf16={"enabled": true}'

    it(dt .. ": cross_entropy, mse_loss, LayerNorm and attention give " .. dt .. " gradients, "
      .. "and the optimizer holds the cast weights", function()
      local model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 4))
      local e, opt = engine_for(model, section, "AdamW")
      local params = model:parameters()
      assert.equal(#params, #opt.param_groups[1].params)
      for i, p in ipairs(params) do
        assert.equal(p, opt.param_groups[1].params[i])   -- the same tensors, not the float32 originals
        assert.equal(dt, p.dtype)
        assert.is_true(p.is_leaf)
      end
      local out = e(T.empty({ 4, 8 }))
      assert.equal(dt, out.dtype)
      e:backward(F.cross_entropy(out, T.zeros({ 4 }, { dtype = "int64" })))
      assert.same({}, bad_grads(model, dt))
      e:step()
      e:backward(F.mse_loss(e(T.empty({ 4, 8 })), T.empty({ 4, 4 }, { dtype = dt })))
      assert.same({}, bad_grads(model, dt))
      e:step()
      -- scaled dot-product attention saves its probabilities in the model's dtype too
      local q = T.empty({ 2, 2, 5, 8 }, { dtype = dt })
      q.requires_grad = true
      F.scaled_dot_product_attention(q, q, q, { is_causal = true }):sum():backward()
      assert.equal(dt, q.grad.dtype)
    end)
  end

  it("an LSTM and a 2-layer GRU give float16 gradients to their weights and their input", function()
    for _, make in ipairs({ function() return nn.LSTM(4, 8) end,
                            function() return nn.GRU(4, 8, { num_layers = 2 }) end }) do
      local model = nn.Sequential(nn.Linear(3, 4), make())
      local e = engine_for(model, 'fp16={"enabled": true}')
      local out = e(T.empty({ 5, 2, 3 }))
      if not core.is_tensor(out) then out = out[1] end
      assert.equal("float16", out.dtype)
      e:backward(out:sum())   -- through the recurrence into the Linear before it
      assert.same({}, bad_grads(model, "float16"))
      e:step()
    end
  end)

  it("the backward's own work counts bytes in the model's dtype", function()
    -- By hand, per dtype of e bytes (4 or 2); int64 indices are 8 bytes whatever e is.
    -- SDPA q = k = v [2, 2, 5, 8]: 2·2·5·5 = 100 scores; reads P and gA (200 e), writes gS (100 e).
    -- cross_entropy [4, 3] logits, 4 int64 targets, mean: reads g (1 e), log-probabilities (12 e),
    --   targets (32 B); writes the logits' gradient (12 e).
    -- mse_loss [4, 3], the target without grad: reads the difference (12 e) and g (1 e), writes 12 e.
    -- embedding 10 x 4, 3 int64 indices: reads g (12 e) and the indices (24 B), writes 40 e.
    local function bytes(dt)
      local function leaf(shape)
        local t = T.empty(shape, { dtype = dt })
        t.requires_grad = true
        return t
      end
      local p = prof.profile { activities = { "cpu" } }
      p:start()
      local q = leaf({ 2, 2, 5, 8 })
      F.scaled_dot_product_attention(q, q, q):sum():backward()
      F.cross_entropy(leaf({ 4, 3 }), T.zeros({ 4 }, { dtype = "int64" })):backward()
      F.mse_loss(leaf({ 4, 3 }), T.empty({ 4, 3 }, { dtype = dt })):backward()
      local emb = nn.Embedding(10, 4)
      emb.weight = nn.Parameter(T.empty({ 10, 4 }, { dtype = dt }))
      emb(T.zeros({ 3 }, { dtype = "int64" })):sum():backward()
      p:stop()
      local out = {}
      for _, e in ipairs(p:events()) do
        local name = tostring(e.name):match("^aten::(.*)_backward$")
        if name then out[name] = { e.bytes_read, e.bytes_written } end
      end
      return out
    end
    local function want(e)
      return { scaled_dot_product_attention = { 200 * e, 100 * e },
        cross_entropy = { 13 * e + 32, 12 * e }, mse_loss = { 13 * e, 12 * e },
        embedding = { 12 * e + 24, 40 * e } }
    end
    assert.same(want(4), bytes("float32"))
    assert.same(want(2), bytes("float16"))
    assert.same(want(2), bytes("bfloat16"))
  end)

  it("an LSTM's and a 2-layer GRU's forward, BPTT and its matmuls count bytes in the configured "
    .. "dtype (the packed weights, R's gradient and BPTT's counts were float32)", function()
    -- By hand, per element size e (4 without fp16/bf16, 2 with either); x [T=5, N=2, I=4] with
    -- grad (cast by the engine), H = 8, bias, no h0/c0, the loss out:sum(); rows = T·N = 10.
    -- LSTM, G = 4H = 32: weights W = G·I + G·H + 2G = 128 + 256 + 64 = 448 elements;
    --   R = [out 80 | h_n 16 | c_n 16] = 112.
    --   forward: reads x (40) and W (448) = 488 e, writes out [5, 2, 8] (80 e; the op's result).
    --   lstm_backward: reads the workspace (meta saves a 1-element placeholder), W and R's
    --   gradient: (1 + 448 + 112) e = 561 e; writes x's gradient (40) and W's (448) = 488 e.
    --   its matmuls, in this order: dh·W_hh [10, 32]·[32, 8] reads (320 + 256) e, writes 80 e;
    --   dx [10, 32]·[32, 4] reads (320 + 128) e, writes 40 e; dW_ih [32, 10]·[10, 4] reads
    --   (320 + 40) e, writes 128 e; dW_hh [32, 10]·[10, 8] reads (320 + 80) e, writes 256 e.
    -- GRU, 2 layers, G = 3H = 24: W = layer 0 (24·4 + 24·8 + 48 = 336) + layer 1 (24·8 + 24·8 +
    --   48 = 432) = 768; R = [out 80 | h_n 2·2·8 = 32] = 112.
    --   forward: reads (40 + 768) e = 808 e, writes 80 e.
    --   gru_backward: reads (1 + 768 + 112) e = 881 e, writes (40 + 768) e = 808 e.
    --   matmuls: layer 0 dh [10, 24]·[24, 8] (240 + 192 r, 80 w), dx [10, 24]·[24, 4]
    --   (240 + 96, 40), dW_ih [24, 10]·[10, 4] (240 + 40, 96), dW_hh [24, 10]·[10, 8] (240 + 80,
    --   192); layer 1 dh as layer 0's, its input's gradient [10, 24]·[24, 8] (240 + 192, 80),
    --   dW_ih and dW_hh both [24, 10]·[10, 8] (240 + 80, 192).
    local function counts(make, section)
      local model = make()
      local e = engine_for(model, section)
      local x = T.empty({ 5, 2, 4 })
      x.requires_grad = true
      local p = prof.profile { activities = { "cpu" } }
      p:start()
      local out = e(x)
      e:backward(out:sum())
      p:stop()
      local got = {}
      for _, ev in ipairs(p:events()) do
        local name = tostring(ev.name)
        if name:match("^aten::[lg][sr][tu]m?") or name == "aten::mm" then
          got[#got + 1] = { name, ev.bytes_read, ev.bytes_written }
        end
      end
      for _, w in ipairs(model:parameters()) do
        assert.equal(w.dtype, w.grad.dtype)
      end
      return got
    end
    local function lstm(e)
      return { { "aten::lstm", 488 * e, 80 * e }, { "aten::mm", 576 * e, 80 * e },
        { "aten::mm", 448 * e, 40 * e }, { "aten::mm", 360 * e, 128 * e },
        { "aten::mm", 400 * e, 256 * e }, { "aten::lstm_backward", 561 * e, 488 * e } }
    end
    local function gru(e)
      return { { "aten::gru", 808 * e, 80 * e }, { "aten::mm", 432 * e, 80 * e },
        { "aten::mm", 336 * e, 40 * e }, { "aten::mm", 280 * e, 96 * e },
        { "aten::mm", 320 * e, 192 * e }, { "aten::mm", 432 * e, 80 * e },
        { "aten::mm", 432 * e, 80 * e }, { "aten::mm", 320 * e, 192 * e },
        { "aten::mm", 320 * e, 192 * e }, { "aten::gru_backward", 881 * e, 808 * e } }
    end
    local make_lstm = function() return nn.LSTM(4, 8) end
    local make_gru = function() return nn.GRU(4, 8, { num_layers = 2 }) end
    for section, e in pairs({ ['fp16={"enabled": false}'] = 4, ['fp16={"enabled": true}'] = 2,
                              ['bf16={"enabled": true}'] = 2 }) do
      assert.same(lstm(e), counts(make_lstm, section), section)
      assert.same(gru(e), counts(make_gru, section), section)
    end
  end)

  -- the zoo's families: conv + batch norm, depthwise conv, a ViT, GPT-2 (LayerNorm, attention,
  -- tied embedding) and Llama (RMSNorm, rotary angles kept in float32 as transformers does)
  for _, name in ipairs({ "lenet5", "resnet18", "mobilenet_v2", "vit_b_16", "gpt2", "llama2-7b" }) do
    it(name .. " trains a step in float16: every parameter gets a float16 gradient", function()
      local model = models.build(name)
      local e = engine_for(model, 'fp16={"enabled": true}')
      local out = e(table.unpack(models.input(name, { batch = 2, seq = 16 })))
      if not core.is_tensor(out) then out = out[1] end
      assert.equal("float16", out.dtype)
      local logits = out:reshape({ -1, out.shape[#out.shape] })
      e:backward(F.cross_entropy(logits, T.zeros({ logits.shape[1] }, { dtype = "int64" })))
      assert.same({}, bad_grads(model, "float16"))
      e:step()
    end)
  end
end)
