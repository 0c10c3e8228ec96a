-- limits_spec.lua — hostile sizes: impossible shapes, counts past 2^63 - 1, deep nesting, empty and huge config paths.
local h = require "spec.hostile.harness"

local OUT = "$OUT/x.txt"

-- A flop rule counting 2^62 MACs (and flops) per ReLU call: two calls pass 2^63 - 1.
local BIG_RULE = "return { ReLU = function() return { macs = 2^62, flops = 2^62 } end }\n"
local TWO_RELUS = [[
local prof = require "prof"
local nn = require "prof.nn"
prof.get_model_profile { model = nn.Sequential(nn.ReLU(), nn.ReLU()), input_shape = { 2, 3 } }
]]

local function write_rule(ctx)
  local f = assert(io.open(ctx.dir .. "/big.lua", "w"))
  f:write(BIG_RULE)
  f:close()
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A minus sign before a digit, not an exponent's ("1e-05"): a count that wrapped negative.
local function negative(text)
  return text:match("[^e]%-%d[^\n]*")
end

local cases = {
  { name = "shape: 2^32 x 2^32 on cpu is refused with its shape and the limit", out = OUT, code = 1,
    script = 'require("prof.tensor").empty({2^32, 2^32}, {device = "cpu"})\n',
    stderr = { "shape [4294967296, 4294967296]", "too large", "2^63 - 1" } },
  { name = "counts: a rule giving 2^62 twice saturates, warns, and prints no negative count",
    setup = write_rule, config = '{"device": "meta", "flops_profiler": {"rules": ["big.lua"]}}',
    script = TWO_RELUS, out = OUT, code = 0, leaves = { "x.txt" },
    check = function(_, ctx, a)
      local text = read(ctx.out .. "/x.txt")
      a.truthy(text:find("some counts passed 2^63 - 1 and stopped there (saturated)", 1, true))
      a.is_nil(negative(text))
      -- the root holds 2^63 - 1 MACs: 100 % of the total, not a wrapped percentage
      a.truthy(text:find("9.22337e+06 TMACs = 100% MACs", 1, true), text)
    end },
  { name = "counts: the same in the JSON profile: saturated true, every count non-negative",
    setup = write_rule, config = '{"device": "meta", "flops_profiler": {"rules": ["big.lua"]}}',
    script = TWO_RELUS, out = "$OUT/x.json", code = 0, leaves = { "x.json" },
    check = function(_, ctx, a)
      local text = read(ctx.out .. "/x.json")
      a.truthy(text:find('"saturated": true', 1, true))
      a.truthy(text:find('"fwd_macs": 9223372036854775807', 1, true))
      a.is_nil(negative(text))
    end },
  { name = "depth: 1,000 nested Sequentials finish, the Linear printed at depth 1,000",
    script = 'local prof = require "prof"\nlocal nn = require "prof.nn"\nlocal m = nn.Linear(4, 4)\n'
      .. "for _ = 1, 1000 do m = nn.Sequential(m) end\n"
      .. "prof.get_model_profile { model = m, input_shape = { 1, 4 } }\n",
    out = OUT, code = 0, leaves = { "x.txt" },
    check = function(_, ctx, a)
      local text = read(ctx.out .. "/x.txt")
      local _, opened = text:gsub("\n *%(0%): Sequential%(", "")
      a.equal(999, opened)   -- the root prints as "Sequential(", its 999 descendants as "(0): ..."
      a.truthy(text:find("\n" .. string.rep(" ", 2000) .. "(0): Linear(", 1, true))
    end },
  { name = "cli: an empty config path is named as such", args = { "", "$SCRIPT" }, out = OUT, code = 2,
    stderr = { "the config path is empty" } },
  { name = "config: a duplicate key in the file is blamed on its line, not on --set",
    config = '{\n  "device": "meta",\n  "flops_profiler": {},\n  "flops_profiler": {}\n}\n',
    sets = { "flops_profiler.detailed=false" }, out = OUT, code = 2,
    stderr = { "config.json:4:3: duplicate key \"flops_profiler\"" }, stderr_not = { "--set" } },
  { name = "config: a duplicate key inside a --set value is blamed on that --set",
    sets = { 'flops_profiler.module_depth=1', 'optimizer={"type": "Adam", "params": {"lr": 1, "lr": 2}}' },
    out = OUT, code = 2, stderr = { "--set optimizer=", "duplicate key \"optimizer.params.lr\"" } },
  { name = "config: a 5,000-character config path keeps the reason, its middle cut",
    args = { "$DIR/" .. string.rep("a", 5000) .. ".json", "$SCRIPT" }, out = OUT, code = 2,
    stderr = { "characters)...", string.rep("a", 40) .. ".json: cannot open: File name too long" } },
}

describe("hostile limits", function()
  h.register(it, assert, cases)
end)
