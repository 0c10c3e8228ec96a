-- json_profile_spec.lua — the "profrun.profile/1" JSON of the README's "Reports": profrun's and the C core's.
local json = require "dkjson"
local run = require "spec.support.run"
local prof = require "prof"
local core = require "prof.core"
local config = require "prof.config"
local report = require "prof.report"
local models = require "prof.models"
local bert = require "prof.models.bert"

local NULL = json.null
local CONFIG = run.FIXTURES .. "/deepspeed_meta.json"   -- deepspeed conventions, device meta

-- The README's "JSON profile": the summary keys and each module's keys.
local SUMMARY_KEYS = {
  "device", "conventions", "world_size", "dp_size", "mp_size", "batch_size", "params",
  "params_model", "fwd_macs", "fwd_flops", "fwd_flops_model", "bwd_flops", "fwd_latency_s",
  "bwd_latency_s", "step_latency_s", "iter_latency_s", "samples_per_s",
}
local MODULE_KEYS = {
  "id", "parent", "name", "type", "depth", "params", "macs", "flops", "fwd_latency_s",
  "bwd_latency_s", "calls",
}
-- On meta nothing runs and there is no engine: these are "not measured".
local NULL_ON_META = {
  "batch_size", "bwd_flops", "fwd_latency_s", "bwd_latency_s", "step_latency_s",
  "iter_latency_s", "samples_per_s",
}

local function decode(text)
  local doc, _, err = json.decode(text, 1, NULL)
  assert(doc, err)
  return doc
end

-- profrun CONFIG script with output_file=<tmp>/p.json -> the decoded document.
local function profile_via_cli(script)
  local tmp = run.tmpdir()
  local path = tmp .. "/p.json"
  local r = run.profrun({ "--set", "flops_profiler.output_file=" .. path, CONFIG,
    run.FIXTURES .. "/" .. script })
  local text = run.read(path)
  run.rmdir_all(tmp)
  assert.equal(0, r.code, r.stderr)
  assert.equal("", r.stdout)
  return decode(assert(text, "no output file"))
end

