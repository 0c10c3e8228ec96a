-- profile_consistency_spec.lua — the summary, the getters and the root row
-- of one profile say the same thing (measured backward in a FlopsProfiler window; a ruled module
-- that is also ignored).
local core = require "prof.core"
local config = require "prof.config"
local json = require "dkjson"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"
local render_json = dofile("scripts/reports/json.lua")

local tmp, rule_script

-- Blob: a leaf with a 4x4 weight that runs one matmul; its rule claims 1000 MACs, 3000 flops.
local Blob = nn.Module:extend("Blob")
function Blob:init() self.weight = nn.Parameter(T.ones({ 4, 4 })) end
function Blob:forward(x) return T.matmul(x, self.weight) end

local function model()
  T.manual_seed(3)
  return nn.Sequential(nn.Linear(4, 4), Blob())
end

-- One profiled forward (and backward) of a 2 x 4 batch; returns the profiler, stopped.
local function window(o)
  local p = prof.FlopsProfiler(o.model)
  p.conventions, p.rules = o.conventions, o.rules
  p:start_profile(o.ignore)
  local y = o.model(T.randn({ 2, 4 }))
  if o.backward then y:sum():backward() end
  p:stop_profile()
  return p
end

describe("one profile, one story", function()
  setup(function()
    tmp = run.tmpdir()
    rule_script = tmp .. "/blob_rule.lua"
    local f = assert(io.open(rule_script, "w"))
    f:write("return { Blob = function() return { macs = 1000, flops = 3000 } end }\n")
    f:close()
    T.set_default_device("cpu")
  end)
  teardown(function()
    run.rmdir_all(tmp)
    config.set(assert(core.load_config(nil, {})))
  end)

  it("a window around loss:backward() gives the JSON summary the root's backward", function()
    local p = window { model = model(), conventions = "exact", ignore = { "Blob" }, backward = true }
    local doc = json.decode(render_json(p:profile()))
    -- Blob is ignored (exact: out of every count). Linear(4,4)'s backward with an input that
    -- needs no gradient: grad_weight = grad_out^T @ x, 4x2 @ 2x4 = 32 MACs = 64 flops; grad_bias
    -- sums 2 rows of 4: 4 adds. 68 in all.
    assert.equal(68, doc.modules[1].bwd_flops)
    assert.equal(68, doc.bwd_flops)
    assert.is_number(doc.bwd_latency_s)
    assert.equal(doc.modules[1].bwd_latency_s, doc.bwd_latency_s)
    p:end_profile()
  end)

  describe("a module counted by a rule and named in ignore_modules", function()
    it("exact: leaves rows, params and every total, the rule's counts included", function()
      local p = window { model = model(), conventions = "exact", rules = { rule_script },
        ignore = { "Blob" } }
      local doc = json.decode(render_json(p:profile()))
      -- what is left: Linear(4,4) with bias on 2 rows: 32 MACs, 64 + 8 = 72 flops, 20 params
      assert.same({ 72, 32, 20 }, { p:get_total_flops(), p:get_total_macs(), p:get_total_params() })
      assert.same({ 72, 32, 20 }, { doc.fwd_flops, doc.fwd_macs, doc.params })
      assert.same({ 72, 32, 20 }, { doc.modules[1].flops, doc.modules[1].macs, doc.modules[1].params })
      assert.equal(2, #doc.modules)   -- no Blob row
      p:end_profile()
    end)

    it("deepspeed: hooks nothing on it, so no rule runs and its ops count for the parent", function()
      -- DeepSpeed gives an ignored module no hooks at all (not even MODULE_HOOK_MAPPING's
      -- analytic count): its functional calls fall into the parent's frame. Linear without bias
      -- 32 MACs + Blob's matmul 2x4 @ 4x4 = 32 MACs: 64 MACs, 128 flops; params all 36
      local p = window { model = model(), conventions = "deepspeed", rules = { rule_script },
        ignore = { "Blob" } }
      local doc = json.decode(render_json(p:profile()))
      assert.same({ 128, 64, 36 }, { p:get_total_flops(), p:get_total_macs(), p:get_total_params() })
      assert.same({ 128, 64, 36 }, { doc.fwd_flops, doc.fwd_macs, doc.params })
      assert.same({ 128, 64, 36 }, { doc.modules[1].flops, doc.modules[1].macs, doc.modules[1].params })
      assert.equal(2, #doc.modules)
      p:end_profile()
    end)

    it("not ignored, the rule's counts replace the module's ops", function()
      local p = window { model = model(), conventions = "exact", rules = { rule_script } }
      assert.same({ 72 + 3000, 32 + 1000, 36 },
        { p:get_total_flops(), p:get_total_macs(), p:get_total_params() })
      p:end_profile()
    end)
  end)
end)
