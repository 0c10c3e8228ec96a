-- nn_module_spec.lua — nn.Module's children and parameters: assignment, replacement, removal, order.
local T = require "prof.tensor"
local nn = require "prof.nn"
local prof = require "prof"
local errors = require "prof.util.errors"
local S = require "spec.nn_support"

local names_of = S.child_names

-- Net > stem = Linear(4, 4), block = Block > (fc = Linear(4, 4), act = ReLU), head = Linear(4, 2)
local Block = nn.Module:extend("Block")
function Block:init()
  self.fc = nn.Linear(4, 4)
  self.act = nn.ReLU()
end
function Block:forward(x) return self.act(self.fc(x)) end

local Net = nn.Module:extend("Net")
function Net:init()
  self.stem = nn.Linear(4, 4)
  self.block = Block()
  self.head = nn.Linear(4, 2)
end
function Net:forward(x) return self.head(self.block(self.stem(x))) end

describe("nn.Module replacing a child", function()
  it("gives the new child the old one's name, parent, place and path", function()
    local m = Net()
    local old, new = m.block.fc, nn.Linear(5, 4)
    assert.equal("block.fc", old:path())
    m.block.fc = new
    assert.is_true(rawequal(new, m.block.fc))
    assert.equal("block.fc", new:path())
    assert.equal("", old:path())          -- the old child left its place: a root of its own
    assert.same({ "fc", "act" }, names_of(m.block))
    -- torch 1.13 (m.block.fc = nn.Linear(5, 4) on the same Net): named_modules
    -- ['', 'stem', 'block', 'block.fc', 'block.act', 'head'], named_parameters stem.weight (4, 4),
    -- stem.bias (4,), block.fc.weight (4, 5), block.fc.bias (4,), head.weight (2, 4), head.bias (2,)
    assert.same({ "", "stem", "block", "block.fc", "block.act", "head" }, S.module_names(m))
    assert.same({ { "stem.weight", { 4, 4 } }, { "stem.bias", { 4 } },
                  { "block.fc.weight", { 4, 5 } }, { "block.fc.bias", { 4 } },
                  { "head.weight", { 2, 4 } }, { "head.bias", { 2 } } }, S.params(m))
  end)

  -- The replaced Linear(5, 4) gets the stem's [2, 4] output: its error must name block.fc, not
  -- blame the model, both in a plain call and under the profiler (which has its own path table).
  local WANT = "in module 'block.fc' (Linear): linear: input [2, 4] does not match weight [4, 5]"

  it("makes an error inside the new child name its path", function()
    local m = Net()
    m.block.fc = nn.Linear(5, 4)
    local ok, err = xpcall(m, errors.with_module_context, T.empty { 2, 4 })
    assert.is_false(ok)
    assert.equal(1, err:find(WANT, 1, true), err)
  end)

  it("makes an error inside the new child name its path under the profiler", function()
    local m = Net()
    m.block.fc = nn.Linear(5, 4)
    local ok, err = pcall(prof.get_model_profile, { model = m, input_shape = { 2, 4 },
      print_profile = false })
    assert.is_false(ok)
    assert.truthy(err:find(WANT, 1, true), err)
  end)

  it("keeps a shared child at its first place when another place takes it", function()
    local m = Net()
    m.block.fc = m.stem                    -- tied, as lm_head.weight is to the embedding
    assert.equal("stem", m.stem:path())
    assert.same({ "", "stem", "block", "block.act", "head" }, S.module_names(m))
  end)

  it("refuses a value that is neither a module nor nil, as torch does", function()
    local m = Net()
    -- torch: cannot assign 'int' as child module 'act' (torch.nn.Module or None expected)
    local ok, err = pcall(function() m.block.act = 3 end)
    assert.is_false(ok)
    assert.truthy(err:find("nn_module_spec.lua:%d+: cannot assign 'number' as child module 'act' "
      .. "%(nn.Module or nil expected%)"), err)
    assert.equal("ReLU", m.block.act.__name)
  end)
end)

describe("nn.Module removing a child", function()
  it("drops it from every listing, and re-adding lists it once, last", function()
    local m = Net()
    local stem = m.stem
    m.stem = nil
    assert.is_nil(m.stem)
    assert.equal("", stem:path())
    assert.same({ "block", "head" }, names_of(m))
    m.stem = stem
    -- torch: del m.stem; m.stem = stem -> named_children ['block', 'head', 'stem']
    assert.same({ "block", "head", "stem" }, names_of(m))
    assert.same({ "", "block", "block.fc", "block.act", "head", "stem" }, S.module_names(m))
    assert.equal("stem", stem:path())
    assert.equal(2 * (16 + 4) + 2 * 4 + 2, m:num_parameters())   -- each Linear once
  end)

  it("takes nil for a name that holds nothing", function()
    local m = Net()
    m.nothing = nil
    assert.same({ "stem", "block", "head" }, names_of(m))
  end)
end)

