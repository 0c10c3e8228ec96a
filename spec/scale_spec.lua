-- scale_spec.lua — overflow and scale: impossible shapes, saturated counts, deep models.
local env = require "spec.support.env"
local run = require "spec.support.run"
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"
local deepspeed = dofile("scripts/reports/deepspeed.lua")

-- A chain of depth Sequentials around one Linear(4, 4).
local function chain(depth)
  local m = nn.Linear(4, 4)
  for _ = 1, depth do m = nn.Sequential(m) end
  return m
end

describe("an impossible tensor shape", function()
  -- 2^32 * 2^32 = 2^64 elements: the product used to wrap to 0, giving a 1-byte buffer
  for _, device in ipairs({ "cpu", "meta" }) do
    it("{2^32, 2^32} on " .. device .. " is refused with the shape and the limit", function()
      local ok, err = pcall(T.empty, { 2 ^ 32, 2 ^ 32 }, { device = device })
      assert.is_false(ok)
      assert.truthy(env.has(err, "tensor of shape [4294967296, 4294967296] (float32) is too large: "
        .. "its element count passes the limit of 2^63 - 1 = 9223372036854775807"), err)
    end)
  end

  it("{2^62 + 1, 4} is refused at creation, not 'out of memory' at sum(1)", function()
    -- 2^62 + 1 is a float in Lua: 4611686018427387904; times 4 is 2^64 elements
    local ok, err = pcall(function() return T.empty({ 2 ^ 62 + 1, 4 }, { device = "cpu" }):sum(1) end)
    assert.is_false(ok)
    assert.truthy(env.has(err, "tensor of shape [4611686018427387904, 4] (float32) is too large"), err)
    assert.falsy(env.has(err, "out of memory"), err)
  end)

  it("whose elements fit but whose bytes do not (2^62 float32s = 2^64 bytes) is refused", function()
    local ok, err = pcall(T.empty, { 2 ^ 62 }, { device = "meta" })
    assert.is_false(ok)
    assert.truthy(env.has(err, "its size in bytes passes the limit of 2^63 - 1"), err)
  end)

  it("2^61 float32s (2^63 bytes, one more than int64 holds) are refused; 2^61 int8s fit", function()
    -- 2^61 elements of 4 bytes = 2^63 bytes, one more than int64 holds
    local ok, err = pcall(T.empty, { 2 ^ 61 }, { device = "meta" })
    assert.is_false(ok)
    assert.truthy(env.has(err, "size in bytes"), err)
    -- 2^61 int8s (2^61 bytes) fit: meta holds them
    local t = T.empty({ 2 ^ 60, 2 }, { device = "meta", dtype = "int8" })
    assert.equal(2 ^ 61, t:numel())
  end)
end)

