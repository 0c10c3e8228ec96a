-- gpu_check_spec.lua — scripts/tools/gpu-check.sh's own logic on a machine without a GPU: it
-- says so and stops, its dry run walks every step with the cpu standing in, and the bundle it
-- unpacks on a GPU machine holds what that machine lacks and fits what the device tool carries.
local core = require "prof.core"
local run = require "spec.support.run"

local ROOT = run.ROOT

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return rc, out:gsub("rc=%d+%s*$", "")
end

describe("gpu-check.sh without a GPU", function()
  local st = core.gpu_status()

  it("exits 3 with one line naming why there is no GPU", function()
    if st.available then return end   -- a GPU machine runs the real check instead
    local rc, out = sh(ROOT .. "/scripts/tools/gpu-check.sh")
    assert.equal(3, rc)
    assert.truthy(out:find("GPU check: no GPU: " .. st.why .. "\n", 1, true), out)
  end)

  it("--dry-run runs every step and prints one table with every op family", function()
    local rc, out = sh(ROOT .. "/scripts/tools/gpu-check.sh --dry-run")
    assert.equal(0, rc, out)
    for _, family in ipairs { "pointwise", "activation", "softmax", "reduce", "linalg", "shape",
                              "conv", "pool", "norm", "embedding", "loss", "attention", "gemm",
                              "training", "resample", "rnn" } do
      assert.truthy(out:find("|   " .. family .. " (", 1, true), family)
    end
    assert.truthy(out:find("| example alexnet on meta ", 1, true))
    assert.truthy(out:find("| example bert on meta ", 1, true))
    -- the CUPTI rows: measured only on a GPU (gpu_check.lua's cupti section), named in the dry run
    assert.truthy(out:find("| CUPTI kernels attributed to ops              | not measured", 1, true))
    assert.truthy(out:find("| CUPTI overhead (profiled / plain step)       | not measured", 1, true))
    assert.truthy(out:find("dry run: nothing above was computed on a GPU", 1, true))
    -- the spec count is busted's own line: every gpu spec ran and passed
    assert.truthy(out:find("| 0 failures / 0 errors", 1, true) or out:find(" 0 failures / 0 errors", 1, true))
  end)

  it("make gpu-bundle's tarball holds the build, lua5.4, busted and the libraries, under 60 MiB", function()
    local tmp = run.tmpdir()
    local tar = tmp .. "/b.tar.gz"
    local rc, out = sh("GPU_BUNDLE_OUT=" .. tar .. " " .. ROOT .. "/scripts/tools/gpu-bundle.sh")
    assert.equal(0, rc, out)
    local _, list = sh("tar -tzf " .. tar)
    for _, path in ipairs { "build/bin/profrun", "build/lua/prof/core.so", "build/lib/libprof.so.0",
                            "build/gpu-bundle/bin/lua5.4", "build/gpu-bundle/bin/busted",
                            "build/gpu-bundle/lib/liblua5.4.so.0", "build/gpu-bundle/lib/libcjson.so.1",
                            "build/gpu-bundle/lib/libopenblas.so.0",
                            "build/gpu-bundle/share/lua/5.4/busted/runner.lua",
                            "build/gpu-bundle/share/lua/5.4/luassert/init.lua" } do
      assert.truthy(list:find(path .. "\n", 1, true), path)
    end
    local f = assert(io.open(tar, "rb"))
    local size = f:seek("end")
    f:close()
    assert.is_true(size < 60 * 1048576, string.format("%d bytes", size))
    run.rmdir_all(tmp)
  end)
end)
