-- every_n.lua — record `active` steps (default 1) at the end of every `every` steps, forever.
-- {every = 100, warmup = 1, active = 1}: steps 98 warm up, 99 is recorded and saved, and so on.
return function(args)
  local every = args.every or args.n
  local warmup, active = args.warmup or 1, args.active or 1
  if type(every) ~= "number" or every < warmup + active then
    error(string.format("every_n: every must be a number >= warmup + active (%d), got %s",
      warmup + active, tostring(every)), 0)
  end
  return require("prof.schedule").schedule{
    wait = every - warmup - active, warmup = warmup, active = active, ["repeat"] = args["repeat"] or 0,
    skip_first = args.skip_first or 0 }
end
