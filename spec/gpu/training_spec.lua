-- training_spec.lua — small models trained a few steps on cuda and on the cpu from the same
-- initial weights (the generator draws them on the host): losses and weights agree.
local T = require "prof.tensor"
local core = require "prof.core"
local nn = require "prof.nn"
local optim = require "prof.optim"
local cmp = require "spec.gpu.compare"
local gc = require "spec.support.gradcheck"

local function cnn()
  return nn.Sequential(nn.Conv2d(3, 8, 3, { padding = 1 }), nn.BatchNorm2d(8), nn.ReLU(),
    nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Dropout(0.2), nn.Linear(16, 10))
end

-- One post-norm encoder block (attention with dropout, GELU feed-forward) and a linear head,
-- called on [batch, seq, 32] and averaged over the sequence.
local function encoder()
  local att = nn.MultiheadAttention(32, 4, { dropout = 0.1, batch_first = true })
  local ln1, ln2 = nn.LayerNorm(32), nn.LayerNorm(32)
  local ff = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
  local head = nn.Linear(32, 10)
  local all = nn.ModuleList({ att, ln1, ln2, ff, head })
  return setmetatable({ parameters = function() return all:parameters() end }, {
    __call = function(_, x)
      local a = att(x, x, x)
      if type(a) == "table" and not T.is_tensor(a) then a = a[1] end
      local h = ln1(x + a)
      return head(ln2(h + ff(h)))
    end })
end

-- Trains make() for `steps` steps on device; returns the losses and the final weights.
local function train(device, make, input_shape, classes, make_opt, steps)
  local prev = core.default_device()
  core.set_default_device(device)
  core.manual_seed(7)
  local model = make()
  local opt = make_opt(model:parameters())
  local n = 1
  for _, d in ipairs(input_shape) do n = n * d end
  local x = T.tensor(gc.values(n, 3), { device = device }):reshape(input_shape)
  local tv = gc.values(input_shape[1], 4)
  for i = 1, #tv do tv[i] = math.floor((tv[i] + 1) / 2 * classes) % classes end
  local y = T.tensor(tv, { dtype = "int64", device = device })
  local losses = {}
  for s = 1, steps do
    opt:zero_grad()
    local out = model(x)
    if out.ndim == 3 then out = out:mean(1) end
    local loss = core.cross_entropy(out, y)
    loss:backward()
    opt:step()
    losses[s] = loss:to("cpu"):item()
  end
  local weights = {}
  for _, p in ipairs(model:parameters()) do weights[#weights + 1] = p:to("cpu"):tolist() end
  core.set_default_device(prev)
  return losses, weights
end

local function same_training(make, shape, classes, make_opt)
  local l1, w1 = train("cpu", make, shape, classes, make_opt, 3)
  local l2, w2 = train(cmp.DEVICE, make, shape, classes, make_opt, 3)
  local worst = cmp.rel_err(l2, l1)
  for i = 1, #w1 do worst = math.max(worst, cmp.rel_err(w2[i], w1[i])) end
  return worst
end

describe("training on cuda matches the cpu #gpu", function()
  setup(cmp.require_device)

  it("a small CNN with SGD and momentum, 3 steps", function()
    local e = same_training(cnn, { 4, 3, 12, 12 }, 10,
      function(p) return optim.SGD(p, { lr = 0.05, momentum = 0.9, weight_decay = 1e-4 }) end)
    cmp.record("training", "cnn sgd", e, 1e-3)
    assert(e <= 1e-3, string.format("off by %.3g", e))
  end)

  it("a transformer encoder layer with AdamW, 3 steps", function()
    local e = same_training(encoder, { 3, 10, 32 }, 10,
      function(p) return optim.AdamW(p, { lr = 1e-3 }) end)
    cmp.record("training", "encoder adamw", e, 1e-3)
    assert(e <= 1e-3, string.format("off by %.3g", e))
  end)
end)
