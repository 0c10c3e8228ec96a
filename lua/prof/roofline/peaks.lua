-- prof.roofline.peaks — this machine's achievable float32 FLOP/s and memory bandwidth, measured and cached once.
--
-- prof.peaks{refresh = false, cache_dir = nil} -> peaks[, warning] | nil, message (measuring failed)
--   peaks = { flops = FLOP/s, bytes_per_s = B/s (read + written), machine = "<cpu model> (<n> threads)",
--             measured_at = "YYYY-MM-DDThh:mm:ssZ", cached = true when read from the cache file }
--   warning: why the cache could not be written (the measurement is returned all the same).
-- The cache is one JSON file per machine key (CPU model, online CPUs, OpenBLAS threads) under
-- cache_dir, else $XDG_CACHE_HOME/profrun, else ~/.cache/profrun. A file that does not parse, or
-- whose key or values do not fit, is ignored and rewritten. refresh = true always re-measures.
--
-- The kernels (core/runtime/peaks.c) take about 0.3 s on a 2-core machine; the sizes below are why:
-- * GEMM: n = 1024 gives the same best-of-k rate as n = 2048 on 2 threads (both ~90 GFLOP/s on an
--   AMD EPYC VM) in an eighth of the time; beyond 8 threads each thread needs more tiles, so 2048.
-- * Copy: each buffer is twice the L3 cache (at least 64 MiB), so the copy streams from DRAM. Not
--   256 MiB: page faults make it take ~1.4 s here, and copies that large ran ~1.7x faster than
--   32-128 MiB ones, consistent with memcpy switching to non-temporal stores, which the runtime's
--   own kernels never use; the roof should be one they can reach.
local json = require "prof.util.json_decode"
local core = require "prof.core"

local M = {}

M.SCHEMA = "profrun.peaks/1"
M.GEMM_RUNS = 5
M.COPY_RUNS = 5
M.MIN_COPY_BYTES = 64 << 20
M.MAX_COPY_BYTES = 1 << 30

-- Number of measurements this process made (specs check that a cached call makes none).
M.measurements = 0

local function read_file(path)
  local f = io.open(path, "rb")
  if f == nil then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- The CPU's model name as /proc/cpuinfo gives it (x86 "model name", Arm "Hardware"/"Model").
local function cpu_model()
  local info = read_file("/proc/cpuinfo") or ""
  for _, key in ipairs({ "model name", "Hardware", "Model", "cpu model", "cpu" }) do
    local v = info:match("\n" .. key .. "%s*:%s*([^\n]+)") or info:match("^" .. key .. "%s*:%s*([^\n]+)")
    if v and trim(v) ~= "" then return trim(v) end
  end
  return "unknown cpu"
end

-- Online CPUs from /sys ("0-1,4" -> 3), else the processors /proc/cpuinfo lists, else 1.
local function cpu_count()
  local list = read_file("/sys/devices/system/cpu/online")
  if list then
    local n = 0
    for a, b in list:gmatch("(%d+)%-?(%d*)") do
      n = n + (b ~= "" and tonumber(b) - tonumber(a) + 1 or 1)
    end
    if n > 0 then return n end
  end
  local n = select(2, (read_file("/proc/cpuinfo") or ""):gsub("\nprocessor%s*:", ""))
  return math.max(n, 1)
end

-- The largest L3 (else L2) cache size in bytes from /sys, nil when unknown.
local function last_level_cache()
  local best
  for i = 0, 9 do
    local dir = "/sys/devices/system/cpu/cpu0/cache/index" .. i
    local size = read_file(dir .. "/size")
    if size == nil then break end
    local n, unit = size:match("(%d+)%s*([KMG]?)")
    if n then
      local bytes = tonumber(n) * ({ [""] = 1, K = 1 << 10, M = 1 << 20, G = 1 << 30 })[unit]
      if best == nil or bytes > best then best = bytes end
    end
  end
  return best
end

-- What the peaks depend on: {cpu =, cores =, threads =, key =}.
function M.machine()
  local cpu, cores, threads = cpu_model(), cpu_count(), core.blas_threads()
  return { cpu = cpu, cores = cores, threads = threads,
    key = string.format("%s|%d cpus|%d blas threads", cpu, cores, threads) }
end

-- Runs the kernels; returns flops, bytes_per_s, method | nil, message. Specs may replace it.
function M.measure(machine)
  local n = machine.threads > 8 and 2048 or 1024
  local llc = last_level_cache() or 0
  local bytes = math.min(math.max(2 * llc, M.MIN_COPY_BYTES), M.MAX_COPY_BYTES)
  local flops, err = core.peak_gemm_flops({ n = n, runs = M.GEMM_RUNS })
  if flops == nil then return nil, err end
  local bw
  bw, err = core.peak_copy_bandwidth({ bytes = bytes, runs = M.COPY_RUNS })
  if bw == nil then return nil, err end
  return flops, bw, string.format("sgemm n=%d best of %d; memcpy %d MiB best of %d (read + written)",
    n, M.GEMM_RUNS, bytes >> 20, M.COPY_RUNS)
