-- The LuaJIT binding's tests: luajit bindings/lua/test.lua, with libcupel
-- findable (CUPEL_LIB=/path/to/libcupel.so). Prints "N passed, M failed".
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local cupel = require("cupel")

local passed, failed = 0, 0
local function test(name, f)
  local ok, err = pcall(f)
  if ok then
    passed = passed + 1
    print("ok   " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. ": " .. tostring(err))
  end
end

local function same(a, b, what)
  local sa = table.concat(a, ",")
  local sb = table.concat(b, ",")
  assert(sa == sb, (what or "") .. ": got {" .. sa .. "}, want {" .. sb .. "}")
end

local function raises(f, status_name, fragment)
  local ok, e = pcall(f)
  assert(not ok, "expected " .. status_name)
  assert(getmetatable(e) == cupel.Error, "not a cupel error: " .. tostring(e))
  assert(e.status_name == status_name, "status " .. e.status_name .. ", want " .. status_name)
  assert(tostring(e):find(fragment, 1, true), "message '" .. tostring(e) .. "' lacks '" .. fragment .. "'")
end

test("version", function()
  assert(cupel.version():match("^%d+%.%d+%.%d+"))
end)

test("greedy and knapsack on the spec's example (1-based indices)", function()
  local items = cupel.items({
    { tokens = 400, score = 0.9 }, { tokens = 100, score = 0.7 },
    { tokens = 100, score = 0.5 }, { tokens = 200, score = 0.1 },
  })
  assert(items:len() == 4)
  local budget = cupel.budget({ max_tokens = 300 })
  same(cupel.slice(cupel.greedy(), items, budget), { 2, 3 }, "greedy")
  local sel, report = cupel.slice(cupel.knapsack(1), items, budget, { report = true })
  table.sort(sel)
  same(sel, { 2, 3 }, "knapsack")
  assert(report.selected_tokens == 200)
  local over
  for _, d in ipairs(report.excluded) do
    if d.index == 1 then over = d end
  end
  assert(over.reason == "BudgetExceeded" and over.item_tokens == 400 and over.available_tokens == 100)
end)

test("errors carry the status and the library's message", function()
  raises(function() cupel.knapsack(0) end, "INVALID_ARGUMENT", "bucket_size is 0")
  raises(function() cupel.budget({ max_tokens = 10, target_tokens = 20 }) end, "INVALID_ARGUMENT",
    "target_tokens 20 > max_tokens 10")
  raises(function() cupel.items({ { tokens = 1, score = 0 / 0 } }) end, "INVALID_ARGUMENT", "scores[0] is NaN")
  raises(function() cupel.items({ { tokens = 1.5 } }) end, "INVALID_ARGUMENT", "tokens is 1.5")
  local items = cupel.items({ { tokens = 1 } })
  raises(function() items:set_group(6, 1) end, "INVALID_ARGUMENT", "index 5 is out of range")
  items:free()
  items:free() -- idempotent
  raises(function() items:len() end, "NULL_POINTER", "freed")
end)

test("a tool call and its result are never split", function()
  local items = cupel.items({
    { tokens = 10, score = 0.9, kind = "ToolCall", group = 7 },
    { tokens = 200, score = 0.1, kind = "ToolOutput", group = 7 },
    { tokens = 60, score = 0.5 },
  })
  local g = cupel.greedy()
  local sel, report = cupel.slice(g, items, cupel.budget({ max_tokens = 100 }), { report = true })
  same(sel, { 3 })
  for _, d in ipairs(report.excluded) do
    assert(d.reason == "BudgetExceeded" and d.group == 7 and d.group_tokens == 210)
  end
  same(cupel.slice(g, items, cupel.budget({ max_tokens = 270 })), { 3, 1, 2 })
  items:set_groups(1, { 0, 0 })
  same(cupel.slice(g, items, cupel.budget({ max_tokens = 100 })), { 1, 3 })
  local s = cupel.stream(100, 2)
  s:push(30, 0.5, 5)
  s:push(30, 0.5, 5)
  s:push(50, 0.5)
  s:push(40, 0.5)
  raises(function() s:push(1, 0.1, 5) end, "INVALID_ARGUMENT", "which ended before item 4")
  same(s:finish(), { 1, 2, 4 })
end)

