-- sparse.lua — nn.Embedding, shaped and printed as PyTorch 1.13's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local initializers = require "prof.nn.initializers"

local Module, fmt = module.Module, args.fmt

-- nn.Embedding(num_embeddings, embedding_dim, padding_idx=nil, max_norm=nil, norm_type=2.0,
-- scale_grad_by_freq=false, sparse=false, _weight=nil, {device=, dtype=})
local Embedding = Module:extend("Embedding")

function Embedding:init(...)
  local who = self.__name
  local a = args.parse(who, {
    "num_embeddings", "embedding_dim", { "padding_idx" }, { "max_norm" }, { "norm_type", 2.0 },
    { "scale_grad_by_freq", false }, { "sparse", false }, { "_weight" }, { "device" }, { "dtype" },
  }, ...)
  local n, pad = a.num_embeddings, a.padding_idx
  if pad ~= nil then
    if pad >= n or pad < -n then error(who .. ": padding_idx must be within num_embeddings", 3) end
    if pad < 0 then pad = n + pad end
  end
  self.num_embeddings, self.embedding_dim, self.padding_idx = n, a.embedding_dim, pad
  self.max_norm, self.norm_type = a.max_norm, a.norm_type
  self.scale_grad_by_freq, self.sparse = a.scale_grad_by_freq, a.sparse
  local w = a._weight
  if w == nil then
    w = T.empty({ n, a.embedding_dim }, args.factory(a))
  elseif w:dim() ~= 2 or w:size(0) ~= n or w:size(1) ~= a.embedding_dim then
    error(who .. ": shape of weight does not match num_embeddings and embedding_dim", 3)
  end
  self:register_parameter("weight", w)
  if a._weight == nil then self:reset_parameters() end   -- a given weight is kept, as in torch
end

-- Embedding.reset_parameters: N(0, 1), the padding row zeroed (cpu values only).
function Embedding:reset_parameters()
  if not initializers.has_values(self.weight) then return end
  initializers.normal_(self.weight)
  if self.padding_idx ~= nil then
    T.no_grad(function() self.weight:select(0, self.padding_idx):fill_(0) end)
  end
end

-- max_norm renormalises rows of the weight in place (cpu math, later); the lookup is the same.
function Embedding:forward(idx)
  return F.embedding(idx, self.weight, { padding_idx = self.padding_idx })
end

function Embedding:extra_repr()
  local s = string.format("%d, %d", self.num_embeddings, self.embedding_dim)
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. fmt(self.max_norm) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. fmt(self.norm_type) end
  if self.scale_grad_by_freq then s = s .. ", scale_grad_by_freq=True" end
  if self.sparse then s = s .. ", sparse=True" end
  return s
end

return { Embedding = Embedding }
