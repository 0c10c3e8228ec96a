-- scripts/reports/deepspeed.lua: DeepSpeed's Flops Profiler text (print_model_profile), written by the core's writer.
--
-- The text is core/prof/report/report_deepspeed.c's (the one writer, which C hosts call too):
-- DeepSpeed's layout to the character, with profrun's additions where a profile carries them
-- (MFU beside the peaks, the engine's measured backward, folded ModuleList runs). opts:
-- module_depth (-1), top_modules (1), detailed (true), detailed_backward (false), profile_step.
local core = require "prof.core"

return function(profile, opts)
  return core.write_report("deepspeed", profile, opts)
end
