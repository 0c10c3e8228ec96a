-- scripts/reports/json.lua: the "profrun.profile/1" JSON document, written by the core's writer.
--
-- The document is core/prof/report/profile_json.c's (the one writer, which C hosts call too); its
-- keys are the README's ("JSON profile"). With opts.emit the text goes there in pieces as it is
-- written (a million modules are never one string) and "" is returned.
local core = require "prof.core"

return function(profile, opts)
  return core.write_report("json", profile, opts)
end
