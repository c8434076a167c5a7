-- luajit example_pipeline.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local items = cupel.items({
  { tokens = 120, kind = "SystemPrompt", content = "system: coding assistant", pinned = true, timestamp = 0 },
  { tokens = 40, kind = "Message", content = "user: why does login fail?", timestamp = 1000 },
  { tokens = 25, kind = "ToolCall", content = "call: grep refresh_token", timestamp = 2000, group = 1 },
  { tokens = 310, kind = "ToolOutput", content = "src/auth/refresh.rs:42 ...", timestamp = 2000, group = 1 },
  { tokens = 20, kind = "ToolCall", content = "call: kubectl logs auth", timestamp = 3000, group = 2 },
  { tokens = 450, kind = "ToolOutput", content = "auth-7f9: token expired ...", timestamp = 3000, group = 2 },
})
local pipeline = cupel.pipeline({
  scorer = cupel.scorers.recency(),
  slicer = cupel.greedy(),
  placer = cupel.chronological(),
})
local budget = cupel.budget({ max_tokens = 800, target_tokens = 600 })
local placed, report = pipeline:run(items, budget, { report = true })
for _, i in ipairs(placed) do
  local item = items:get(i)
  print(("placed #%d %-12s %3d tokens  %s"):format(i, item.kind, item.tokens, item.content))
end
for _, d in ipairs(report.excluded) do
  local why = d.reason
  if d.group ~= 0 then
    why = why .. (" (group %d needs %d tokens)"):format(d.group, d.group_tokens)
  end
  print(("left out #%d: %s"):format(d.index, why))
end
