-- nn_containers_spec.lua — nn.Sequential, ModuleList and ModuleDict against PyTorch 1.13 (quoted).
local T = require "prof.tensor"
local nn = require "prof.nn"
local S = require "spec.nn_support"

local names_of = S.child_names

describe("nn.Sequential", function()
  it("is built from arguments, a list, or {name, module} pairs", function()
    local a, b = nn.Linear(2, 3), nn.ReLU()
    assert.same({ "0", "1" }, names_of(nn.Sequential(a, b)))
    assert.same({ "0", "1" }, names_of(nn.Sequential { nn.Linear(2, 3), nn.ReLU() }))
    local named = nn.Sequential { { "fc", nn.Linear(2, 3) }, { "act", nn.ReLU() } }
    assert.same({ "fc", "act" }, names_of(named))
    assert.equal("ReLU()", tostring(named.act))
    assert.equal(0, #nn.Sequential())
  end)

  it("indexes from 1 (negatives from the end) while printing from 0", function()
    local a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    local seq = nn.Sequential(a, b, c)
    assert.is_true(rawequal(a, seq[1]) and rawequal(c, seq[3]) and rawequal(c, seq[-1]))
    assert.is_nil(seq[4])
    assert.equal(3, #seq)
    local seen = {}
    for i, m in ipairs(seq) do seen[i] = m end
    assert.same({ a, b, c }, seen)
    assert.equal("2", c:path())
    -- the k-th child of a named Sequential, as seq[k - 1] in PyTorch
    local named = nn.Sequential { { "fc", a }, { "act", b } }
    assert.is_true(rawequal(b, named[2]) and rawequal(b, named[-1]))
  end)

  it("chains its children in forward", function()
    local seq = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2), nn.Tanh())
    local x, y = T.empty { 5, 8 }, nil
    local names = S.trace(function() y = seq(x) end)
    assert.same({ "linear", "relu", "linear", "tanh" }, names)
    assert.same({ 5, 2 }, y.shape)
  end)

  it("appends, inserts (1-based) and extends, renaming as torch does", function()
    -- torch: seq = Sequential(Linear(2, 2), ReLU()); seq.insert(1, Tanh()) ->
    -- (0): Linear(in_features=2, out_features=2, bias=True) (1): Tanh() (2): ReLU()
    local relu = nn.ReLU()
    local seq = nn.Sequential(nn.Linear(2, 2), relu)
    seq:insert(2, nn.Tanh())
    assert.equal([[
Sequential(
  (0): Linear(in_features=2, out_features=2, bias=True)
  (1): Tanh()
  (2): ReLU()
)]], tostring(seq))
    assert.equal("2", relu:path())
    -- torch: seq.append(GELU()); seq.extend([SiLU()]) -> ['0', '1', '2', '3', '4']
    seq:append(nn.GELU()):extend { nn.SiLU() }
    assert.same({ "0", "1", "2", "3", "4" }, names_of(seq))
    assert.equal("SiLU()", tostring(seq[5]))
  end)

  it("rejects what add_module rejects", function()
    -- torch: TypeError int is not a Module subclass
    assert.error_matches(function() nn.Sequential(nn.ReLU(), 1) end,
                         "Sequential: argument 2 is not a Module (got number)", 1, true)
    assert.error_matches(function() nn.Sequential { { "a.b", nn.ReLU() } } end,
                         "can't be empty or contain \".\"", 1, true)
    assert.error_matches(function() nn.Sequential { { "forward", nn.ReLU() } } end,
                         "attribute 'forward' already exists", 1, true)
    assert.error_matches(function() nn.Sequential { fc = nn.ReLU() } end,
                         "has no order", 1, true)
  end)
end)

