-- luajit example_analytics.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local items = cupel.items({
  { tokens = 120, kind = "SystemPrompt", content = "system prompt", pinned = true },
  { tokens = 300, kind = "Message", content = "question", timestamp = 1000 },
  { tokens = 500, kind = "ToolOutput", content = "tool output", timestamp = 2000 },
  { tokens = 900, kind = "Document", content = "long document" },
})
local pipeline = cupel.preset("Chat")
local _, report = pipeline:run(items, cupel.budget({ max_tokens = 1000 }), { report = true })

local a = report.analytics
print(("budget utilization %.2f, %d kinds, %.0f%% with a timestamp"):format(a.budget_utilization,
  a.kind_diversity, 100 * a.timestamp_coverage))
-- The same in the report's JSON.
print(report.json:match('"analytics":(%b{})'))
