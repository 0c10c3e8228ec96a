-- launch_spec.lua — prof.launch on the CPU: an unmodified NVTX-only C program under libprof_inject.so.
local launch = require "prof.profiler.launch"
local json = require "prof.util.json_decode"

local APP = "build/fixtures/nvtx/nvtx_app"

local function by_path(profile)
  local t = {}
  for _, m in ipairs(profile.modules) do t[m.path] = m end
  return t
end

-- Hand counts of the fixture's ranges (see the comment at the top of nvtx_app.c), per thread:
-- addmm(bias [64], mat1 [32, 128], mat2 [128, 64]): 32*128*64 = 262144 MACs; exact FLOPs add the
-- bias once per output element: 2*262144 + 32*64 = 526336. Two layer calls. mm [32, 64] x [64, 10]:
-- 32*64*10 = 20480 MACs, 40960 FLOPs.
local ADDMM_MACS, ADDMM_FLOPS = 262144, 526336
local MM_MACS, MM_FLOPS = 20480, 40960

describe("prof.profiler.launch", function()
  it("turns an unmodified program's NVTX ranges into the module tree", function()
    local p, err = launch.launch{ APP, "1" }
    assert.is_nil(err)
    assert.equal(0, p.exit_status)
    assert.equal("profrun.profile/1", p.schema)
    local m = by_path(p)
    assert.equal("nvtx_app", m[""].type)
    assert.equal("BertEncoder", m.encoder.type)
    local layer = m["encoder.layer.0"]
    assert.equal("BertLayer", layer.type)
    assert.equal("layer.0", layer.name)
    assert.equal(m.encoder.index, layer.parent)
    assert.equal(2, layer.calls)
    assert.equal(2 * ADDMM_MACS, layer.macs)
    assert.equal(2 * ADDMM_FLOPS, layer.flops)
    assert.equal("attention", m["encoder.attention"].type)          -- a start/end range
    assert.equal("profrun-test::Head/head", m.head.type)             -- domain and category
    assert.equal(MM_MACS, m.head.macs)
    assert.equal(2 * ADDMM_MACS + MM_MACS, m[""].macs)
    assert.equal(2 * ADDMM_FLOPS + MM_FLOPS, p.fwd_flops)
    assert.is_true(layer.fwd_latency_s > 0)
    assert.equal(5, p.notes.ranges)
    assert.equal(3, p.notes.counted_ops)
    assert.equal(0, p.notes.unmatched_pops)
  end)

  it("merges what several threads marked", function()
    local p = assert(launch.launch{ APP, "3" })
    local m = by_path(p)
    assert.equal(6, m["encoder.layer.0"].calls)
    assert.equal(3, m[""].calls)                                     -- the root, once per thread
    assert.equal(3 * (2 * ADDMM_MACS + MM_MACS), m[""].macs)
  end)

  it("keeps the Chrome trace in out_dir, with the op events and their shapes", function()
    local dir = os.tmpname()
    os.remove(dir)
    local p = assert(launch.launch{ APP, "1", out_dir = dir })
    local trace = assert(json.decode(assert(io.open(p.trace_file)):read("a")))
    local addmm = 0
    for _, e in ipairs(trace.traceEvents) do
      if e.cat == "cpu_op" and e.name == "aten::addmm" then
        addmm = addmm + 1
        assert.same({ { 64 }, { 32, 128 }, { 128, 64 } }, e.args["Input Dims"]) -- addmm's operands
      end
    end
    assert.equal(2, addmm)
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("renders with the DeepSpeed report script", function()
    local p = assert(launch.launch{ APP })
    local text = require("prof.report").render_profile(p, { format = "deepspeed", module_depth = -1,
      top_modules = 1, detailed = true })
    assert.truthy(text:find("(encoder): BertEncoder(", 1, true))
    assert.truthy(text:find("(layer.0): BertLayer(", 1, true))
    assert.truthy(text:find("(head): profrun-test::Head/head(", 1, true))
  end)

  it("applies the config's conventions", function()
    local cfg = os.tmpname()
    local f = assert(io.open(cfg, "w"))
    f:write('{"flops_profiler": {"conventions": "deepspeed"}}')
    f:close()
    local p = assert(launch.launch{ APP, config = cfg })
    os.remove(cfg)
    assert.equal("deepspeed", p.conventions)
    -- DeepSpeed's _addmm_flops_compute: 2*MACs + numel(input), the bias [64] once per call
    assert.equal(2 * (2 * ADDMM_MACS + 64), by_path(p)["encoder.layer.0"].flops)
  end)

  it("takes the running profrun's conventions when no config is given", function()
    local tmp = os.tmpname()
    local script = tmp .. ".lua"   -- profrun runs SCRIPT.lua
    local f = assert(io.open(script, "w"))
    f:write('local p = assert(require("prof").launch{ "' .. APP .. '" })\n',
            'for _, m in ipairs(p.modules) do\n',
            '  if m.path == "encoder.layer.0" then print(p.conventions, m.flops) end\n',
            'end\n')
    f:close()
    local pipe = io.popen("build/bin/profrun --set flops_profiler.conventions=deepspeed " .. script)
    local out = pipe:read("a")
    pipe:close()
    os.remove(script)
    os.remove(tmp)
    assert.equal("deepspeed\t" .. 2 * (2 * ADDMM_MACS + 64) .. "\n", out)
  end)

  it("says what went wrong", function()
    local p, err = launch.launch{ "./no/such/app" }
    assert.is_nil(p)
    assert.truthy(err:find("program './no/such/app' not found", 1, true))
    p, err = launch.launch{ "no-such-program-profrun" }
    assert.is_nil(p)
    assert.truthy(err:find("not found on PATH", 1, true))
    local prof_of_failed
    p, err, prof_of_failed = launch.launch{ APP, "1", "3" }
    assert.is_nil(p)
    assert.truthy(err:find("exited with status 3", 1, true))
    assert.equal(3, prof_of_failed.exit_status)                      -- the profile is still there
    p, err = launch.launch{ "true" }                                 -- never calls NVTX
    assert.is_nil(p)
    assert.truthy(err:find("wrote no profile (exit status 0", 1, true))
    p, err = launch.launch{ APP, config = "no/such.json" }
    assert.is_nil(p)
    assert.truthy(err:find("config 'no/such.json' not found", 1, true))
    assert.has_error(function() launch.launch{ APP, bogus = 1 } end,
      "prof.launch: unknown option 'bogus' (config, out_dir, events)")
    assert.has_error(function() launch.launch("app") end)
  end)

  it("is prof.launch", function()
    assert.equal(launch.launch, require("prof").launch)
  end)
end)

describe("profiler.emit_nvtx", function()
  -- profrun's own run, observed by libprof_inject.so as any NVTX program would be: its module
  -- calls arrive as ranges "path:Type" and rebuild the tree the script's model defines
  local function run(set, dir)
    local lib = assert(launch.library())
    local cmd = string.format("NVTX_INJECTION64_PATH='%s' PROFRUN_INJECT_OUT='%s' build/bin/profrun %s "
      .. "spec/fixtures/nvtx/emit_model.lua '%s/own.json' >/dev/null", lib, dir, set, dir)
    return os.execute(cmd)
  end

  it("shows profrun's module tree to an NVTX tool", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p '" .. dir .. "'")
    assert.is_true(run("--set profiler.emit_nvtx=true", dir))
    local ls = io.popen("ls '" .. dir .. "'")
    local seen
    for name in ls:lines() do seen = seen or name:match("^profile%.%d+%.json$") end
    ls:close()
    assert.truthy(seen, "the injection wrote a profile")
    local nvtx = launch.to_report(assert(json.decode(assert(io.open(dir .. "/" .. seen)):read("a"))))
    local own = assert(json.decode(assert(io.open(dir .. "/own.json")):read("a")))
    os.execute("rm -rf '" .. dir .. "'")
    -- nn.Sequential(Linear(16, 32), ReLU(), Linear(32, 4)): the root range "Sequential" under the
    -- injection's own root (the program, profrun), then "0:Linear", "1:ReLU", "2:Linear"
    local m = by_path(nvtx)
    assert.equal("profrun", m[""].type)
    assert.equal("Sequential", m.Sequential.type)
    assert.equal("Linear", m["Sequential.0"].type)
    assert.equal("ReLU", m["Sequential.1"].type)
    assert.equal("Linear", m["Sequential.2"].type)
    assert.equal(5, #nvtx.modules)
    -- the same calls as profrun counted itself
    for _, om in ipairs(own.modules) do
      local path = om.name == "" and "Sequential" or "Sequential." .. om.name
      assert.equal(om.calls, m[path].calls, path)
    end
  end)

  it("emits nothing unless asked", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p '" .. dir .. "'")
    assert.is_true(run("", dir))
    local ls = io.popen("ls '" .. dir .. "'")
    local names = {}
    for name in ls:lines() do names[#names + 1] = name end
    ls:close()
    os.execute("rm -rf '" .. dir .. "'")
    assert.same({ "own.json" }, names)   -- NVTX never called: the injection never loaded
  end)
end)

describe("json_decode", function()
  it("reads what profrun writes and names where it stops", function()
    assert.same({ a = { 1, 2.5, "x\n" }, b = true }, json.decode('{"a": [1, 2.5, "x\\n"], "b": true, "c": null}'))
    assert.equal(math.maxinteger, json.decode("9223372036854775807"))
    local v, err = json.decode('{"a": [1, 2', "doc")
    assert.is_nil(v)
    assert.equal("doc: unexpected end at byte 12", err)
    local _, err2 = json.decode('[1 2]', "doc")
    assert.equal("doc: expected ',' or ']' at byte 4", err2)
    v, err = json.decode('{"a": 1} x')
    assert.is_nil(v)
    assert.truthy(err:find("trailing text", 1, true))
  end)
end)
