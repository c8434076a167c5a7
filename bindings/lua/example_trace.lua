-- luajit example_trace.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local items = cupel.items({
  { tokens = 100, kind = "Message", content = "alpha", timestamp = 1000 },
  { tokens = 200, kind = "Document", content = "beta", timestamp = 2000 },
  { tokens = 50, kind = "ToolOutput", content = "gamma", timestamp = 3000 },
})
local pipeline = cupel.pipeline({ scorer = cupel.scorers.recency(), slicer = cupel.greedy(),
  placer = cupel.chronological() })

pipeline:set_trace("full", function(e)
  if e.kind == "exclusion" then
    print(("  %s: item %d (%s, %d tokens): %s"):format(e.name, e.item, e.item_kind, e.tokens, e.reason))
  elseif e.kind == "included" then
    print(("  %s: item %d (%s, %d tokens, score %.2f)"):format(e.name, e.item, e.item_kind, e.tokens, e.score))
  else
    print(("%s: %d items in, %d out"):format(e.name, e.item_count_in, e.item_count_out))
  end
end)
pipeline:run(items, cupel.budget({ max_tokens = 300, target_tokens = 250 }))

-- An error in the callback is raised by the run, once the run is over.
pipeline:set_trace("stages", function(e) error("exporter is down", 0) end)
print(pcall(pipeline.run, pipeline, items, cupel.budget({ max_tokens = 300 })))
pipeline:set_trace(nil) -- tracing off; the callback is freed
