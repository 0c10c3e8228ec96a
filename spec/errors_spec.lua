-- errors_spec.lua — script errors that point at the user's code: input_shape, a forward that
-- returns nil, tracebacks without profrun's frames, and an error handler whose cost is
-- bounded however deep the stack is.
local env = require "spec.support.env"
local run = require "spec.support.run"
local errors = require "prof.util.errors"
local module = require "prof.nn.module"

local FIX = run.FIXTURES
local ROOT = run.ROOT

describe("script errors", function()
  local tmp

  before_each(function() tmp = run.tmpdir() end)
  after_each(function() run.rmdir_all(tmp) end)

  local function script(name, text) return run.write(tmp, name, text) end

  local function profile_with_shape(shape)
    return script("shape.lua", table.concat({
      'local prof = require "prof"',
      'local models = require "prof.models"',
      "prof.get_model_profile { model = models.lenet5(), input_shape = " .. shape .. " }",
    }, "\n"))
  end

  it("a wrong input_shape names input_shape, the entry and the script's line", function()
    local cases = {
      { "{2, 0, 32, 32}", "input_shape[2] must be a positive integer, got 0" },
      { "{2, -1, 32, 32}", "input_shape[2] must be a positive integer, got -1" },
      { "{2.5, 1, 32, 32}", "input_shape[1] must be a positive integer, got number 2.5" },
      { '{"2", 1, 32, 32}', 'input_shape[1] must be a positive integer, got string "2"' },
      { "{}", "input_shape must be a non-empty list of sizes" },
      { "32", "input_shape must be a list of sizes such as {1, 3, 224, 224}, got number" },
    }
    for _, c in ipairs(cases) do
      local path = profile_with_shape(c[1])
      local r = run.profrun({ path })
      assert.equal(1, r.code, c[1])
      -- line 3 of the script is the call
      assert.truthy(env.has(r.stderr, "profrun: " .. path .. ":3: get_model_profile: " .. c[2]),
        c[1] .. ": " .. r.stderr)
      assert.falsy(env.has(r.stderr, ROOT .. "/lua/prof/"), c[1])
    end
  end)

  it("a module whose forward returns nil is blamed, not the module after it", function()
    local path = script("nil_forward.lua", table.concat({
      'local prof = require "prof"',
      'local nn = require "prof.nn"',
      'local Broken = nn.Module:extend("Broken")',
      "function Broken.init() end",
      "function Broken.forward(_, x) local _ = x end   -- forgets to return",
      "local model = nn.Sequential(nn.Linear(4, 4), Broken(), nn.Linear(4, 2))",
      "prof.get_model_profile { model = model, input_shape = { 1, 4 } }",
    }, "\n"))
    local r = run.profrun({ path })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, "profrun: in module '1' (Broken): forward returned nil, the "
      .. "input of the next module '2' (Linear) in the model (Sequential); return the output tensor"),
      r.stderr)
  end)

  it("in a custom forward, the sibling that returned nil is named beside the one that got it", function()
    local path = script("nil_sibling.lua", table.concat({
      'local prof = require "prof"',
      'local nn = require "prof.nn"',
      'local Broken = nn.Module:extend("Broken")',
      "function Broken.init() end",
      "function Broken.forward(_, x) local _ = x end   -- forgets to return",
      'local Net = nn.Module:extend("Net")',
      "function Net:init() self.a = Broken() self.b = nn.Linear(4, 2) end",
      "function Net:forward(x) local y = self.b(self.a(x)) return y end",
      "prof.get_model_profile { model = Net(), input_shape = { 1, 4 } }",
    }, "\n"))
    -- the message is placed at the forward's line 8 (linear.lua's line with --verbose)
    local r = run.profrun({ path })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, "profrun: in module 'b' (Linear): " .. path .. ":8: bad argument "
      .. "#1 to 'linear' (prof.Tensor expected, got nil) (module 'a' (Broken) returned nil just "
      .. "before: does its forward return its output?)"), r.stderr)
    -- and a nil that no sibling returned gets no such hint
    path = script("nil_input.lua", table.concat({
      'local prof = require "prof"',
      'local nn = require "prof.nn"',
      'local Net = nn.Module:extend("Net")',
      "function Net:init() self.a = nn.Linear(4, 4) self.b = nn.Linear(4, 2) end",
      "function Net:forward(x) local _ = self.a(x) return self.b(nil) end",
      "prof.get_model_profile { model = Net(), input_shape = { 1, 4 } }",
    }, "\n"))
    r = run.profrun({ path })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, "in module 'b' (Linear): "), r.stderr)
    assert.falsy(env.has(r.stderr, "returned nil just before"), r.stderr)
  end)

  it("tracebacks show the script's frames; profrun's only with --verbose", function()
    local bad = FIX .. "/bad_shape.lua"
    local r = run.profrun({ bad })
    assert.equal(1, r.code)
    local lines = run.lines(r.stderr)
    assert.equal("stack traceback:", lines[2])
    assert.equal("\t" .. bad .. ":5: in main chunk", lines[3])
    assert.matches("^\t%(%d+ frames of profrun hidden; %-%-verbose shows them%)$", lines[4])
    assert.equal(4, #lines)
    assert.falsy(env.has(r.stderr, "flops_profiler/init.lua"))
    local v = run.profrun({ "--verbose", bad })
    assert.equal(1, v.code)
    assert.truthy(env.has(v.stderr, ROOT .. "/lua/prof/flops_profiler/init.lua:"))
    assert.truthy(env.has(v.stderr, "\t" .. bad .. ":5: in main chunk"))
    assert.falsy(env.has(v.stderr, "frames of profrun hidden"))
  end)

  it("an error raised inside profrun's files is placed at the script's line", function()
    local path = script("sizes.lua", 'local T = require "prof.tensor"\nlocal x = T.empty({2, "3"})\n')
    local r = run.profrun({ path })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, "profrun: " .. path .. ":2: shape entry 2 is a string"), r.stderr)
    local v = run.profrun({ "--verbose", path })
    assert.truthy(env.has(v.stderr, "profrun: " .. ROOT .. "/lua/prof/tensor.lua:"), v.stderr)
  end)
