-- The LuaJIT binding's tests: luajit bindings/lua/test.lua, with libcupel
-- findable (CUPEL_LIB=/path/to/libcupel.so). Prints "N passed, M failed".
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local cupel = require("cupel")
local ffi = require("ffi")

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
  local sel, report = cupel.slice(cupel.knapsack(1), items, budget, 0, { report = true })
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
  raises(function() cupel.items({ { tokens = 1, score = 0 / 0 } }) end, "INVALID_ARGUMENT", "list[1].score is NaN")
  raises(function() cupel.items({ { tokens = 1 }, { tokens = 1.5 } }) end, "INVALID_ARGUMENT",
    "list[2].tokens is 1.5; expected an integer")
  local items = cupel.items({ { tokens = 1 } })
  raises(function() items:set_group(6, 1) end, "INVALID_ARGUMENT", "index is 6, out of range: the list holds 1 items")
  items:free()
  items:free() -- idempotent
  raises(function() items:len() end, "CLOSED", "items was freed")
  assert(select(2, pcall(items.len, items)).status == cupel.CLOSED)
end)

test("a tool call and its result are never split", function()
  local items = cupel.items({
    { tokens = 10, score = 0.9, kind = "ToolCall", group = 7 },
    { tokens = 200, score = 0.1, kind = "ToolOutput", group = 7 },
    { tokens = 60, score = 0.5 },
  })
  local g = cupel.greedy()
  local sel, report = cupel.slice(g, items, cupel.budget({ max_tokens = 100 }), 0, { report = true })
  same(sel, { 3 })
  for _, d in ipairs(report.excluded) do
    assert(d.reason == "BudgetExceeded" and d.group == 7 and d.group_tokens == 210)
    assert(type(d.group) == "number" and type(d.item_tokens) == "number")
  end
  same(cupel.slice(g, items, cupel.budget({ max_tokens = 270 })), { 3, 1, 2 })
  items:set_groups(1, { 0, 0 })
  same(cupel.slice(g, items, cupel.budget({ max_tokens = 100 })), { 1, 3 })
  local s = cupel.stream(100, 2)
  s:push(30, 0.5, 5)
  s:push(30, 0.5, 5)
  s:push(50, 0.5)
  s:push(40, 0.5)
  raises(function() s:push(1, 0.1, 5) end, "INVALID_ARGUMENT", "which ended before item 5")
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
  all[#all + 1] = s.composite({ all[1], all[2] }, { 1, 2 })
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
  same(cupel.marginal_items(g, items, cupel.budget({ max_tokens = 300 }), 0, 100), { 3 })
  assert(cupel.find_min_budget(g, items, 0, 3, 1000) == 300)
  assert(cupel.find_min_budget(g, items, nil, 3, 250) == nil)
  local q = cupel.quota(g, { { kind = "Message", require_percent = 0, cap_percent = 50 } })
  assert(#cupel.slice(q, items, cupel.budget({ max_tokens = 300 })) == 1)
  local c = cupel.count_constrained_knapsack(1, { { kind = "Message", require_count = 1, cap_count = 2 } })
  local sel, report = cupel.slice(c, items, cupel.budget({ max_tokens = 300 }), nil, { report = true })
  same(sel, { 1, 2 })
  same(report.cap_excluded, { 3 })
  local max, target = cupel.budget({ max_tokens = 1000, target_tokens = 800, output_reserve = 100 }):effective(50)
  assert(max == 850 and target == 750, max .. " " .. target)
end)

test("items read back as tables: every attribute, absent ones nil, 1-based", function()
  local items = cupel.items({
    { tokens = 12, score = 0.25, kind = "message", content = "hi", timestamp = 1700000000000, priority = -3,
      pinned = true, relevance_hint = 0.75, source = "Tool", tags = { "a", "b", "a" },
      metadata = { k = "v", z = "w" }, group = 9 },
    { tokens = 9007199254740993LL, kind = "MESSAGE" },
  })
  local one = items:get(1)
  assert(one.tokens == 12 and one.score == 0.25 and one.kind == "message" and one.content == "hi")
  assert(one.timestamp == 1700000000000 and one.priority == -3 and one.pinned == true)
  assert(one.relevance_hint == 0.75 and one.source == "Tool" and one.group == 9)
  for _, k in ipairs({ "tokens", "timestamp", "priority", "group" }) do
    assert(type(one[k]) == "number", k .. " is a " .. type(one[k]) .. ", not a Lua number")
  end
  same(one.tags, { "a", "b", "a" }, "tags")
  assert(one.metadata.k == "v" and one.metadata.z == "w")
  local two = items:get(2)
  assert(two.tokens == 9007199254740993LL, "int64 beyond 2^53 reads back exactly: " .. tostring(two.tokens))
  assert(two.kind == "message", "kinds read back as the list first spelled them: " .. two.kind)
  local bare = cupel.items({ { tokens = 5 } }):get(1)
  assert(bare.tokens == 5 and bare.score == 0 and bare.kind == "Message" and bare.source == "Chat")
  assert(bare.content == nil and bare.timestamp == nil and bare.priority == nil and bare.relevance_hint == nil)
  assert(bare.pinned == false and bare.group == 0 and #bare.tags == 0 and next(bare.metadata) == nil)
  raises(function() items:get(3) end, "INVALID_ARGUMENT", "index is 3, out of range: the list holds 2 items")
  raises(function() items:get(0) end, "INVALID_ARGUMENT", "index is 0, out of range")
  raises(function() items:get(-1) end, "INVALID_ARGUMENT", "index is -1, out of range")
  raises(function() items:get(nil) end, "NULL_POINTER", "index is nil")
  items:set_group(1, 2 ^ 60)
  assert(items:get(1).group == ffi.cast("uint64_t", 2 ^ 60))
  items:set_group(2, 0xFFFFFFFFFFFFFFFFULL)
  assert(items:get(2).group == 0xFFFFFFFFFFFFFFFFULL)
end)

test("single-item setters, then read back", function()
  local items = cupel.items({ { tokens = 10 }, { tokens = 20 } })
  items:set_content(2, "c"):set_timestamp(2, 5):set_priority(2, 2):set_pinned(2, true):add_tag(2, "t")
    :set_metadata(2, "k", "v"):set_metadata(2, "k", "v2"):set_source(2, "Tool"):set_relevance_hint(2, 0.5)
  local it = items:get(2)
  assert(it.content == "c" and it.timestamp == 5 and it.priority == 2 and it.pinned and it.tags[1] == "t")
  assert(it.metadata.k == "v2" and it.source == "Tool" and it.relevance_hint == 0.5)
  assert(items:get(1).content == nil, "item 1 untouched")
  raises(function() items:set_content(1, "") end, "INVALID_ARGUMENT", "content of item 1 is empty")
  raises(function() items:set_content(1, "a\0b") end, "INVALID_ARGUMENT", "content holds a NUL byte (at byte 2)")
  raises(function() items:set_metadata(1, "k", nil) end, "NULL_POINTER", "value is nil")
  raises(function() items:set_pinned(1, 1) end, "INVALID_ARGUMENT", "pinned must be a boolean, got number 1")
  raises(function() items:set_timestamp(1, 1e300) end, "INVALID_ARGUMENT", "unix_millis is 1e+300; it does not fit")
end)

test("a push is all or nothing, and names the item by its place in the list", function()
  local items = cupel.items({ { tokens = 1 } })
  raises(function() items:push({ { tokens = 1, content = "ok" }, { tokens = 2, content = "" } }) end,
    "INVALID_ARGUMENT", "content of list[2] is empty")
  raises(function() items:push({ { tokens = 1, tags = { "a", "\255" } } }) end, "INVALID_ARGUMENT",
    "list[1]: tag is not valid UTF-8")
  raises(function() items:push({ { tokens = 1 }, { tokens = 1, kind = "" } }) end, "INVALID_ARGUMENT",
    'list[2].kind "" is empty')
  raises(function() items:push({ { tokens = 1 }, "x" }) end, "INVALID_ARGUMENT", "list[2] must be a table")
  raises(function() items:push({ { tokens = 1, metadata = { k = 5 } } }) end, "INVALID_ARGUMENT",
    'list[1].metadata["k"] must be a string')
  raises(function() items:add({ tokens = 1, pinned = "yes" }) end, "INVALID_ARGUMENT",
    "item.pinned must be a boolean")
  raises(function() items:push(nil) end, "NULL_POINTER", "list is nil")
  assert(items:len() == 1, "nothing was added: " .. items:len())
  assert(items:add({ tokens = 5, content = "x", tags = { "t" } }) == 2)
  assert(items:get(2).content == "x" and items:get(2).tags[1] == "t")
end)

test("numbers that do not fit the C integer are refused before conversion", function()
  raises(function() cupel.budget({ max_tokens = 2 ^ 63 }) end, "INVALID_ARGUMENT",
    "max_tokens is 9.2233720368547758e+18; it does not fit in a signed 64-bit integer")
  raises(function() cupel.budget({ max_tokens = 0x8000000000000000ULL }) end, "INVALID_ARGUMENT",
    "max_tokens is 9223372036854775808; it does not fit")
  assert(cupel.budget({ max_tokens = 1000LL }):effective() == 1000)
  raises(function() cupel.stream(100):push(-2 ^ 64, 0.5) end, "INVALID_ARGUMENT", "tokens is -1.8446744073709552e+19")
  raises(function() cupel.stream(100):push(1, 0.5, 0 / 0) end, "INVALID_ARGUMENT", "group is nan; expected an integer")
  raises(function() cupel.items({ { tokens = 1 } }):set_group(1, -1) end, "INVALID_ARGUMENT", "group is -1; it must be >= 0")
  raises(function() cupel.count_quota(cupel.greedy(), { { kind = "A", cap_count = 2 ^ 32 } }) end,
    "INVALID_ARGUMENT", "entries[1].cap_count is 4294967296; it does not fit in an unsigned 32-bit integer")
  raises(function() cupel.pipeline({ slicer = cupel.greedy(), overflow = 2 ^ 31 }) end, "INVALID_ARGUMENT",
    "overflow is 2147483648; it does not fit in a C int")
  raises(function() cupel.knapsack("100") end, "INVALID_ARGUMENT", 'bucket_size must be an integer, got string "100"')
end)

test("handles of the wrong type or freed are refused by name", function()
  local items = cupel.items({ { tokens = 1 } })
  local budget = cupel.budget({ max_tokens = 10 })
  raises(function() cupel.slice(cupel.scorers.given(), items, budget) end, "INVALID_ARGUMENT",
    "slicer must be a cupel Slicer, got a cupel Scorer")
  raises(function() cupel.slice(cupel.greedy(), budget, budget) end, "INVALID_ARGUMENT",
    "items must be a cupel Items, got a cupel Budget")
  raises(function() cupel.scorers.composite({ cupel.scorers.given() }, { 1, 2 }) end, "NULL_POINTER", "children[2] is nil")
  raises(function() cupel.scorers.composite({ cupel.scorers.given(), cupel.scorers.recency() }, { 1 }) end,
    "NULL_POINTER", "weights[2] is nil")
  raises(function() cupel.scorers.kind({ Memory = -1 }) end, "INVALID_ARGUMENT", 'weights["Memory"].weight (kind "Memory") is -1')
  local inner = cupel.greedy()
  local q = cupel.quota(inner, { { kind = "Message", cap_percent = 50 } })
  inner:free()
  assert(#cupel.slice(q, items, budget) == 1, "a decorator keeps what it needs of a freed inner slicer")
  raises(function() cupel.quota(inner, {}) end, "CLOSED", "inner was freed")
  budget:free()
  raises(function() cupel.slice(q, items, budget) end, "CLOSED", "budget was freed")
end)

test("the placer alone", function()
  local items = cupel.items({ { tokens = 1, timestamp = 30 }, { tokens = 1, timestamp = 10 }, { tokens = 1, timestamp = 20 } })
  local p = cupel.chronological()
  same(p:place(items, { 1, 2, 3 }, { 0.1, 0.2, 0.3 }), { 2, 3, 1 }, "oldest first")
  same(p:place(items, { 3, 1 }, { 0.1, 0.2 }), { 3, 1 }, "a subset")
  raises(function() p:place(items, { 1, 5 }, { 0.5, 0.5 }) end, "INVALID_ARGUMENT", "indices[2] is 5, out of range")
  raises(function() p:place(items, { 1, 2 }, { 0.5, 0 / 0 }) end, "INVALID_ARGUMENT", "scores[2] is NaN")
  raises(function() p:place(items, { 1, 2 }, { 0.5 }) end, "NULL_POINTER", "scores[2] is nil")
end)

test("budget setters", function()
  local b = cupel.budget({ max_tokens = 1000, target_tokens = 800 })
  assert(b:effective() == 1000)
  assert(b:set_output_reserve(100) == b)
  local max, target = b:effective(50)
  assert(max == 850 and target == 750, max .. " " .. target)
  raises(function() b:set_safety_margin(0 / 0) end, "INVALID_ARGUMENT", "percent is NaN")
  raises(function() b:reserve(nil, 10) end, "NULL_POINTER", "kind is nil")
  raises(function() b:reserve("Message", -10) end, "INVALID_ARGUMENT", "-10")
  raises(function() b:effective(-1) end, "INVALID_ARGUMENT", "pinned_tokens is -1")
  assert(select(1, b:effective(50)) == 850, "failed calls changed nothing")
end)

test("marginal_items and find_min_budget take the C ABI's argument order", function()
  local items = cupel.items({ { tokens = 100, score = 0.9 }, { tokens = 100, score = 0.8 }, { tokens = 100, score = 0.7 } })
  local g = cupel.greedy()
  local budget = cupel.budget({ max_tokens = 300 })
  -- (slicer, items, budget, pinned_tokens, slack_tokens): the items selected
  -- at the budget but not with slack_tokens less. 200 pinned leave room for
  -- item 1, which 100 less would drop; 100 pinned leave room for 1 and 2,
  -- which 200 less would drop.
  same(cupel.marginal_items(g, items, budget, 200, 100), { 1 })
  same(cupel.marginal_items(g, items, budget, 100, 200), { 1, 2 })
  same(cupel.marginal_items(g, items, budget, nil, 100), { 3 })
  -- (slicer, items, pinned_tokens, target_index, search_ceiling)
  assert(cupel.find_min_budget(g, items, 50, 3, 1000) == 350)
  assert(cupel.find_min_budget(g, items, 0, 1, 1000) == 100)
  raises(function() cupel.find_min_budget(g, items, 0, 4, 1000) end, "INVALID_ARGUMENT", "target_index is 4, out of range")
  raises(function() cupel.find_min_budget(g, items, 0, 3, 50) end, "INVALID_ARGUMENT",
    "search_ceiling 50 < tokens 100 of item 3")
  raises(function() cupel.marginal_items(g, items, budget, 0, nil) end, "NULL_POINTER", "slack_tokens is nil")
end)

test("reason names come from cupel_reason_str", function()
  local f = assert(io.open(here .. "cupel_cdef.h"))
  local cdef = f:read("*a")
  f:close()
  local n = 0
  for upper, code in cdef:gmatch("CUPEL_REASON_([%u_]+) = (%d+)") do
    local camel = ("_" .. upper:lower()):gsub("_(%l)", string.upper)
    code = tonumber(code)
    assert(cupel.reason_name(code) == camel, code .. ": " .. cupel.reason_name(code) .. ", not " .. camel)
    assert(cupel.REASON[code] == camel)
    n = n + 1
  end
  local m = 0
  for _ in pairs(cupel.REASON) do m = m + 1 end
  assert(n >= 12 and m == n, n .. " reasons in the header, " .. m .. " in cupel.REASON")
  assert(cupel.reason_name(3) == "Unknown" and cupel.reason_name(-1) == "Unknown")
  assert(cupel.reason_name(2 ^ 40) == "Unknown")
  raises(function() cupel.reason_name(1.5) end, "INVALID_ARGUMENT", "code is 1.5")
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
