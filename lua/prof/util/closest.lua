-- prof.util.closest — "did you mean": the candidate nearest a misspelt name (the C loader's rule).
local M = {}

-- Case-insensitive Levenshtein distance, as the C loader's closest-key search.
function M.distance(a, b)
  a, b = a:lower(), b:lower()
  local row = {}
  for j = 0, #b do row[j] = j end
  for i = 1, #a do
    local diag = row[0]
    row[0] = i
    for j = 1, #b do
      local up = row[j]
      local best = diag + (a:byte(i) == b:byte(j) and 0 or 1)
      if up + 1 < best then best = up + 1 end
      if row[j - 1] + 1 < best then best = row[j - 1] + 1 end
      row[j], diag = best, up
    end
  end
  return row[#b]
end

-- The candidate nearest to key, first on ties; nil beyond max(2, #key // 3) edits.
function M.closest(key, candidates)
  local best, dist = nil, math.huge
  for _, c in ipairs(candidates) do
    local d = M.distance(key, c)
    if d < dist then best, dist = c, d end
  end
  local limit = math.max(2, #key // 3)
  return dist <= limit and best or nil
end

return M