describe("nn.Module parameters", function()
  it("replace in place, are removed by nil, and go last when re-added", function()
    local lin = nn.Linear(3, 2)
    local tied = nn.Parameter(T.empty { 2, 3 })
    lin.weight = tied
    assert.is_true(rawequal(tied, lin.weight))
    assert.same({ { "weight", { 2, 3 } }, { "bias", { 2 } } }, S.params(lin))
    lin.weight = nil
    assert.is_nil(lin.weight)
    assert.same({ { "bias", { 2 } } }, S.params(lin))
    lin.weight = tied
    assert.same({ { "bias", { 2 } }, { "weight", { 2, 3 } } }, S.params(lin))
    lin:register_parameter("bias", nil)
    assert.same({ { "weight", { 2, 3 } } }, S.params(lin))
  end)

  it("refuse a tensor that is not a parameter, as torch does", function()
    local lin = nn.Linear(3, 2)
    -- torch: cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None
    -- expected)
    local ok, err = pcall(function() lin.weight = T.empty { 2, 3 } end)
    assert.is_false(ok)
    assert.truthy(err:find("cannot assign 'Tensor' as parameter 'weight' (nn.Parameter or nil "
      .. "expected)", 1, true), err)
    assert.same({ 2, 3 }, lin.weight.shape)
  end)

  it("switch kinds: a module over a parameter's name leaves the parameters", function()
    local m = nn.Module:new()
    m.w = nn.Parameter(T.empty { 2 })
    m.w = nn.ReLU()
    assert.same({}, S.params(m))
    assert.same({ "w" }, names_of(m))
    m.w = nn.Parameter(T.empty { 3 })
    assert.same({ { "w", { 3 } } }, S.params(m))
    assert.same({}, names_of(m))
  end)
end)

describe("nn.Module order after replacements and removals", function()
  it("matches torch's named_modules and named_parameters", function()
    local Model = nn.Module:extend("Model")
    function Model:init()
      self.scale = nn.Parameter(T.empty { 3 })
      self.a = nn.Linear(2, 3)
      self.b = nn.ReLU()
      self.c = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
      self.shift = nn.Parameter(T.empty { 3 })
    end
    local m = Model()
    m.b = nn.Linear(3, 3)                         -- replace a child: keeps its place
    m.a = nil                                     -- torch: del m.a
    m.a = nn.Linear(2, 5)                         -- re-added: last
    m.scale = nn.Parameter(T.empty { 7 })         -- replace a parameter: keeps its place
    m.shift = nil                                 -- torch: del m.shift
    m.shift = nn.Parameter(T.empty { 2 })         -- re-added: last
    -- torch's print(m) at this point (with the class named Model)
    assert.equal([[
Model(
  (b): Linear(in_features=3, out_features=3, bias=True)
  (c): Sequential(
    (0): Linear(in_features=3, out_features=4, bias=True)
    (1): ReLU()
  )
  (a): Linear(in_features=2, out_features=5, bias=True)
)]], tostring(m))
    m.b.bias = nil                                -- torch: del m.b.bias
    -- Obtained by running the same steps on torch 1.13 (/usr/bin/python3 on the build machine):
    --   [n for n, _ in m.named_modules()]  -> ['', 'b', 'c', 'c.0', 'c.1', 'a']
    --   [(n, tuple(p.shape)) for n, p in m.named_parameters()] -> [('scale', (7,)),
    --   ('shift', (2,)), ('b.weight', (3, 3)), ('c.0.weight', (4, 3)), ('c.0.bias', (4,)),
    --   ('a.weight', (5, 2)), ('a.bias', (5,))]
    assert.same({ "", "b", "c", "c.0", "c.1", "a" }, S.module_names(m))
    assert.same({ { "scale", { 7 } }, { "shift", { 2 } }, { "b.weight", { 3, 3 } },
                  { "c.0.weight", { 4, 3 } }, { "c.0.bias", { 4 } }, { "a.weight", { 5, 2 } },
                  { "a.bias", { 5 } } }, S.params(m))
  end)
end)

describe("nn.Module instances", function()
  local module = require "prof.nn.module"

  local function raw_keys(t)
    local keys = {}
    for k in next, t do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    return keys
  end

  it("hold no slot or order table until they have a child, parameter or buffer", function()
    -- a leaf of a million-module model: its flags and where it sits, nothing else
    local relu = nn.ReLU()
    local seq = nn.Sequential(relu)
    assert.same({ "_name", "_parent", "inplace", "training" }, raw_keys(relu))
    assert.same({ "_modules", "_name", "_parent", "_slots", "training" },
                raw_keys(nn.Sequential(seq)[1]))
    assert.same({}, module.order(relu, "_params"))
    assert.same({}, module.order(relu, "_modules"))
    assert.has_error(function() module.order(relu, "_params")[1] = "x" end,
      "nn.Module: the shared empty list was written")
    -- the first parameter makes the leaf its own slots and list; reads still reach the class
    local lin = nn.Linear(2, 2)
    assert.same({ "_params", "_slots", "in_features", "out_features", "training" }, raw_keys(lin))
    assert.same({ "weight", "bias" }, module.order(lin, "_params"))
    assert.equal("Linear", lin.__name)
    assert.equal("function", type(relu.forward))
  end)

  it("are modules; classes, plain tables and tensors are not", function()
    assert.is_true(module.is_module(nn.ReLU()))
    assert.is_true(module.is_module(nn.Sequential()))
    assert.is_false(module.is_module(nn.ReLU))
    assert.is_false(module.is_module({ _modules = {} }))
    assert.is_false(module.is_module(setmetatable({}, { __index = nn.ReLU })))
    assert.is_false(module.is_module("ReLU"))
  end)
end)
