-- prof.util.output — output files are written atomically; under profrun they appear only if the run succeeds.
local core = require "prof.core"

local M = {}

-- While profrun holds a transaction open: {path =, key =, text =, staged =, slot =} in staging
-- order. staged is core.stage_file's table (its tmp is "" for a device or FIFO, written at commit).
local pending
-- profrun's exit guard (core/cli/profrun.c): removes staged files on a signal or exit(); nil elsewhere.
local guard

-- "KEY: message" when the output has a key (flops_profiler.output_file), else the message.
local function keyed(key, msg)
  if key == nil then return msg end
  return key .. ": " .. msg
end

local function drop(p)
  core.discard_file(p.staged)
  if guard and p.slot then guard.remove(p.slot) end
  p.slot = nil
end

function M.begin()
  pending = {}
  guard = package.loaded["prof.exit_guard"]
end

-- Adds entry to the transaction; an earlier entry for the same path is dropped (rewritten: the
-- newest text wins), directories made for it stay made for the new one.
local function add(entry)
  local staged = entry.staged
  for i, p in ipairs(pending) do
    if p.path == entry.path then
      if p.staged.made ~= "" and staged.made == "" then
        staged.made = p.staged.made
        if entry.slot then guard.remove(entry.slot) end
        entry.slot = nil
      end
      p.staged.made = ""
      drop(p)
      table.remove(pending, i)
      break
    end
  end
  if guard and entry.slot == nil then entry.slot = guard.add(staged) end
  pending[#pending + 1] = entry
end

-- Writes text to path (or, inside a transaction, beside it until commit). key, when given, is the
-- setting the path came from and starts the message. Raises on failure.
function M.write(path, text, key)
  if pending == nil then
    local ok, err = core.write_atomic(path, text)
    if not ok then error(keyed(key, err), 0) end
    return
  end
  local staged, err = core.stage_file(path, text)
  if staged == nil then error(keyed(key, err), 0) end
  add({ path = path, key = key, text = text, staged = staged })
end

-- Whether a transaction is open (profrun is running a script).
function M.active()
  return pending ~= nil
end

-- Writes an output that a function streams: writer(dst) -> true | nil, message writes the whole
-- file at dst (the C trace writer). Inside a transaction dst is the staged temporary, and the
-- message names path, never the temporary; a device or FIFO is written at once (nothing can be
-- staged for it). Returns true or nil, message.
function M.produce(path, key, writer)
  if pending == nil then
    local ok, err = writer(path)
    if not ok then return nil, keyed(key, tostring(err)) end
    return true
  end
  local staged, err = core.stage_file(path, "")
  if staged == nil then return nil, keyed(key, err) end
  if staged.tmp == "" then
    local ok, werr = writer(path)
    if not ok then return nil, keyed(key, tostring(werr)) end
    return true
  end
  local entry = { path = path, key = key, staged = staged, slot = guard and guard.add(staged) }
  local ok, werr = writer(staged.tmp)
  if not ok then
    drop(entry)
    local plain = staged.tmp:gsub("%p", "%%%0")
    return nil, keyed(key, (tostring(werr):gsub(plain, (path:gsub("%%", "%%%%")))))
  end
  add(entry)
  return true
end

-- Writes what render(emit) emits, piece by piece, to path: inside a transaction straight into
-- the staged temporary (a large report is never one string); a device or FIFO, or no transaction,
-- takes the whole text as write does. Raises on failure, as write.
function M.write_stream(path, key, render)
  local staged, err
  if pending ~= nil then
    staged, err = core.stage_file(path, "")
    if staged == nil then error(keyed(key, err), 0) end
    if staged.tmp == "" then core.discard_file(staged) staged = nil end
  end
  if staged == nil then
    local parts = {}
    render(function(s) parts[#parts + 1] = s end)
    return M.write(path, table.concat(parts), key)
  end
  local entry = { path = path, key = key, staged = staged, slot = guard and guard.add(staged) }
  local f, ferr = io.open(staged.tmp, "wb")
  local failed
  if f ~= nil then
    -- a failed write is kept, not raised: the report script's own error wrapping would bury it
    local ok, werr = pcall(render, function(s)
      if failed then return end
      local wrote, e = f:write(s)
      if not wrote then failed = path .. ": cannot write: " .. tostring(e) end
    end)
    local closed, cerr = f:close()
    if not ok then
      drop(entry)
      error(werr, 0)   -- the report's own failure, as write's caller would have raised it
    end
    if not closed then failed = failed or path .. ": cannot write: " .. tostring(cerr) end
  else
    failed = path .. ": cannot write: " .. (tostring(ferr):gsub("^.-: ", ""))
  end
  if failed then
    drop(entry)
    error(keyed(key, failed), 0)
  end
  add(entry)
end

-- Undoes the files already committed: a new file goes again (with the directories made for it);
-- a replaced one (or a device written) cannot come back, which the message says.
local function undo(done)
  local lost = {}
  for i = #done, 1, -1 do
    local p = done[i]
    if p.staged.existed or p.staged.tmp == "" then
      lost[#lost + 1] = p.path
    else
      os.remove(p.staged.target)
      core.discard_file({ target = p.staged.target, tmp = "", made = p.staged.made })
    end
  end
  return lost
end

-- Devices and FIFOs first, signals still free: they cannot be undone, but a failure there still
-- leaves no file, and a FIFO whose reader stalls can still be interrupted.
local function write_direct(list)
  for _, p in ipairs(list) do
    if p.staged.tmp == "" then
      local ok, err = core.write_atomic(p.path, p.text)
      if not ok then return nil, keyed(p.key, err) end
      p.committed = true
    end
  end
  return true
end

-- The renames, with the guard holding signals off: a commit is never cut in half.
local function rename_all(list)
  local done = {}
  for _, p in ipairs(list) do
    if p.staged.tmp ~= "" then
      local ok, err = core.commit_file(p.path, p.staged)
      if not ok then return nil, keyed(p.key, err), done end
      done[#done + 1] = p
      p.committed = true
      if guard and p.slot then guard.remove(p.slot) end
      p.slot = nil
    end
  end
  return true
end

-- Moves every pending file into place, all or none; returns true or nil, message.
function M.commit()
  local list = pending or {}
  pending = nil
  local ok, err = write_direct(list)
  local done = {}
  if ok and guard then
    ok, err, done = guard.hold(function() return rename_all(list) end)
  elseif ok then
    ok, err, done = rename_all(list)
  end
  if ok then return true end
  for i = #list, 1, -1 do
    if not list[i].committed then drop(list[i]) end
  end
  local lost = undo(done or {})
  for _, p in ipairs(list) do
    if p.committed and p.staged.tmp == "" then lost[#lost + 1] = p.path end
  end
  if #lost > 0 then err = err .. " (already replaced: " .. table.concat(lost, ", ") .. ")" end
  return nil, err
end

-- Drops every pending file, latest first: a failed run leaves nothing behind, not even the
-- directories it made for its outputs.
function M.abort()
  local list = pending or {}
  pending = nil
  for i = #list, 1, -1 do drop(list[i]) end
end

return M
