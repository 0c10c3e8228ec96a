-- torch_tables_spec.lua — key_averages' columns, option tables, p:events() and total_average()
-- as torch 1.13's, through the CLI (spec/fixtures/cli/torch_tables.lua).
local run = require "spec.support.run"

local SCRIPT = "spec/fixtures/cli/torch_tables.lua"

local function case(name, ...)
  return run.profrun({ SCRIPT, "--", name, ... })
end

-- the header line of the table after a "== title" line
local function header_after(text, title)
  local after = text:match("== " .. title .. "\n(.*)")
  return after and after:match("\n(%s*Name[^\n]*)")
end

describe("key_averages' columns, as torch 1.13's", function()
  -- torch 1.13, record_shapes and with_stack on: key_averages() has neither Input Shapes nor
  -- Source Location; group_by_input_shape=True adds the first, group_by_stack_n=2 the second
  local r
  setup(function() r = case("columns") end)

  it("runs", function() assert.equal(0, r.code, r.stderr) end)

  it("leaves shapes and stacks out unless grouped by them", function()
    local plain = header_after(r.stdout, "plain")
    assert.is_not_nil(plain)
    assert.is_nil(plain:find("Input Shapes", 1, true))
    assert.is_nil(plain:find("Source Location", 1, true))
    assert.matches("Input Shapes", header_after(r.stdout, "by shape"), 1, true)
    assert.is_nil(header_after(r.stdout, "by shape"):find("Source Location", 1, true))
    assert.matches("Source Location", header_after(r.stdout, "by stack"), 1, true)
    assert.is_nil(header_after(r.stdout, "by stack"):find("Input Shapes", 1, true))
    assert.matches("torch_tables%.lua%(%d+%)", r.stdout:match("== by stack\n(.*)"))
  end)
end)

describe("a misspelt option", function()
  local cases = {
    { "profile", 'profile: unknown key "profile_memroy" (did you mean "profile_memory"?)' },
    { "schedule", 'schedule: unknown key "actve" (did you mean "active"?)' },
    { "get_model_profile", 'get_model_profile: unknown key "modle_depth" (did you mean "module_depth"?)' },
    { "print_model_profile", 'print_model_profile: unknown key "top_module" (did you mean "top_modules"?)' },
    { "table", 'table: unknown key "row_limt" (did you mean "row_limit"?)' },
    { "sort_by", 'table: unknown sort_by "self_cpu_time" (did you mean "self_cpu_time_total"?)' },
    { "key_averages", 'key_averages: unknown key "group_by_input_shapes" (did you mean "group_by_input_shape"?)' },
    { "timeline", 'export_memory_timeline: unknown key "devcie" (did you mean "device"?)' },
  }
  for _, c in ipairs(cases) do
    it("is an error naming it and the closest key: " .. c[1], function()
      local dir = run.tmpdir()
      local r = case(c[1], dir .. "/timeline.json")
      assert.equal(1, r.code, r.stdout)
      assert.matches(SCRIPT .. ":%d+: " .. c[2]:gsub("%p", "%%%0"), r.stderr)
      assert.same({}, run.list(dir))   -- nothing written
      run.rmdir_all(dir)
    end)
  end
end)

describe("p:events() and total_average(), as torch's", function()
  local r
  setup(function() r = case("events") end)

  it("gives events in start order with torch's FunctionEvent fields, consistent", function()
    assert.equal(0, r.code, r.stderr)
    assert.matches("first\tmodel_forward\ttrue", r.stdout, 1, true)
    local n, bad = r.stdout:match("ops and ranges\t(%d+)\tinconsistent\t(%d+)")
    assert.is_true(tonumber(n) > 10)
    assert.equal("0", bad)
    -- aten::addmm under aten::linear, its three inputs, the output's 4 x 16 float32 its own
    assert.matches("addmm\taten::linear\t3\t256", r.stdout, 1, true)
  end)

  it("sums every row into total_average(), as key_averages' self_cpu_time_total", function()
    assert.matches("total\tTotal\ttrue\ttrue\ttrue\ttrue", r.stdout, 1, true)
  end)
end)