describe("counts past 2^63 - 1", function()
  env.on_meta(setup, teardown)

  -- Linear(2^20, 2^20) on [2^24, 2^20]: 2^24 * 2^20 * 2^20 = 2^64 MACs each, more than int64
  -- holds; two in a Sequential used to wrap to negative sums. Params are exact: each Linear has
  -- 2^40 weights + 2^20 biases, 2 * (1099511627776 + 1048576) = 2199025352704.
  it("saturate at 2^63 - 1 in every sum, params stay exact, and the profile says so", function()
    local model = nn.Sequential(nn.Linear(2 ^ 20, 2 ^ 20), nn.Linear(2 ^ 20, 2 ^ 20))
    local p = prof.FlopsProfiler(model)
    p:start_profile()
    model(T.empty({ 2 ^ 24, 2 ^ 20 }))
    p:stop_profile()
    local profile = p:profile()
    p:end_profile()
    assert.equal(math.maxinteger, profile.modules[1].macs)
    assert.equal(math.maxinteger, profile.modules[2].macs)
    assert.equal(math.maxinteger, profile.fwd_flops)
    assert.equal(2199025352704, profile.params)
    assert.is_true(profile.saturated)
    local text = deepspeed(profile, {})
    assert.truthy(env.has(text, "Warning: some counts passed 2^63 - 1 and stopped there"), text)
  end)

  it("a small model is not flagged", function()
    local model = nn.Linear(4, 4)
    local p = prof.FlopsProfiler(model)
    p:start_profile()
    model(T.empty({ 2, 4 }))
    p:stop_profile()
    local profile = p:profile()
    p:end_profile()
    assert.equal(32, profile.fwd_macs)   -- 2 * 4 * 4
    assert.is_nil(profile.saturated)
    assert.falsy(env.has(deepspeed(profile, {}), "Warning"))
  end)

  -- 20 params (Linear(4, 4): 16 + 4) x 2^62 = 5 * 2^64: more than int64; it printed negative
  it("parallel.model_parallel_size = 2^62: the model size saturates, with a warning (profrun)", function()
    local dir = run.tmpdir()
    local script = dir .. "/model.lua"
    local f = assert(io.open(script, "w"))
    f:write('local prof = require "prof"\nlocal nn = require "prof.nn"\n',
      'prof.get_model_profile{model = nn.Sequential(nn.Linear(4, 4)), input_shape = {2, 4}}\n')
    f:close()
    local text = run.profrun({ "--device", "meta", "--set", "parallel.model_parallel_size=4611686018427387904",
      "configs/default.json", script })
    local json = run.profrun({ "--device", "meta", "--set", "parallel.model_parallel_size=4611686018427387904",
      "--set", "flops_profiler.format=json", "configs/default.json", script })
    run.rmdir_all(dir)
    assert.equal(0, text.code, text.stderr)
    assert.truthy(env.has(text.stdout, "Warning: some counts passed 2^63 - 1"), text.stdout)
    assert.truthy(env.has(text.stdout, "params of model = params per GPU * mp_size:"
      .. string.rep(" ", 29) .. "9.22337e+06 T"), text.stdout)
    assert.equal(0, json.code, json.stderr)
    assert.truthy(env.has(json.stdout, '"params_model": 9223372036854775807'), json.stdout)
    assert.truthy(env.has(json.stdout, '"saturated": true'), json.stdout)
  end)
end)

describe("the core's module rows", function()
  -- root "" -> a -> a0, root -> b: pre-order root, a, a0, b
  it("are read in slices of the pre-order: S:modules(first, count), S:module_count()", function()
    local S = core.new()
    local root = S:add_module(nil, "", "Net", 3)
    local a = S:add_module(root, "a", "A", 2)
    S:add_module(root, "b", "B", 1)
    S:add_module(a, "a0", "A0", 2)
    assert.equal(4, S:module_count())
    local function names(rows)
      local out = {}
      for i, r in ipairs(rows) do out[i] = r.name end
      return out
    end
    assert.same({ "", "a", "a0", "b" }, names(S:modules()))
    assert.same({ "" }, names(S:modules(1, 1)))
    assert.same({ "a0", "b" }, names(S:modules(3, 10)))
    assert.same({ "a", "a0" }, names(S:modules(2, 2)))
    assert.same({}, names(S:modules(5)))
    assert.same({}, names(S:modules(2, 0)))
    assert.has_error(function() S:modules(0) end)
    S:close()
  end)
end)

