-- prof.config — the run's configuration and the precedence of settings.
-- Precedence: built-in defaults < config file < arguments written in the script < --set/--device.
local core = require "prof.core"
local config_check = require "prof.config.check"
local ds_optimizer = require "prof.deepspeed.optimizer"
local notes = require "prof.util.notes"

local M = {}

local current, forced

local function install(cfg)
  current = cfg
  forced = {}
  for _, k in ipairs(cfg.forced_keys or {}) do forced[k] = true end
end

-- The last of overrides ("a.b=v") that set path or a key around or inside it: the value came
-- from there (the C loader blames overrides the same way).
local function override_for(overrides, path)
  for i = #overrides, 1, -1 do
    local key = overrides[i]:match("^([^=]*)=")
    if key then
      local n = math.min(#key, #path)
      local after = #key > #path and key:sub(n + 1, n + 1) or path:sub(n + 1, n + 1)
      if key:sub(1, n) == path:sub(1, n) and (#key == #path or after == "." or after == "[") then
        return overrides[i]
      end
    end
  end
end

-- The processes of the run, as the launcher says (Open MPI's mpirun, torchrun): one without.
function M.world_size()
  return tonumber(os.getenv("OMPI_COMM_WORLD_SIZE") or os.getenv("WORLD_SIZE") or "") or 1
end

--[[
DeepSpeed's batch keys (runtime/config.py, _set_batch_related_parameters and _batch_assertion):
the one left out of train_batch_size, train_micro_batch_size_per_gpu and
gradient_accumulation_steps follows from the others (train alone: no accumulation; micro alone:
the same), and then train = micro x accumulation x the data-parallel size (the world's processes
over the model-parallel size) must hold. Fills cfg; returns true, or nil, the key to blame and
the message.
]]
local function resolve_batch(cfg, world)
  local mp = cfg.parallel and cfg.parallel.model_parallel_size or 1
  local DP_SIZE = math.max(1, world // mp)
  local train, micro, gas = cfg.train_batch_size, cfg.train_micro_batch_size_per_gpu,
    cfg.gradient_accumulation_steps
  local given = { train = train ~= nil, micro = micro ~= nil, gas = gas ~= nil }
  if train == nil and micro == nil then return true end   -- nothing to resolve (gas alone: its own)
  if train and micro and gas then   -- luacheck: ignore 542 (all three given: checked below)
  elseif train and micro then
    gas = train // micro // DP_SIZE
  elseif train and gas then
    micro = train // DP_SIZE // gas
  elseif micro and gas then
    train = micro * gas * DP_SIZE
  elseif train then
    gas, micro = 1, train // DP_SIZE
  else
    gas, train = 1, micro * DP_SIZE
  end
  if micro < 1 or gas < 1 or train ~= micro * gas * DP_SIZE then
    local function say(v, g) return tostring(v) .. (g and "" or ", derived") end
    return nil, given.train and "train_batch_size" or "train_micro_batch_size_per_gpu",
      string.format("train_batch_size (%s) must be train_micro_batch_size_per_gpu (%s) x "
        .. "gradient_accumulation_steps (%s) x the data-parallel size (%d) = %d, as DeepSpeed's batch "
        .. "assertion requires%s", say(train, given.train), say(micro, given.micro), say(gas, given.gas),
        DP_SIZE, micro * gas * DP_SIZE,
        (given.train and given.micro and given.gas and train % (micro * gas) == 0)
          and string.format(" (it is a config for %d data-parallel processes: run them, with mpirun "
            .. "or WORLD_SIZE, or lower train_batch_size)", train // (micro * gas) * mp) or "")
  end
  cfg.train_batch_size, cfg.train_micro_batch_size_per_gpu, cfg.gradient_accumulation_steps =
    train, micro, gas
  return true
end

--[[
Loads a config as profrun does: core.load_config (the core's sections parsed and validated,
DeepSpeed's checked for unknown keys and handed over as plain tables), then the policy of the
DeepSpeed sections the engine applies (the optimizer: lua/prof/deepspeed/optimizer.lua; scheduler, fp16,
bf16, gradient_clipping: lua/prof/deepspeed/training.lua's check), then what needs
the runtime or the file system (lua/prof/config/check.lua: device, format, script paths), with the
same message form as the loader's. world_size: the run's processes (M.world_size's by default).
Returns the table, or nil, message, "io"|"config".
]]
function M.load(path, overrides, world_size)
  overrides = overrides or {}
  local cfg, msg, kind = core.load_config(path, overrides)
  if cfg == nil then return nil, msg, kind end
  local bok, bkey, berr = resolve_batch(cfg, world_size or M.world_size())
  if not bok then
    local ov = override_for(overrides, bkey)
    return nil, (ov and "--set " .. ov or path or "config") .. ": " .. berr, "config"
  end
  if cfg.optimizer ~= nil then
    local checked, key, err = ds_optimizer.check(cfg.optimizer)
    if checked == nil then
      local ov = override_for(overrides, key)
      return nil, (ov and "--set " .. ov or path or "config") .. ": " .. err, "config"
    end
    cfg.optimizer = checked
  end
  -- the training sections the engine applies (lazy: prof.ds_training reads the active config)
  local trained, tkey, terr = require("prof.deepspeed.training").check(cfg)
  if trained == nil then
    local ov = override_for(overrides, tkey)
    return nil, (ov and "--set " .. ov or path or "config") .. ": " .. terr, "config"
  end
  local ok, err = config_check.check(cfg, path, function(key) return override_for(overrides, key) end)
  if not ok then return nil, err, "config" end
  return cfg
end

-- The note for the core's keys given as "auto" (the C loader kept their defaults and listed
-- them); DeepSpeed's own sections note theirs where the engine applies them.
local function note_auto(keys)
  if keys == nil or #keys == 0 then return end
  notes.once("auto:schema", string.format('%s %s "auto" (Hugging Face\'s placeholder): %s the '
    .. "default (profrun --help-config lists it)", table.concat(keys, ", "),
    #keys == 1 and "is" or "are", #keys == 1 and "it keeps" or "each keeps"))
end

-- Installs a config table from M.load (profrun does this before the script runs); its device
-- becomes the default device (meta when it names none). Keys given as "auto" are noted once.
function M.set(cfg)
  install(cfg)
  note_auto(cfg.auto_keys)
  core.set_default_device(cfg.device or "meta")
  core.set_forced_device(forced.device and cfg.device or nil)
  core.gpu_set_tf32(cfg.device_options ~= nil and cfg.device_options.tf32 == true)
end

-- The active config; without profrun, the defaults a config file would have (the runtime's
-- default device is left as the script set it).
function M.get()
  if current == nil then install(assert(core.load_config(nil, {}))) end
  return current
end

-- The config's value at a dotted path ("flops_profiler.top_modules"), or nil.
function M.value(path)
  local v = M.get()
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

function M.is_forced(path)
  M.get()
  return forced[path] == true
end

-- The setting to use for path, given what the script passed and the API's own default.
function M.pick(path, script_value, builtin)
  M.get()
  local v
  if forced[path] then
    v = M.value(path)
  elseif script_value ~= nil then
    v = script_value
  else
    v = M.value(path)
  end
  if v == nil then return builtin end
  return v
end

-- README.md's configuration table, made from the schema (scripts/tools/config-table.lua prints it;
-- spec/config_spec.lua checks README.md against it).
function M.markdown_table()
  local lines = { "| key | type | default | meaning |", "|---|---|---|---|" }
  for _, k in ipairs(core.config_keys()) do
    if k.type ~= "object" then
      lines[#lines + 1] = string.format("| `%s` | %s | `%s` | %s |", k.path,
        (k.type:gsub("|", "\\|")), k.default, (k.doc:gsub("|", "\\|")))
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
