-- module_columns_spec.lua — S:module_columns: a session's modules as pre-order arrays, with the
-- values S:modules gives row by row and the counts derived by hand.
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"

local function profiled()
  local model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
  local fp = prof.FlopsProfiler(model)
  fp:start_profile()
  model(T.empty({ 2, 4 }, { device = "meta" }))
  fp:stop_profile()
  return fp
end

describe("S:module_columns", function()
  it("gives each asked field as an array over the modules in pre-order", function()
    local fp = profiled()
    local c = fp.S:module_columns { "id", "parent", "name", "type", "depth", "params", "fwd.macs", "fwd.calls" }
    assert.are.same({ "", "0", "1" }, c.name)
    assert.are.same({ "Sequential", "Linear", "ReLU" }, c.type)
    assert.are.same({ 0, 1, 1 }, c.depth)
    assert.are.same({ false, c.id[1], c.id[1] }, c.parent)
    -- Linear(4, 3): 12 weights + 3 biases; on a [2, 4] input 2 * 4 * 3 = 24 MACs
    assert.are.same({ 15, 15, 0 }, c.params)
    assert.are.same({ 24, 24, 0 }, c["fwd.macs"])
    assert.are.same({ 1, 1, 1 }, c["fwd.calls"])
    fp:end_profile()
  end)

  it("agrees with S:modules row by row on every count of every phase", function()
    local fp = profiled()
    local names = { "id", "rule", "ignored", "hidden", "params_counted" }
    for _, phase in ipairs { "fwd", "bwd", "step" } do
      for _, k in ipairs { "calls", "macs", "flops", "bytes_read", "bytes_written", "self_macs",
                           "self_flops", "self_bytes_read", "self_bytes_written", "time_ns" } do
        names[#names + 1] = phase .. "." .. k
      end
    end
    local c, rows = fp.S:module_columns(names), fp.S:modules()
    for i, r in ipairs(rows) do
      for _, n in ipairs(names) do
        local phase, k = n:match("^(%a+)%.(.+)$")
        local want = phase and r[phase][k] or r[n]
        assert.are.equal(want, c[n][i], n .. " of module " .. i)
      end
    end
    fp:end_profile()
  end)

  it("refuses a column it does not know, naming it", function()
    local fp = profiled()
    assert.has_error(function() fp.S:module_columns { "fwd.mac" } end,
      "module_columns: unknown column 'fwd.mac'")
    assert.has_error(function() fp.S:module_columns { "nope" } end,
      "module_columns: unknown column 'nope'")
    fp:end_profile()
  end)

  it("gives a slice of positions first .. first + count - 1, clipped at the end", function()
    local fp = profiled()
    local c = fp.S:module_columns({ "name", "depth" }, 2, 5)
    assert.are.same({ "0", "1" }, c.name)
    assert.are.same({ 1, 1 }, c.depth)
    assert.are.same({ "1" }, fp.S:module_columns({ "name" }, 3, 1).name)
    assert.are.same({}, fp.S:module_columns({ "name" }, 4).name)
    assert.has_error(function() fp.S:module_columns({ "name" }, 0) end)
    assert.has_error(function() fp.S:module_columns({ "name" }, 1, -1) end)
    fp:end_profile()
  end)
end)

describe("S:module_children", function()
  it("lists a module's children's ids in insertion order", function()
    local fp = profiled()
    local c = fp.S:module_columns { "id" }
    assert.are.same({ c.id[2], c.id[3] }, fp.S:module_children(c.id[1]))
    assert.are.same({}, fp.S:module_children(c.id[3]))
    assert.has_error(function() fp.S:module_children(3) end)
    fp:end_profile()
  end)

  it("lists a container wider than its first block (256 ids) whole", function()
    local kids = {}
    for i = 1, 600 do kids[i] = nn.ReLU() end
    local model = nn.Sequential(table.unpack(kids))
    local fp = prof.FlopsProfiler(model)
    fp:start_profile()
    local ids = fp.S:module_children(0)
    assert.are.equal(600, #ids)
    for i = 1, 600 do assert.are.equal(i, ids[i]) end   -- registered in pre-order: 1 .. 600
    fp:end_profile()
  end)
end)
