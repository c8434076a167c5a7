-- luajit example_shrink.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local tok = cupel.tokenizer("o200k_base")
local lines = {}
for i = 0, 199 do
  lines[#lines + 1] = ("Line %d: the quick brown fox jumps over the lazy dog.\n"):format(i)
end
local doc = table.concat(lines)

local items = cupel.items({
  { tokens = 40, score = 0.9, content = "What failed in the last build?" },
  -- A tool output that may give way to a placeholder keeping 10% of its score.
  { tokens = 9000, score = 0.8, kind = "ToolOutput", content = "(the build log)",
    variants = { { tokens = 12, value = 0.1, content = "[output cleared: 9,000 tokens]" } } },
})
-- A document that may be cut to its beginning, if at least 50 tokens remain.
items:push_texts(tok, { { text = doc, score = 0.6, kind = "Document",
  truncatable = { keep = "head", min_tokens = 50 } } })

local pipeline = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = tok })
local budget = cupel.budget({ max_tokens = 1000 })
local placed, report = pipeline:run(items, budget, { report = true })
for _, d in ipairs(report.included) do
  print(("#%d %-9s variant %d adds %3d of %4d tokens, bytes 1-%d and %d-: %q"):format(d.index, d.reason,
    d.variant, d.tokens_added, d.item_tokens, d.head_end, d.tail_start, d.text:sub(-30)))
end
print("selected tokens: " .. report.selected_tokens)

pipeline:set_tokenizer(nil)
print(select(2, pcall(pipeline.run, pipeline, items, budget)))
