-- ignore_spec.lua — ignore lists: exact drops an ignored subtree; deepspeed hides the row, the parent gets its ops.
local env = require "spec.support.env"
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"

local F = nn.functional

-- Block: fc1 Linear(8, 16), act GELU, fc2 Linear(16, 8), then a relu of its own (not a child).
local Block = nn.Module:extend("Block")
function Block:init()
  self.fc1 = nn.Linear(8, 16)
  self.act = nn.GELU()
  self.fc2 = nn.Linear(16, 8)
end
function Block:forward(x)
  return F.relu(self.fc2(self.act(self.fc1(x))))
end

-- Net: block0, block1, head Linear(8, 4); input [2, 8].
local Net = nn.Module:extend("Net")
function Net:init()
  self.block0 = Block()
  self.block1 = Block()
  self.head = nn.Linear(8, 4)
end
function Net:forward(x)
  return self.head(self.block1(self.block0(x)))
end

--[[ By hand, for x [2, 8]:
  fc1   MACs 2·8·16 = 256   deepspeed 2·256 = 512   exact 512 + 2·16 bias = 544
  act   GELU of 32 values   deepspeed 32            exact 5·32 = 160
  fc2   MACs 2·16·8 = 256   deepspeed 512           exact 512 + 2·8 = 528
  relu  16 values (Block's own op)                  deepspeed 16, exact 16
  Block MACs 512            deepspeed 1072          exact 1248
  head  MACs 2·8·4 = 64     deepspeed 128           exact 128 + 8 = 136
  Net   MACs 1088           deepspeed 2272          exact 2632          params 2·280 + 36 = 596 ]]
local DS = { fc1 = 512, act = 32, fc2 = 512, relu = 16, block = 1072, head = 128, net = 2272 }
local EX = { fc1 = 544, act = 160, fc2 = 528, relu = 16, block = 1248, head = 136, net = 2632 }

-- One forward under the profiler; rows by path.
local function rows_of(conventions, ignore_list)
  local model = Net()
  local p = prof.FlopsProfiler(model)
  p.conventions = conventions
  p:start_profile(ignore_list)
  model(T.empty({ 2, 8 }))
  p:stop_profile()
  local rows = {}
  for _, m in ipairs(p:profile().modules) do rows[m.path] = m end
  p:end_profile()
  return rows
end

describe("ignore lists", function()
  env.on_meta(setup, teardown)

  it("count nothing away when empty (the hand derivation holds)", function()
    local ds, ex = rows_of("deepspeed", {}), rows_of("exact", {})
    assert.equal(DS.net, ds[""].flops)
    assert.equal(EX.net, ex[""].flops)
    assert.equal(1088, ex[""].macs)
    assert.equal(596, ex[""].params)
    assert.equal(DS.block, ds["block0"].flops)
    assert.equal(EX.block, ex["block0"].flops)
    assert.equal(EX.act, ex["block0.act"].flops)
  end)

  describe("under exact conventions", function()
    it("drop an ignored leaf from its row and every total", function()
      local r = rows_of("exact", { "GELU" })
      assert.is_true(r["block0.act"].hidden)
      assert.is_true(r["block1.act"].hidden)
      assert.equal(EX.net - 2 * EX.act, r[""].flops)            -- 2312
      assert.equal(EX.block - EX.act, r["block0"].flops)        -- 1088
      assert.equal(1088, r[""].macs)
    end)

    it("drop an ignored module's whole subtree, its own ops included", function()
      local r = rows_of("exact", { "block0" })
      for _, path in ipairs({ "block0", "block0.fc1", "block0.act", "block0.fc2" }) do
        assert.is_true(r[path].hidden, path)
      end
      assert.is_false(r["block1"].hidden)
      assert.equal(EX.net - EX.block, r[""].flops)              -- 1384
      assert.equal(1088 - 512, r[""].macs)
    end)

    it("prefix.* drops what is below the prefix, not the module itself", function()
      local r = rows_of("exact", { "block0.*" })
      assert.is_false(r["block0"].hidden)
      assert.is_true(r["block0.fc1"].hidden)
      assert.equal(EX.relu, r["block0"].flops)                  -- only its own relu is left
      assert.equal(EX.net - (EX.fc1 + EX.act + EX.fc2), r[""].flops)
    end)

    it("drops an ignored subtree's parameters from the totals too", function()
      local r = rows_of("exact", { "block0" })
      assert.equal(596 - 280, r[""].params)                     -- block0 holds 280 of the 596
    end)
  end)

  describe("under deepspeed conventions", function()
    it("hide the row and give an ignored module's own ops to its parent", function()
      local r = rows_of("deepspeed", { "GELU" })
      assert.is_true(r["block0.act"].hidden)
      assert.equal(DS.net, r[""].flops)                         -- the totals keep everything
      assert.equal(DS.block, r["block0"].flops)
      -- block0's own work (its total less its visible children) now holds the GELU too
      assert.equal(DS.relu + DS.act, r["block0"].flops - r["block0.fc1"].flops - r["block0.fc2"].flops)
    end)

    it("keep the children of an ignored module (DeepSpeed still hooks them)", function()
      local r = rows_of("deepspeed", { "block0" })
      assert.is_true(r["block0"].hidden)
      assert.is_false(r["block0.fc1"].hidden)
      assert.equal(DS.fc1, r["block0.fc1"].flops)
      assert.equal(DS.act, r["block0.act"].flops)
      assert.equal(DS.net, r[""].flops)
      -- block0's relu now runs in Net's own frame: Net less its visible rows
      local visible = DS.fc1 + DS.act + DS.fc2 + DS.block + DS.head
      assert.equal(DS.relu, r[""].flops - visible)
    end)

    it("leave the ignored rows out of DeepSpeed's text", function()
      local dir = run.tmpdir()
      prof.get_model_profile { model = Net(), input_shape = { 2, 8 }, conventions = "deepspeed",
                               ignore_modules = { "GELU" }, output_file = dir .. "/r.txt" }
      local text = run.read(dir .. "/r.txt")
      run.rmdir_all(dir)
      assert.truthy(env.has(text, "(fc1): Linear("))
      assert.falsy(env.has(text, "(act): GELU("))
    end)
  end)

  describe("name modules", function()
    -- every form below names exactly the two GELUs: exact totals lose 2 × 160
    local forms = {
      { "a class", { nn.GELU } },
      { "a type name", { "GELU" } },
      { "exact paths", { "block0.act", "block1.act" } },
      { "a Lua pattern", { "^block%d%.act$" } },
      { "the shipped computed list parameterless_leaves.lua", { "parameterless_leaves.lua" } },
      { "a script path returning a list", { "spec/fixtures/ignore/activations.lua" } },
    }
    for _, f in ipairs(forms) do
      it("by " .. f[1], function()
        local r = rows_of("exact", f[2])
        assert.equal(EX.net - 2 * EX.act, r[""].flops)
        assert.is_true(r["block1.act"].hidden)
        assert.is_false(r["block1.fc1"].hidden)
      end)
    end

    it("from the config key flops_profiler.ignore_modules", function()
      env.use_config({ 'flops_profiler.ignore_modules=["GELU"]', "flops_profiler.conventions=exact" })
      local flops = prof.get_model_profile { model = Net(), input_shape = { 2, 8 }, print_profile = false,
                                             as_string = false }
      env.use_config({})
      assert.equal(EX.net - 2 * EX.act, flops)
    end)
  end)

  describe("errors name the entry's index", function()
    local function err_of(list)
      local ok, err = pcall(rows_of, "exact", list)
      assert.is_false(ok)
      assert.is_nil(core.recorder())
      return err
    end

    -- Lua reads a pattern only as far as a match needs: "^block[" fails only on a path that
    -- starts with "block", so the matcher tries every pattern on the model's paths up front
    it("a pattern malformed after its first item is caught up front with its index", function()
      local e = err_of({ "GELU", "^block[" })
      assert.truthy(env.has(e, "ignore_modules[2]: invalid Lua pattern '^block[': malformed pattern"), e)
    end)

    it("a bad pattern, a missing script, a failing script, an entry of the wrong type", function()
      assert.truthy(env.has(err_of({ "GELU", "^[" }), "ignore_modules[2]: invalid Lua pattern '^['"))
      assert.truthy(env.has(err_of({ "no_such_list.lua" }), "ignore_modules[1]: script 'no_such_list.lua' not found"))
      local e = err_of({ "GELU", "head", "spec/fixtures/ignore/broken.lua" })
      assert.truthy(env.has(e, "ignore_modules[3]: script spec/fixtures/ignore/broken.lua failed"), e)
      assert.truthy(env.has(err_of({ "GELU", 42 }), "ignore_modules[2]: expected a class or a string, got number"))
    end)
  end)
end)
