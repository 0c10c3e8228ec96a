-- nn_sparse_spec.lua — nn.Embedding against PyTorch 1.13 (torch's output quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

describe("nn.Embedding", function()
  it("has PyTorch's parameters", function()
    -- torch: nn.Embedding(30522, 768, padding_idx=0) -> 23440896 [('weight', (30522, 768))]
    local e = nn.Embedding(30522, 768, { padding_idx = 0 })
    assert.same({ { "weight", { 30522, 768 } } }, S.params(e))
    assert.equal(23440896, e:num_parameters())
    -- on meta nothing is allocated: the weight is a shape only
    assert.equal("meta", e.weight.device)
  end)

  it("prints as PyTorch", function()
    -- torch: Embedding(30522, 768, padding_idx=0)
    assert.equal("Embedding(30522, 768, padding_idx=0)",
                 tostring(nn.Embedding(30522, 768, { padding_idx = 0 })))
    -- torch: Embedding(10, 3)
    assert.equal("Embedding(10, 3)", tostring(nn.Embedding(10, 3)))
    -- torch: nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0, norm_type=1.0,
    -- scale_grad_by_freq=True, sparse=True) ->
    -- Embedding(10, 3, padding_idx=9, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True,
    -- sparse=True)
    local e = nn.Embedding(10, 3, { padding_idx = -1, max_norm = 1.0, norm_type = 1.0,
                                    scale_grad_by_freq = true, sparse = true })
    assert.equal("10, 3, padding_idx=9, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, "
                 .. "sparse=True", e:extra_repr())
  end)

  it("checks padding_idx and a given weight as PyTorch does", function()
    -- torch: AssertionError: Padding_idx must be within num_embeddings
    assert.error_matches(function() nn.Embedding(10, 3, 10) end,
                         "padding_idx must be within num_embeddings", 1, true)
    assert.error_matches(function() nn.Embedding(10, 3, -11) end,
                         "padding_idx must be within num_embeddings", 1, true)
    local w = T.empty { 10, 3 }
    assert.is_true(rawequal(w, nn.Embedding(10, 3, { _weight = w }).weight))
    assert.error_matches(function() nn.Embedding(10, 4, { _weight = w }) end,
                         "shape of weight does not match", 1, true)
  end)

  it("calls embedding with its weight and padding_idx", function()
    local e = nn.Embedding(30522, 768, { padding_idx = 0 })
    local idx, y = T.empty({ 2, 7 }, { dtype = "int64" }), nil
    local names, argv = S.trace(function() y = e(idx) end)
    assert.same({ "embedding" }, names)
    assert.is_true(rawequal(e.weight, argv[1][2]))
    assert.same({ padding_idx = 0 }, argv[1][3])
    -- torch: Embedding(30522,768,padding_idx=0) idx[2,7] -> (2, 7, 768)
    assert.same({ 2, 7, 768 }, y.shape)
  end)
end)

describe("a composite with embeddings", function()
  -- torch: class BertEmbeddings(nn.Module) with word_embeddings = nn.Embedding(30522, 768,
  -- padding_idx=0), position_embeddings = nn.Embedding(512, 768), token_type_embeddings =
  -- nn.Embedding(2, 768), LayerNorm = nn.LayerNorm(768, eps=1e-12), dropout = nn.Dropout(0.1)
  local BertEmbeddings = nn.Module:extend("BertEmbeddings")
  function BertEmbeddings:init()
    self.word_embeddings = nn.Embedding(30522, 768, { padding_idx = 0 })
    self.position_embeddings = nn.Embedding(512, 768)
    self.token_type_embeddings = nn.Embedding(2, 768)
    self.LayerNorm = nn.LayerNorm(768, { eps = 1e-12 })
    self.dropout = nn.Dropout(0.1)
  end

  it("prints like torch's print(model)", function()
    local expected = [[
BertEmbeddings(
  (word_embeddings): Embedding(30522, 768, padding_idx=0)
  (position_embeddings): Embedding(512, 768)
  (token_type_embeddings): Embedding(2, 768)
  (LayerNorm): LayerNorm((768,), eps=1e-12, elementwise_affine=True)
  (dropout): Dropout(p=0.1, inplace=False)
)]]
    local m = BertEmbeddings()
    assert.equal(expected, tostring(m))
    -- torch: params: 23837184; named_parameters word_embeddings.weight (30522, 768),
    -- position_embeddings.weight (512, 768), token_type_embeddings.weight (2, 768),
    -- LayerNorm.weight (768,), LayerNorm.bias (768,)
    assert.equal(23837184, m:num_parameters())
    assert.same({ { "word_embeddings.weight", { 30522, 768 } },
                  { "position_embeddings.weight", { 512, 768 } },
                  { "token_type_embeddings.weight", { 2, 768 } },
                  { "LayerNorm.weight", { 768 } }, { "LayerNorm.bias", { 768 } } }, S.params(m))
  end)
end)