describe("nn.ModuleList", function()
  it("holds modules: append, extend, insert, #, 1-based indexing", function()
    local l = nn.ModuleList { nn.ReLU(), nn.Tanh() }
    assert.equal(2, #l)
    l:append(nn.GELU())
    l:extend(nn.Sequential(nn.SiLU(), nn.Mish()))
    l:insert(1, nn.ELU())
    assert.equal(6, #l)
    assert.same({ "0", "1", "2", "3", "4", "5" }, names_of(l))
    assert.equal("ELU(alpha=1.0)", tostring(l[1]))
    assert.equal("Mish()", tostring(l[-1]))
    assert.equal("1", l[2]:path())
    assert.equal(0, #nn.ModuleList())
  end)

  it("is not callable", function()
    -- torch: NotImplementedError Module [ModuleList] is missing the required "forward" function
    assert.error_matches(function() nn.ModuleList { nn.ReLU() }(T.empty { 1 }) end,
                         'Module [ModuleList] is missing the required "forward" function', 1, true)
  end)
end)

describe("nn.ModuleDict", function()
  it("keeps the order of {name, module} pairs; a plain table is sorted by name", function()
    local d = nn.ModuleDict { { "cls", nn.Linear(4, 10) }, { "reg", nn.Linear(4, 1) } }
    assert.same({ "cls", "reg" }, d:keys())
    assert.equal(2, #d)
    assert.equal("Linear(in_features=4, out_features=1, bias=True)", tostring(d.reg))
    assert.is_true(rawequal(d.cls, d:values()[1]))
    local seen = {}
    for i, pair in ipairs(d:items()) do seen[i] = pair[1] end
    assert.same({ "cls", "reg" }, seen)
    assert.is_true(d:contains("cls"))
    assert.is_false(d:contains("box"))
    -- torch keeps a dict's insertion order (['b', 'a']); a Lua table has none, so: sorted
    assert.same({ "a", "b" }, nn.ModuleDict({ b = nn.ReLU(), a = nn.Tanh() }):keys())
    d:update { { "box", nn.Linear(4, 4) } }
    assert.same({ "cls", "reg", "box" }, d:keys())
    d.extra = nn.ReLU()
    assert.same({ "cls", "reg", "box", "extra" }, d:keys())
  end)

  it("rejects names that hide an attribute, and is not callable", function()
    -- torch: KeyError "attribute 'train' already exists"
    assert.error_matches(function() nn.ModuleDict { train = nn.ReLU() } end,
                         "attribute 'train' already exists", 1, true)
    assert.error_matches(function() nn.ModuleDict { { "keys", nn.ReLU() } } end,
                         "attribute 'keys' already exists", 1, true)
    assert.error_matches(function() nn.ModuleDict()(T.empty { 1 }) end,
                         'Module [ModuleDict] is missing the required "forward" function', 1, true)
  end)
end)

describe("nested containers", function()
  -- torch: shared = nn.Linear(4, 4); nn.Sequential(OrderedDict([('features', nn.Sequential(
  -- nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2))),
  -- ('blocks', nn.ModuleList([shared, nn.Sequential(shared, nn.GELU())])), ('heads',
  -- nn.ModuleDict(OrderedDict([('cls', nn.Linear(4, 10)), ('reg', nn.Linear(4, 1))])))]))
  local function build()
    local shared = nn.Linear(4, 4)
    return nn.Sequential {
      { "features", nn.Sequential(nn.Conv2d(3, 8, 3, { padding = 1 }), nn.BatchNorm2d(8),
                                  nn.ReLU { inplace = true }, nn.MaxPool2d(2)) },
      { "blocks", nn.ModuleList { shared, nn.Sequential(shared, nn.GELU()) } },
      { "heads", nn.ModuleDict { { "cls", nn.Linear(4, 10) }, { "reg", nn.Linear(4, 1) } } },
    }, shared
  end

  it("print like torch's print(model), a shared module at each place", function()
    local expected = [[
Sequential(
  (features): Sequential(
    (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
    (2): ReLU(inplace=True)
    (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  )
  (blocks): ModuleList(
    (0): Linear(in_features=4, out_features=4, bias=True)
    (1): Sequential(
      (0): Linear(in_features=4, out_features=4, bias=True)
      (1): GELU(approximate='none')
    )
  )
  (heads): ModuleDict(
    (cls): Linear(in_features=4, out_features=10, bias=True)
    (reg): Linear(in_features=4, out_features=1, bias=True)
  )
)]]
    assert.equal(expected, tostring(build()))
  end)

  it("list a shared module and its parameters once", function()
    local model, shared = build()
    -- torch: named_modules: ['', 'features', 'features.0', 'features.1', 'features.2',
    -- 'features.3', 'blocks', 'blocks.0', 'blocks.1', 'blocks.1.1', 'heads', 'heads.cls',
    -- 'heads.reg']
    assert.same({ "", "features", "features.0", "features.1", "features.2", "features.3",
                  "blocks", "blocks.0", "blocks.1", "blocks.1.1", "heads", "heads.cls",
                  "heads.reg" }, S.module_names(model))
    -- torch: params: 315; named_parameters: features.0.weight (8, 3, 3, 3), features.0.bias (8,),
    -- features.1.weight (8,), features.1.bias (8,), blocks.0.weight (4, 4), blocks.0.bias (4,),
    -- heads.cls.weight (10, 4), heads.cls.bias (10,), heads.reg.weight (1, 4), heads.reg.bias (1,)
    assert.equal(315, model:num_parameters())
    assert.same({ { "features.0.weight", { 8, 3, 3, 3 } }, { "features.0.bias", { 8 } },
                  { "features.1.weight", { 8 } }, { "features.1.bias", { 8 } },
                  { "blocks.0.weight", { 4, 4 } }, { "blocks.0.bias", { 4 } },
                  { "heads.cls.weight", { 10, 4 } }, { "heads.cls.bias", { 10 } },
                  { "heads.reg.weight", { 1, 4 } }, { "heads.reg.bias", { 1 } } },
                S.params(model))
    assert.is_true(rawequal(shared, model.blocks[1]) and rawequal(shared, model.blocks[2][1]))
  end)

  it("train()/eval() flip training everywhere", function()
    local model = build()
    model:eval()
    for _, m in ipairs(model:modules()) do assert.is_false(m.training) end
    model:train()
    for _, m in ipairs(model:modules()) do assert.is_true(m.training) end
    model.heads:eval()
    assert.is_true(model.training)
    assert.is_false(model.heads.reg.training)
  end)
end)

describe("LeNet5 from DeepSpeed's flops profiler test", function()
  -- DeepSpeed tests/unit/profiling/flops_profiler/test_flops_profiler.py: LeNet5(n_classes)
  -- with feature_extractor, classifier Sequentials; forward flattens and applies F.softmax
  local F = nn.functional
  local LeNet5 = nn.Module:extend("LeNet5")
  function LeNet5:init(n_classes)
    self.feature_extractor = nn.Sequential(
      nn.Conv2d { in_channels = 1, out_channels = 6, kernel_size = 5, stride = 1 }, nn.Tanh(),
      nn.AvgPool2d { kernel_size = 2 },
      nn.Conv2d { in_channels = 6, out_channels = 16, kernel_size = 5, stride = 1 }, nn.Tanh(),
      nn.AvgPool2d { kernel_size = 2 },
      nn.Conv2d { in_channels = 16, out_channels = 120, kernel_size = 5, stride = 1 }, nn.Tanh())
    self.classifier = nn.Sequential(
      nn.Linear { in_features = 120, out_features = 84 }, nn.Tanh(),
      nn.Linear { in_features = 84, out_features = n_classes })
  end
  function LeNet5:forward(x)
    x = self.feature_extractor(x)
    x = x:flatten(1)
    local logits = self.classifier(x)
    return logits, F.softmax(logits, 1)
  end

  it("prints like torch's print(LeNet5(10)) and has 61706 parameters", function()
    local expected = [[
LeNet5(
  (feature_extractor): Sequential(
    (0): Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    (1): Tanh()
    (2): AvgPool2d(kernel_size=2, stride=2, padding=0)
    (3): Conv2d(6, 16, kernel_size=(5, 5), stride=(1, 1))
    (4): Tanh()
    (5): AvgPool2d(kernel_size=2, stride=2, padding=0)
    (6): Conv2d(16, 120, kernel_size=(5, 5), stride=(1, 1))
    (7): Tanh()
  )
  (classifier): Sequential(
    (0): Linear(in_features=120, out_features=84, bias=True)
    (1): Tanh()
    (2): Linear(in_features=84, out_features=10, bias=True)
  )
)]]
    local m = LeNet5(10)
    assert.equal(expected, tostring(m))
    assert.equal(61706, m:num_parameters())
    -- torch: LeNet5(10)(torch.empty(4, 1, 32, 32)) -> (4, 10) (4, 10)
    local logits, probs = m(T.empty { 4, 1, 32, 32 })
    assert.same({ 4, 10 }, logits.shape)
    assert.same({ 4, 10 }, probs.shape)
  end)

  it("gives DeepSpeed's reference counts for a 1024x1x32x32 batch", function()
    -- DeepSpeed's test_flops_profiler_in_inference expects flops 866076672, MACs 426516480, params
    -- 61706 (spec/models_spec.lua derives them by hand)
    local m = LeNet5(10)
    local t = S.count(m, function(mm) mm(T.empty { 1024, 1, 32, 32 }) end)
    assert.equal(866076672, t.flops)
    assert.equal(426516480, t.macs)
  end)
end)
