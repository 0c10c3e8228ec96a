-- report_scripts_spec.lua — the markdown and summary report scripts, and how a report script is chosen.
local build = dofile("spec/fixtures/reports/build.lua")
local report = require "prof.report"
local markdown = dofile("scripts/reports/markdown.lua")
local summary = dofile("scripts/reports/summary.lua")

-- Net(fc1 Linear 10->20, act ReLU, fc2 Linear 20->5) at batch 4, deepspeed conventions:
-- fc1 MACs 4·10·20 = 800, fc2 4·20·5 = 400, relu flops 4·20 = 80; params 220 + 105 = 325.
local function net()
  return build.profile({ type = "Net", params = 325, macs = 1200, flops = 2480, lat = 0.004,
    children = {
      { name = "fc1", type = "Linear", params = 220, macs = 800, flops = 1600, lat = 0.002 },
      { name = "act", type = "ReLU", params = 0, macs = 0, flops = 80, lat = 0.001 },
      { name = "fc2", type = "Linear", params = 105, macs = 400, flops = 800, lat = 0.001 },
    } })
end

describe("scripts/reports/markdown.lua", function()
  it("prints one table row per module with DeepSpeed's units and shares", function()
    local text = markdown(net(), {})
    assert.are.equal(table.concat({
      "### Net — flops profile",
      "",
      "device `cpu` · conventions `deepspeed` · params 325 · fwd MACs 1.2 KMACs · fwd FLOPs 2.48 K",
      "",
      "| module | type | params | % params | MACs | % MACs | FLOPs | bytes | fwd latency | % latency "
        .. "| bwd FLOPs | bwd latency |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      "| (model) | Net | 325 | 100% | 1.2 KMACs | 100% | 2.48 K | n/a | 4 ms | 100% | n/a | n/a |",
      "| &nbsp;&nbsp;fc1 | Linear | 220 | 67.69% | 800 MACs | 66.67% | 1.6 K | n/a | 2 ms | 50% | n/a | n/a |",
      "| &nbsp;&nbsp;act | ReLU | 0 | 0% | 0 MACs | 0% | 80 | n/a | 1 ms | 25% | n/a | n/a |",
      "| &nbsp;&nbsp;fc2 | Linear | 105 | 32.31% | 400 MACs | 33.33% | 800 | n/a | 1 ms | 25% | n/a | n/a |",
      "",
    }, "\n"), text)
  end)

  it("keeps depths below module_depth and says n/a where nothing was timed", function()
    local text = markdown(build.meta(net()), { module_depth = 1 })
    assert.matches("| (model) | Net | 325 | 100% | 1.2 KMACs | 100% | 2.48 K | n/a | n/a | n/a | n/a | n/a |",
      text, 1, true)
    assert.is_nil(text:find("fc1", 1, true))
  end)
end)

describe("scripts/reports/summary.lua", function()
  it("prints one line with training FLOPs estimated as (3 + r) x forward", function()
    local p = net()
    p.recompute_fwd_factor = 0.5
    -- 3.5 · 2480 = 8680
    assert.are.equal("Net: params 325 · fwd MACs 1.2 KMACs · fwd FLOPs 2.48 K · "
      .. "training FLOPs (3.5 x fwd) 8.68 K\n", summary(p))
  end)

  it("adds FLOPs per token and uses a measured backward when there is one", function()
    local p = net()
    p.tokens, p.bwd_flops = 8, 4960
    -- 2480 / 8 = 310 per token; 2480 + 4960 = 7440
    assert.are.equal("Net: params 325 · fwd MACs 1.2 KMACs · fwd FLOPs 2.48 K · FLOPs/token 310 · "
      .. "training FLOPs (measured) 7.44 K\n", summary(p))
  end)
end)

describe("prof.report", function()
  it("chooses the script from the format, else the output file's extension", function()
    assert.are.equal("json", report.format_for(nil, "out/p.json"))
    assert.are.equal("csv", report.format_for(nil, "p.csv"))
    assert.are.equal("markdown", report.format_for(nil, "p.md"))
    assert.are.equal("deepspeed", report.format_for(nil, "p.txt"))
    assert.are.equal("summary", report.format_for("summary", "p.json"))
  end)

  it("runs a user's report script given by path", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("return function(p, o) return p.modules[1].type .. ' ' .. o.top_modules end\n")
    f:close()
    os.rename(path, path .. ".lua")
    local text = report.render_profile(net(), { format = path .. ".lua", top_modules = 3 })
    os.remove(path .. ".lua")
    assert.are.equal("Net 3", text)
  end)

  it("names unknown formats and broken scripts", function()
    assert.has_error(function() report.render_profile(net(), { format = "yaml" }) end,
      "unknown report format 'yaml' (built in: deepspeed, json, csv, markdown, summary, roofline; "
        .. "or the path of a .lua report script)")
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write("return 42\n")
    f:close()
    assert.has_error(function() report.render_profile(net(), { format = path }) end,
      "report script " .. path .. " must return a function(profile, opts), got number")
    f = assert(io.open(path, "w"))
    f:write("return function() return {} end\n")
    f:close()
    package.loaded[path] = nil
    local ok, err = pcall(report.render_profile, net(), { format = path })
    os.remove(path)
    assert.is_false(ok)
    assert.matches("report script .* returned table instead of text", err)
  end)
end)
