-- rule_api_spec.lua — one rule API. What a rule receives in ctx is what README
-- documents, and the shipped rules (scripts/rules/) use it and nothing else.
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"

local Fused = nn.Module:extend("Fused")
function Fused:forward(x) return x end

local tmp, seen

describe("the flop-rule API", function()
  setup(function()
    tmp = run.tmpdir()
    T.set_default_device("meta")
  end)
  teardown(function() run.rmdir_all(tmp) end)

  it("gives a rule ctx = {conventions, path, type, bytes}, and takes bytes_read / bytes_written", function()
    local rule = tmp .. "/fused.lua"
    local f = assert(io.open(rule, "w"))
    f:write([[
return { Fused = function(module, inputs, output, ctx)
  _G.rule_api_seen = ctx
  return { macs = 1, flops = 2, bytes_read = ctx.bytes(inputs[1]) + ctx.bytes(nil), bytes_written = ctx.bytes(output) }
end }
]])
    f:close()
    for _, conv in ipairs({ "exact", "deepspeed" }) do
      local model = nn.Sequential(nn.Linear(4, 4), Fused())
      local p = prof.FlopsProfiler(model)
      p.conventions, p.rules = conv, { rule }
      p:start_profile()
      model(T.empty({ 2, 4 }))
      p:stop_profile()
      seen = _G.rule_api_seen
      _G.rule_api_seen = nil
      assert.equal(conv, seen.conventions)
      assert.equal("1", seen.path)
      assert.equal("Fused", seen.type)
      local keys = {}
      for k in pairs(seen) do keys[#keys + 1] = k end
      table.sort(keys)
      assert.same({ "bytes", "conventions", "path", "type" }, keys)
      -- float32 [2, 4]: 8 elements x 4 bytes read, and as many written
      local fused = p:profile().modules[3]
      assert.same({ 1, 2, 64 }, { fused.macs, fused.flops, fused.bytes })
      p:end_profile()
    end
  end)

  it("is what README documents", function()
    local readme = assert(run.read(run.ROOT .. "/README.md"))
    local text = readme:match("%*%*Flop rules%*%*(.-)\n\n"):gsub("%s+", " ")
    assert.truthy(text:find("return {macs=, flops=, bytes_read=, bytes_written=} end}", 1, true), text)
    for _, k in ipairs({ "conventions", "path", "type", "bytes(t)" }) do
      assert.truthy(text:find("`" .. k .. "`", 1, true), k)
    end
  end)

  it("is the only one the shipped rules use (no core.recorder(), no private byte tables)", function()
    local src = assert(run.read(run.ROOT .. "/scripts/rules/megatron.lua"))
    assert.is_nil(src:find("recorder", 1, true))
    assert.is_nil(src:find("require", 1, true))
    assert.truthy(src:find("ctx.conventions", 1, true))
    assert.truthy(src:find("ctx.bytes(", 1, true))
  end)
end)
