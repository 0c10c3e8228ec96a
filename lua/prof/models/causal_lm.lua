-- causal_lm.lua — what the decoder-only model files (gpt2, gpt3, llama) share: configs, inputs, loss.
local F = require("prof.nn").functional
local T = require "prof.tensor"

local M = {}

-- base, then preset, then base's keys given directly in opts (and `extra`, a key nil in base and
-- so not in pairs()), then opts.config: the config a build uses.
function M.config(base, preset, opts, extra)
  local c = {}
  for k, v in pairs(base) do c[k] = v end
  for k, v in pairs(preset) do c[k] = v end
  for k in pairs(base) do
    if opts[k] ~= nil then c[k] = opts[k] end
  end
  if opts[extra] ~= nil then c[extra] = opts[extra] end
  for k, v in pairs(opts.config or {}) do c[k] = v end
  return c
end

-- {input_ids}: int64 [batch, seq], batch 1 and seq `context` unless opts gives them.
function M.input(opts, context)
  return { T.zeros({ opts.batch or 1, opts.seq or context }, { dtype = "int64" }) }
end

-- The next-token cross entropy of logits [B, T, vocab] against labels [B, T], as transformers'
-- causal LM heads shift them.
function M.loss(logits, labels, vocab_size)
  local t = logits:size(1)
  local shifted = logits:narrow(1, 0, t - 1):contiguous()
  local targets = labels:narrow(1, 1, t - 1):contiguous()
  return F.cross_entropy(shifted:view(-1, vocab_size), targets:view(-1))
end

return M
