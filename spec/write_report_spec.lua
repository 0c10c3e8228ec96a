-- write_report_spec.lua — core.write_report, the one writer of the deepspeed and json reports, on bad profile tables.
local core = require "prof.core"
local build = dofile("spec/fixtures/reports/build.lua")

local function profile()
  return build.profile({ type = "Net", params = 10, children = {
    { name = "fc", type = "Linear", params = 6 }, { name = "act", type = "ReLU" } } })
end

describe("core.write_report", function()
  it("writes both formats of a profile table, the text ending in DeepSpeed's last rule", function()
    local text = core.write_report("deepspeed", profile())
    assert.truthy(text:find("\n  %(fc%): Linear%(6 = 60%% Params, "))
    assert.equal("------------------------------------------------------------------------------\n",
      text:sub(-79))
    local json = core.write_report("json", profile())
    assert.truthy(json:find('"name": "fc"', 1, true))
    assert.equal("}\n", json:sub(-2))
  end)

  it("names the row and the field that is not what a report reads", function()
    local p = profile()
    p.modules[2].params = 1.5
    assert.has_error(function() core.write_report("json", p) end,
      "profile.modules[2].params is 1.5, not a count")
    p = profile()
    p.modules[3].type = {}
    assert.has_error(function() core.write_report("deepspeed", p) end,
      "profile.modules[3].type is a table, not a string")
    p = profile()
    p.modules[3] = 7
    assert.has_error(function() core.write_report("json", p) end,
      "profile.modules[3] is a number, not a module row")
  end)

  it("refuses rows out of pre-order, naming the module and its parent", function()
    local p = profile()
    p.modules[2].parent = 3
    local ok, err = pcall(core.write_report, "json", p)
    assert.is_false(ok)
    assert.truthy(err:find("module 1 names 2 as its parent", 1, true), err)
  end)

  it("raises emit's own error, at once", function()
    local calls = 0
    local wide = { type = "Seq", children = {} }
    for i = 1, 2000 do wide.children[i] = { name = tostring(i), type = "ReLU" } end
    assert.has_error(function()
      core.write_report("json", build.profile(wide), { emit = function()
        calls = calls + 1
        error("disk full", 0)
      end })
    end, "disk full")
    assert.equal(1, calls)
  end)

  it("knows two formats", function()
    assert.has_error(function() core.write_report("yaml", profile()) end)
  end)
end)
