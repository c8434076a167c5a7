-- luajit example_tokens.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local tok = cupel.tokenizer("o200k_base")
print(tok:count("Hello, world! This is libcupel counting tokens."))
print(table.concat(tok:count_many({ "日本語のテキスト", "👍🏽 done" }), " "))

-- A long log cut to 30 tokens: its first and last lines stay.
local lines = {}
for i = 1, 500 do
  lines[i] = ("%03d GET /api/items 200 in %d ms"):format(i, 10 + i % 7)
end
local log = table.concat(lines, "\n")
local kept, head_end, tail_start, tokens = tok:truncate(log, 30, "both_ends")
print(("%d of %d tokens kept: bytes 1-%d and %d-%d of %d"):format(tokens, tok:count(log), head_end,
  tail_start, #log, #log))
print(log:sub(1, head_end) .. "[...]" .. log:sub(tail_start))
assert(kept == log:sub(1, head_end) .. log:sub(tail_start))

-- Items straight from text: their tokens are counted for you.
local items = cupel.items()
items:push_text(tok, "system: you are a coding assistant", 1.0, "SystemPrompt")
items:push_texts(tok, {
  "user: why does login fail?",
  { text = "tool: token expired at 10:42 (auth-7f9)", score = 0.8, kind = "ToolOutput" },
})
for i = 1, items:len() do
  local item = items:get(i)
  print(("#%d %-12s %2d tokens  %s"):format(i, item.kind, item.tokens, item.content))
end
