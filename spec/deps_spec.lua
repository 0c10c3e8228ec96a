-- deps_spec.lua — the layout's rules: no files of core/ call each other in a circle, includes cross
-- products only where the design allows, and only backends name a device.
local deps = require "scripts.tools.check-deps"

-- The normal build's objects (make builds them before the specs run); the cuda kernels' objects
-- are nvcc's, in their own folder, when the build has them.
local OBJ = "build/obj/core"
local CUDA_OBJ = "build/cuda-obj/core"

local all_cycles
local function cycles_under(prefix)
  local dirs = { OBJ }
  if io.open(CUDA_OBJ) then dirs[2] = CUDA_OBJ end
  all_cycles = all_cycles or deps.cycles(deps.graph(dirs))
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

  -- one graph over every product's objects: a circle inside one, or between two, is found alike
  for _, product in ipairs(deps.PRODUCTS) do
    it("core/" .. product .. "/ has none, inside it or with another product", function()
      assert.same({}, cycles_under(OBJ .. "/" .. product .. "/"))
      local count = 0
      for _ in io.popen("find " .. OBJ .. "/" .. product .. " -name '*.o'"):lines() do count = count + 1 end
      assert.is_true(count > 0, "no objects of core/" .. product .. "/ in " .. OBJ)
    end)
  end
end)

-- What crosses a product boundary is a header the design lists (scripts/tools/check-deps.lua's
-- table): runtime, inject and the CLI include prof.h alone of the core.
describe("include boundaries", function()
  it("hold in the tree", function()
    assert.same({}, deps.include_violations("."))
  end)

  -- a copy of the tree's headers with one crossing planted in each way the check knows
  local function planted(files)
    local dir = os.tmpname()
    os.remove(dir)
    assert.is_true(os.execute("mkdir -p " .. dir .. " && cp -R core " .. dir .. "/"))
    for path, line in pairs(files) do
      local f = assert(io.open(dir .. "/" .. path, "a"))
      f:write(line .. "\n")
      f:close()
    end
    local found = deps.include_violations(dir)
    os.execute("rm -rf " .. dir)
    return found
  end

  it("finds an internal header included from another product, and Lua in the core", function()
    local found = planted({
      ["core/runtime/tensor.c"] = '#include "prof_internal.h"',
      ["core/inject/nvtx_tree.c"] = '#include "../prof/record/recorder.h"',
      ["core/prof/dtype.c"] = "#include <lua.h>",
      ["core/prof/prof.h"] = '#include "saturate.h"',
      ["core/bind/lbind.c"] = '#include "gone.h"',
    })
    table.sort(found)
    assert.equal(5, #found, table.concat(found, "\n"))
    assert.truthy(found[1]:find("^core/bind/lbind%.c:%d+: \"gone%.h\" is not in the tree"))
    assert.truthy(found[2]:find("^core/inject/nvtx_tree%.c:%d+: inject includes core/prof/record/recorder%.h"))
    assert.truthy(found[3]:find("^core/prof/dtype%.c:%d+: <lua%.h> outside"))
    assert.truthy(found[4]:find("^core/prof/prof%.h:%d+: prof%.h, the public header, includes core/prof/saturate%.h"))
    assert.truthy(found[5]:find("^core/runtime/tensor%.c:%d+: runtime includes core/prof/prof_internal%.h"))
  end)
end)

-- The ops, autograd and the bindings reach devices only through the backend table: adding a device
-- means adding a backend, nothing else. Comments may mention one.
describe("device names", function()
  local function code_of(path)
    local f = assert(io.open(path))
    local text = f:read("a")
    f:close()
    return (text:gsub("/%*.-%*/", ""):gsub("//[^\n]*", ""))
  end

  it("appear in no op, autograd or binding file", function()
    local files = {}
    for f in io.popen("ls core/runtime/ops_*.c core/runtime/autograd.c core/bind/*.c"):lines() do
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
