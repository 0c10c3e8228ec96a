-- gpt3.lua — the GPT-3 family of Brown et al. 2020 (Table 2.1) built from the GPT-2 architecture (dense attention).
--
-- The paper alternates dense and locally banded sparse attention layers; the banded pattern is
-- out of scope here: every layer is GPT-2's dense causal attention, which does not change the
-- parameters and over-counts the banded layers' attention MACs.
local gpt2 = require "prof.models.gpt2"
local lm = require "prof.models.causal_lm"

local M = {}

-- Table 2.1: n_layers, d_model, n_heads, d_head; all with n_ctx 2048 and GPT-2's 50257 tokens.
-- Two rows do not satisfy d_model = n_heads * d_head, which GPT-2's head split needs: 1.3B prints
-- 24 heads of 128 with d_model 2048 (kept: d_model and d_head, so 16 heads); 13B prints d_model
-- 5140 with 40 heads of 128 (kept: the heads, so d_model 5120). Heads do not change parameters.
local ORDER = { "125M", "350M", "760M", "1.3B", "2.7B", "6.7B", "13B", "175B" }
M.SIZES = {
  ["125M"] = { n_layer = 12, n_embd = 768, n_head = 12 },
  ["350M"] = { n_layer = 24, n_embd = 1024, n_head = 16 },
  ["760M"] = { n_layer = 24, n_embd = 1536, n_head = 16 },
  ["1.3B"] = { n_layer = 24, n_embd = 2048, n_head = 16 },
  ["2.7B"] = { n_layer = 32, n_embd = 2560, n_head = 32 },
  ["6.7B"] = { n_layer = 32, n_embd = 4096, n_head = 32 },
  ["13B"] = { n_layer = 40, n_embd = 5120, n_head = 40 },
  ["175B"] = { n_layer = 96, n_embd = 12288, n_head = 96 },
}
for _, s in pairs(M.SIZES) do
  s.n_positions, s.vocab_size = 2048, 50257
end

local function preset(opts)
  local key = opts.name or opts.size or "175B"
  key = tostring(key):gsub("^gpt3%-", ""):gsub("^GPT%-3 ", "")
  local p = M.SIZES[key]
  if p == nil then
    error(string.format("gpt3: unknown size '%s' (known: %s)", key, table.concat(ORDER, ", ")), 3)
  end
  return p
end

function M.config(opts)
  opts = opts or {}
  return gpt2.configure(preset(opts), opts)
end

-- gpt3.build{name = "175B"} -> GPT2LMHeadModel with the paper's shape, plus overrides.
function M.build(opts)
  return gpt2.GPT2LMHeadModel(M.config(opts))
end

-- {input_ids}: int64 [batch, seq], batch 1, seq 2048 (n_ctx) unless given.
function M.input(opts)
  opts = opts or {}
  return lm.input(opts, M.config(opts).n_positions)
end

-- gpt3-125M ... gpt3-175B (the paper's model names).
function M.names()
  local out = {}
  for i, k in ipairs(ORDER) do out[i] = "gpt3-" .. k end
  return out
end

return M
