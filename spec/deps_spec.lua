-- deps_spec.lua — DESIGN's one-way dependencies: no files of core/ call each other in a circle, and
-- only backends name a device.
local deps = require "scripts.tools.check-deps"

-- The normal build's objects (make builds them before the specs run).
local OBJ = "build/obj/core"

local all_cycles
local function cycles_under(prefix)
  all_cycles = all_cycles or deps.cycles(deps.graph({ OBJ }))
  local out = {}
  for _, c in ipairs(all_cycles) do
    for _, f in ipairs(c) do
      if f:sub(1, #prefix) == prefix then
        out[#out + 1] = table.concat(c, " ")
        break
      end
    end
  end
  return out
end

describe("core/ dependencies", function()
  it("finds a cycle when there is one (two objects calling each other)", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. dir)
    local f = io.open(dir .. "/a.c", "w")
    f:write("int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n")
    f:close()
    f = io.open(dir .. "/b.c", "w")
    f:write("int a(int);\nint b(int x) { return a(x); }\n")
    f:close()
    assert.is_true(os.execute(string.format("cc -c %s/a.c -o %s/a.o && cc -c %s/b.c -o %s/b.o",
      dir, dir, dir, dir)))
    local cycles = deps.cycles(deps.graph({ dir }))
    os.execute("rm -rf " .. dir)
    assert.equal(1, #cycles)
    assert.equal(2, #cycles[1])
  end)

  it("the profiler core (core/*.c) has none", function()
    cycles_under(OBJ)
    local found = {}
    for _, c in ipairs(all_cycles) do
      for _, f in ipairs(c) do
        if f:match("^" .. OBJ:gsub("%p", "%%%0") .. "/[^/]+%.o$") then found[#found + 1] = f end
      end
    end
    assert.same({}, found)
    assert.is_truthy(io.open(OBJ .. "/alloc.o"))
  end)

  it("the Lua binding (core/lua/) has none", function()
    assert.same({}, cycles_under(OBJ .. "/lua/"))
    assert.is_truthy(io.open(OBJ .. "/lua/lprof.o"))
  end)

  it("the runtime (core/runtime/) has none", function()
    assert.same({}, cycles_under(OBJ .. "/runtime/"))
    assert.is_truthy(io.open(OBJ .. "/runtime/autograd_engine.o"))
  end)
end)

-- The ops, autograd and the bindings reach devices only through the backend table: adding a device
-- means adding a backend, nothing else (issue: "no file of core/runtime/ops_*, autograd or
-- core/lua/ names a device"). Comments may mention one.
describe("device names", function()
  local function code_of(path)
    local f = assert(io.open(path))
    local text = f:read("a")
    f:close()
    return (text:gsub("/%*.-%*/", ""):gsub("//[^\n]*", ""))
  end

  it("appear in no op, autograd or binding file", function()
    local files = {}
    for f in io.popen("ls core/runtime/ops_*.c core/runtime/autograd.c core/lua/*.c"):lines() do
      files[#files + 1] = f
    end
    assert.is_true(#files > 20)
    local found = {}
    for _, f in ipairs(files) do
      local code = code_of(f)
      for _, word in ipairs({ "PR_CPU", "PR_META", "PR_CUDA", "PROF_DEVICE_CPU", "PROF_DEVICE_CUDA",
        '"cpu"', '"cuda"', '"meta"' }) do
        if code:find(word, 1, true) then found[#found + 1] = f .. ": " .. word end
      end
    end
    assert.same({}, found)
  end)

  it("would be found (the check reads code, not comments)", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write('/* "cpu" in a comment */\nint x = PR_CPU;\n')
    f:close()
    local code = code_of(path)
    os.remove(path)
    assert.is_nil(code:find('"cpu"', 1, true))
    assert.is_truthy(code:find("PR_CPU", 1, true))
  end)
end)
