-- luajit bindings/lua/example.lua (with CUPEL_LIB=/path/to/libcupel.so)
package.path = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./") .. "?.lua;" .. package.path
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
local placed, report = pipeline:run(items, cupel.budget({ max_tokens = 800, target_tokens = 600 }), { report = true })
print("placed: " .. table.concat(placed, " "))
for _, d in ipairs(report.excluded) do
  print(("left out #%d: %s (group %d needs %d tokens)"):format(d.index, d.reason, d.group, d.group_tokens))
end
