-- parameterless_leaves.lua — an ignore list computed from the model: every leaf module without
-- parameters (activations, dropout, pooling), to keep reports about the layers that hold weights.
return function(model)
  local list = {}
  for _, pair in ipairs(model:named_modules()) do
    local path, m = pair[1], pair[2]
    if path ~= "" and #m:children() == 0 and m:num_parameters() == 0 then list[#list + 1] = path end
  end
  return list
end
