-- install_spec.lua — `make install PREFIX=<tmp>`: a working profrun, Lua module and C library to link.
local run = require "spec.support.run"

-- The library's version as core/prof/prof.h writes it: the shared library is named after it.
local function prof_h_version()
  local h = assert(run.read(run.ROOT .. "/core/prof/prof.h"))
  return assert(h:match('#define PROF_VERSION "(%d+%.%d+%.%d+)"'))
end

-- readelf -d's entries of one kind ("NEEDED", "SONAME", "RUNPATH"), the bracketed values in order.
local function dynamic(file, kind)
  local r = run.sh("readelf -d " .. run.quote(file))
  assert.equal(0, r.code, r.stderr)
  local out = {}
  for v in r.stdout:gmatch("%(" .. kind .. "%)[^%[]*%[([^%]]*)%]") do out[#out + 1] = v end
  return out
end

-- The names of the dynamic symbols file defines (what a process that loads it can bind to).
local function exports(file)
  local r = run.sh("nm -D --defined-only " .. run.quote(file))
  assert.equal(0, r.code, r.stderr)
  local names = {}
  for _, l in ipairs(run.lines(r.stdout)) do
    local name = l:match("%S+$")
    if name then names[#names + 1] = name end
  end
  return names
end

-- A plain lua5.4 host of the installed package: the Net of HOST below (same counts) through
-- prof.get_model_profile, then every libprof file mapped into the process.
local LUA_HOST = [[
local prof = require "prof"
local nn = require "prof.nn"
local Net = nn.Module:extend("Net")
function Net:init() self.fc = nn.Linear(10, 10) end
function Net:forward(x) return self.fc(x) end
local flops, macs, params = prof.get_model_profile { model = Net(), input_shape = {1, 10},
  print_profile = false, as_string = false }
local f = assert(io.open("/proc/self/maps"))
local seen, libs = {}, {}
for path in f:read("a"):gmatch("(/%S*libprof[^\n]*)") do
  if not seen[path] then seen[path] = true; libs[#libs + 1] = path end
end
f:close()
print(string.format("macs %d flops %d params %d", macs, flops, params))
print(table.concat(libs, "\n"))
]]

-- A C host of the installed library: Net > fc = Linear(10, 10), one linear op at batch 1 with its
-- bias. Exact conventions (the default): 1*10*10 = 100 MACs, 2*100 + 10 bias adds = 210 flops.
local HOST = [[
#include <prof.h>
#include <stdio.h>

int main(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId net, fc;
  prof_ModuleInfo info = {.size = sizeof info};
  prof_Op op = {.kind = PROF_OP_LINEAR, .ninputs = 3, .flags = PROF_OPF_BIAS};
  if (S == NULL || prof_module_add(S, PROF_NO_MODULE, "", "Net", 110, &net) != PROF_OK ||
      prof_module_add(S, net, "fc", "Linear", 110, &fc) != PROF_OK || prof_start(S) != PROF_OK)
    return 2;
  op.in[0] = (prof_Operand){2, PROF_F32, {1, 10}};
  op.in[1] = (prof_Operand){2, PROF_F32, {10, 10}};
  op.in[2] = (prof_Operand){1, PROF_F32, {10}};
  op.out = (prof_Operand){2, PROF_F32, {1, 10}};
  prof_module_enter(S, net);
  prof_module_enter(S, fc);
  if (prof_op_record(S, &op) != PROF_OK) return fprintf(stderr, "%s\n", prof_errmsg(S)), 3;
  prof_module_exit(S, fc);
  prof_module_exit(S, net);
  if (prof_stop(S) != PROF_OK || prof_module_info(S, net, &info) != PROF_OK) return 4;
  printf("macs %lld flops %lld params %lld\n", (long long)info.phase[PROF_PHASE_FORWARD].macs,
         (long long)info.phase[PROF_PHASE_FORWARD].flops, (long long)info.params);
  prof_close(S);
  return 0;
}
]]

describe("make install PREFIX=<tmp>", function()
  local prefix, q

  setup(function()
    prefix = run.tmpdir()
    q = run.quote(prefix)
    local r = run.sh("make install PREFIX=" .. q)
    assert.equal(0, r.code, r.stdout .. r.stderr)
  end)

  teardown(function()
    if prefix then run.rmdir_all(prefix) end
  end)

  it("installs the binary, the header, both libraries and the pkg-config file", function()
    for _, f in ipairs({ "bin/profrun", "include/prof.h", "lib/libprof.a", "lib/libprof.so",
      "lib/libprof.so.0", "lib/libprof.so." .. prof_h_version(), "lib/profrun/prof/core.so",
      "lib/pkgconfig/prof.pc", "share/profrun/configs/default.json",
      "share/profrun/examples/lenet5.lua", "share/profrun/lua/prof/init.lua" }) do
      assert.is_true(run.exists(prefix .. "/" .. f), f .. " not installed")
    end
  end)

  it("runs the installed profrun from another directory on its installed files", function()
    local share = prefix .. "/share/profrun"
    local cmd = { run.quote(prefix .. "/bin/profrun"), run.quote(share .. "/configs/default.json"),
      run.quote(share .. "/examples/lenet5.lua") }
    local r = run.sh(table.concat(cmd, " "), "/")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("DeepSpeed Flops Profiler", 1, true))
    -- LeNet5 at 1024x1x32x32: 426,516,480 MACs under either convention (models_spec.lua)
    assert.truthy(r.stdout:find("\nfwd MACs per GPU:%s+426%.52 MMACs\n"))
  end)

  it("links a C host against the installed static library", function()
    local dir = run.tmpdir()
    local f = assert(io.open(dir .. "/host.c", "w"))
    f:write(HOST)
    f:close()
    local r = run.sh("cc -std=c11 -Wall -Werror -I" .. q .. "/include host.c " .. q
      .. "/lib/libprof.a $(pkg-config --libs libcjson) -lm -o host && ./host", dir)
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal("macs 100 flops 210 params 110\n", r.stdout)
  end)

  it("links a C host against the installed shared library, found by its SONAME", function()
    local dir = run.tmpdir()
    local f = assert(io.open(dir .. "/host.c", "w"))
    f:write(HOST)
    f:close()
    local r = run.sh("cc -std=c11 -Wall -Werror -I" .. q .. "/include host.c -L" .. q .. "/lib -lprof "
      .. "-Wl,-rpath," .. q .. "/lib -o host && ./host", dir)
    local needed = r.code == 0 and dynamic(dir .. "/host", "NEEDED") or {}
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal("macs 100 flops 210 params 110\n", r.stdout)
    assert.truthy(table.concat(needed, " "):find("libprof.so.0", 1, true), table.concat(needed, " "))
  end)

  it("gives libprof.so the SONAME libprof.so.0 and links named after prof.h's version", function()
    local v = prof_h_version()
    assert.same({ "libprof.so.0" }, dynamic(prefix .. "/lib/libprof.so." .. v, "SONAME"))
    assert.same({ "libprof.so.0" }, dynamic(run.ROOT .. "/build/lib/libprof.so", "SONAME"))
    local r = run.sh("readlink " .. q .. "/lib/libprof.so " .. q .. "/lib/libprof.so.0")
    assert.equal("libprof.so.0\nlibprof.so." .. v .. "\n", r.stdout)
  end)

  -- One copy of the core: prof.core binds to libprof.so.0 and defines no prof_* of its own, so a
  -- host that links libprof.so and loads prof.core shares one core with it.
  -- Each layout's rpath leads from prof/core.so to the libprof.so.0 beside it: build/lib, PREFIX/lib.
  local layouts = {
    { "the build tree's", function() return run.ROOT .. "/build/lua/prof/core.so" end, "$ORIGIN/../../lib" },
    { "the installed", function() return prefix .. "/lib/profrun/prof/core.so" end, "$ORIGIN/../.." },
  }
  for _, layout in ipairs(layouts) do
    local label, file_of, runpath = layout[1], layout[2], layout[3]
    it(label .. " prof.core exports luaopen_* only and needs libprof.so.0", function()
      local file = file_of()
      assert.same({ "luaopen_prof_core" }, exports(file))
      local needed = table.concat(dynamic(file, "NEEDED"), " ")
      assert.truthy(needed:find("libprof.so.0", 1, true), needed)
      assert.same({ runpath }, dynamic(file, "RUNPATH"))
    end)
  end

  it("loads the installed prof.core from lua5.4 with the installed libprof, once", function()
    local dir = run.tmpdir()
    local f = assert(io.open(dir .. "/host.lua", "w"))
    f:write(LUA_HOST)
    f:close()
    local share = prefix .. "/share/profrun/lua"
    local paths = string.format("package.path = %q; package.cpath = %q",
      share .. "/?.lua;" .. share .. "/?/init.lua", prefix .. "/lib/profrun/?.so")
    local r = run.sh("lua5.4 -e " .. run.quote(paths) .. " host.lua", dir)
    local lib = run.sh("readlink -f " .. q .. "/lib/libprof.so").stdout
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal("macs 100 flops 210 params 110\n" .. lib, r.stdout)
  end)

  -- the symbols a host can bind to are exactly the API the header declares
  it("exports from libprof.so exactly the PROF_API functions of the installed prof.h", function()
    local declared = {}
    local h = assert(run.read(prefix .. "/include/prof.h"))
    for name in h:gmatch("\nPROF_API [^;(]-([%w_]+)%s*%(") do declared[#declared + 1] = name end
    table.sort(declared)
    local exported = exports(prefix .. "/lib/libprof.so." .. prof_h_version())
    table.sort(exported)
    assert.is_true(#declared > 80, #declared .. " declarations")
    assert.same(declared, exported)
  end)

  it("keeps prof_State and prof_Scheduler opaque: a host cannot size or open them", function()
    local dir = run.tmpdir()
    local results = {}
    for _, t in ipairs({ "prof_State", "prof_Scheduler" }) do
      run.write(dir, "opaque.c", "#include <prof.h>\nint main(void) { return (int)sizeof(" .. t .. "); }\n")
      local r = run.sh("cc -std=c11 -c -I" .. q .. "/include opaque.c -o opaque.o", dir)
      results[t] = r.code ~= 0 and r.stderr:find("incomplete type", 1, true) ~= nil
    end
    run.rmdir_all(dir)
    assert.same({ prof_State = true, prof_Scheduler = true }, results)
  end)

  it("compiles the installed prof.h as C++, its inline annotation marks included", function()
    local dir = run.tmpdir()
    run.write(dir, "host.cpp", "#include <prof.h>\n"
      .. "int main() { prof_State *S = prof_new(NULL, NULL); prof_set_event_capacity(S, 8); prof_start(S);\n"
      .. "  PROF_RANGE_PUSH(S, \"step\"); PROF_COUNTER(S, \"n\", 1); PROF_RANGE_POP(S);\n"
      .. "  int on = prof_recording(S); prof_stop(S);\n"
      .. "  long long n = prof_event_count(S); prof_close(S); return on && n == 2 ? 0 : 1; }\n")
    local r = run.sh("c++ -std=c++11 -Wall -Wextra -Wold-style-cast -Werror -pedantic -I" .. q .. "/include host.cpp "
      .. q .. "/lib/libprof.a $(pkg-config --libs libcjson) -lm -o host && ./host", dir)
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
  end)

  it("installs a prof.pc that points at PREFIX", function()
    -- README: `pkg-config --cflags --libs prof` after `make install`
    local r = run.sh("PKG_CONFIG_PATH=" .. q .. "/lib/pkgconfig pkg-config --cflags --libs prof")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("-I" .. prefix .. "/include", 1, true), r.stdout)
    assert.truthy(r.stdout:find("-L" .. prefix .. "/lib", 1, true), r.stdout)
  end)

  it("builds a host from pkg-config's flags alone, and it runs without LD_LIBRARY_PATH", function()
    -- prof.pc's Libs carry the prefix's rpath (an installed host needs no environment)
    local dir = run.tmpdir()
    run.write(dir, "host.c", HOST)
    local cmd = "cc -std=c11 -Wall -Werror host.c $(PKG_CONFIG_PATH=" .. q .. "/lib/pkgconfig "
      .. "pkg-config --cflags --libs prof) -o host && env -u LD_LIBRARY_PATH ./host"
    local r = run.sh(cmd, dir)
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal("macs 100 flops 210 params 110\n", r.stdout)
  end)
end)
