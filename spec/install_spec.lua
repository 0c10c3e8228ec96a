-- install_spec.lua — `make install PREFIX=<tmp>`: a working profrun and a C library to link.
local run = require "spec.support.run"

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

  it("installs a prof.pc that points at PREFIX", function()
    -- README: `pkg-config --cflags --libs prof` after `make install`
    local r = run.sh("PKG_CONFIG_PATH=" .. q .. "/lib/pkgconfig pkg-config --cflags --libs prof")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("-I" .. prefix .. "/include", 1, true), r.stdout)
    assert.truthy(r.stdout:find("-L" .. prefix .. "/lib", 1, true), r.stdout)
  end)
end)
