-- cpu_models_spec.lua — reduced AlexNet, ResNet-18 and BERT on the cpu against PyTorch 1.13 on the
-- same weights: outputs and every parameter's gradient within 1e-4 relative.
-- Fixtures: scripts/tools/torch_fixture_models.py (eval mode: dropout off, batch norm on seeded
-- running statistics).
local T = require "prof.tensor"
local models = require "prof.models"
local gc = require "spec.support.gradcheck"

local function load(name)
  local manifest = dofile("spec/fixtures/models/" .. name .. ".lua")
  local f = assert(io.open("spec/fixtures/models/" .. name .. ".f32", "rb"))
  local blob = f:read("a")
  f:close()
  local by = { param = {}, buffer = {}, input = {}, grad = {}, w = {}, output = {} }
  for _, e in ipairs(manifest.entries) do
    local n = 1
    for _, d in ipairs(e.shape) do n = n * d end
    local size = e.dtype == "int64" and 8 or 4
    by[e.kind][e.name] = T.from_bytes(blob:sub(e.offset + 1, e.offset + n * size), e.shape, e.dtype)
  end
  return manifest.opts, by
end

local function run(name)
  T.set_default_device("cpu")
  local opts, data = load(name)
  local model = models.build(opts.model, opts)
  model:eval()
  for _, pair in ipairs(model:named_parameters()) do
    local w = assert(data.param[pair[1]], "no weights for " .. pair[1])
    pair[2]:copy_(w)
  end
  for _, pair in ipairs(model:named_buffers()) do
    if data.buffer[pair[1]] then pair[2]:copy_(data.buffer[pair[1]]) end
  end
  local out
  if opts.model == "bert-base" then
    local _, logits = model { input_ids = data.input["1"], token_type_ids = data.input["2"],
                              attention_mask = data.input["3"] }
    out = logits
  else
    out = model(data.input["1"])
  end
  T.set_default_device("meta")
  return model, data, out
end

describe("reduced models on the cpu against PyTorch 1.13", function()
  for _, name in ipairs({ "alexnet_small", "resnet18_small", "bert_small" }) do
    it(name .. ": output and parameter gradients", function()
      local model, data, out = run(name)
      local err = gc.max_rel(out:tolist(), data.output.output:tolist())
      assert.is_true(err < 1e-4, string.format("output off by %.3g", err))
      T.sum(out * data.w.w):backward()
      for _, pair in ipairs(model:named_parameters()) do
        local g = pair[2].grad
        assert.is_not_nil(g, "no gradient for " .. pair[1])
        local e = gc.max_rel(g:tolist(), data.grad[pair[1]]:tolist())
        assert.is_true(e < 1e-4, string.format("gradient of %s off by %.3g", pair[1], e))
      end
    end)
  end
end)
