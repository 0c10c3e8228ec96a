-- run.lua — runs build/bin/profrun (or any shell command) in a subprocess, for end-to-end specs.
local M = {}

local function absolute(p)
  if p:sub(1, 1) == "/" then return p end
  local cwd = os.getenv("PWD")
  if cwd == nil then
    local h = io.popen("pwd")
    cwd = h:read("l")
    h:close()
  end
  return cwd .. "/" .. p:gsub("^%./", "")
end

-- This file is <root>/spec/support/run.lua; every path below is absolute, so a spec may run
-- profrun from any working directory.
local here = absolute(debug.getinfo(1, "S").source:match("^@(.*)$"))
M.ROOT = here:match("^(.*)/spec/support/run%.lua$")
-- PROFRUN_BIN: another build of the CLI (make test runs the hostile suite again on the ASan one)
M.PROFRUN = os.getenv("PROFRUN_BIN") or M.ROOT .. "/build/bin/profrun"
M.FIXTURES = M.ROOT .. "/spec/fixtures/cli"

-- A word for sh, quoted whatever it holds.
function M.quote(s)
  return "'" .. tostring(s):gsub("'", [['\'']]) .. "'"
end

function M.read(path)
  local f = io.open(path, "rb")
  if f == nil then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- Writes text to dir/name and returns that path (a spec's fixture file).
function M.write(dir, name, text)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

function M.exists(path)
  return os.rename(path, path) ~= nil
end

-- sh(cmd[, cwd]) -> {code =, stdout =, stderr =}: cmd runs under sh in cwd (default: the root).
function M.sh(cmd, cwd)
  local out, err = os.tmpname(), os.tmpname()
  local full = string.format("cd %s && { %s ; } >%s 2>%s", M.quote(cwd or M.ROOT), cmd,
    M.quote(out), M.quote(err))
  local _, _, code = os.execute(full)
  local r = { code = code, stdout = M.read(out), stderr = M.read(err) }
  os.remove(out)
  os.remove(err)
  return r
end

-- profrun(args[, cwd]): runs build/bin/profrun with the list args (each quoted as one word).
function M.profrun(args, cwd)
  local words = { M.quote(M.PROFRUN) }
  for i, a in ipairs(args) do words[i + 1] = M.quote(a) end
  return M.sh(table.concat(words, " "), cwd)
end

local made = {}   -- directories tmpdir made: the only ones rmdir_all removes

-- A fresh empty directory (mktemp -d); remove it with rmdir_all.
function M.tmpdir()
  local h = io.popen("mktemp -d")
  local d = h:read("l")
  h:close()
  assert(d and d:match("^/"), "mktemp -d failed")
  made[d] = true
  return d
end

function M.rmdir_all(dir)
  assert(made[dir], "rmdir_all: not a directory made by tmpdir: " .. tostring(dir))
  made[dir] = nil
  os.execute("rm -rf " .. M.quote(dir))
end

-- The names in dir (hidden ones included), sorted.
function M.list(dir)
  local h = io.popen("ls -A " .. M.quote(dir) .. " 2>/dev/null")
  local names = {}
  for l in h:lines() do names[#names + 1] = l end
  h:close()
  table.sort(names)
  return names
end

-- The lines of s, without their "\n" (a last line without "\n" counts too).
function M.lines(s)
  local out = {}
  for l in (s .. (s:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

return M
