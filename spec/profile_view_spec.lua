-- profile_view_spec.lua — prof.profile_view: a profile's rows built from the session on demand
-- are the rows FlopsProfiler:profile() gives, whatever the order they are read in.
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"
local profile_view = require "prof.flops_profiler.view"
local roofline = require "prof.roofline"

-- A model with depth, a hidden subtree and a container reached through a path of several names.
local function model()
  local block = function() return nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Sequential(nn.Tanh())) end
  return nn.Sequential(block(), nn.Linear(4, 4), block(), nn.ModuleList { nn.ReLU(), block() })
end

local function profiled(conventions)
  local m = model()
  local fp = prof.FlopsProfiler(m)
  fp.conventions = conventions
  fp:start_profile({ "1" })   -- the top-level Linear hidden
  m[1](T.empty({ 2, 4 }, { device = "meta" }))
  m[2](T.empty({ 2, 4 }, { device = "meta" }))
  m[3](T.empty({ 2, 4 }, { device = "meta" }))
  fp:stop_profile()
  return fp
end

local function with_slice(n, fn)
  local old = profile_view.SLICE
  profile_view.SLICE = n
  local ok, err = pcall(fn)
  profile_view.SLICE = old
  if not ok then error(err, 0) end
end

describe("prof.flops_profiler.view", function()
  it("builds every row as FlopsProfiler:profile() has it, in any order, across slices", function()
    with_slice(3, function()
      local fp = profiled("deepspeed")
      local exact = {}
      for i = 1, fp.S:module_count() do exact[i] = 1000 + i end
      local plain = fp:profile({ exact_flops = exact }).modules
      local view = fp:profile({ exact_flops = exact }, true).modules
      -- 1 root, 5 per block (three), the Linear, the ModuleList and its ReLU
      assert.are.equal(19, #plain)
      assert.are.equal(#plain, #view)
      -- backwards, then forwards: slices are read again, paths made without the walk's order
      for i = #plain, 1, -1 do assert.are.same(plain[i], view[i], "row " .. i) end
      for i, m in ipairs(view) do assert.are.same(plain[i], m, "row " .. i) end
      assert.are.equal("3.1.2.0", plain[19].path)
      assert.are.same({ 3, 4, 5 }, plain[2].children)
      assert.are.equal(1005, plain[5].exact_flops)
      assert.is_true(plain[7].hidden)   -- "1": the ignored Linear
      fp:end_profile()
    end)
  end)

  it("reads like an array: #, ipairs, pairs, nil past the end, the same row while held", function()
    local fp = profiled("exact")
    local view = fp:profile({}, true).modules
    local n = 0
    for i, m in pairs(view) do
      n = n + 1
      assert.are.equal(i, m.index)
    end
    assert.are.equal(#view, n)
    assert.is_nil(view[0])
    assert.is_nil(view[#view + 1])
    local r = view[4]
    assert.are.equal(r, view[4])
    assert.is_nil(r.exact_flops)   -- exact conventions: no second count
    assert.has_error(function() view[1] = {} end,
      "profile.modules: rows are read from the session, not stored (setting 1)")
    fp:end_profile()
  end)

  it("maps ids to positions when the ids are not in pre-order", function()
    local S = core.new()
    local root = S:add_module(nil, "", "Net", 0)
    local a = S:add_module(root, "a", "Block", 0)
    S:add_module(root, "b", "Block", 0)
    S:add_module(a, "x", "Leaf", 0)   -- id 3, position 3
    S:start()
    S:stop()
    local view = profile_view.new(S, { "id", "parent", "name", "depth", "children" },
      function(c, k, i, parent, path, children)
        return { id = c.id[k], position = i, parent = parent, path = path, children = children }
      end)
    assert.are.same({ id = 3, position = 3, parent = 2, path = "a.x", children = {} }, view[3])
    assert.are.same({ id = 2, position = 4, parent = 1, path = "b", children = {} }, view[4])
    assert.are.same({ 2, 4 }, view[1].children)
    assert.are.same({ 3 }, view[2].children)
    S:close()
  end)

  it("gives built rows the roofline fields annotate gives plain rows", function()
    local peaks = { flops = 1e12, bytes_per_s = 1e11 }
    local fp = profiled("exact")
    local plain = roofline.annotate(fp:profile({}), peaks).modules
    local view = roofline.annotate(fp:profile({}, true), peaks).modules
    for i = 1, #plain do assert.are.same(plain[i], view[i], "row " .. i) end
    -- Linear(4, 4) on 2 rows: 72 flops over 144 bytes (input, weight, bias, output), far
    -- below the ridge of 10 FLOP/B
    assert.are.equal("0.0", plain[3].path)
    assert.are.equal("memory", plain[3].bound)
    assert.are.equal(72 / 144, plain[3].intensity)
    fp:end_profile()
  end)
end)