-- The schema: keys, ids, parents, pre-order, dotted names, depths, totals.
local function check_schema(doc)
  assert.equal("profrun.profile/1", doc.schema)
  for _, k in ipairs(SUMMARY_KEYS) do
    assert.is_not_nil(doc[k], "summary key " .. k .. " missing")
  end
  local mods = doc.modules
  assert.is_true(#mods > 0)
  local chain = {}                 -- ancestors of the previous module, root first (pre-order)
  for i, m in ipairs(mods) do
    for _, k in ipairs(MODULE_KEYS) do
      assert.is_not_nil(m[k], "module " .. i .. ": key " .. k .. " missing")
    end
    assert.equal(i - 1, m.id)
    if i == 1 then
      assert.equal(NULL, m.parent)
      assert.equal("", m.name)
      assert.equal(0, m.depth)
    else
      assert.equal("number", type(m.parent))
      assert.is_true(m.parent < m.id)
      -- pre-order: the parent is the previous module or one of its ancestors
      while #chain > 0 and chain[#chain] ~= m.parent do chain[#chain] = nil end
      assert.equal(m.parent, chain[#chain], "module " .. m.name .. " is out of pre-order")
      local p = mods[m.parent + 1]
      assert.equal(p.depth + 1, m.depth)
      local last = m.name:match("([^.]+)$")
      assert.equal(p.name == "" and last or p.name .. "." .. last, m.name)
    end
    chain[#chain + 1] = m.id
  end
  -- the root's totals are the summary's
  local root = mods[1]
  assert.equal(doc.params, root.params)
  assert.equal(doc.fwd_macs, root.macs)
  assert.equal(doc.fwd_flops, root.flops)
  assert.equal(doc.params * doc.mp_size, doc.params_model)
  assert.equal(doc.fwd_flops * doc.mp_size, doc.fwd_flops_model)
end

-- "macs/flops/params are inclusive of descendants": a parent holds at least the sum of its
-- children (no module of these models is shared, so the sum cannot count one twice).
local function check_inclusive(doc)
  local children = {}
  for _, m in ipairs(doc.modules) do
    children[m.id] = {}
    if m.parent ~= NULL then table.insert(children[m.parent], m) end
  end
  for _, m in ipairs(doc.modules) do
    for _, k in ipairs({ "params", "macs", "flops" }) do
      local sum = 0
      for _, c in ipairs(children[m.id]) do sum = sum + c[k] end
      assert.is_true(m[k] >= sum, m.name .. ": " .. k .. " " .. m[k] .. " < children's " .. sum)
    end
  end
end

local function check_meta_nulls(doc)
  assert.equal("meta", doc.device)
  for _, k in ipairs(NULL_ON_META) do assert.equal(NULL, doc[k], k) end
  for _, m in ipairs(doc.modules) do
    assert.equal(NULL, m.fwd_latency_s)
    assert.equal(NULL, m.bwd_latency_s)
  end
end

local function names_in_preorder(model)
  local out = {}
  for i, pair in ipairs(model:named_modules()) do out[i] = pair[1] end
  return out
end

local function field(mods, k)
  local out = {}
  for i, m in ipairs(mods) do out[i] = m[k] end
  return out
end

describe("JSON profile", function()
  describe("from profrun, LeNet5 at 1024x1x32x32 (deepspeed conventions, meta)", function()
    local doc
    setup(function() doc = profile_via_cli("lenet5_golden.lua") end)

    it("follows the schema", function()
      check_schema(doc)
      check_inclusive(doc)
      check_meta_nulls(doc)
      assert.equal("deepspeed", doc.conventions)
      assert.equal(1, doc.world_size)
      assert.equal(1, doc.dp_size)
      assert.equal(1, doc.mp_size)
    end)

    it("lists the modules as PyTorch's named_modules() does, with PyTorch's class names", function()
      assert.same({
        "", "feature_extractor",
        "feature_extractor.0", "feature_extractor.1", "feature_extractor.2", "feature_extractor.3",
        "feature_extractor.4", "feature_extractor.5", "feature_extractor.6", "feature_extractor.7",
        "classifier", "classifier.0", "classifier.1", "classifier.2",
      }, field(doc.modules, "name"))
      assert.same({
        "LeNet5", "Sequential", "Conv2d", "Tanh", "AvgPool2d", "Conv2d", "Tanh", "AvgPool2d",
        "Conv2d", "Tanh", "Sequential", "Linear", "Tanh", "Linear",
      }, field(doc.modules, "type"))
      for _, m in ipairs(doc.modules) do assert.equal(1, m.calls) end
    end)

    it("holds DeepSpeed's numbers (derivations in models_spec.lua)", function()
      assert.equal(61706, doc.params)
      assert.equal(426516480, doc.fwd_macs)
      assert.equal(866076672, doc.fwd_flops)
      local m = doc.modules
      -- Conv2d(1, 6, 5): 25*1*6*1024*784 MACs; flops 2*MACs + bias 6*1024*784 = 4,816,896
      assert.equal(156, m[3].params)
      assert.equal(120422400, m[3].macs)
      assert.equal(2 * 120422400 + 4816896, m[3].flops)
      -- Linear(84, 10): 1024*84*10 MACs, bias not counted
      assert.equal(850, m[14].params)
      assert.equal(860160, m[14].macs)
      assert.equal(2 * 860160, m[14].flops)
      -- LeNet5.forward's functional softmax belongs to the root alone: 1024*10 flops
      assert.equal(10240, m[1].flops - m[2].flops - m[11].flops)
    end)
  end)

  describe("from profrun, BertForSequenceClassification batch 4 seq 128", function()
    local doc
    setup(function() doc = profile_via_cli("bert.lua") end)

    it("follows the schema", function()
      check_schema(doc)
      check_meta_nulls(doc)
    end)

    it("has inclusive counts: encoder.layer (ModuleList, never called) holds its layers", function()
      -- DeepSpeed's get_module_macs sums a module's children recursively, so its ModuleList shows
      -- the 12 layers' 12 * 3,724,541,952 = 44,694,503,424 MACs; the schema makes every module's
      -- macs/flops inclusive of its descendants.
      check_inclusive(doc)
      for _, m in ipairs(doc.modules) do
        if m.name == "bert.encoder.layer" then assert.equal(44694503424, m.macs) end
      end
    end)

    it("has transformers' modules and class names", function()
      -- per BertLayer: BertLayer, BertAttention, BertSelfAttention (+ query, key, value, dropout),
      -- BertSelfOutput (+ dense, LayerNorm, dropout), BertIntermediate (+ dense, GELUActivation),
      -- BertOutput (+ dense, LayerNorm, dropout) = 18; x12 = 216. Around them: the root, bert,
      -- embeddings (+ 3 Embedding, LayerNorm, dropout), encoder, encoder.layer (ModuleList),
      -- pooler (+ dense, activation), dropout, classifier = 15. Total 231.
      assert.equal(231, #doc.modules)
      local count = {}
      for _, m in ipairs(doc.modules) do count[m.type] = (count[m.type] or 0) + 1 end
      assert.same({
        BertForSequenceClassification = 1, BertModel = 1, BertEmbeddings = 1, Embedding = 3,
        LayerNorm = 25, Dropout = 38, BertEncoder = 1, ModuleList = 1, BertLayer = 12,
        BertAttention = 12, BertSelfAttention = 12, BertSelfOutput = 12, BertIntermediate = 12,
        GELUActivation = 12, BertOutput = 12, BertPooler = 1, Tanh = 1, Linear = 74,
      }, count)
      local by_name = {}
      for _, m in ipairs(doc.modules) do by_name[m.name] = m end
      assert.equal("BertSelfAttention", by_name["bert.encoder.layer.11.attention.self"].type)
      assert.equal("Linear", by_name["bert.encoder.layer.0.attention.self.query"].type)
      -- root 0, bert 1, encoder 2, layer 3, layer.0 4, attention 5, self 6, query 7
      assert.equal(7, by_name["bert.encoder.layer.0.attention.self.query"].depth)
      assert.equal("Linear", by_name["classifier"].type)
    end)

    it("holds the derived totals (models_spec.lua)", function()
      assert.equal(109483778, doc.params)
      assert.equal(44696868864, doc.fwd_macs)
      assert.equal(89471201280, doc.fwd_flops)
    end)
  end)

  describe("the C core's writer (S:profile_json) and the Lua json report agree", function()
    teardown(function() config.set(assert(core.load_config(nil, {}))) end)

    -- Profiles in-process and decodes both documents from the same session: FlopsProfiler keeps
    -- its core state in p.S between stop_profile and end_profile.
    local function both(model, args, conventions, ignore, rules)
      config.set(assert(core.load_config(nil, { "flops_profiler.conventions=" .. conventions })))
      local p = prof.FlopsProfiler(model)
      p.rules = rules
      p:start_profile(ignore)
      model(table.unpack(args))
      p:stop_profile()
      local lua_doc = decode(report.render_profile(p:profile(), { format = "json" }))
      local core_doc = decode(p.S:profile_json({ device = "meta" }))
      p:end_profile()
      return lua_doc, core_doc
    end

    local function agree(lua_doc, core_doc, model)
      assert.equal("profrun.profile/1", core_doc.schema)
      for _, k in ipairs({ "device", "conventions", "mp_size", "params", "params_model", "fwd_macs",
        "fwd_flops", "fwd_flops_model" }) do
        assert.equal(lua_doc[k], core_doc[k], k)
      end
      assert.equal(#lua_doc.modules, #core_doc.modules)
      for i, a in ipairs(lua_doc.modules) do
        local b = core_doc.modules[i]
        for _, k in ipairs({ "id", "parent", "name", "type", "depth", "params", "macs", "flops",
          "calls" }) do
          assert.equal(a[k], b[k], "module " .. i .. " (" .. a.name .. "): " .. k)
        end
      end
      assert.same(names_in_preorder(model), field(core_doc.modules, "name"))
      check_schema(core_doc)
      check_schema(lua_doc)
    end

    it("on LeNet5, under both conventions", function()
      for _, conv in ipairs({ "deepspeed", "exact" }) do
        local model = models.lenet5()
        local a, b = both(model, models.input("lenet5", { batch = 16 }), conv)
        agree(a, b, model)
        check_inclusive(b)
        assert.equal(conv, b.conventions)
        assert.equal(426516480 // 64, b.fwd_macs)      -- DeepSpeed's 1024-batch MACs / 64
      end
    end)

    -- LeNet5: conv 156 + conv 2,416 + conv 48,120 (16 -> 120, 5x5) + Linear(120, 84) 10,164 +
    -- Linear(84, 10) 850 = 61,706 params. Ignoring Linear under exact drops the two Linear rows
    -- and their params (61,706 - 11,014 = 50,692); under deepspeed only the rows go.
    it("on LeNet5 with Linear ignored, under both conventions", function()
      local want = { exact = 50692, deepspeed = 61706 }
      local plain = {}
      for _, conv in ipairs({ "deepspeed", "exact" }) do
        plain[conv] = select(2, both(models.lenet5(), models.input("lenet5", { batch = 16 }), conv))
      end
      for _, conv in ipairs({ "deepspeed", "exact" }) do
        local model = models.lenet5()
        local a, b = both(model, models.input("lenet5", { batch = 16 }), conv, { "Linear" })
        assert.equal(want[conv], b.params)
        assert.equal(want[conv], a.params)
        assert.equal(#plain[conv].modules - 2, #b.modules)
        for i, m in ipairs(a.modules) do assert.equal(m.params, b.modules[i].params, m.name) end
        -- exact: the Linear layers' work leaves the totals; deepspeed: it counts for the parent
        if conv == "exact" then
          assert.is_true(b.fwd_flops < plain[conv].fwd_flops)
        else
          assert.equal(plain[conv].fwd_flops, b.fwd_flops)
        end
      end
    end)

    -- spec/fixtures/rules/linear_constant.lua counts every Linear call as a constant; a module that is
    -- both ruled and ignored follows the ignore semantics: the rule never runs.
    it("with a rule on a type that is also ignored, under both conventions", function()
      local rule = { "spec/fixtures/rules/linear_constant.lua" }
      for _, conv in ipairs({ "deepspeed", "exact" }) do
        local input = models.input("lenet5", { batch = 16 })
        local _, ignored = both(models.lenet5(), input, conv, { "Linear" })
        local _, ruled = both(models.lenet5(), input, conv, nil, rule)
        local a, b = both(models.lenet5(), input, conv, { "Linear" }, rule)
        assert.are_not.equal(ignored.fwd_flops, ruled.fwd_flops)   -- the rule does count
        assert.equal(ignored.fwd_flops, b.fwd_flops)
        assert.equal(ignored.fwd_macs, b.fwd_macs)
        assert.equal(ignored.params, b.params)
        assert.equal(a.fwd_flops, b.fwd_flops)
      end
    end)

    it("on BERT", function()
      local model = bert.build()
      local a, b = both(model, bert.input({ batch = 4, seq = 128 }), "deepspeed")
      agree(a, b, model)
      assert.equal(44696868864, b.fwd_macs)
      assert.equal(89471201280, b.fwd_flops)
    end)
  end)
end)
