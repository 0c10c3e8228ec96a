-- host_examples_spec.lua — examples/host_c, host_lua, host_cuda built against an installed prefix and run.
local json = require "dkjson"
local run = require "spec.support.run"

--[[
examples/host_c/mlp.c by hand: Net = fc1 Linear(16, 32) -> act ReLU -> fc2 Linear(32, 8) -> head
Scale (custom op, 2 flops per element), batch 4, 4 threads x 3 calls = 12 calls of every module.
Exact conventions, per call:
  fc1: 4*16*32 = 2048 MACs; 2*2048 + 4*32 bias adds = 4224 flops; params 16*32 + 32 = 544
  act: ReLU, 1 flop per element of [4, 32]: 128 flops
  fc2: 4*32*8 = 1024 MACs; 2*1024 + 4*8 = 2080 flops; params 32*8 + 8 = 264
  head: the host's count, 2 * 4*8 = 64 flops
  Net: 3072 MACs, 4224 + 128 + 2080 + 64 = 6496 flops; params 808
Times 12 calls: Net 36,864 MACs and 77,952 flops; fc1 24,576 / 50,688; act 0 / 1,536;
fc2 12,288 / 24,960; head 0 / 768.
]]
local CALLS = 12
local PER_CALL = {
  { name = "", type = "Net", macs = 3072, flops = 6496, params = 808, depth = 0 },
  { name = "fc1", type = "Linear", macs = 2048, flops = 4224, params = 544, depth = 1 },
  { name = "act", type = "ReLU", macs = 0, flops = 128, params = 0, depth = 1 },
  { name = "fc2", type = "Linear", macs = 1024, flops = 2080, params = 264, depth = 1 },
  { name = "head", type = "Scale", macs = 0, flops = 64, params = 0, depth = 1 },
}

-- Copies an installed example's folder to a scratch one (the build writes beside its sources).
local function copy_example(prefix, name)
  local dir = run.tmpdir()
  local r = run.sh(string.format("cp -R %s/. %s", run.quote(prefix .. "/share/profrun/examples/" .. name),
    run.quote(dir)))
  assert.equal(0, r.code, r.stderr)
  return dir
end

local function shows(r) return string.format("exit %s\n%s\n%s", tostring(r.code), r.stdout, r.stderr) end