describe("a Lua flop rule registered on the core directly", function()
  -- the trampoline itself refuses what rules.lua would: a host may register without it
  local function apply(fn)
    local S = core.new()
    S:register_rule("Fused", fn)
    local id = S:add_module(nil, "", "Fused", 0)
    S:start()
    S:enter(id)
    local ok, err = pcall(S.apply_rule, S, id, {}, {}, {})
    S:close()
    return ok, err
  end
  local function fraction() return 0, 1.5, 0, 0 end
  local function huge() return 2 ^ 63, 0, 0, 0 end
  local function negative() return 0, 0, -1, 0 end

  it("returning 1.5 flops is refused at the rule's file:line, not rounded", function()
    local ok, err = apply(fraction)
    assert.is_false(ok)
    local where = "scale_spec.lua:" .. debug.getinfo(fraction, "S").linedefined
    assert.truthy(env.has(err, where .. " for Fused returned flops = 1.5 (expected a whole number"), err)
  end)

  it("returning 2^63 MACs is refused at the rule's file:line", function()
    local ok, err = apply(huge)
    assert.is_false(ok)
    local where = "scale_spec.lua:" .. debug.getinfo(huge, "S").linedefined
    assert.truthy(env.has(err, where .. " for Fused returned macs = 9.2233720368548e+18 (more than a count holds"), err)
  end)

  it("returning -1 bytes read is refused at the rule's file:line", function()
    local ok, err = apply(negative)
    assert.is_false(ok)
    local where = "scale_spec.lua:" .. debug.getinfo(negative, "S").linedefined
    assert.truthy(env.has(err, where .. " for Fused returned bytes_read = -1 (expected a non-negative count)"), err)
  end)
end)

describe("a deep model", function()
  env.on_meta(setup, teardown)

  -- Linear(4, 4) on [1, 4]: 16 MACs, 20 params, at every level of the chain. The repr nests one
  -- level per Sequential: the Linear's line is indented by 2 per level above it.
  for _, depth in ipairs({ 1000, 3000 }) do
    it("of " .. depth .. " nested Sequentials profiles and prints every level", function()
      local model = chain(depth)
      local p = prof.FlopsProfiler(model)
      p:start_profile()
      model(T.empty({ 1, 4 }))
      p:stop_profile()
      local profile = p:profile()
      p:end_profile()
      assert.equal(depth + 1, #profile.modules)
      assert.equal(16, profile.modules[1].macs)
      assert.equal(16, profile.modules[depth // 2].macs)
      assert.equal(20, profile.modules[depth].params)
      assert.equal(20, profile.modules[1].params)
      assert.equal(string.rep("0", depth, "."), profile.modules[depth + 1].path)
      local text = deepspeed(profile, {})
      assert.truthy(env.has(text, "\n" .. string.rep(" ", 2 * depth) .. "(0): Linear(20 = 100% Params"), "")
      assert.truthy(env.has(text, "\n" .. string.rep(" ", 2 * (depth - 1)) .. ")\n"), "")
    end)
  end

  it("nested deeper than 10,000 levels is refused, naming the limit, with a short message", function()
    local ok, err = pcall(prof.get_model_profile, { model = chain(10001), input_shape = { 1, 4 },
      print_profile = false })
    assert.is_false(ok)
    assert.truthy(env.has(err, "module '0' (Linear) would be nested 10001 levels deep, more than the 10000"), err)
    assert.truthy(#err < 500, #err)
    assert.is_nil(core.recorder())
  end)

  -- 100,000 levels reached 10.6 GB and printed a 200 KB path; Lua's own stack gives out first now
  it("of 100,000 nested Sequentials fails with a shortened path (profrun)", function()
    local dir = run.tmpdir()
    local script = dir .. "/deep.lua"
    local f = assert(io.open(script, "w"))
    f:write('local prof = require "prof"\nlocal nn = require "prof.nn"\n',
      'local m = nn.Linear(4, 4)\nfor _ = 1, 100000 do m = nn.Sequential(m) end\n',
      'prof.get_model_profile{model = m, input_shape = {1, 4}}\n')
    f:close()
    local r = run.profrun({ "--device", "meta", "configs/default.json", script })
    run.rmdir_all(dir)
    assert.equal(1, r.code)
    local first = r.stderr:match("^[^\n]*")
    -- 30 parts "0" (59 characters) either side of the levels left out
    local zeros = string.rep("0", 30, ".")
    local z = zeros:gsub("%.", "%%.")
    assert.truthy(first:find("^profrun: in module '" .. z .. "%.%(%.%.%. %d+ more levels %.%.%.%)%." .. z
      .. "' %(Sequential%): "), first)
    assert.truthy(env.has(first, "stack overflow"), first)
    assert.truthy(#first < 400, #first)
  end)
end)
