-- luajit example_sensitivity.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local items = cupel.items({
  { tokens = 300, score = 0.9, kind = "SystemPrompt", content = "system prompt", timestamp = 1 },
  { tokens = 400, score = 0.4, kind = "Document", content = "design doc", timestamp = 2 },
  { tokens = 250, score = 0.6, kind = "ToolOutput", content = "test log", timestamp = 3 },
  { tokens = 200, score = 0.7, kind = "Message", content = "latest question", timestamp = 4 },
})
items:set_relevance_hint(2, 0.9)
local budget = cupel.budget({ max_tokens = 1000 })

-- Which items does the choice of policy decide?
local json = cupel.policy_sensitivity({
  { label = "chat", pipeline = cupel.preset("Chat") },
  { label = "rag", pipeline = cupel.preset("Rag") },
}, items, budget)

-- The text holds each variant's report and the diffs; this cuts out the
-- diffs with a pattern (decode the whole with vim.json.decode, lua-cjson...).
print(json:match('"diffs":(%b[])'))
