-- spec/peaks_spec.lua: machine peaks are plausible, quick to measure, cached per machine and re-measured on request.
local core = require "prof.core"
local peaks = require "prof.roofline.peaks"
local prof = require "prof"

local function tmpdir()
  local base = os.tmpname()
  os.remove(base)
  return base .. ".profrun-peaks"
end

local function slurp(path)
  local f = io.open(path, "rb")
  if f == nil then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function spit(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Removes the cache file of this machine and the directory (both created by the specs).
local function cleanup(dir)
  os.remove(peaks.cache_path(dir, peaks.machine()))
  os.remove(dir)
end

describe("prof.core peak kernels", function()
  it("measure positive rates on small sizes and refuse nonsense sizes", function()
    assert.is_true(core.peak_gemm_flops({ n = 64, runs = 1 }) > 0)
    assert.is_true(core.peak_copy_bandwidth({ bytes = 1 << 16, runs = 1 }) > 0)
    assert.is_true(core.blas_threads() >= 1)
    assert.has_error(function() core.peak_gemm_flops({ n = 0 }) end)
    assert.has_error(function() core.peak_copy_bandwidth({ runs = 0 }) end)
  end)
end)

describe("prof.roofline.peaks", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() cleanup(dir) end)

  it("measures plausible peaks, then reads them from the cache", function()
    local n0 = peaks.measurements
    local t0 = core.now_ns()
    local p, warning = prof.peaks({ cache_dir = dir })
    local measure_s = (core.now_ns() - t0) / 1e9
    assert.is_nil(warning)
    assert.are.equal(n0 + 1, peaks.measurements)
    assert.is_false(p.cached)
    -- Any machine since ~2010 does more than 1 GFLOP/s of float32 sgemm and 1 GB/s of copy; none
    -- that runs this does 1 PFLOP/s or 10 TB/s on its cpu.
    assert.is_true(p.flops > 1e9 and p.flops < 1e15, "flops " .. p.flops)
    assert.is_true(p.bytes_per_s > 1e9 and p.bytes_per_s < 1e13, "bytes_per_s " .. p.bytes_per_s)
    assert.matches("^.+ %(" .. core.blas_threads() .. " threads%)$", p.machine)
    assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$", p.measured_at)
    print(string.format("\n  peaks: %.1f GFLOP/s, %.1f GB/s on %s (%.2f s)", p.flops / 1e9,
      p.bytes_per_s / 1e9, p.machine, measure_s))

    -- speed is make bench's business; here: the second call measures nothing
    local q = prof.peaks({ cache_dir = dir })
    assert.are.equal(n0 + 1, peaks.measurements)          -- nothing was measured again
    assert.is_true(q.cached)
    assert.are.equal(p.flops, q.flops)                     -- %.17g round-trips the double
    assert.are.equal(p.bytes_per_s, q.bytes_per_s)
    assert.are.equal(p.machine, q.machine)
    assert.are.equal(p.measured_at, q.measured_at)

    local r = prof.peaks({ cache_dir = dir, refresh = true })
    assert.are.equal(n0 + 2, peaks.measurements)
    assert.is_false(r.cached)
  end)

  describe("with the kernels replaced", function()
    local real
    before_each(function()
      real = peaks.measure
      peaks.measure = function() return 5e10, 2e10, "stub" end
    end)
    after_each(function() peaks.measure = real end)

    it("keys the cache file by cpu model, cpu count and OpenBLAS threads", function()
      local m = peaks.machine()
      assert.are.equal(core.blas_threads(), m.threads)
      assert.are.equal(string.format("%s|%d cpus|%d blas threads", m.cpu, m.cores, m.threads), m.key)
      prof.peaks({ cache_dir = dir })
      local t = peaks.decode_flat(slurp(peaks.cache_path(dir, m)))
      assert.are.equal("profrun.peaks/1", t.schema)
      assert.are.equal(m.key, t.key)
      assert.are.equal(5e10, t.flops)
      assert.are.equal(2e10, t.bytes_per_s)
    end)

    it("ignores and rewrites a corrupt cache, and one written for another machine", function()
      local path = peaks.cache_path(dir, peaks.machine())
      prof.peaks({ cache_dir = dir })
      for _, bad in ipairs({
        "{\"schema\": \"profrun.peaks/1\", \"flops\": 1e",         -- cut short
        "not json at all",
        (slurp(path):gsub('"flops": [^,]+', '"flops": -1')),       -- parses, value insane
        (slurp(path):gsub('"key": "[^"]*"', '"key": "Other CPU|64 cpus|64 blas threads"')),
      }) do
        spit(path, bad)
        local n0 = peaks.measurements
        local p = prof.peaks({ cache_dir = dir })
        assert.are.equal(n0 + 1, peaks.measurements)
        assert.are.equal(5e10, p.flops)
        assert.are.equal(5e10, peaks.decode_flat(slurp(path)).flops)   -- rewritten whole
      end
    end)

    it("still returns the measurement when the cache cannot be written", function()
      local file = os.tmpname()                               -- a file where a directory should be
      local p, warning = prof.peaks({ cache_dir = file .. "/profrun" })
      os.remove(file)
      assert.are.equal(5e10, p.flops)
      assert.are.equal(2e10, p.bytes_per_s)
      assert.matches("^peaks not cached: ", warning)
    end)

    it("returns nil and a message when measuring fails", function()
      peaks.measure = function() return nil, "out of memory" end
      local p, err = prof.peaks({ cache_dir = dir, refresh = true })
      assert.is_nil(p)
      assert.are.equal("prof.peaks: out of memory", err)
    end)
  end)

  it("finds its cache under $XDG_CACHE_HOME, else ~/.cache (relative XDG paths ignored)", function()
    local function dir_with(env)
      local cmd = env .. " lua5.4 -e 'package.path = \"./lua/?.lua;./lua/?/init.lua;\" .. package.path; "
        .. "package.cpath = \"./build/lua/?.so;\" .. package.cpath; "
        .. "io.write(require(\"prof.roofline.peaks\").cache_dir())'"
      local h = io.popen(cmd)
      local out = h:read("a")
      h:close()
      return out
    end
    assert.are.equal("/x/cache/profrun", dir_with("XDG_CACHE_HOME=/x/cache HOME=/home/u"))
    assert.are.equal("/home/u/.cache/profrun", dir_with("XDG_CACHE_HOME=rel HOME=/home/u"))
    assert.are.equal("/home/u/.cache/profrun", dir_with("env -u XDG_CACHE_HOME HOME=/home/u"))
  end)

  it("reads back the flat JSON it writes, and nothing else", function()
    assert.are.same({ a = "x\"y\n\u{e9}", b = 1.5e-3, c = true, d = false },
      peaks.decode_flat('{ "a": "x\\"y\\n\\u00e9", "b": 1.5e-3, "c": true, "d": false }'))
    assert.are.same({}, peaks.decode_flat("{}"))
    assert.is_nil(peaks.decode_flat('{"a": {"b": 1}}'))
    assert.is_nil(peaks.decode_flat('{"a": 1} trailing'))
    assert.is_nil(peaks.decode_flat('{"a": 1,}'))
    assert.is_nil(peaks.decode_flat('{"a": nope}'))
    assert.is_nil(peaks.decode_flat(nil))
  end)
end)
