-- peaks_cli_spec.lua — no benchmark on meta, one line when one runs, the cache
-- under $XDG_CACHE_HOME, and profrun --peaks to show and refresh it.
local env = require "spec.support.env"
local run = require "spec.support.run"
local json = require "dkjson"
local peaks = require "prof.roofline.peaks"

local FIX = run.FIXTURES
local META = FIX .. "/deepspeed_meta.json"
local LENET = FIX .. "/lenet5_top1.lua"

-- profrun with XDG_CACHE_HOME=cache and args.
local function profrun_cached(cache, args)
  local words = { "XDG_CACHE_HOME=" .. run.quote(cache), run.quote(run.PROFRUN) }
  for _, a in ipairs(args) do words[#words + 1] = run.quote(a) end
  return run.sh(table.concat(words, " "))
end

describe("peaks at the command line", function()
  local tmp

  before_each(function() tmp = run.tmpdir() end)
  after_each(function() run.rmdir_all(tmp) end)

  it("a JSON profile on meta measures nothing and writes no cache", function()
    local out = tmp .. "/out/p.json"
    local r = profrun_cached(tmp .. "/cache", { "--set", "flops_profiler.output_file=" .. out, META, LENET })
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)                       -- no "measuring" line: nothing was measured
    assert.is_false(run.exists(tmp .. "/cache"))     -- and nothing cached
    local doc = assert(json.decode(assert(run.read(out))))
    assert.equal(833040, doc.fwd_macs)
    assert.is_nil(doc.peak_flops)                    -- the roofline fields need peaks: left out
  end)

  it("a roofline report on meta without cached peaks says how to get them", function()
    local r = profrun_cached(tmp .. "/cache", { "--set", "flops_profiler.format=roofline", META, LENET })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, "roofline: this machine's peaks are not measured yet "
      .. "(profrun --peaks measures them)"), r.stderr)
    assert.is_false(run.exists(tmp .. "/cache"))
  end)

  it("nor does the roofline report script, asked for a meta profile without peaks", function()
    local script = tmp .. "/render.lua"
    local f = assert(io.open(script, "w"))
    f:write(table.concat({
      'local prof = require "prof"',
      'local models = require "prof.models"',
      'local T = require "prof.tensor"',
      "local model = models.lenet5()",
      "local p = prof.FlopsProfiler(model)",
      "p:start_profile()",
      "model(T.empty({ 2, 1, 32, 32 }))",
      "p:stop_profile()",
      'io.write(require("prof.report").render_profile(p:profile(), { format = "roofline" }))',
    }, "\n"))
    f:close()
    local r = profrun_cached(tmp .. "/cache", { script })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, "this machine's peaks are not measured yet (profrun --peaks "
      .. "measures them)"), r.stderr)
    assert.falsy(env.has(r.stderr, "measuring this machine"))
    assert.is_false(run.exists(tmp .. "/cache"))
  end)

  it("profrun --peaks measures, caches under $XDG_CACHE_HOME/profrun and shows it", function()
    local cache = tmp .. "/cache"
    local r = profrun_cached(cache, { "--peaks" })
    assert.equal(0, r.code, r.stderr)
    local path = r.stdout:match("\ncache: +([^\n]+)\n")
    assert.truthy(path, r.stdout)
    assert.equal(cache .. "/profrun/", path:sub(1, #cache + 9))
    local t = assert(peaks.decode_flat(assert(run.read(path))))
    assert.equal("profrun.peaks/1", t.schema)
    assert.truthy(env.has(r.stdout, "machine:      " .. t.machine .. "\n"))
    assert.truthy(env.has(r.stdout, "measured at:  " .. t.measured_at .. "\n"))
    -- what a meta run then judges against is that cache, read, not measured again
    local out = tmp .. "/p.json"
    local m = profrun_cached(cache, { "--set", "flops_profiler.output_file=" .. out, META, LENET })
    assert.equal(0, m.code, m.stderr)
    assert.equal("", m.stderr)
    local doc = assert(json.decode(assert(run.read(out))))
    assert.equal(t.flops, doc.peak_flops)
    assert.equal(t.bytes_per_s, doc.peak_bytes_per_s)
  end)
end)

describe("prof.peaks announces a measurement in one line", function()
  local real_measure, real_announce, lines, dir

  before_each(function()
    real_measure, real_announce = peaks.measure, peaks.announce
    peaks.measure = function() return 5e10, 2e10, "stub" end
    lines = {}
    peaks.announce = function(l) lines[#lines + 1] = l end
    dir = run.tmpdir()
  end)
  after_each(function()
    peaks.measure, peaks.announce = real_measure, real_announce
    run.rmdir_all(dir)
  end)

  it("when it measures, never when the cache answers, never with measure = false", function()
    local p, err = peaks.get({ cache_dir = dir, measure = false })
    assert.is_nil(p)
    assert.equal("this machine's peaks are not measured yet (profrun --peaks measures them)", err)
    assert.same({}, lines)
    assert.equal(5e10, peaks.get({ cache_dir = dir }).flops)
    assert.same({ "profrun: measuring this machine's peak FLOP/s and bandwidth (once; cached in "
      .. peaks.cache_path(dir, peaks.machine()) .. ")" }, lines)
    assert.is_true(peaks.get({ cache_dir = dir }).cached)
    assert.is_true(peaks.get({ cache_dir = dir, measure = false }).cached)
    assert.equal(1, #lines)
  end)
end)