end

-- {=================== the cache's flat JSON object ===================}

-- {"k": string | number | true | false, ...} -> table, or nil for anything else (json_decode's
-- strict reader, then every value a scalar: null, arrays and objects are never valid here).
function M.decode_flat(s)
  local t = json.decode(s, "peaks cache")
  if type(t) ~= "table" then return nil end
  for k, v in pairs(t) do
    if type(k) ~= "string" or type(v) == "table" then return nil end
  end
  return t
end

-- {===================================== the cache =====================================}

-- cache_dir option, else $XDG_CACHE_HOME/profrun (absolute paths only, as the XDG spec says),
-- else ~/.cache/profrun; nil when there is no home.
function M.cache_dir(opts)
  if opts and opts.cache_dir then return opts.cache_dir end
  local xdg = os.getenv("XDG_CACHE_HOME")
  if xdg and xdg:sub(1, 1) == "/" then return xdg .. "/profrun" end
  local home = os.getenv("HOME")
  if home and home ~= "" then return home .. "/.cache/profrun" end
  return nil
end

-- The cache file of a machine: its key made a file name, e.g. peaks-amd-epyc-2-cpus-2-blas-threads.json.
function M.cache_path(dir, machine)
  local slug = machine.key:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", "")
  return string.format("%s/peaks-%s.json", dir, slug:sub(1, 120))
end

local function positive(x)
  return type(x) == "number" and x > 0 and x < math.huge
end

-- The cached peaks when the file parses, belongs to this machine and holds sane values; else nil.
local function read_cache(path, machine)
  local t = M.decode_flat(read_file(path))
  if t == nil or t.schema ~= M.SCHEMA or t.key ~= machine.key then return nil end
  if not positive(t.flops) or not positive(t.bytes_per_s) then return nil end
  if type(t.machine) ~= "string" or type(t.measured_at) ~= "string" then return nil end
  return { flops = t.flops, bytes_per_s = t.bytes_per_s, machine = t.machine,
    measured_at = t.measured_at, cached = true }
end

local function encode_cache(p, machine, method)
  local enc = require "prof.report.json_encode"
  local keys = { "schema", "key", "cpu", "cores", "threads", "flops", "bytes_per_s", "machine",
    "measured_at", "method" }
  return enc.encode(enc.object(keys, {
    schema = M.SCHEMA, key = machine.key, cpu = machine.cpu, cores = machine.cores,
    threads = machine.threads, flops = p.flops, bytes_per_s = p.bytes_per_s, machine = p.machine,
    measured_at = p.measured_at, method = method,
  })) .. "\n"
end

-- Where the one line that announces a measurement goes (specs replace it).
M.announce = function(line) io.stderr:write(line, "\n") end

-- prof.peaks{refresh =, cache_dir =, measure = true, quiet = false}: see the top of this file.
-- measure = false returns the cached peaks or nil, message, never measuring; quiet = true leaves
-- out the line that says a measurement runs (it takes seconds, and writes the cache).
function M.get(opts)
  if opts ~= nil and type(opts) ~= "table" then error("prof.peaks: expects a table of options", 2) end
  opts = opts or {}
  local machine = M.machine()
  local dir = M.cache_dir(opts)
  local path = dir and M.cache_path(dir, machine)
  if path and not opts.refresh then
    local hit = read_cache(path, machine)
    if hit then return hit end
  end
  if opts.measure == false then
    return nil, "this machine's peaks are not measured yet (profrun --peaks measures them)"
  end
  if not opts.quiet then
    M.announce(string.format("profrun: measuring this machine's peak FLOP/s and bandwidth "
      .. "(once; cached in %s)", path or "no cache directory"))
  end
  local flops, bw, method = M.measure(machine)
  if flops == nil then return nil, "prof.peaks: " .. tostring(bw) end
  M.measurements = M.measurements + 1
  local p = { flops = flops, bytes_per_s = bw,
    machine = string.format("%s (%d threads)", machine.cpu, machine.threads),
    measured_at = os.date("!%Y-%m-%dT%H:%M:%SZ"), cached = false }
  if path == nil then return p, "no cache directory (neither XDG_CACHE_HOME nor HOME is set)" end
  local ok, err = core.write_atomic(path, encode_cache(p, machine, method))
  if not ok then return p, "peaks not cached: " .. tostring(err) end
  return p
end

-- {=================== the GPU ===================}

-- GEMM sizes and runs of the GPU's peaks: n = 8192 keeps an H100/H200-class device busy for
-- ~1 ms per bf16 product (launch costs vanish) and the three matrices under 1 GiB; the copy
-- moves 1 GiB, far past any cache.
M.GPU_GEMM_N = 8192
M.GPU_COPY_BYTES = 1 << 30
M.GPU_DTYPES = { "float32", "tf32", "bfloat16", "float16" }

-- prof.peaks.gpu{runs = 5} -> peaks | nil, message: the GPU's achievable dense GEMM FLOP/s per
-- dtype through cuBLAS and device-to-device copy bandwidth, measured once per process (a GPU
-- measures them in about a second, so nothing is cached on disk).
--   peaks = { by_dtype = {float32=, tf32=, bfloat16=, float16=} (FLOP/s), flops = float32's or,
--             with device_options.tf32, tf32's, bytes_per_s = B/s (read + written),
--             machine = "<GPU name>", method = "...", measured_at = "...", cached = false }
local gpu_memo
function M.gpu(opts)
  opts = opts or {}
  if gpu_memo and not opts.refresh then return gpu_memo end
  local st = core.gpu_status()
  if not st.available then return nil, st.why end
  if not st.cublas then return nil, "the GPU's peaks are cuBLAS's: " .. tostring(st.cublas_why) end
  local runs = opts.runs or M.GEMM_RUNS
  local by = {}
  for _, dt in ipairs(M.GPU_DTYPES) do
    local f, err = core.peak_gpu_gemm({ dtype = dt, n = opts.n or M.GPU_GEMM_N, runs = runs })
    if f == nil then return nil, err end
    by[dt] = f
  end
  local bw, err = core.peak_gpu_copy({ bytes = opts.bytes or M.GPU_COPY_BYTES, runs = runs })
  if bw == nil then return nil, err end
  M.measurements = M.measurements + 1
  local cfg = package.loaded["prof.config"]
  local tf32 = cfg ~= nil and cfg.value("device_options.tf32") == true
  gpu_memo = { by_dtype = by, flops = tf32 and by.tf32 or by.float32, bytes_per_s = bw,
    machine = st.name, measured_at = os.date("!%Y-%m-%dT%H:%M:%SZ"), cached = false,
    method = string.format("cuBLAS GEMM n=%d best of %d per dtype (CUDA events); device copy "
      .. "%d MiB best of %d (read + written)", opts.n or M.GPU_GEMM_N, runs,
      (opts.bytes or M.GPU_COPY_BYTES) >> 20, runs) }
  return gpu_memo
end

-- The peaks a profile on device is judged against: measured (once) where things run; on meta,
-- where nothing runs, only what the cache holds (nil, message when it holds nothing); on cuda,
-- the GPU's (M.gpu).
function M.for_device(device)
  if device == "cuda" then return M.gpu() end
  return M.get({ measure = device ~= "meta" })
end

-- profrun --peaks: measures again, rewrites the cache and shows it; returns the exit status.
function M.cli()
  local p, err = M.get({ refresh = true, quiet = true })
  if p == nil then
    io.stderr:write("profrun: ", tostring(err), "\n")
    return 1
  end
  local dir = M.cache_dir()
  local units = require "prof.report.units"
  io.stdout:write(string.format("machine:      %s\npeak FLOP/s:  %sFLOPS (float32 GEMM)\n"
    .. "bandwidth:    %sB/s (copy, read + written)\nridge:        %.2f FLOP/B\n"
    .. "measured at:  %s\ncache:        %s\n", p.machine, units.number_to_string(p.flops),
    units.number_to_string(p.bytes_per_s), p.flops / p.bytes_per_s, p.measured_at,
    dir and M.cache_path(dir, M.machine()) or "none (neither XDG_CACHE_HOME nor HOME is set)"))
  if err ~= nil then io.stderr:write("profrun: ", err, "\n") end
  if core.gpu_status().available then
    local g, gerr = M.gpu()
    if g == nil then
      io.stderr:write("profrun: GPU peaks: ", tostring(gerr), "\n")
      return 1
    end
    io.stdout:write(string.format("gpu:          %s\n", g.machine))
    for _, dt in ipairs(M.GPU_DTYPES) do
      io.stdout:write(string.format("  %-10s  %sFLOPS (cuBLAS GEMM)\n", dt,
        units.number_to_string(g.by_dtype[dt])))
    end
    io.stdout:write(string.format("  bandwidth   %sB/s (device copy, read + written)\n",
      units.number_to_string(g.bytes_per_s)))
  end
  return 0
end

return setmetatable(M, { __call = function(_, opts) return M.get(opts) end })
