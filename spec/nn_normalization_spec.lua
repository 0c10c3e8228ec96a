-- nn_normalization_spec.lua — BatchNorm, InstanceNorm, LayerNorm, GroupNorm, RMSNorm vs PyTorch.
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

-- The argument list of the one call to op that fn makes.
local function call_of(op, fn)
  local names, argv = S.trace(fn)
  for i, n in ipairs(names) do
    if n == op then return argv[i] end
  end
  error("no call to " .. op .. " (calls: " .. table.concat(names, ", ") .. ")")
end

describe("nn.BatchNormNd", function()
  it("has PyTorch's parameters and buffers", function()
    -- torch: nn.BatchNorm2d(64) -> 128 [('weight', (64,)), ('bias', (64,))]
    -- buffers: [('running_mean', (64,), 'torch.float32'), ('running_var', (64,), 'torch.float32'),
    -- ('num_batches_tracked', (), 'torch.int64')]
    local bn = nn.BatchNorm2d(64)
    assert.same({ { "weight", { 64 } }, { "bias", { 64 } } }, S.params(bn))
    assert.same({ { "running_mean", { 64 } }, { "running_var", { 64 } },
                  { "num_batches_tracked", {} } }, S.buffers(bn))
    assert.equal("int64", bn.num_batches_tracked.dtype)
    assert.equal("float32", bn.running_var.dtype)
    assert.equal(128, bn:num_parameters())
    -- torch: nn.BatchNorm2d(64, eps=1e-3, momentum=None, affine=False,
    -- track_running_stats=False) -> 0 [], no buffers
    local bare = nn.BatchNorm2d(64, { eps = 1e-3, momentum = false, affine = false,
                                      track_running_stats = false })
    assert.same({}, S.params(bare))
    assert.same({}, S.buffers(bare))
  end)

  it("prints as PyTorch (momentum=false stands for None)", function()
    -- torch: BatchNorm1d(100, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
    assert.equal("BatchNorm1d(100, eps=1e-05, momentum=0.1, affine=True, "
                 .. "track_running_stats=True)", tostring(nn.BatchNorm1d(100)))
    -- torch: BatchNorm2d(64, eps=0.001, momentum=None, affine=False, track_running_stats=False)
    assert.equal("64, eps=0.001, momentum=None, affine=False, track_running_stats=False",
                 nn.BatchNorm2d(64, 1e-3, false, false, false):extra_repr())
    -- torch: BatchNorm3d(8, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
    assert.equal("8, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True",
                 nn.BatchNorm3d(8):extra_repr())
  end)

  it("calls batch_norm with batch statistics while training, running ones in eval", function()
    local bn = nn.BatchNorm2d(64)
    local x = T.empty { 2, 64, 8, 8 }
    local a = call_of("batch_norm", function() bn(x) end)
    assert.is_true(rawequal(bn.running_mean, a[2]) and rawequal(bn.running_var, a[3]))
    assert.is_true(rawequal(bn.weight, a[4]) and rawequal(bn.bias, a[5]))
    assert.same({ training = true, momentum = 0.1, eps = 1e-5 }, a[6])
    bn:eval()
    a = call_of("batch_norm", function() bn(x) end)
    assert.is_false(a[6].training)
    assert.is_true(rawequal(bn.running_mean, a[2]))
    -- torch: BatchNorm2d(64) [2,64,8,8] -> (2, 64, 8, 8)
    assert.same({ 2, 64, 8, 8 }, bn(x).shape)
  end)

  it("without running stats uses batch statistics in eval too, and passes none", function()
    local bn = nn.BatchNorm1d(100, { track_running_stats = false })
    local x = T.empty { 20, 100 }
    bn:eval()
    local a = call_of("batch_norm", function() bn(x) end)
    assert.is_nil(a[2])
    assert.is_nil(a[3])
    assert.is_true(a[6].training)
    -- torch: BatchNorm1d(100) [20,100] -> (20, 100)
    assert.same({ 20, 100 }, nn.BatchNorm1d(100)(x).shape)
  end)

  it("momentum=None gives the cumulative average factor 1/batches", function()
    local bn = nn.BatchNorm1d(4, { momentum = false })
    local x = T.empty { 3, 4 }
    assert.equal(1.0, call_of("batch_norm", function() bn(x) end)[6].momentum)
    assert.equal(0.5, call_of("batch_norm", function() bn(x) end)[6].momentum)
  end)

  it("counts as DeepSpeed does, following train()/eval()", function()
    -- DeepSpeed _batch_norm_flops: training numel * (5 if weight else 4), eval numel * (2 if
    -- weight else 1); x [2, 64, 8, 8] has 8192 elements
    local bn = nn.BatchNorm2d(64)
    local run = function(m) m(T.empty { 2, 64, 8, 8 }) end
    assert.equal(40960, S.count(bn, run).flops)
    bn:eval()
    assert.equal(16384, S.count(bn, run).flops)
    local bare = nn.BatchNorm2d(64, { affine = false })
    assert.equal(32768, S.count(bare, run).flops)
  end)

  it("checks the input rank with PyTorch's message", function()
    -- torch: ValueError: expected 4D input (got 3D input)
    assert.error_matches(function() nn.BatchNorm2d(3)(T.empty { 3, 4, 5 }) end,
                         "BatchNorm2d: expected 4D input (got 3D input [3, 4, 5])", 1, true)
    -- torch: ValueError: expected 2D or 3D input (got 4D input)
    assert.error_matches(function() nn.BatchNorm1d(3)(T.empty { 1, 3, 4, 5 }) end,
                         "expected 2D or 3D input (got 4D input", 1, true)
  end)
end)

describe("nn.InstanceNormNd", function()
  it("has PyTorch's parameters and buffers", function()
    -- torch: nn.InstanceNorm1d(10) -> 0 [], no buffers
    assert.same({}, S.params(nn.InstanceNorm1d(10)))
    assert.same({}, S.buffers(nn.InstanceNorm1d(10)))
    -- torch: nn.InstanceNorm2d(10, affine=True, track_running_stats=True) -> 20 [('weight',
    -- (10,)), ('bias', (10,))]; buffers running_mean (10,), running_var (10,),
    -- num_batches_tracked ()
    local m = nn.InstanceNorm2d(10, { affine = true, track_running_stats = true })
    assert.equal(20, m:num_parameters())
    assert.same({ { "running_mean", { 10 } }, { "running_var", { 10 } },
                  { "num_batches_tracked", {} } }, S.buffers(m))
  end)

  it("prints as PyTorch", function()
    -- torch: InstanceNorm1d(10, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)
    assert.equal("InstanceNorm1d(10, eps=1e-05, momentum=0.1, affine=False, "
                 .. "track_running_stats=False)", tostring(nn.InstanceNorm1d(10)))
    -- torch: InstanceNorm3d(4, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)
    assert.equal("4, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False",
                 nn.InstanceNorm3d(4):extra_repr())
  end)

  it("calls instance_norm; unbatched input runs as a batch of one", function()
    local m = nn.InstanceNorm2d(10)
    local x = T.empty { 2, 10, 5, 5 }
    local a = call_of("instance_norm", function() m(x) end)
    assert.same({ use_input_stats = true, momentum = 0.1, eps = 1e-5 }, a[6])
    -- torch: InstanceNorm2d(10) [2,10,5,5] -> (2, 10, 5, 5)
    assert.same({ 2, 10, 5, 5 }, m(x).shape)
    -- torch: InstanceNorm1d(10) unbatched [10,7] -> (10, 7)
    local u = T.empty { 10, 7 }
    a = call_of("instance_norm", function() nn.InstanceNorm1d(10)(u) end)
    assert.same({ 1, 10, 7 }, a[1].shape)
    assert.same({ 10, 7 }, nn.InstanceNorm1d(10)(u).shape)
    assert.error_matches(function() nn.InstanceNorm2d(3)(T.empty { 3, 4 }) end,
                         "expected 3D or 4D input (got 2D input", 1, true)
  end)
end)

describe("nn.LayerNorm", function()
  it("has PyTorch's parameters and repr", function()
    -- torch: nn.LayerNorm(768, eps=1e-12) -> 1536 [('weight', (768,)), ('bias', (768,))]
    -- LayerNorm((768,), eps=1e-12, elementwise_affine=True)
    local ln = nn.LayerNorm(768, { eps = 1e-12 })
    assert.same({ { "weight", { 768 } }, { "bias", { 768 } } }, S.params(ln))
    assert.equal("LayerNorm((768,), eps=1e-12, elementwise_affine=True)", tostring(ln))
    -- torch: nn.LayerNorm([10, 20], elementwise_affine=False) -> 0 []
    -- LayerNorm((10, 20), eps=1e-05, elementwise_affine=False)
    local na = nn.LayerNorm({ 10, 20 }, { elementwise_affine = false })
    assert.same({}, S.params(na))
    assert.equal("(10, 20), eps=1e-05, elementwise_affine=False", na:extra_repr())
  end)

  it("calls layer_norm with the normalized shape", function()
    local ln = nn.LayerNorm({ 10, 20 })
    local x = T.empty { 3, 10, 20 }
    local a = call_of("layer_norm", function() ln(x) end)
    assert.same({ 10, 20 }, a[2])
    assert.is_true(rawequal(ln.weight, a[3]) and rawequal(ln.bias, a[4]))
    assert.same({ eps = 1e-5 }, a[5])
    -- torch: LayerNorm([10,20]) [3,10,20] -> (3, 10, 20)
    assert.same({ 3, 10, 20 }, ln(x).shape)
  end)
end)

describe("nn.GroupNorm", function()
  it("has PyTorch's parameters and repr", function()
    -- torch: nn.GroupNorm(4, 32) -> 64 [('weight', (32,)), ('bias', (32,))]
    -- GroupNorm(4, 32, eps=1e-05, affine=True)
    local gn = nn.GroupNorm(4, 32)
    assert.same({ { "weight", { 32 } }, { "bias", { 32 } } }, S.params(gn))
    assert.equal("GroupNorm(4, 32, eps=1e-05, affine=True)", tostring(gn))
    -- torch: GroupNorm(2, 6, eps=1e-06, affine=False)
    assert.equal("2, 6, eps=1e-06, affine=False", nn.GroupNorm(2, 6, 1e-6, false):extra_repr())
    -- torch: ValueError('num_channels must be divisible by num_groups')
    assert.error_matches(function() nn.GroupNorm(4, 30) end,
                         "num_channels must be divisible by num_groups", 1, true)
  end)

  it("calls group_norm with the number of groups", function()
    local gn = nn.GroupNorm(4, 32)
    local x = T.empty { 2, 32, 5 }
    local a = call_of("group_norm", function() gn(x) end)
    assert.equal(4, a[2])
    assert.same({ eps = 1e-5 }, a[5])
    -- torch: GroupNorm(4,32) [2,32,5] -> (2, 32, 5)
    assert.same({ 2, 32, 5 }, gn(x).shape)
  end)
end)

describe("nn.RMSNorm", function()
  -- Not in torch 1.13; torch >= 2.4 normalization.py: normalized_shape int -> (n,),
  -- eps: Optional[float] = None, weight Parameter(torch.empty(normalized_shape)) when
  -- elementwise_affine, extra_repr "{normalized_shape}, eps={eps}, elementwise_affine=...",
  -- forward F.rms_norm(x, self.normalized_shape, self.weight, self.eps)
  it("is shaped and printed as PyTorch 2.4's", function()
    local m = nn.RMSNorm(768)
    assert.same({ { "weight", { 768 } } }, S.params(m))
    assert.equal("RMSNorm((768,), eps=None, elementwise_affine=True)", tostring(m))
    assert.equal("(4, 8), eps=1e-06, elementwise_affine=False",
                 nn.RMSNorm({ 4, 8 }, 1e-6, false):extra_repr())
    assert.same({}, S.params(nn.RMSNorm(8, { elementwise_affine = false })))
  end)

  it("calls rms_norm", function()
    local m = nn.RMSNorm(768, { eps = 1e-6 })
    local x = T.empty { 2, 5, 768 }
    local a = call_of("rms_norm", function() m(x) end)
    assert.same({ 768 }, a[2])
    assert.is_true(rawequal(m.weight, a[3]))
    assert.same({ eps = 1e-6 }, a[4])
    assert.same({ 2, 5, 768 }, m(x).shape)
  end)
end)

describe("a composite of normalisations", function()
  it("prints like torch's print(model)", function()
    local expected = [[
Sequential(
  (0): BatchNorm2d(64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
  (1): BatchNorm1d(100, eps=0.001, momentum=None, affine=False, track_running_stats=False)
  (2): GroupNorm(4, 64, eps=1e-05, affine=True)
  (3): InstanceNorm2d(64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
  (4): InstanceNorm1d(10, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)
  (5): LayerNorm((768,), eps=1e-12, elementwise_affine=True)
  (6): LayerNorm((10, 20), eps=1e-05, elementwise_affine=False)
)]]
    local model = nn.Sequential(
      nn.BatchNorm2d(64),
      nn.BatchNorm1d(100, { eps = 1e-3, momentum = false, affine = false,
                            track_running_stats = false }),
      nn.GroupNorm(4, 64), nn.InstanceNorm2d(64, { affine = true, track_running_stats = true }),
      nn.InstanceNorm1d(10), nn.LayerNorm(768, { eps = 1e-12 }),
      nn.LayerNorm({ 10, 20 }, { elementwise_affine = false }))
    assert.equal(expected, tostring(model))
    -- torch: params: 1920; buffers: 0.running_mean (64,), 0.running_var (64,),
    -- 0.num_batches_tracked (), 3.running_mean (64,), 3.running_var (64,), 3.num_batches_tracked ()
    assert.equal(1920, model:num_parameters())
    assert.same({ { "0.running_mean", { 64 } }, { "0.running_var", { 64 } },
                  { "0.num_batches_tracked", {} }, { "3.running_mean", { 64 } },
                  { "3.running_var", { 64 } }, { "3.num_batches_tracked", {} } },
                S.buffers(model))
  end)
end)
