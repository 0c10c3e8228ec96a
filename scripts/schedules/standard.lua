-- standard.lua — torch.profiler.schedule{wait, warmup, active, repeat, skip_first, skip_first_wait}.
return function(args)
  return require("prof.schedule").schedule(args)
end
