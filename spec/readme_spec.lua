-- readme_spec.lua — every fenced example in README.md runs as pasted, and
-- what README says about `make run` and configs/default.json is what the Makefile, the file and
-- the schema say.
--
-- How each fence is run: `sh` fences command by command in a scratch folder that links build/,
-- configs/, examples/ and scripts/ (so outputs such as lenet.json land there); a `lua` fence
-- whose first line is "-- NAME.lua, run as: COMMAND" is saved as NAME.lua and COMMAND runs it; one
-- whose first line is "-- PATH.lua" alone is saved there for the sh fences that name it; the `c`
-- fence is compiled against build/lib and run; `text` fences are synopses and sample output, not
-- examples. `make test` is the one command not run here (this spec runs inside it): `make -n
-- test` checks that it is what the Makefile defines.
local core = require "prof.core"
local json = require "dkjson"
local run = require "spec.support.run"

local ROOT = run.ROOT
local README = assert(run.read(ROOT .. "/README.md"))

-- The fences of text: {lang, body, first (its first line), line (README line of the opener)};
-- and the README lines holding a fence marker that neither opens nor closes one.
local function fences(text)
  local out, stray, cur = {}, {}, nil
  local n = 0
  for line in text:gmatch("(.-)\n") do
    n = n + 1
    if cur == nil then
      local lang = line:match("^```(%w*)$")
      if lang then
        cur = { lang = lang, lines = {}, line = n }
      elseif line:find("```", 1, true) then
        stray[#stray + 1] = n
      end
    elseif line == "```" then
      cur.body = table.concat(cur.lines, "\n") .. "\n"
      cur.first = cur.lines[1] or ""
      out[#out + 1] = cur
      cur = nil
    else
      if line:find("```", 1, true) then stray[#stray + 1] = n end
      cur.lines[#cur.lines + 1] = line
    end
  end
  if cur ~= nil then stray[#stray + 1] = cur.line end   -- never closed
  return out, stray
end

-- The commands of a sh fence: continuation lines joined, comments dropped.
local function commands(body)
  local out = {}
  local joined = body:gsub("\\\n%s*", "")
  for line in joined:gmatch("(.-)\n") do
    line = line:gsub("%s+#.*$", ""):gsub("^%s+", ""):gsub("%s+$", "")
    if line ~= "" and not line:match("^#") then out[#out + 1] = line end
  end
  return out
end

local work

-- A scratch folder that looks like the repository root to README's commands.
local function scratch()
  local d = run.tmpdir()
  for _, name in ipairs({ "build", "configs", "examples", "scripts" }) do
    assert(run.sh(string.format("ln -s %s %s", run.quote(ROOT .. "/" .. name), run.quote(d .. "/" .. name))).code == 0)
  end
  return d
end

local function save(path, body)
  local dir = path:match("^(.*)/[^/]*$")
  if dir then assert(run.sh("mkdir -p " .. run.quote(work .. "/" .. dir)).code == 0) end
  local f = assert(io.open(work .. "/" .. path, "w"))
  f:write(body)
  f:close()
end

-- make without the jobserver of the make test that runs this spec
local function make(args)
  return run.sh("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory " .. args)
end

local function shows(r, what)
  return string.format("%s exited %s\nstdout:\n%s\nstderr:\n%s", what, tostring(r.code),
    (r.stdout or ""):sub(-2000), (r.stderr or ""):sub(-2000))
end

describe("README.md", function()
  local all, stray = fences(README)

  setup(function() work = scratch() end)
  teardown(function() run.rmdir_all(work) end)

  it("closes every code fence, each marker alone on its line", function()
    assert.same({}, stray)
    assert.is_true(#all >= 12)
  end)

  it("labels every fence sh, lua, c or text", function()
    local kinds = { sh = true, lua = true, c = true, text = true }
    for _, f in ipairs(all) do
      assert.is_true(kinds[f.lang] == true, "README line " .. f.line .. ": fence '" .. f.lang .. "'")
    end
  end)

  it("runs every lua and sh example as pasted", function()
    local used = {}
    -- lua fences first: the sh fences may name the files they save
    local lua_runs = {}
    for _, f in ipairs(all) do
      if f.lang == "lua" then
        local name, cmd = f.first:match("^%-%- (%S+%.lua), run as: (.+)$")
        local path = name or f.first:match("^%-%- (%S+%.lua)$")
        assert.truthy(path, "README line " .. f.line .. ": a lua fence starts with '-- NAME.lua[, run as: ...]'")
        save(path, f.body)
        if cmd then lua_runs[#lua_runs + 1] = { cmd = cmd, line = f.line } else used[path] = f.line end
      end
    end
    for _, l in ipairs(lua_runs) do
      local r = run.sh(l.cmd, work)
      assert.equal(0, r.code, shows(r, "README line " .. l.line .. ": " .. l.cmd))
      if l.cmd:find(" loop.lua", 1, true) then
        -- the activity example profiles memory: run where tensors hold memory, its columns show it
        assert.truthy(r.stdout:find("model_forward", 1, true), r.stdout)
        assert.truthy(r.stdout:find("%d%.%d%d [KM]b"), "no memory in the table: " .. r.stdout)
      end
    end
    local ran = 0
    for _, f in ipairs(all) do
      if f.lang == "sh" then
        for _, cmd in ipairs(commands(f.body)) do
          local r
          if cmd == "make test" then
            r = make("-n test")
          elseif cmd == "make run" then
            r = make("run")
            assert.truthy(r.stdout:find("DeepSpeed Flops Profiler", 1, true), shows(r, cmd))
          else
            assert.truthy(cmd:match("^build/bin/profrun "), "README line " .. f.line .. ": " .. cmd)
            r = run.sh(cmd, work)
          end
          assert.equal(0, r.code, shows(r, "README line " .. f.line .. ": " .. cmd))
          for path in pairs(used) do
            if cmd:find(path, 1, true) then used[path] = nil end
          end
          ran = ran + 1
        end
      end
    end
    assert.is_true(ran >= 9)
    assert.same({}, used)   -- every saved script was run by some command
    -- what the lenet5 command promised: its profile as JSON
    local doc = json.decode(assert(run.read(work .. "/lenet.json")))
    assert.equal("profrun.profile/1", doc.schema)
  end)

  -- the C host and the C + Lua host, compiled as pasted against an installed
  -- prefix from pkg-config's flags alone, run without LD_LIBRARY_PATH
  it("compiles the two C examples as pasted against make install's prefix and they print what README says", function()
    local c_host, lua_host
    for _, f in ipairs(all) do
      if f.lang == "c" then
        if f.body:find("#include <lualib.h>", 1, true) then
          assert.is_nil(lua_host, "one C + Lua example")
          lua_host = f.body
        else
          assert.is_nil(c_host, "one plain C example")
          c_host = f.body
        end
      end
    end
    assert.truthy(c_host and lua_host, "README has a C and a C + Lua example")
    local function lines(body) return select(2, body:gsub("\n", "")) end
    assert.is_true(lines(c_host) <= 15, lines(c_host) .. " lines")
    local main_body = lua_host:match("\nint main%(void%) {\n(.-)\n}\n$")
    assert.truthy(main_body, "the C + Lua example ends with main")
    assert.is_true(lines(main_body) + 1 <= 10, lines(main_body) + 1 .. " lines in main")

    local prefix = run.tmpdir()
    local r = make("install PREFIX=" .. run.quote(prefix))
    assert.equal(0, r.code, shows(r, "make install"))
    save("net.c", c_host)
    save("lua_host.c", lua_host)
    local pc = "PKG_CONFIG_PATH=" .. run.quote(prefix .. "/lib/pkgconfig") .. " pkg-config --cflags --libs "
    local cc = "cc -std=c11 -Wall -Wextra -Werror %s.c $(" .. pc .. "%s) -o %s"
    local built_c = run.sh(string.format(cc, "net", "prof", "net"), work)
    local built_lua = run.sh(string.format(cc, "lua_host", "prof lua5.4", "lua_host"), work)
    local ran_c = run.sh("env -u LD_LIBRARY_PATH ./net", work)
    local ran_lua = run.sh("env -u LD_LIBRARY_PATH -u LUA_PATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 LUA_CPATH="
      .. run.quote(prefix .. "/lib/profrun/?.so") .. " ./lua_host", work)
    run.rmdir_all(prefix)
    assert.equal(0, built_c.code, shows(built_c, "cc net.c"))
    assert.equal(0, built_lua.code, shows(built_lua, "cc lua_host.c"))
    assert.equal(0, ran_c.code, shows(ran_c, "./net"))
    -- by hand: a 1x10 input through a 10x10 weight, 100 MACs; 2 * 100 + 10 bias adds = 210
    assert.truthy(ran_c.stdout:find("\nfwd MACs per GPU: +100 MACs *\n"), ran_c.stdout)
    assert.truthy(ran_c.stdout:find("\nfwd flops per GPU: +210 +\n"), ran_c.stdout)
    assert.truthy(ran_c.stdout:find("\nLinear(110 = 100% Params, 100 MACs = 100% MACs, ", 1, true), ran_c.stdout)
    assert.equal(0, ran_lua.code, shows(ran_lua, "./lua_host"))
    assert.equal("Net\t42\n", ran_lua.stdout)
  end)

  describe("make run and configs/default.json", function()
    it("says what the Makefile's run target runs", function()
      local makefile = assert(run.read(ROOT .. "/Makefile"))
      local config, script = makefile:match("\nrun: all\n\t%$%(PROFRUN%) (%S+) (%S+)\n")
      assert.truthy(config, "Makefile run recipe")
      assert.truthy(README:find("`make run` is `build/bin/profrun " .. config .. " " .. script .. "`", 1, true))
      local cfg = json.decode(assert(run.read(ROOT .. "/" .. config)))
      local batch, device = README:match("\nmake run +# [^\n]*profiles AlexNet %(batch (%d+), (%w+)%)")
      assert.equal(cfg.train_micro_batch_size_per_gpu, tonumber(batch))
      assert.equal(cfg.device, device)
      assert.truthy(script:find("alexnet", 1, true))
    end)

    it("lists exactly the keys where default.json differs from the schema's defaults", function()
      local list = README:match("<!%-%- default%.json %-%->(.-)<!%-%- end %-%->")
      assert.truthy(list)
      local said = {}
      for key, value in list:gsub("%s+", " "):gmatch("`([%w_.]+)` = `([^`]+)`") do
        said[key] = json.decode(value)
      end
      local defaults = {}
      for _, k in ipairs(core.config_keys()) do
        if k.type ~= "object" then defaults[k.path] = json.decode(k.default, 1, json.null) end
      end
      local differ = {}
      local function walk(t, prefix)
        for k, v in pairs(t) do
          local path = prefix .. k
          if type(v) == "table" and next(v) ~= nil and #v == 0 then
            walk(v, path .. ".")
          elseif json.encode(v) ~= json.encode(defaults[path]) then
            differ[path] = v
          end
        end
      end
      walk(json.decode(assert(run.read(ROOT .. "/configs/default.json")), 1, json.null), "")
      assert.same(differ, said)
    end)
  end)
end)
