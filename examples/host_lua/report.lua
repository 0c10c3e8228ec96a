-- report.lua — run by examples/host_lua/host.c in its lua_State: the session C recorded, rendered by a report script.
local S, format = ...
local report = require "prof.report"

-- The profile tables report scripts read (scripts/reports/): pre-order modules with children.
local modules, index = {}, {}
for i, r in ipairs(S:modules(1, S:module_count())) do
  index[r.id] = i
  local parent = r.parent and index[r.parent]
  modules[i] = {
    index = i, parent = parent, children = {}, name = r.name, type = r.type, depth = r.depth,
    path = parent == nil and "" or (modules[parent].path == "" and r.name
      or modules[parent].path .. "." .. r.name),
    params = r.params_counted, macs = r.fwd.macs, flops = r.fwd.flops, calls = r.fwd.calls,
    bytes = r.fwd.bytes_read + r.fwd.bytes_written,
    fwd_latency_s = r.fwd.time_ns > 0 and r.fwd.time_ns / 1e9 or nil,
    hidden = r.hidden, extra_repr = "",
  }
  if parent then table.insert(modules[parent].children, i) end
end
local root = assert(modules[1], "no module recorded")
local profile = {
  schema = "profrun.profile/1", device = "cpu", conventions = S:conventions(), engine = false,
  profile_step = 1, world_size = 1, dp_size = 1, mp_size = 1,
  params = root.params, params_model = root.params, fwd_macs = root.macs, fwd_flops = root.flops,
  fwd_flops_model = root.flops, fwd_latency_s = root.fwd_latency_s, modules = modules,
}
return report.render_profile(profile, { format = format })
