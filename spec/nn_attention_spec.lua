-- nn_attention_spec.lua — nn.MultiheadAttention against PyTorch 1.13 (torch's output quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

-- The functions DeepSpeed patches that F.multi_head_attention_forward calls.
local PATCHED = { linear = true, bmm = true, baddbmm = true, softmax = true, dropout = true }

local function shapes(...)
  local out = {}
  for i, t in ipairs { ... } do out[i] = t.shape end
  return out
end

describe("nn.MultiheadAttention", function()
  it("has PyTorch's parameters: packed in_proj, or q/k/v weights when kdim/vdim differ", function()
    -- torch: nn.MultiheadAttention(512, 8) -> 1050624 [('in_proj_weight', (1536, 512)),
    -- ('in_proj_bias', (1536,)), ('out_proj.weight', (512, 512)), ('out_proj.bias', (512,))]
    local m = nn.MultiheadAttention(512, 8)
    assert.same({ { "in_proj_weight", { 1536, 512 } }, { "in_proj_bias", { 1536 } },
                  { "out_proj.weight", { 512, 512 } }, { "out_proj.bias", { 512 } } },
                S.params(m))
    assert.equal(1050624, m:num_parameters())
    -- torch: nn.MultiheadAttention(64, 4, dropout=0.1, bias=False, add_bias_kv=True, kdim=32,
    -- vdim=16, batch_first=True) -> 11392 [('q_proj_weight', (64, 64)), ('k_proj_weight',
    -- (64, 32)), ('v_proj_weight', (64, 16)), ('bias_k', (1, 1, 64)), ('bias_v', (1, 1, 64)),
    -- ('out_proj.weight', (64, 64))]
    local s = nn.MultiheadAttention(64, 4, { dropout = 0.1, bias = false, add_bias_kv = true,
                                             kdim = 32, vdim = 16, batch_first = true })
    assert.same({ { "q_proj_weight", { 64, 64 } }, { "k_proj_weight", { 64, 32 } },
                  { "v_proj_weight", { 64, 16 } }, { "bias_k", { 1, 1, 64 } },
                  { "bias_v", { 1, 1, 64 } }, { "out_proj.weight", { 64, 64 } } }, S.params(s))
    assert.equal(11392, s:num_parameters())
    assert.error_matches(function() nn.MultiheadAttention(10, 3) end,
                         "embed_dim must be divisible by num_heads", 1, true)
  end)

  it("prints its out_proj as NonDynamicallyQuantizableLinear", function()
    -- torch: print(nn.MultiheadAttention(64, 4, ..., bias=False, ...))
    local expected = [[
MultiheadAttention(
  (out_proj): NonDynamicallyQuantizableLinear(in_features=64, out_features=64, bias=False)
)]]
    assert.equal(expected, tostring(nn.MultiheadAttention(64, 4, { bias = false })))
  end)

  -- torch 1.13, patching F.linear, F.softmax, F.dropout, torch.bmm, torch.baddbmm as DeepSpeed
  -- does and calling nn.MultiheadAttention(512, 8) (training mode: the general path):
  --   self q=k=v    ['linear', 'bmm', 'softmax', 'bmm', 'linear']
  --   enc-dec k=v   ['linear', 'linear', 'bmm', 'softmax', 'bmm', 'linear']
  --   k!=v          ['linear', 'linear', 'linear', 'bmm', 'softmax', 'bmm', 'linear']
  --   mask          ['linear', 'linear', 'baddbmm', 'softmax', 'bmm', 'linear']
  --   dropout=0.1   ['linear', 'bmm', 'softmax', 'dropout', 'bmm', 'linear']
  --   kdim/vdim     ['linear', 'linear', 'linear', 'bmm', 'softmax', 'bmm', 'linear']
  it("calls the functionals PyTorch's multi_head_attention_forward calls", function()
    local m = nn.MultiheadAttention(512, 8)
    local x, kv, v2 = T.empty { 10, 2, 512 }, T.empty { 7, 2, 512 }, T.empty { 7, 2, 512 }
    local mask = T.empty({ 10, 7 }, { dtype = "bool" })
    local function ops(mod, ...)
      local a = table.pack(...)
      return S.only(S.trace(function() mod(table.unpack(a, 1, a.n)) end), PATCHED)
    end
    assert.same({ "linear", "bmm", "softmax", "bmm", "linear" }, ops(m, x, x, x))
    assert.same({ "linear", "linear", "bmm", "softmax", "bmm", "linear" }, ops(m, x, kv, kv))
    assert.same({ "linear", "linear", "linear", "bmm", "softmax", "bmm", "linear" },
                ops(m, x, kv, v2))
    assert.same({ "linear", "linear", "baddbmm", "softmax", "bmm", "linear" },
                ops(m, x, kv, kv, { attn_mask = mask }))
    local md = nn.MultiheadAttention(512, 8, 0.1)
    assert.same({ "linear", "bmm", "softmax", "dropout", "bmm", "linear" }, ops(md, x, x, x))
    md:eval()
    assert.same({ "linear", "bmm", "softmax", "bmm", "linear" }, ops(md, x, x, x))
    local m2 = nn.MultiheadAttention(64, 4, { bias = false, kdim = 32, vdim = 16 })
    assert.same({ "linear", "linear", "linear", "bmm", "softmax", "bmm", "linear" },
                ops(m2, T.empty { 10, 2, 64 }, T.empty { 7, 2, 32 }, T.empty { 7, 2, 16 }))
  end)

  it("runs out_proj through linear with its weights, not as a module call", function()
    local m = nn.MultiheadAttention(512, 8)
    local x = T.empty { 10, 2, 512 }
    local names, argv = S.trace(function() m(x, x, x) end)
    local last
    for i, n in ipairs(names) do
      if n == "linear" then last = argv[i] end
    end
    assert.is_true(rawequal(m.out_proj.weight, last[2]) and rawequal(m.out_proj.bias, last[3]))
    assert.same({ 20, 512 }, last[1].shape)
  end)

  it("returns outputs and averaged weights shaped as torch's", function()
    local m = nn.MultiheadAttention(512, 8)
    local q, kv = T.empty { 10, 2, 512 }, T.empty { 7, 2, 512 }
    -- torch: MHA(512,8) q[10,2,512] kv[7,2,512] -> [(10, 2, 512), (2, 10, 7)]
    assert.same({ { 10, 2, 512 }, { 2, 10, 7 } }, shapes(m(q, kv, kv)))
    -- torch: need_weights=False -> [(10, 2, 512), None]
    local out, w = m(q, kv, kv, { need_weights = false })
    assert.same({ 10, 2, 512 }, out.shape)
    assert.is_nil(w)
    -- torch: average_attn_weights=False -> [(10, 2, 512), (2, 8, 10, 7)]
    assert.same({ { 10, 2, 512 }, { 2, 8, 10, 7 } },
                shapes(m(q, kv, kv, { average_attn_weights = false })))
    -- torch: self unbatched [10,512] -> [(10, 512), (10, 10)]
    local u = T.empty { 10, 512 }
    assert.same({ { 10, 512 }, { 10, 10 } }, shapes(m(u, u, u)))
    -- torch: attn_mask bool[10,7] kpm bool[2,7] -> [(10, 2, 512), (2, 10, 7)]
    local mask = T.empty({ 10, 7 }, { dtype = "bool" })
    local kpm = T.empty({ 2, 7 }, { dtype = "bool" })
    assert.same({ { 10, 2, 512 }, { 2, 10, 7 } },
                shapes(m(q, kv, kv, { attn_mask = mask, key_padding_mask = kpm })))
  end)

  it("supports batch_first, kdim/vdim, bias_kv and zero attention as torch does", function()
    -- torch: MHA(64,4,kdim32,vdim16,bias_kv,zero_attn,bf) q[2,10,64] k[2,7,32] v[2,7,16]
    -- -> [(2, 10, 64), (2, 10, 9)]
    local m = nn.MultiheadAttention(64, 4, { dropout = 0.1, bias = false, add_bias_kv = true,
                                             add_zero_attn = true, kdim = 32, vdim = 16,
                                             batch_first = true })
    local out, w = m(T.empty { 2, 10, 64 }, T.empty { 2, 7, 32 }, T.empty { 2, 7, 16 })
    assert.same({ { 2, 10, 64 }, { 2, 10, 9 } }, shapes(out, w))
  end)

  it("names the expected and the given embedding size", function()
    local m = nn.MultiheadAttention(512, 8)
    local x = T.empty { 10, 2, 256 }
    -- torch: AssertionError: was expecting embedding dimension of 512, but got 256
    assert.error_matches(function() m(x, x, x) end,
                         "was expecting embedding dimension of 512, but got 256", 1, true)
    assert.error_matches(function() m(T.empty { 2, 3, 4, 512 }, x, x) end,
                         "query should be unbatched 2D or batched 3D tensor", 1, true)
  end)

  it("counts as DeepSpeed does", function()
    -- Hand derivation, q [10, 2, 512], k = v [7, 2, 512], 8 heads of 64:
    --   linear q: 10240 * 512 = 5242880 MACs; linear kv (w_kv [1024, 512]): 7168 * 1024 =
    --   7340032; bmm [16,10,64]x[16,64,7]: 71680; softmax [16,10,7]: 1120 flops;
    --   bmm [16,10,7]x[16,7,64]: 71680; out_proj linear [20,512]: 5242880.
    --   MACs 17969152; flops 2 * MACs + 1120 = 35939424 (q / sqrt(d) is an operator: uncounted)
    local m = nn.MultiheadAttention(512, 8)
    local q, kv = T.empty { 10, 2, 512 }, T.empty { 7, 2, 512 }
    local t = S.count(m, function(mm) mm(q, kv, kv) end)
    assert.equal(17969152, t.macs)
    assert.equal(35939424, t.flops)
  end)
end)

describe("a transformer layer built from nn modules", function()
  -- torch: print(nn.TransformerEncoderLayer(512, 8)); the same children in the same order
  local TransformerEncoderLayer = nn.Module:extend("TransformerEncoderLayer")
  function TransformerEncoderLayer:init(d_model, nhead)
    self.self_attn = nn.MultiheadAttention(d_model, nhead, { dropout = 0.1 })
    self.linear1 = nn.Linear(d_model, 2048)
    self.dropout = nn.Dropout(0.1)
    self.linear2 = nn.Linear(2048, d_model)
    self.norm1 = nn.LayerNorm(d_model, { eps = 1e-5 })
    self.norm2 = nn.LayerNorm(d_model, { eps = 1e-5 })
    self.dropout1 = nn.Dropout(0.1)
    self.dropout2 = nn.Dropout(0.1)
  end

  it("prints like torch's print(model)", function()
    local expected = [[
TransformerEncoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=512, out_features=512, bias=True)
  )
  (linear1): Linear(in_features=512, out_features=2048, bias=True)
  (dropout): Dropout(p=0.1, inplace=False)
  (linear2): Linear(in_features=2048, out_features=512, bias=True)
  (norm1): LayerNorm((512,), eps=1e-05, elementwise_affine=True)
  (norm2): LayerNorm((512,), eps=1e-05, elementwise_affine=True)
  (dropout1): Dropout(p=0.1, inplace=False)
  (dropout2): Dropout(p=0.1, inplace=False)
)]]
    local layer = TransformerEncoderLayer(512, 8)
    assert.equal(expected, tostring(layer))
    -- torch: params: 3152384; named_modules ['', 'self_attn', 'self_attn.out_proj', 'linear1',
    -- 'dropout', 'linear2', 'norm1', 'norm2', 'dropout1', 'dropout2']
    assert.equal(3152384, layer:num_parameters())
    assert.same({ "", "self_attn", "self_attn.out_proj", "linear1", "dropout", "linear2", "norm1",
                  "norm2", "dropout1", "dropout2" }, S.module_names(layer))
  end)
end)