describe("host examples against an installed prefix", function()
  local prefix, pcpath, dirs

  setup(function()
    prefix = run.tmpdir()
    pcpath = run.quote(prefix .. "/lib/pkgconfig")
    dirs = {}
    local r = run.sh("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory install PREFIX="
      .. run.quote(prefix))
    assert.equal(0, r.code, r.stdout .. r.stderr)
  end)

  teardown(function()
    for _, d in ipairs(dirs) do run.rmdir_all(d) end
    if prefix then run.rmdir_all(prefix) end
  end)

  describe("examples/host_c (plain C, 4 threads)", function()
    local dir, out, compiled, built

    setup(function()
      dir = copy_example(prefix, "host_c")
      out = dir .. "/out"
      dirs[#dirs + 1] = dir
      -- pkg-config's flags alone (PKG_CONFIG_PATH), and no LD_LIBRARY_PATH at run time
      compiled = run.sh("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory PKG_CONFIG_PATH="
        .. pcpath, dir)
      built = run.sh("mkdir out && env -u LD_LIBRARY_PATH ./mlp out", dir)
    end)

    it("builds from pkg-config, links the installed libprof.so.0 and runs without LD_LIBRARY_PATH", function()
      assert.equal(0, compiled.code, shows(compiled))
      assert.equal(0, built.code, shows(built))
      assert.truthy(compiled.stdout:find("-I" .. prefix .. "/include", 1, true), compiled.stdout)
      local needed = run.sh("readelf -d " .. run.quote(dir .. "/mlp"))
      assert.truthy(needed.stdout:find("%[libprof%.so%.0%]"), needed.stdout)
    end)

    it("merges the 4 threads' calls into one tree with the counts derived by hand", function()
      assert.equal(0, built.code, shows(built))
      local lines = run.lines(built.stdout)
      for i, m in ipairs(PER_CALL) do
        local want = string.format("%-5s %-6s calls %d macs %d flops %d", i == 1 and "(net)" or m.name,
          m.type, CALLS, CALLS * m.macs, CALLS * m.flops)
        assert.equal(want, lines[i])
      end
    end)

    it("writes the JSON profile: the tree's shape and its counts", function()
      local doc = assert(json.decode(assert(run.read(out .. "/profile.json")), 1, json.null))
      assert.equal("profrun.profile/1", doc.schema)
      assert.equal(CALLS * 3072, doc.fwd_macs)
      assert.equal(CALLS * 6496, doc.fwd_flops)
      assert.equal(808, doc.params)
      assert.equal(#PER_CALL, #doc.modules)
      for i, m in ipairs(PER_CALL) do
        local got = doc.modules[i]
        assert.equal(i - 1, got.id)
        assert.equal(m.name, got.name)
        assert.equal(m.type, got.type)
        assert.equal(m.depth, got.depth)
        assert.equal(i == 1 and json.null or 0, got.parent)
        assert.equal(CALLS * m.macs, got.macs)
        assert.equal(CALLS * m.flops, got.flops)
        assert.equal(m.params, got.params)
        assert.equal(CALLS, got.calls)
      end
    end)

    it("writes a Chrome trace: one span per module call on 4 thread rows, each nested in its parent's", function()
      local doc = assert(json.decode(assert(run.read(out .. "/trace.json"))))
      assert.equal(0, doc.droppedEvents)
      local spans, tids, ranges = {}, {}, 0
      for _, e in ipairs(doc.traceEvents) do
        if e.cat == "module" then
          assert.equal("X", e.ph)
          spans[#spans + 1] = e
          tids[e.tid] = (tids[e.tid] or 0) + 1
        elseif e.cat == "user_annotation" and e.name == "forward" then
          ranges = ranges + 1
        end
      end
      assert.equal(#PER_CALL * CALLS, #spans)
      assert.equal(CALLS, ranges)
      local rows = 0
      for _, n in pairs(tids) do
        rows = rows + 1
        assert.equal(#PER_CALL * 3, n)   -- 3 calls of 5 modules per thread
      end
      assert.equal(4, rows)
      -- each child span lies inside a Net span of its own thread; Net's args are one call's counts
      local nets = {}
      for _, e in ipairs(spans) do
        if e.args["Module Type"] == "Net" then
          nets[#nets + 1] = e
          assert.equal(3072, e.args.MACs)
          assert.equal(6496, e.args.FLOPs)
        end
      end
      assert.equal(CALLS, #nets)
      for _, e in ipairs(spans) do
        if e.args["Module Type"] ~= "Net" then
          local inside = false
          for _, n in ipairs(nets) do
            if n.tid == e.tid and e.ts >= n.ts and e.ts + e.dur <= n.ts + n.dur + 0.001 then inside = true end
          end
          assert.is_true(inside, e.name .. " at " .. e.ts)
        end
      end
    end)

    it("writes DeepSpeed's text report from C", function()
      local text = assert(run.read(out .. "/report.txt"))
      assert.truthy(text:find("---------------- DeepSpeed Flops Profiler ----------------", 1, true))
      -- 36,864 MACs -> "36.86 KMACs"; 77,952 flops -> "77.95 K"; 544 / 808 = 67.33 %; 24,576 /
      -- 36,864 = 66.67 %
      assert.truthy(text:find("\nfwd MACs per GPU: +36%.86 KMACs\n"))
      assert.truthy(text:find("\nfwd flops per GPU: +77%.95 K +\n"))
      assert.truthy(text:find("\n  %(fc1%): Linear%(544 = 67%.33%% Params, 24%.58 KMACs = 66%.67%% MACs, "))
      assert.truthy(text:find("\n  %(head%): Scale%(0 = 0%% Params, 0 MACs = 0%% MACs, "))
    end)
  end)

  describe("examples/host_lua (C owning its lua_State)", function()
    local dir, built

    setup(function()
      dir = copy_example(prefix, "host_lua")
      dirs[#dirs + 1] = dir
      local r = run.sh("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory PKG_CONFIG_PATH="
        .. pcpath, dir)
      assert.equal(0, r.code, shows(r))
      built = run.sh("env -u LD_LIBRARY_PATH -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 "
        .. "./host report.lua .", dir)
    end)

    it("records through C and renders with the installed DeepSpeed report script", function()
      assert.equal(0, built.code, shows(built))
      -- by hand, 5 calls at batch 2: fc1 5*2*8*16 = 1,280 MACs, fc2 5*2*16*4 = 640; params
      -- (8+1)*16 = 144 and (16+1)*4 = 68, 212 in all
      assert.truthy(built.stdout:find("\nfwd MACs per GPU: +1%.92 KMACs\n"), built.stdout)
      assert.truthy(built.stdout:find("\n  %(fc1%): Linear%(144 = 67%.92%% Params, 1%.28 KMACs = 66%.67%% MACs, "))
      assert.truthy(built.stdout:find("\n  %(fc2%): Linear%(68 = 32%.08%% Params, 640 MACs = 33%.33%% MACs, "))
    end)

    -- one writer, two documents: the profile table the Lua report reads (the flops profiler's
    -- rows) and the snapshot prof_write_deepspeed_report reads must say the same
    it("gives the same text from the profile table and from the snapshot", function()
      assert.equal(0, built.code, shows(built))
      local lua_text = assert(run.read(dir .. "/report_lua.txt"))
      assert.equal(lua_text, assert(run.read(dir .. "/report_c.txt")))
      assert.equal(built.stdout, lua_text)
    end)

    it("renders the same session with any report script (csv)", function()
      local r = run.sh("env -u LD_LIBRARY_PATH ./host report.lua . csv", dir)
      assert.equal(0, r.code, shows(r))
      local lines = run.lines(r.stdout)
      assert.equal(5, #lines)   -- a header and the 4 modules
      assert.truthy(lines[3]:find("fc1", 1, true), lines[3])
      assert.truthy(lines[3]:find(",1280,", 1, true), lines[3])
    end)
  end)

  describe("examples/host_cuda (CUDA + cuBLAS + NVTX, no profrun code)", function()
    it("builds with nvcc, links cuBLAS, names its NVTX ranges path:Type, and fails clearly without a GPU", function()
      local dir = copy_example(prefix, "host_cuda")
      dirs[#dirs + 1] = dir
      -- nvcc is not ours: keep the sanitized pass's preloaded ASan runtime out of it (it crashes)
      local r = run.sh("env -u LD_PRELOAD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory", dir)
      assert.equal(0, r.code, shows(r))
      local needed = run.sh("readelf -d mlp", dir).stdout
      assert.truthy(needed:find("%[libcublas%.so"), needed)
      local strs = run.sh("strings -n 3 mlp", dir).stdout
      for _, name in ipairs({ "Net", "fc1:Linear", "act:ReLU", "fc2:Linear" }) do
        assert.truthy(strs:find("\n" .. name .. "\n", 1, true), name)
      end
      -- with a device: its output matches the host's arithmetic; without: a message, exit 1
      local ran = run.sh("env -u LD_PRELOAD ./mlp", dir)
      if ran.code == 0 then
        assert.truthy(ran.stdout:find("mlp: 4 calls, 327680 MACs per call", 1, true), ran.stdout)
      else
        assert.equal(1, ran.code, shows(ran))
        assert.truthy(ran.stderr:find("^mlp: no CUDA device or driver: "), ran.stderr)
      end
    end)
  end)
end)