test("the pipeline and its report", function()
  local day = 86400000
  local items = cupel.items({
    { tokens = 50, kind = "SystemPrompt", content = "You are helpful.", pinned = true, timestamp = 0 },
    { tokens = 100, content = "hello", timestamp = day },
    { tokens = 100, content = "how are you", timestamp = 2 * day },
    { tokens = 100, kind = "ToolOutput", content = "ls output", timestamp = 3 * day },
    { tokens = 100, content = "hello", timestamp = 4 * day },
    { tokens = -3, content = "broken" },
    { tokens = 5000, kind = "Document", content = "a huge file" },
  })
  local p = cupel.pipeline({
    scorer = cupel.scorers.recency(), slicer = cupel.greedy(), placer = cupel.chronological(),
  })
  local placed, report = p:run(items, cupel.budget({ max_tokens = 1000, target_tokens = 300 }), { report = true })
  assert(placed[1] == 1, "the pinned system prompt, the oldest, first")
  assert(#report.included == #placed and report.included[1].reason == "Pinned")
  local why = {}
  for _, d in ipairs(report.excluded) do why[d.index] = d end
  assert(why[6].reason == "NegativeTokens")
  assert(why[2].reason == "Deduplicated" and why[2].related_index == 5)
  assert(why[7].reason == "BudgetExceeded")
  assert(report.total_candidates == 7)
  assert(report.json:find('"total_candidates":7', 1, true))
  local strict = cupel.pipeline({ slicer = cupel.greedy(), overflow = cupel.OVERFLOW_THROW })
  raises(function() strict:run(items, cupel.budget({ max_tokens = 40 })) end, "INVALID_ARGUMENT",
    "pinned items need 50 tokens")
end)

test("every scorer scores every item", function()
  local items = cupel.items({
    { tokens = 10, score = 0.2, kind = "Memory", timestamp = 1000, priority = 3, relevance_hint = 0.4,
      tags = { "auth" }, metadata = { ["cupel:trust"] = "0.9" } },
    { tokens = 10, score = 0.8, kind = "Message", timestamp = 5000, priority = 1, tags = { "db", "auth" } },
  })
  local s = cupel.scorers
  local all = {
    s.given(), s.recency(), s.priority(), s.frequency(), s.reflexive(), s.kind(), s.kind({ Memory = 2 }),
    s.tag({ auth = 1, db = 3 }), s.metadata_trust(0.5), s.metadata_key("cupel:trust", "0.9", 2),
    s.decay({ curve = cupel.DECAY_EXPONENTIAL, duration_secs = 60, reference_time = 10000 }),
    s.decay({ curve = cupel.DECAY_STEP, windows = { { 1, 0.9 }, { 100, 0.1 } }, reference_time = 10000 }),
  }
  all[#all + 1] = s.composite({ { all[1], 1 }, { all[2], 2 } })
  all[#all + 1] = s.scaled(all[3])
  for _, scorer in ipairs(all) do
    local scores = scorer:score(items)
    assert(#scores == 2 and scores[1] == scores[1] and scores[2] == scores[2])
  end
  same(all[1]:score(items), { 0.2, 0.8 }, "given")
  raises(function() s.metadata_key("k", "v", 0) end, "INVALID_ARGUMENT", "boost")
end)

test("marginal items, min budget, quota, count slicers, effective budget", function()
  local items = cupel.items({ { tokens = 100, score = 0.9 }, { tokens = 100, score = 0.8 }, { tokens = 100, score = 0.7 } })
  local g = cupel.greedy()
  same(cupel.marginal_items(g, items, cupel.budget({ max_tokens = 300 }), 100), { 3 })
  assert(cupel.find_min_budget(g, items, 3, 1000) == 300)
  assert(cupel.find_min_budget(g, items, 3, 250) == nil)
  local q = cupel.quota(g, { { kind = "Message", require_percent = 0, cap_percent = 50 } })
  assert(#cupel.slice(q, items, cupel.budget({ max_tokens = 300 })) == 1)
  local c = cupel.count_constrained_knapsack(1, { { kind = "Message", require_count = 1, cap_count = 2 } })
  local sel, report = cupel.slice(c, items, cupel.budget({ max_tokens = 300 }), { report = true })
  same(sel, { 1, 2 })
  same(report.cap_excluded, { 3 })
  local max, target = cupel.budget({ max_tokens = 1000, target_tokens = 800, output_reserve = 100 }):effective(50)
  assert(max == 850 and target == 750, max .. " " .. target)
end)

test("the collector frees what was dropped", function()
  collectgarbage("collect")
  collectgarbage("collect")
  local before = cupel.live_handles()
  for _ = 1, 200 do
    local items = cupel.items({ { tokens = 1, score = 0.1 } })
    cupel.slice(cupel.greedy(), items, cupel.budget({ max_tokens = 10 }))
  end
  collectgarbage("collect")
  collectgarbage("collect")
  assert(cupel.live_handles() == before, cupel.live_handles() .. " live, " .. before .. " before")
end)

print(("test_cupel_lua: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