end)

describe("the error handler's cost", function()
  -- debug.getinfo(level) walks `level` frames: the work a handler does is the sum of the levels
  -- it asks for. A handler that reads every frame does depth^2 / 2 of it; a bounded one
  -- O(depth log depth). The count below replaces debug.getinfo (rawset: the library table is
  -- shared) while the handler runs.
  local function handler_work(depth, handler)
    local real = debug.getinfo
    local calls, walked = 0, 0
    local result
    local function recurse(n)
      if n == 0 then
        local ok, msg = xpcall(error, function(m)
          rawset(debug, "getinfo", function(level, ...)
            calls = calls + 1
            if type(level) == "number" then walked = walked + level end
            return real(level, ...)
          end)
          local ok2, out = pcall(handler, m)
          rawset(debug, "getinfo", real)
          return ok2 and out or ("handler failed: " .. tostring(out))
        end, "bottom reached")
        assert(not ok)
        result = msg
        return 0
      end
      return 1 + recurse(n - 1)
    end
    recurse(depth)
    return calls, walked, result
  end

  it("reads a bounded number of frames at depth 40,000", function()
    local depth = 40000
    local calls, walked, msg = handler_work(depth, errors.script_traceback(false))
    assert.truthy(env.has(msg, "bottom reached"))
    assert.truthy(env.has(msg, "frames skipped"))
    -- INNER + OUTER frames, the doubling and bisection for the depth (2 x 17 at 40k), and the
    -- innermost-module search (at most module.INNERMOST_FRAMES): a few hundred calls, not 40,000
    assert.is_true(calls < 2 * module.INNERMOST_FRAMES + 100, "calls " .. calls)
    -- quadratic would be 40,000^2 / 2 = 8e8 frames walked; bounded is about 40 x depth
    assert.is_true(walked < 40 * depth, "walked " .. walked)
  end)

  it("a plain stack overflow in a script is reported at once, with its frames elided", function()
    local tmp = run.tmpdir()
    local path = tmp .. "/overflow.lua"
    local f = assert(io.open(path, "w"))
    f:write("local function f(n) return 1 + f(n + 1) end\nf(1)\n")
    f:close()
    -- a generous limit: the quadratic handler took over 15 minutes, the bounded one well under 1 s
    local r = run.sh("timeout 120 " .. run.quote(run.PROFRUN) .. " " .. run.quote(path))
    run.rmdir_all(tmp)
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, path .. ":1: stack overflow"))
    assert.truthy(r.stderr:match("%.%.%. %(%d+ frames skipped%)"))
    assert.truthy(env.has(r.stderr, "\t" .. path .. ":2: in main chunk"))
    -- bounded output too: the traceback is a few dozen lines, whatever the depth
    assert.is_true(#run.lines(r.stderr) < 40)
  end)

  it("the innermost-module search stops after INNERMOST_FRAMES frames", function()
    local real = debug.getinfo
    local calls = 0
    local function deep(n)
      if n == 0 then
        rawset(debug, "getinfo", function(...) calls = calls + 1 return real(...) end)
        local m = module.innermost(1)
        rawset(debug, "getinfo", real)
        return m
      end
      local r = deep(n - 1)
      return r
    end
    assert.is_nil(deep(5000))
    assert.equal(module.INNERMOST_FRAMES, calls)
  end)
end)
