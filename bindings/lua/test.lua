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

-- Methods called on a nil receiver (the metatables' functions).
local function Pipeline_to_json(p) return getmetatable(cupel.preset("Chat")).to_json(p) end
local function Pipeline_set_trace(p, ...) return getmetatable(cupel.preset("Chat")).set_trace(p, ...) end

local function raises(f, status_name, fragment)
  local ok, e = pcall(f)
  assert(not ok, "expected " .. status_name .. ": " .. fragment)
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
  assert(cupel.reason_name(3) == "Variant" and cupel.reason_name(4) == "Truncated")
  assert(cupel.reason_name(5) == "Unknown" and cupel.reason_name(-1) == "Unknown")
  assert(cupel.reason_name(2 ^ 40) == "Unknown")
  raises(function() cupel.reason_name(1.5) end, "INVALID_ARGUMENT", "code is 1.5")
end)

-- ---- tokenizers --------------------------------------------------------------------

local SENTENCE = "Hello, world! This is libcupel counting tokens."

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local q = {}
    for k = 3, 0, -1 do
      local d = math.floor(n / 64 ^ k) % 64
      q[#q + 1] = B64:sub(d + 1, d + 1)
    end
    if not b then
      q[3], q[4] = "=", "="
    elseif not c then
      q[4] = "="
    end
    out[#out + 1] = table.concat(q)
  end
  return table.concat(out)
end

-- A tiktoken file: every single byte (rank = the byte, except `skip`), then
-- `merges` in rank order from 256. Counts with it are computed by hand.
local function vocabulary(merges, skip)
  local lines = {}
  for b = 0, 255 do
    if b ~= skip then lines[#lines + 1] = base64(string.char(b)) .. " " .. b end
  end
  for i, m in ipairs(merges or {}) do lines[#lines + 1] = base64(m) .. " " .. (255 + i) end
  return table.concat(lines, "\n") .. "\n"
end

-- 日 and 本 are three bytes each (E6 97 A5, E6 9C AC): with these merges
-- "日本" is one token and every other byte of a text one token.
local NI, HON = "日", "本"
local NIHON_MERGES = { NI:sub(1, 2), NI, HON:sub(1, 2), HON, NI .. HON, "ab" }

-- Whether byte `i` of `s` starts a character (or is one past the end).
local function char_start(s, i)
  local b = s:byte(i)
  return b == nil or b < 0x80 or b >= 0xC0
end

test("a tokenizer counts: the built-in encodings, many texts at once, NUL bytes", function()
  local o200k, cl100k = cupel.tokenizer("o200k_base"), cupel.tokenizer("cl100k_base")
  assert(o200k:count(SENTENCE) == 12, o200k:count(SENTENCE))
  assert(o200k:count("hello world") == 2 and cl100k:count("hello world") == 2)
  assert(cl100k:count("Hello, world!") == 4, "Hello|,| world|!")
  assert(o200k:count("") == 0 and type(o200k:count("x")) == "number")
  assert(o200k:count("<|endoftext|>") > 1, "special tokens are ordinary text")
  local texts = { SENTENCE, "", "日本語のテキスト", "👍🏽 🇯🇵 👨‍👩‍👧", "a\0b", ("word "):rep(300) }
  for _, tok in ipairs({ o200k, cl100k }) do
    local counts = tok:count_many(texts)
    assert(#counts == #texts)
    for i, t in ipairs(texts) do
      assert(counts[i] == tok:count(t), ("texts[%d]: %d in count_many, %d alone"):format(i, counts[i], tok:count(t)))
    end
  end
  local many = {}
  for i = 1, 3000 do many[i] = ("item %d: %s"):format(i, i % 2 == 0 and "日本語" or "text") end
  local counts = o200k:count_many(many)
  assert(#counts == 3000 and counts[1] == o200k:count(many[1]) and counts[3000] == o200k:count(many[3000]))
  same(o200k:count_many({}), {}, "no texts")
  same(o200k:count_many({ "a", "b", n = 1 }), { o200k:count("a") }, "texts.n is the length")
  assert(cupel.tokenizer_from_tiktoken(vocabulary()):count("a\0b") == 3, "NUL bytes are text")
end)

test("a tiktoken vocabulary from bytes: counts by hand, its pattern, truncation in 1-based bytes", function()
  local tok = cupel.tokenizer_from_tiktoken(vocabulary(NIHON_MERGES))
  local text = "日本語のテキスト" -- 24 bytes: 日本 is 1 token, the 6 other characters 3 each
  assert(tok:count(text) == 19, tok:count(text))
  assert(tok:count("ab") == 1 and cupel.tokenizer_from_tiktoken(vocabulary(NIHON_MERGES), "."):count("ab") == 2,
    "the pattern splits before the merges")
  -- { max_tokens, keep, kept, head_end, tail_start, tokens }
  for _, case in ipairs({
    { 19, "head", text, 24, 25, 19 }, -- fits: all of it
    { 0, "both_ends", "", 0, 25, 0 },
    { 1, "head", "日本", 6, 25, 1 },
    { 3, "head", "日本", 6, 25, 1 }, -- bytes 7 and 8 end tokens but no character
    { 4, "head", "日本語", 9, 25, 4 },
    { 2, "tail", "", 0, 25, 0 },
    { 5, "tail", "ト", 0, 22, 3 },
    { 6, "tail", "スト", 0, 19, 6 },
    { 4, "both_ends", "日本ト", 6, 22, 4 }, -- head 2 tokens at most (1 used), tail 3
    { 6, "both_ends", "日本ト", 6, 22, 4 },
    { 4, nil, "日本語", 9, 25, 4 }, -- keep defaults to head
  }) do
    local kept, head_end, tail_start, tokens = tok:truncate(text, case[1], case[2])
    local got = table.concat({ kept, head_end, tail_start, tokens }, " ")
    local want = table.concat({ case[3], case[4], case[5], case[6] }, " ")
    assert(got == want, ("max %d, %s: got %s, want %s"):format(case[1], tostring(case[2]), got, want))
    assert(text:sub(1, head_end) .. text:sub(tail_start) == kept)
  end
end)

test("truncating non-ASCII text with the built-in encodings keeps whole characters", function()
  local texts = {
    "日本語のテキスト",
    "Emoji: 👍🏽 and 🇯🇵 and 👨‍👩‍👧‍👦, with ünïcödé and Ελληνικά and русский текст.",
    SENTENCE,
  }
  for _, name in ipairs({ "o200k_base", "cl100k_base" }) do
    local tok = cupel.tokenizer(name)
    for _, text in ipairs(texts) do
      local total = tok:count(text)
      for _, keep in ipairs({ cupel.KEEP_HEAD, cupel.KEEP_TAIL, cupel.KEEP_BOTH_ENDS }) do
        local last_head, last_tail = -1, #text + 2
        for max = 0, total + 1 do
          local where = ("%s, %s, max %d on %q"):format(name, keep, max, text)
          local kept, head_end, tail_start, tokens = tok:truncate(text, max, keep)
          local head, tail = text:sub(1, head_end), text:sub(tail_start)
          assert(head .. tail == kept, where .. ": the kept text is not head .. tail")
          assert(0 <= head_end and head_end < tail_start and tail_start <= #text + 1, where)
          assert(char_start(text, head_end + 1) and char_start(text, tail_start), where .. ": a split character")
          -- counting the pieces checks that they are UTF-8
          assert(tokens == tok:count(head) + tok:count(tail) and tokens <= max, where .. ": " .. tokens .. " tokens")
          if max >= total then
            assert(kept == text and head_end == #text and tail_start == #text + 1 and tokens == total, where)
          end
          if keep == "head" then
            assert(tail_start == #text + 1 and head_end >= last_head, where)
          elseif keep == "tail" and max < total then
            assert(head_end == 0 and tail_start <= last_tail, where)
          end
          if max > 0 and max < total and keep ~= "both_ends" and #text > 20 then
            assert(tokens > 0, where .. ": nothing kept")
          end
          last_head, last_tail = head_end, tail_start
        end
      end
    end
  end
end)

test("items from text: one, many with attributes, all or nothing", function()
  local tok = cupel.tokenizer("o200k_base")
  local items = cupel.items({ { tokens = 1 } })
  assert(items:push_text(tok, "hello world", 0.5, "Document") == 2)
  local it = items:get(2)
  assert(it.tokens == 2 and it.content == "hello world" and it.kind == "Document" and it.score == 0.5)
  assert(items:push_text(tok, SENTENCE) == 3 and items:get(3).score == 0 and items:get(3).kind == "Message")
  local texts = { "日本語のテキスト", "👍🏽 done", SENTENCE }
  assert(items:push_texts(tok, {
    texts[1],
    { text = texts[2], score = 0.25, kind = "ToolOutput", timestamp = 7, tags = { "t" }, group = 3 },
    { text = texts[3], pinned = true },
  }) == items)
  assert(items:len() == 6)
  for i, text in ipairs(texts) do
    local got = items:get(3 + i)
    assert(got.tokens == tok:count(text) and got.content == text, "item " .. (3 + i))
  end
  local two = items:get(5)
  assert(two.score == 0.25 and two.kind == "ToolOutput" and two.timestamp == 7 and two.tags[1] == "t" and two.group == 3)
  assert(items:get(6).pinned and not items:get(4).pinned and items:get(4).kind == "Message")
  items:push_texts(tok, {})
  raises(function() items:push_texts(tok, { "ok", "ok", { text = "" } }) end, "INVALID_ARGUMENT",
    "list[3].text is empty")
  raises(function() items:push_texts(tok, { "ok", "a\255b" }) end, "INVALID_ARGUMENT",
    "list[2] is not valid UTF-8 (at byte 2)")
  raises(function() items:push_texts(tok, { "ok", { text = "x", score = 0 / 0 } }) end, "INVALID_ARGUMENT",
    "list[2].score is NaN")
  raises(function() items:push_texts(tok, { "ok", { text = "x", kind = "" } }) end, "INVALID_ARGUMENT", "list[2].kind")
  raises(function() items:push_texts(tok, { "ok", { text = "x", tags = { "a", "\255" } } }) end, "INVALID_ARGUMENT",
    "list[2]: tag is not valid UTF-8")
  raises(function() items:push_texts(tok, { { text = "x", tokens = 3 } }) end, "INVALID_ARGUMENT",
    "list[1].tokens is set")
  raises(function() items:push_texts(tok, { { text = "x", content = "y" } }) end, "INVALID_ARGUMENT",
    "list[1].content is set")
  raises(function() items:push_texts(tok, { "ok", { score = 1 } }) end, "NULL_POINTER", "list[2].text is nil")
  raises(function() items:push_texts(tok, { "ok", nil, n = 2 }) end, "NULL_POINTER", "list[2] is nil")
  raises(function() items:push_texts(tok, { "ok", 5 }) end, "INVALID_ARGUMENT", "list[2] must be a string or a table")
  raises(function() items:push_text(tok, "") end, "INVALID_ARGUMENT", "text is empty")
  raises(function() items:push_text(tok, "\255") end, "INVALID_ARGUMENT", "text is not valid UTF-8 (at byte 1)")
  raises(function() items:push_text(tok, "x", 0 / 0) end, "INVALID_ARGUMENT", "score is NaN")
  raises(function() items:push_text(nil, "x") end, "NULL_POINTER", "tokenizer is nil")
  raises(function() items:push_text(cupel.greedy(), "x") end, "INVALID_ARGUMENT",
    "tokenizer must be a cupel Tokenizer, got a cupel Slicer")
  raises(function() items:push_texts(nil, { "x" }) end, "NULL_POINTER", "tokenizer is nil")
  assert(items:len() == 6, "nothing was added: " .. items:len())
  -- from text to a selected context, with no token counted by hand
  -- (items 2 and 5, the densest, fill the budget exactly)
  local sel = cupel.slice(cupel.greedy(), items, cupel.budget({ max_tokens = tok:count(texts[2]) + 2 }))
  table.sort(sel)
  same(sel, { 2, 5 }, "selected")
end)

test("tokenizer errors name the argument, the line or the byte", function()
  raises(function() cupel.tokenizer("gpt2") end, "INVALID_ARGUMENT",
    'name "gpt2" is no known encoding; the known ones are "o200k_base" and "cl100k_base"')
  raises(function() cupel.tokenizer(nil) end, "NULL_POINTER", "name is nil")
  raises(function() cupel.tokenizer(200) end, "INVALID_ARGUMENT", "name must be a string")
  raises(function() cupel.tokenizer_from_tiktoken(nil) end, "NULL_POINTER", "ranks is nil")
  raises(function() cupel.tokenizer_from_tiktoken("") end, "INVALID_ARGUMENT", "the vocabulary has no tokens")
  local v = vocabulary()
  raises(function() cupel.tokenizer_from_tiktoken(v .. "YWI=\n") end, "INVALID_ARGUMENT",
    'line 257 of the vocabulary ("YWI="): expected `base64-token rank`')
  raises(function() cupel.tokenizer_from_tiktoken(v .. "YWI= 5\n") end, "INVALID_ARGUMENT",
    "line 257: rank 5 is already the rank of line 6")
  raises(function() cupel.tokenizer_from_tiktoken(vocabulary({}, 7)) end, "INVALID_ARGUMENT",
    "no token for the single byte 0x07")
  raises(function() cupel.tokenizer_from_tiktoken(v, "(") end, "INVALID_ARGUMENT", "pattern: unclosed group at byte 1")
  raises(function() cupel.tokenizer_from_tiktoken(v, "a**") end, "INVALID_ARGUMENT", "nested quantifier at byte 3")
  raises(function() cupel.tokenizer_from_tiktoken(v, "a\0") end, "INVALID_ARGUMENT", "pattern holds a NUL byte")
  local tok = cupel.tokenizer("o200k_base")
  raises(function() tok:count(nil) end, "NULL_POINTER", "text is nil")
  raises(function() tok:count(5) end, "INVALID_ARGUMENT", "text must be a string, got number 5")
  raises(function() tok:count("ab\255") end, "INVALID_ARGUMENT", "text is not valid UTF-8 (at byte 3)")
  raises(function() tok:count_many(nil) end, "NULL_POINTER", "texts is nil")
  raises(function() tok:count_many({ "a", "b", "c\254" }) end, "INVALID_ARGUMENT",
    "texts[3] is not valid UTF-8 (at byte 2)")
  raises(function() tok:count_many({ "a", nil, n = 2 }) end, "NULL_POINTER", "texts[2] is nil")
  raises(function() tok:count_many({ "a", {} }) end, "INVALID_ARGUMENT", "texts[2] must be a string, got table")
  raises(function() tok:count_many({ n = -1 }) end, "INVALID_ARGUMENT", "texts.n is -1")
  raises(function() tok:truncate(SENTENCE, -1) end, "INVALID_ARGUMENT", "max_tokens is -1; it must be >= 0")
  raises(function() tok:truncate(SENTENCE, 2.5) end, "INVALID_ARGUMENT", "max_tokens is 2.5; expected an integer")
  raises(function() tok:truncate(SENTENCE, 2 ^ 63) end, "INVALID_ARGUMENT", "max_tokens is 9.2233720368547758e+18")
  raises(function() tok:truncate(SENTENCE, nil) end, "NULL_POINTER", "max_tokens is nil")
  raises(function() tok:truncate(SENTENCE, 3, "middle") end, "INVALID_ARGUMENT",
    'keep is string "middle"; expected "head", "tail" or "both_ends"')
  raises(function() tok:truncate(SENTENCE, 3, 1) end, "INVALID_ARGUMENT", 'keep must be "head", "tail" or "both_ends"')
  raises(function() tok:truncate("\255", 3) end, "INVALID_ARGUMENT", "text is not valid UTF-8 (at byte 1)")
  local kept, _, _, n = tok:truncate(SENTENCE, 2 ^ 53)
  assert(kept == SENTENCE and n == 12, "a huge budget keeps everything")
  raises(function() cupel.items():push_text(tok, "x", 0.5, "") end, "INVALID_ARGUMENT", "kind")
  local items = cupel.items()
  tok:free()
  tok:free() -- idempotent
  raises(function() tok:count("x") end, "CLOSED", "tokenizer was freed")
  raises(function() tok:truncate("x", 1) end, "CLOSED", "tokenizer was freed")
  raises(function() tok:count_many({ "x" }) end, "CLOSED", "tokenizer was freed")
  raises(function() items:push_text(tok, "x") end, "CLOSED", "tokenizer was freed")
  raises(function() items:push_texts(tok, { "x" }) end, "CLOSED", "tokenizer was freed")
  assert(items:len() == 0)
end)

-- ---- items that shrink: variants and truncation -------------------------------------

-- Scenario S: a question, a 9000-token tool output with a 12-token
-- placeholder, a 2800-token document that may be cut to its head.
local DOC_LINES = {}
for i = 0, 199 do
  DOC_LINES[#DOC_LINES + 1] = ("Line %d: the quick brown fox jumps over the lazy dog.\n"):format(i)
end
local DOC = table.concat(DOC_LINES)
local CLEARED = "[output cleared: 9,000 tokens]"

local function scenario_items(tok)
  local items = cupel.items()
  assert(items:add({ tokens = 40, score = 0.9, kind = "Message" }) == 1)
  items:set_content(1, "What failed in the last build?")
  assert(items:add({ tokens = 9000, score = 0.8, kind = "ToolOutput",
    variants = { { tokens = 12, value = 0.1, content = CLEARED } } }) == 2)
  items:set_content(2, "(the build log)")
  assert(items:push_text(tok, DOC, 0.6, "Document") == 3)
  items:set_truncatable(3, cupel.KEEP_HEAD, 50)
  return items
end

local function near(a, b)
  return math.abs(a - b) <= 1e-12 * math.abs(b)
end

test("items that shrink: scenario S with greedy and knapsack", function()
  local tok = cupel.tokenizer("o200k_base")
  assert(#DOC == 10890 and tok:count(DOC) == 2800)
  for _, case in ipairs({ { cupel.greedy(), { 1, 2, 3 } }, { cupel.knapsack(1), { 2, 1, 3 } } }) do
    local items = scenario_items(tok)
    local budget = cupel.budget({ max_tokens = 1000, target_tokens = 1000 })
    local pipeline = cupel.pipeline({ slicer = case[1] })
    -- Without a tokenizer the truncatable item 3 cannot be cut.
    raises(function() pipeline:run(items, budget, { report = true }) end, "INVALID_ARGUMENT",
      "item 3 is truncatable but the pipeline has no tokenizer to cut it with (Pipeline:set_tokenizer)")
    assert(pipeline:set_tokenizer(tok) == pipeline)
    local placed, report = pipeline:run(items, budget, { report = true })
    same(placed, case[2], "placed")
    assert(#report.excluded == 0 and report.selected_tokens == 1000, report.selected_tokens)
    local by, order = {}, {}
    for k, d in ipairs(report.included) do
      by[d.index], order[k] = d, d.index
    end
    same(order, case[2], "included")
    local d1, d2, d3 = by[1], by[2], by[3]
    assert(d1.reason == "Scored" and d2.reason == "Variant" and d3.reason == "Truncated")
    assert(d2.reason_code == 3 and d3.reason_code == 4)
    assert(d1.score == 0.9 and near(d2.score, 0.08) and near(d3.score, 0.6 * 948 / 2800), d3.score)
    assert(("%.7f"):format(d3.score) == "0.2031429")
    same({ d1.variant, d2.variant, d3.variant }, { 0, 1, 0 }, "variants")
    same({ d1.tokens_added, d2.tokens_added, d3.tokens_added }, { 40, 12, 948 }, "tokens added")
    same({ d1.item_tokens, d2.item_tokens, d3.item_tokens }, { 40, 9000, 2800 }, "item tokens")
    -- The cuts: C's (30, 30), (15, 15), (3647, 10890) as 1-based positions.
    same({ d1.head_end, d1.tail_start, d2.head_end, d2.tail_start, d3.head_end, d3.tail_start },
      { 30, 31, 15, 16, 3647, 10891 }, "cuts")
    assert(d1.text == "What failed in the last build?")
    assert(d2.text == CLEARED)
    assert(d3.text == DOC:sub(1, 3647) and tok:count(d3.text) == 948)
    assert(report.json:find('"cut":{"head_end":3647,"tail_start":10890}', 1, true), report.json)
    assert(report.json:find('"reason":"Variant","tokens_added":12,"variant":1', 1, true), report.json)
  end
end)

test("items that shrink: variants and truncation read back", function()
  local tok = cupel.tokenizer("o200k_base")
  local items = scenario_items(tok)
  local v = items:variants(2)
  assert(#v == 1 and v[1].tokens == 12 and v[1].value == 0.1 and v[1].content == CLEARED)
  assert(#items:variants(1) == 0 and items:truncatable(1) == nil and items:truncatable(2) == nil)
  local t = items:truncatable(3)
  assert(t.keep == "head" and t.min_tokens == 50)
  local got = items:get(3)
  assert(got.tokens == 2800 and got.content == DOC and #got.variants == 0)
  assert(got.truncatable.keep == "head" and got.truncatable.min_tokens == 50)
  assert(items:get(2).variants[1].content == CLEARED and items:get(2).truncatable == nil)
  -- Numbers 1, 2, ... in order; content optional; the table form.
  assert(items:add_variant(1, 5, 1) == 1)
  assert(items:add_variant(1, { tokens = 0, value = 0.25, content = "é 🚀" }) == 2)
  assert(items:add_variant(1, 100, 0.5, "bigger than the item") == 3)
  v = items:variants(1)
  assert(#v == 3 and v[1].tokens == 5 and v[1].value == 1 and v[1].content == nil)
  assert(v[2].tokens == 0 and v[2].value == 0.25 and v[2].content == "é 🚀" and v[3].tokens == 100)
  -- Truncation set, replaced, cleared.
  assert(items:set_truncatable(1) == items)
  t = items:truncatable(1)
  assert(t.keep == "head" and t.min_tokens == 0)
  for _, keep in ipairs({ "tail", "both_ends", cupel.KEEP_HEAD }) do
    items:set_truncatable(1, keep, 7)
    t = items:truncatable(1)
    assert(t.keep == keep and t.min_tokens == 7)
  end
  assert(items:clear_truncatable(1) == items and items:truncatable(1) == nil)
  items:clear_truncatable(1) -- a no-op when it is not
  -- In item tables: every form of truncatable.
  local more = cupel.items({
    { tokens = 10, content = "a", truncatable = true, variants = { { tokens = 1, value = 0.5 } } },
    { tokens = 10, truncatable = "tail" },
    { tokens = 10, truncatable = { min_tokens = 4 } },
    { tokens = 10, truncatable = { keep = "both_ends", min_tokens = 2 } },
    { tokens = 10, truncatable = false, variants = {} },
  })
  local want = { { "head", 0 }, { "tail", 0 }, { "head", 4 }, { "both_ends", 2 } }
  for i, w in ipairs(want) do
    t = more:truncatable(i)
    assert(t.keep == w[1] and t.min_tokens == w[2], i)
  end
  assert(more:truncatable(5) == nil and #more:variants(5) == 0 and #more:variants(1) == 1)
  more:push_texts(tok, { { text = "hello world", variants = { { tokens = 1, value = 0.5, content = "hi" } },
    truncatable = "both_ends" } })
  assert(more:variants(6)[1].content == "hi" and more:truncatable(6).keep == "both_ends")
end)

test("items that shrink: the text as sent is the cut, in 1-based bytes", function()
  local tok = cupel.tokenizer("o200k_base")
  local jp = ("日本語のテキストを数えます。東京は晴れ、大阪は雨でした。"):rep(20)
  for _, keep in ipairs({ "head", "tail", "both_ends" }) do
    local items = cupel.items()
    items:push_texts(tok, { { text = jp, score = 0.5, truncatable = { keep = keep, min_tokens = 1 } } })
    local pipeline = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = tok })
    local placed, report = pipeline:run(items, cupel.budget({ max_tokens = 21 }), { report = true })
    same(placed, { 1 }, keep)
    local d = report.included[1]
    local kept, head_end, tail_start, tokens = tok:truncate(jp, 21, keep)
    assert(d.reason == "Truncated" and d.variant == 0, keep)
    assert(d.head_end == head_end and d.tail_start == tail_start, keep .. ": " .. d.head_end .. " " .. d.tail_start)
    assert(d.text == kept and d.text == jp:sub(1, d.head_end) .. jp:sub(d.tail_start), keep)
    assert(d.tokens_added == tokens and tokens <= 21 and report.selected_tokens == tokens, keep)
  end
  -- Fits whole: not cut. Below min_tokens: passed over.
  local items = cupel.items()
  items:push_texts(tok, { { text = jp, score = 0.5, truncatable = { min_tokens = 41 } } })
  local pipeline = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = tok })
  local _, report = pipeline:run(items, cupel.budget({ max_tokens = 10000 }), { report = true })
  local d = report.included[1]
  assert(d.reason == "Scored" and d.head_end == #jp and d.tail_start == #jp + 1 and d.text == jp)
  assert(d.tokens_added == d.item_tokens)
  local placed
  placed, report = pipeline:run(items, cupel.budget({ max_tokens = 40 }), { report = true })
  assert(#placed == 0 and #report.included == 0 and report.excluded[1].reason == "BudgetExceeded")
  assert(report.excluded[1].variant == nil and report.excluded[1].text == nil)
end)

test("items that shrink: no content, variants without content, the slice stage", function()
  local items = cupel.items({
    { tokens = 30, score = 0.9 },
    { tokens = 500, score = 0.8, variants = { { tokens = 20, value = 0.5 } } },
    { tokens = 500, score = 0.7, content = "the whole thing", variants = { { tokens = 20, value = 0.5, content = "digest" } } },
  })
  local budget = cupel.budget({ max_tokens = 100 })
  local pipeline = cupel.pipeline({ slicer = cupel.greedy() })
  local _, report = pipeline:run(items, budget, { report = true })
  local by = {}
  for _, d in ipairs(report.included) do by[d.index] = d end
  assert(by[1].variant == 0 and by[1].tokens_added == 30 and by[1].head_end == 0 and by[1].tail_start == 1)
  assert(by[1].text == nil)
  assert(by[2].reason == "Variant" and by[2].variant == 1 and by[2].tokens_added == 20 and by[2].text == nil)
  assert(by[3].variant == 1 and by[3].text == "digest" and by[3].head_end == 15 and by[3].tail_start == 16)
  assert(report.selected_tokens == 70)
  local _, sliced = cupel.slice(cupel.greedy(), items, budget, 0, { report = true })
  for _, d in ipairs(sliced.included) do by[d.index] = d end
  assert(by[2].variant == 1 and by[3].text == "digest" and by[1].variant == 0)
end)

test("items that shrink: the pipeline keeps its tokenizer; nil removes it", function()
  local items = cupel.items()
  items:push_text(cupel.tokenizer("o200k_base"), DOC, 0.5)
  items:set_truncatable(1, "head")
  local budget = cupel.budget({ max_tokens = 20 })
  local tok = cupel.tokenizer("o200k_base")
  local pipeline = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = tok })
  tok:free() -- the pipeline holds its own reference
  local placed, report = pipeline:run(items, budget, { report = true })
  same(placed, { 1 })
  assert(report.included[1].reason == "Truncated" and report.included[1].tokens_added == 20)
  pipeline:set_tokenizer(nil)
  raises(function() pipeline:run(items, budget) end, "INVALID_ARGUMENT", "item 1 is truncatable but the pipeline")
  items:clear_truncatable(1)
  assert(#pipeline:run(items, budget) == 0)
  -- A truncatable item without content fails the run, naming it.
  local bare = cupel.items({ { tokens = 10, score = 0.5 }, { tokens = 200, score = 0.5, truncatable = "head" } })
  pipeline:set_tokenizer(cupel.tokenizer("o200k_base"))
  raises(function() pipeline:run(bare, budget) end, "INVALID_ARGUMENT",
    "item 2 is truncatable but has no content to cut (Items:set_content)")
  -- Its arguments.
  raises(function() pipeline:set_tokenizer(cupel.greedy()) end, "INVALID_ARGUMENT",
    "tokenizer must be a cupel Tokenizer, got a cupel Slicer")
  raises(function() cupel.pipeline({ slicer = cupel.greedy(), tokenizer = "o200k_base" }) end, "INVALID_ARGUMENT",
    "tokenizer must be a cupel Tokenizer")
  raises(function() pipeline:set_tokenizer(tok) end, "CLOSED", "tokenizer was freed")
  raises(function() cupel.pipeline({ slicer = cupel.greedy(), tokenizer = tok }) end, "CLOSED", "tokenizer was freed")
  pipeline:free()
  raises(function() pipeline:set_tokenizer(nil) end, "CLOSED", "pipeline was freed")
end)

-- Two items: item 1 has variant { 10, 0.5, "a" }, item 2 is truncatable
-- (tail, 3); `unchanged` checks that nothing else happened to them.
local function two_items()
  local items = cupel.items({ { tokens = 100, score = 0.5, content = "alpha" }, { tokens = 50, score = 0.5 } })
  items:add_variant(1, 10, 0.5, "a")
  items:set_truncatable(2, "tail", 3)
  return items
end

local function unchanged(items)
  assert(items:len() == 2, "the list holds " .. items:len() .. " items")
  local v = items:variants(1)
  assert(#v == 1 and v[1].tokens == 10 and v[1].content == "a" and #items:variants(2) == 0)
  local t = items:truncatable(2)
  assert(items:truncatable(1) == nil and t.keep == "tail" and t.min_tokens == 3)
end

test("items that shrink: bad arguments name themselves and change nothing", function()
  local items = two_items()
  local bad = {
    { { 1, 5, 0 }, "INVALID_ARGUMENT", "value is 0; it must be in (0, 1]" },
    { { 1, 5, 1.5 }, "INVALID_ARGUMENT", "value is 1.5; it must be in (0, 1]" },
    { { 1, 5, -0.5 }, "INVALID_ARGUMENT", "value is -0.5;" },
    { { 1, 5, 0 / 0 }, "INVALID_ARGUMENT", "value is nan;" },
    { { 1, 5, math.huge }, "INVALID_ARGUMENT", "value is inf;" },
    { { 1, 5, "0.5" }, "INVALID_ARGUMENT", 'value must be a number, got string "0.5"' },
    { { 1, 5, nil, "c" }, "NULL_POINTER", "value is nil" },
    { { 1, -1, 0.5 }, "INVALID_ARGUMENT", "tokens is -1; a variant's tokens must be >= 0" },
    { { 1, 2.5, 0.5 }, "INVALID_ARGUMENT", "tokens is 2.5; expected an integer" },
    { { 1, 2 ^ 63, 0.5 }, "INVALID_ARGUMENT", "it does not fit in a signed 64-bit integer" },
    { { 1, nil, 0.5 }, "NULL_POINTER", "tokens is nil" },
    { { 1, 5, 0.5, "" }, "INVALID_ARGUMENT", "content is empty; leave it nil" },
    { { 1, 5, 0.5, "\255\254" }, "INVALID_ARGUMENT", "content is not valid UTF-8 (at byte 1)" },
    { { 1, 5, 0.5, "a\0b" }, "INVALID_ARGUMENT", "content holds a NUL byte (at byte 2)" },
    { { 1, 5, 0.5, 7 }, "INVALID_ARGUMENT", "content must be a string, got number 7" },
    { { 3, 5, 0.5 }, "INVALID_ARGUMENT", "index is 3, out of range: the list holds 2 items" },
    { { 0, 5, 0.5 }, "INVALID_ARGUMENT", "index is 0, out of range" },
    { { 1, { tokens = 5, value = 2 } }, "INVALID_ARGUMENT", "variant.value is 2; it must be in (0, 1]" },
    { { 1, { tokens = 5, value = 0.5, contents = "x" } }, "INVALID_ARGUMENT",
      'variant has the field string "contents"; a variant has tokens, value and content' },
  }
  for _, case in ipairs(bad) do
    local a = case[1]
    raises(function() items:add_variant(a[1], a[2], a[3], a[4]) end, case[2], case[3])
    unchanged(items)
  end
  for k = 2, 255 do assert(items:add_variant(1, 1, 0.5) == k) end
  raises(function() items:add_variant(1, 1, 0.5) end, "INVALID_ARGUMENT", "item 1 has 255 variants already")
  assert(#items:variants(1) == 255)
  raises(function() items:add({ tokens = 1, variants = (function()
    local t = {}
    for k = 1, 256 do t[k] = { tokens = 1, value = 0.5 } end
    return t
  end)() }) end, "INVALID_ARGUMENT", "item.variants has 256 variants; an item has at most 255")
  assert(items:len() == 2)

  items = two_items()
  local bad_trunc = {
    { { 2, "middle" }, "INVALID_ARGUMENT", 'keep is string "middle"; expected "head", "tail" or "both_ends"' },
    { { 2, 1 }, "INVALID_ARGUMENT", 'keep must be "head", "tail" or "both_ends", got number 1' },
    { { 2, "head", -1 }, "INVALID_ARGUMENT", "min_tokens is -1 for item 2; it must be >= 0" },
    { { 2, "head", 2.5 }, "INVALID_ARGUMENT", "min_tokens is 2.5; expected an integer" },
    { { 2, "head", 2 ^ 63 }, "INVALID_ARGUMENT", "min_tokens is 9.2233720368547758e+18; it does not fit" },
    { { 3, "head" }, "INVALID_ARGUMENT", "index is 3, out of range" },
    { { -1, "head" }, "INVALID_ARGUMENT", "index is -1, out of range" },
  }
  for _, case in ipairs(bad_trunc) do
    local a = case[1]
    raises(function() items:set_truncatable(a[1], a[2], a[3]) end, case[2], case[3])
    unchanged(items)
  end
  for _, f in ipairs({ items.clear_truncatable, items.truncatable, items.variants }) do
    raises(function() f(items, 3) end, "INVALID_ARGUMENT", "index is 3, out of range")
    raises(function() f(items, nil) end, "NULL_POINTER", "index is nil")
  end
  unchanged(items)

  -- Item tables: all or nothing, named by their place in the list.
  local bad_items = {
    { { { tokens = 1 }, { tokens = 1, variants = { { tokens = 1, value = 0 } } } }, "list[2].variants[1].value is 0" },
    { { { tokens = 1, variants = { { tokens = -1, value = 0.5 } } } }, "list[1].variants[1].tokens is -1" },
    { { { tokens = 1, variants = { { tokens = 1, value = 0.5, content = "" } } } },
      "list[1].variants[1].content is empty" },
    { { { tokens = 1, variants = { { tokens = 1, value = 0.5, content = "\255" } } } },
      "list[1]: content is not valid UTF-8" },
    { { { tokens = 1, variants = "x" } }, 'list[1].variants must be a table, got string "x"' },
    { { { tokens = 1, variants = { 5 } } }, "list[1].variants[1] must be a table, got number 5" },
    { { { tokens = 1, truncatable = "middle" } }, 'list[1].truncatable is string "middle"' },
    { { { tokens = 1, truncatable = 1 } }, "list[1].truncatable must be true, a keep" },
    { { { tokens = 1, truncatable = { keep = "tail", min_tokens = -3 } } }, "list[1].truncatable.min_tokens is -3" },
    { { { tokens = 1, truncatable = { keep = 2 } } }, 'list[1].truncatable.keep must be "head", "tail" or "both_ends"' },
    { { { tokens = 1, truncatable = { min = 2 } } }, 'list[1].truncatable has the field string "min"' },
  }
  for _, case in ipairs(bad_items) do
    raises(function() items:push(case[1]) end, "INVALID_ARGUMENT", case[2])
    unchanged(items)
  end

  -- Freed and nil receivers.
  items:free()
  for _, f in ipairs({ function() items:add_variant(1, 1, 0.5) end, function() items:set_truncatable(1) end,
    function() items:clear_truncatable(1) end, function() items:truncatable(1) end,
    function() items:variants(1) end, function() items:truncate(0) end }) do
    raises(f, "CLOSED", "items was freed")
  end
  raises(function() items.add_variant(nil, 1, 1, 0.5) end, "NULL_POINTER", "items is nil")
  raises(function() items.set_truncatable(nil, 1) end, "NULL_POINTER", "items is nil")
end)

test("items:truncate removes the items after the first len", function()
  local items = two_items()
  items:add({ tokens = 7, score = 0.25, kind = "Document", content = "gamma", tags = { "t" },
    variants = { { tokens = 1, value = 0.5, content = "v" } }, truncatable = "head" })
  assert(items:len() == 3)
  assert(items:truncate(3) == items and items:len() == 3)
  items:truncate(2)
  unchanged(items)
  assert(items:get(1).content == "alpha")
  assert(items:add({ tokens = 5 }) == 3)
  local got = items:get(3)
  assert(got.content == nil and #got.tags == 0 and #got.variants == 0 and got.truncatable == nil)
  raises(function() items:truncate(4) end, "INVALID_ARGUMENT",
    "len is 4; it must be in 0 .. 3 (the list holds 3 items; truncate only shortens it)")
  raises(function() items:truncate(-1) end, "INVALID_ARGUMENT", "len is -1; it must be in 0 .. 3")
  raises(function() items:truncate(1.5) end, "INVALID_ARGUMENT", "len is 1.5; expected an integer")
  raises(function() items:truncate(nil) end, "NULL_POINTER", "len is nil")
  assert(items:len() == 3)
  items:truncate(0)
  assert(items:len() == 0)
end)

-- A chat's candidates: a pinned system prompt and three messages, keyed 1 .. 4.
local function chat_items()
  return cupel.items({
    { tokens = 100, score = 1.0, kind = "SystemPrompt", content = "system: be brief", timestamp = 0, pinned = true,
      key = 1 },
    { tokens = 50, score = 0.9, content = "user: hi", timestamp = 1000, key = 2 },
    { tokens = 60, score = 0.8, content = "assistant: hello", timestamp = 2000, key = 3 },
    { tokens = 70, score = 0.7, content = "user: what is cupel?", timestamp = 3000, key = 4 },
  })
end

local function chat_pipeline()
  return cupel.pipeline({ slicer = cupel.greedy(), placer = cupel.chronological() })
end

test("sessions: keys and volatile flags, one at a time, in bulk and in item tables, read back", function()
  local items = chat_items()
  assert(items:key(1) == 1 and items:key(4) == 4 and items:get(3).key == 3)
  assert(items:volatile(2) == false and items:get(2).volatile == false)
  items:add({ tokens = 5, content = "doc", key = 9, volatile = true })
  assert(items:key(5) == 9 and items:volatile(5) == true and items:get(5).volatile == true)
  local big = ffi.new("uint64_t", 0xffffffffffffffffULL)
  items:set_key(5, big)
  assert(items:key(5) == big and ffi.istype("uint64_t", items:get(5).key))
  items:set_key(5, 0):set_volatile(5, false)
  assert(items:key(5) == 0 and not items:volatile(5))
  items:set_keys(2, { 20, 30, 40 })
  assert(items:key(1) == 1 and items:key(2) == 20 and items:key(4) == 40 and items:key(5) == 0)
  items:set_volatile_many(4, { true, true })
  assert(items:volatile(3) == false and items:volatile(4) and items:get(5).volatile)
  -- a push from text takes them too
  local tok = cupel.tokenizer("o200k_base")
  items:push_texts(tok, { { text = "hello world", key = 77, volatile = true } })
  assert(items:get(6).key == 77 and items:get(6).volatile and items:get(6).tokens == 2)
  raises(function() items:set_key(7, 1) end, "INVALID_ARGUMENT", "index is 7, out of range: the list holds 6 items")
  raises(function() items:set_key(1, -1) end, "INVALID_ARGUMENT", "key is -1; it must be >= 0")
  raises(function() items:set_key(1, 1.5) end, "INVALID_ARGUMENT", "key is 1.5; expected an integer")
  raises(function() items:set_key(1, 2 ^ 64) end, "INVALID_ARGUMENT", "does not fit in an unsigned 64-bit integer")
  raises(function() items:set_key(1, "7") end, "INVALID_ARGUMENT", "key must be an integer, got string")
  raises(function() items:set_volatile(1, "yes") end, "INVALID_ARGUMENT", "is_volatile must be a boolean")
  raises(function() items:set_volatile(0, true) end, "INVALID_ARGUMENT", "index is 0, out of range")
  raises(function() items:key(7) end, "INVALID_ARGUMENT", "index is 7")
  raises(function() items:set_keys(5, { 1, 2, 3 }) end, "INVALID_ARGUMENT", "keys has 3 keys from item 5 on")
  raises(function() items:set_keys(1, { 1, -2 }) end, "INVALID_ARGUMENT", "keys[2] is -2")
  raises(function() items:set_volatile_many(1, { true, 1 }) end, "INVALID_ARGUMENT", "flags[2] must be a boolean")
  raises(function() items:add({ tokens = 1, key = "x" }) end, "INVALID_ARGUMENT", "item.key must be an integer")
  raises(function() items:add({ tokens = 1, volatile = 1 }) end, "INVALID_ARGUMENT", "item.volatile must be a boolean")
  assert(items:len() == 6 and items:key(1) == 1 and items:key(2) == 20 and not items:volatile(1))
end)

test("sessions: first, append, a new item last, a volatile item last", function()
  local items, pipeline = chat_items(), chat_pipeline()
  local budget = cupel.budget({ max_tokens = 1000 })
  local s = cupel.session(pipeline)
  assert(s:slack() == 0.2 and s:last_action() == "first" and #s:breakpoints() == 0)
  local n, t = s:stable_prefix()
  assert(n == 0 and t == 0)
  same(s:run(items, budget), { 1, 2, 3, 4 }, "turn 1")
  assert(s:last_action() == cupel.SESSION_FIRST)
  n, t = s:stable_prefix()
  assert(n == 0 and t == 0, n .. " " .. t)
  same(s:run(items, budget), { 1, 2, 3, 4 }, "turn 2")
  assert(s:last_action() == "append" and cupel.SESSION_APPEND == "append")
  n, t = s:stable_prefix()
  assert(n == 4 and t == 280, n .. " " .. t)
  local bps = s:breakpoints()
  assert(#bps == 2 and bps[1].items == 1 and bps[1].tokens == 100 and bps[1].mark == "pinned")
  assert(bps[2].items == 4 and bps[2].tokens == 280 and bps[2].mark == "end")
  -- a new message that fits goes after the previous output
  items:add({ tokens = 40, score = 0.6, content = "assistant: a context selector", timestamp = 4000, key = 5 })
  local placed, report = s:run(items, budget, { report = true })
  same(placed, { 1, 2, 3, 4, 5 }, "turn 3")
  assert(s:last_action() == "append")
  n, t = s:stable_prefix()
  assert(n == 4 and t == 280)
  assert(report.json:find('"session":{"action":"append"', 1, true), report.json)
  assert(report.json:find('"stablePrefixItems":4,"stablePrefixTokens":280', 1, true), report.json)
  assert(report.json:find('"breakpoints":[{"at":"pinned","items":1,"tokens":100}', 1, true), report.json)
  assert(#report.included == 5 and report.included[5].index == 5)
  -- a volatile document, which the pipeline alone places right after the
  -- system prompt (it is the oldest), goes last
  items:add({ tokens = 30, score = 0.95, kind = "Document", content = "retrieved: cupel docs", timestamp = 500,
    volatile = true })
  same(pipeline:run(items, budget), { 1, 6, 2, 3, 4, 5 }, "the pipeline alone")
  same(s:run(items, budget), { 1, 2, 3, 4, 5, 6 }, "turn 4")
  n, t = s:stable_prefix()
  assert(s:last_action() == "append" and n == 5 and t == 320, n .. " " .. t)
  bps = s:breakpoints()
  assert(#bps >= 1 and #bps <= 4)
  for i = 2, #bps do
    assert(bps[i - 1].items < bps[i].items and bps[i - 1].tokens < bps[i].tokens, "breakpoints ascend")
  end
  local last = bps[#bps]
  assert(last.items == 5 and last.tokens == 320 and last.mark == "end", "the end is before the volatile item")
end)

test("sessions: a failed run changes nothing; duplicate keys name both items", function()
  local items, pipeline = chat_items(), chat_pipeline()
  local budget = cupel.budget({ max_tokens = 1000 })
  local s, control = cupel.session(pipeline), cupel.session(pipeline)
  for _ = 1, 2 do
    s:run(items, budget)
    control:run(items, budget)
  end
  items:add({ tokens = 40, score = 0.6, content = "assistant: a context selector", timestamp = 4000, key = 2 })
  raises(function() s:run(items, budget) end, "INVALID_ARGUMENT", "items 2 and 5 have the same key 2")
  raises(function() s:run(items, budget, { report = true }) end, "INVALID_ARGUMENT", "key")
  local n, t = s:stable_prefix()
  assert(s:last_action() == "append" and n == 4 and t == 280)
  items:set_key(5, 5)
  same(s:run(items, budget), control:run(items, budget), "after the failure")
  local n1, t1 = s:stable_prefix()
  local n2, t2 = control:stable_prefix()
  assert(n1 == n2 and t1 == t2 and n1 == 4 and s:last_action() == control:last_action())
  local b1, b2 = s:breakpoints(), control:breakpoints()
  assert(#b1 == #b2)
  for i = 1, #b1 do
    assert(b1[i].items == b2[i].items and b1[i].tokens == b2[i].tokens and b1[i].mark == b2[i].mark)
  end
end)

test("sessions: slack, reset, a freed pipeline, freed handles", function()
  local items, pipeline = chat_items(), chat_pipeline()
  local budget = cupel.budget({ max_tokens = 1000 })
  local s = cupel.session(pipeline)
  local fresh = pipeline:run(items, budget)
  pipeline:free()
  same(s:run(items, budget), fresh, "after the pipeline was freed")
  same(s:run(items, budget), fresh, "and again")
  assert(s:last_action() == "append")
  assert(s:set_slack(0.3) == s and s:slack() == 0.3)
  s:set_slack(0)
  raises(function() s:set_slack(1) end, "INVALID_ARGUMENT", "fraction is 1; the slack must be in [0, 1)")
  raises(function() s:set_slack(-0.1) end, "INVALID_ARGUMENT", "fraction is -0.1")
  raises(function() s:set_slack(0 / 0) end, "INVALID_ARGUMENT", "fraction is NaN")
  raises(function() s:set_slack("0.2") end, "INVALID_ARGUMENT", "fraction must be a number, got string")
  raises(function() s:set_slack(nil) end, "NULL_POINTER", "fraction is nil")
  assert(s:slack() == 0)
  assert(s:reset() == s and s:last_action() == "first" and #s:breakpoints() == 0 and s:slack() == 0)
  local n, t = s:stable_prefix()
  assert(n == 0 and t == 0)
  same(s:run(items, budget), fresh, "after the reset")
  n, t = s:stable_prefix()
  assert(s:last_action() == "first" and n == 0 and t == 0)
  raises(function() cupel.session(pipeline) end, "CLOSED", "pipeline was freed")
  raises(function() cupel.session(nil) end, "NULL_POINTER", "pipeline is nil")
  raises(function() cupel.session(items) end, "INVALID_ARGUMENT", "pipeline must be a cupel Pipeline, got a cupel Items")
  raises(function() s:run(nil, budget) end, "NULL_POINTER", "items is nil")
  raises(function() s:run(items, items) end, "INVALID_ARGUMENT", "budget must be a cupel Budget")
  collectgarbage("collect")
  local live = cupel.live_handles()
  local extra = cupel.session(chat_pipeline())
  collectgarbage("collect")
  assert(cupel.live_handles() == live + 1)
  extra:free()
  extra:free()
  assert(cupel.live_handles() == live)
  raises(function() extra:run(items, budget) end, "CLOSED", "session was freed")
  raises(function() extra:set_slack(0.1) end, "CLOSED", "session was freed")
  raises(function() extra:stable_prefix() end, "CLOSED", "session")
  raises(function() extra:reset() end, "CLOSED", "session")
end)

test("sessions: an item the last run left out is Deferred while the session appends", function()
  local items = cupel.items({
    { tokens = 100, score = 0.9, content = "a", timestamp = 1 },
    { tokens = 200, score = 0.5, content = "b", timestamp = 2 },
    { tokens = 50, score = 0.1, content = "c", timestamp = 3 },
  })
  local pipeline = chat_pipeline()
  local s = cupel.session(pipeline)
  local small, large = cupel.budget({ max_tokens = 300, target_tokens = 250 }), cupel.budget({ max_tokens = 400 })
  same(s:run(items, small), { 1, 3 }, "turn 1")
  same(pipeline:run(items, large), { 1, 2, 3 }, "the pipeline alone, larger")
  local placed, report = s:run(items, large, { report = true })
  same(placed, { 1, 3 }, "turn 2")
  assert(s:last_action() == "append")
  assert(#report.excluded == 1 and report.excluded[1].index == 2 and report.excluded[1].reason == "Deferred")
  assert(report.excluded[1].reason_code == 19 and cupel.REASON[19] == "Deferred" and cupel.reason_name(19) == "Deferred")
end)

-- ---- policies as data, presets, sensitivity, analytics, tracing, the one-call path ----

-- The contract's fixture: 3 items (tokens 100/200/50), and the recency
-- pipeline with greedy and chronological; budget 300/250.
local function fixture_items()
  return cupel.items({
    { tokens = 100, score = 0.9, kind = "Message", content = "alpha", timestamp = 1000 },
    { tokens = 200, score = 0.5, kind = "Document", content = "beta", timestamp = 2000 },
    { tokens = 50, score = 0.1, kind = "ToolOutput", content = "gamma", timestamp = 3000 },
  })
end

local function recency_pipeline()
  return cupel.pipeline({ scorer = cupel.scorers.recency(), slicer = cupel.greedy(), placer = cupel.chronological() })
end

local function fixture_budget()
  return cupel.budget({ max_tokens = 300, target_tokens = 250 })
end

-- The scorers of a policy document as "type weight, ..." (top-level entries
-- and nested ones alike, in the order written).
local function scorers_of(json)
  local t = {}
  for scorer, weight in json:gmatch('"type": "(%w+)",%s*"weight": ([%d.]+)') do
    t[#t + 1] = ("%s %g"):format(scorer, tonumber(weight))
  end
  return table.concat(t, ", ")
end

test("policies from JSON: read, written back exactly, every error with its path and status", function()
  local policy = [[{
    "name": "mine", "description": "for the tests",
    "scorers": [{ "type": "recency", "weight": 2 }, { "type": "priority", "weight": 1 },
      { "type": "scaled", "weight": 1, "innerScorer": { "type": "kind" } }],
    "slicerType": "knapsack", "knapsackBucketSize": 10, "placerType": "uShaped",
    "deduplicationEnabled": false, "overflowStrategy": "proceed", "tokenizer": "cl100k_base",
    "sessionSlack": 0.3, "quotas": [{ "kind": "Document", "maxPercent": 40 }], "unknownKey": 1 }]]
  local p = cupel.pipeline_from_json(policy)
  local text = p:to_json()
  assert(scorers_of(text) == "recency 2, priority 1, kind 1, scaled 1", scorers_of(text)) -- scaled's inner first
  for _, needle in ipairs({ '"slicerType": "knapsack"', '"knapsackBucketSize": 10', '"placerType": "uShaped"',
    '"deduplicationEnabled": false', '"overflowStrategy": "proceed"', '"tokenizer": "cl100k_base"',
    '"sessionSlack": 0.3', '"name": "mine"', '"description": "for the tests"', '"kind": "Document"' }) do
    assert(text:find(needle, 1, true), needle .. " not in " .. text)
  end
  assert(not text:find("unknownKey", 1, true))
  -- read back: the same text, and the same selection
  local again = cupel.pipeline_from_json(text)
  assert(again:to_json() == text)
  local items, budget = fixture_items(), fixture_budget()
  items:set_priority(1, 5)
  same(again:run(items, budget), p:run(items, budget), "the pipeline read back")
  -- a session made from it takes its slack
  assert(math.abs(cupel.session(p):slack() - 0.3) < 1e-12)
  -- a pipeline built in code, written and read
  local coded = cupel.pipeline({ scorer = cupel.scorers.composite({ cupel.scorers.recency(), cupel.scorers.kind() },
    { 3, 1 }), slicer = cupel.greedy(), placer = cupel.chronological() })
  local coded_text = coded:to_json()
  assert(scorers_of(coded_text) == "recency 3, kind 1", coded_text)
  assert(cupel.pipeline_from_json(coded_text):to_json() == coded_text)
  -- errors
  raises(function() cupel.pipeline_from_json(nil) end, "NULL_POINTER", "json is nil")
  raises(function() cupel.pipeline_from_json(3) end, "INVALID_ARGUMENT", "json must be a string, got number 3")
  raises(function() cupel.pipeline_from_json("") end, "INVALID_ARGUMENT", "json is empty")
  raises(function() cupel.pipeline_from_json("null") end, "INVALID_ARGUMENT", "json $: expected a policy object")
  raises(function() cupel.pipeline_from_json('{"scorers":') end, "INVALID_ARGUMENT",
    "json: malformed JSON at line 1 column 11")
  raises(function() cupel.pipeline_from_json('{"scorers":[{"type":"recency","weight":-0.5}]}') end,
    "INVALID_ARGUMENT", "json $.scorers[0].weight: must be positive and finite (got -0.5)")
  raises(function() cupel.pipeline_from_json('{"scorers":[{"type":"nope","weight":1}]}') end,
    "INVALID_ARGUMENT", 'json $.scorers[0].type: unknown scorer type "nope"; known types: recency')
  raises(function() cupel.pipeline_from_json('{"scorers":[{"type":"recency","weight":1}],"knapsackBucketSize":5}') end,
    "INVALID_ARGUMENT", 'json $.knapsackBucketSize: only valid when slicerType is "knapsack"')
  raises(function()
    cupel.pipeline_from_json('{"scorers":[{"type":"recency","weight":1}],"quotas":[{"kind":"A","minPercent":80,'
      .. '"maxPercent":20}]}')
  end, "INVALID_ARGUMENT", "json $.quotas[0]: minPercent 80 exceeds maxPercent 20")
  raises(function() cupel.pipeline_from_json('{"scorers": []}') end, "INVALID_ARGUMENT", "json $.scorers")
  raises(function() cupel.pipeline_from_json('\n{"scorers": [\255]}') end, "INVALID_ARGUMENT",
    "json: invalid UTF-8 at byte 15")
  -- what the format cannot hold
  local nested = cupel.pipeline({ slicer = cupel.quota(cupel.count_quota(cupel.greedy(), { { kind = "A", cap_count = 1 } }),
    { { kind = "B", cap_percent = 50 } }) })
  raises(function() nested:to_json() end, "UNSUPPORTED", "")
  local vocab = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = cupel.tokenizer_from_tiktoken(vocabulary(NIHON_MERGES)) })
  raises(function() vocab:to_json() end, "UNSUPPORTED", "tokenizer")
  local freed = cupel.preset("Chat")
  freed:free()
  raises(function() freed:to_json() end, "CLOSED", "pipeline was freed")
  raises(function() Pipeline_to_json(nil) end, "NULL_POINTER", "pipeline is nil")
end)

test("budgets from JSON: read, written back exactly, errors", function()
  local b = cupel.budget_from_json('{"maxTokens":1000,"targetTokens":800,"outputReserve":100,'
    .. '"reservedSlots":{"ToolOutput":50},"estimationSafetyMarginPercent":5}')
  local text = b:to_json()
  for _, needle in ipairs({ '"maxTokens": 1000', '"targetTokens": 800', '"outputReserve": 100', '"toolOutput": 50',
    '"estimationSafetyMarginPercent": 5' }) do
    assert(text:find(needle, 1, true) or text:lower():find(needle:lower(), 1, true), needle .. " not in " .. text)
  end
  assert(cupel.budget_from_json(text):to_json() == text)
  local m1, t1 = b:effective()
  local m2, t2 = cupel.budget_from_json(text):effective()
  assert(m1 == m2 and t1 == t2)
  -- the same as cupel.budget with the same settings
  local coded = cupel.budget({ max_tokens = 1000, target_tokens = 800, output_reserve = 100, safety_margin_percent = 5,
    reserved = { ToolOutput = 50 } })
  assert(coded:to_json() == text, coded:to_json())
  same(recency_pipeline():run(fixture_items(), cupel.budget_from_json('{"maxTokens":300,"targetTokens":250}')),
    { 2, 3 }, "a budget from JSON")
  raises(function() cupel.budget_from_json(nil) end, "NULL_POINTER", "json is nil")
  raises(function() cupel.budget_from_json({}) end, "INVALID_ARGUMENT", "json must be a string")
  raises(function() cupel.budget_from_json('{"maxTokens":100,"targetTokens":250}') end, "INVALID_ARGUMENT",
    "json $.targetTokens: 250 exceeds maxTokens 100")
  raises(function() cupel.budget_from_json('{"targetTokens":1}') end, "INVALID_ARGUMENT", "json $.maxTokens: required")
  raises(function() cupel.budget_from_json('{"maxTokens":-1,"targetTokens":1}') end, "INVALID_ARGUMENT", "json $")
  raises(function() cupel.budget_from_json('[') end, "INVALID_ARGUMENT", "json: malformed JSON")
  b:free()
  raises(function() b:to_json() end, "CLOSED", "budget was freed")
end)

-- docs/policies.md's table of presets.
local PRESETS = {
  { "Chat", "recency 3, kind 1", "greedy", "chronological" },
  { "CodeReview", "kind 2, priority 2, recency 1", "greedy", "chronological" },
  { "Rag", "reflexive 3, kind 1", "greedy", "uShaped" },
  { "DocumentQa", "kind 2, reflexive 2, priority 1", "knapsack", "uShaped" },
  { "ToolUse", "kind 2, recency 2, priority 1", "greedy", "chronological" },
  { "LongRunning", "recency 3, frequency 1, kind 1", "greedy", "chronological" },
  { "Debugging", "priority 3, kind 2, recency 1", "greedy", "chronological" },
  { "AgentLoop", "recency 3, kind 2, reflexive 1", "greedy", "chronological" },
}

test("presets: docs/policies.md's table through to_json, names case-insensitive, unknown ones", function()
  local names = cupel.preset_names()
  assert(#names == #PRESETS, #names .. " presets")
  for i, row in ipairs(PRESETS) do
    local name, scorers, slicer, placer = row[1], row[2], row[3], row[4]
    assert(names[i] == name, tostring(names[i]))
    for _, spelling in ipairs({ name, name:lower(), name:upper() }) do
      local json = cupel.preset(spelling):to_json()
      assert(scorers_of(json) == scorers, name .. ": " .. scorers_of(json))
      assert(json:match('"slicerType": "(%w+)"') == slicer, name .. " slicer")
      assert(json:match('"placerType": "(%w+)"') == placer, name .. " placer")
      assert(json:find('"name": "' .. name .. '"', 1, true), name .. " name")
      assert(json:find('"deduplicationEnabled": true', 1, true) and json:find('"overflowStrategy": "throw"', 1, true))
      if slicer == "knapsack" then assert(json:find('"knapsackBucketSize": 100', 1, true)) end
    end
  end
  local agent = cupel.preset("AgentLoop"):to_json()
  assert(agent:find('"sessionSlack": 0.2', 1, true) and agent:find('"tokenizer": "o200k_base"', 1, true))
  same(cupel.preset("Chat"):run(fixture_items(), fixture_budget()), { 2, 3 }, "Chat on the fixture")
  raises(function() cupel.preset("Nope") end, "INVALID_ARGUMENT",
    'name "Nope" is no preset; the presets are Chat, CodeReview')
  raises(function() cupel.preset("") end, "INVALID_ARGUMENT", 'name "" is no preset')
  raises(function() cupel.preset(nil) end, "NULL_POINTER", "name is nil")
  raises(function() cupel.preset(3) end, "INVALID_ARGUMENT", "name must be a string, got number 3")
  raises(function() cupel.preset("Chat\0x") end, "INVALID_ARGUMENT", "name holds a NUL byte (at byte 5)")
end)

test("policy sensitivity: diffs by index, two items of the same content are two diffs", function()
  local items = cupel.items({
    { tokens = 100, score = 0.5, content = "same words", timestamp = 1, priority = 10 },
    { tokens = 100, score = 0.5, content = "same words", timestamp = 2, priority = 1 },
    { tokens = 10, score = 0.5, content = "small", timestamp = 0, priority = 0 },
  })
  local budget = cupel.budget({ max_tokens = 110 })
  local newest = cupel.pipeline({ scorer = cupel.scorers.recency(), slicer = cupel.greedy(), deduplication = false })
  local highest = cupel.pipeline({ scorer = cupel.scorers.priority(), slicer = cupel.greedy(), deduplication = false })
  same(newest:run(items, budget), { 2, 3 }, "newest")
  same(highest:run(items, budget), { 1, 3 }, "highest")
  local json = cupel.policy_sensitivity({ { label = "newest", pipeline = newest }, { "highest", highest } }, items, budget)
  local diffs = json:match('"diffs":(%b[])')
  local _, count = diffs:gsub('"statuses":', "")
  assert(count == 2, diffs)
  assert(diffs:find('"index":0', 1, true) and diffs:find('"index":1', 1, true) and not diffs:find('"index":2', 1, true),
    diffs)
  assert(diffs:find('{"content":"same words","index":0,"statuses":[{"label":"newest","status":"Excluded"},'
    .. '{"label":"highest","status":"Included"}]}', 1, true), diffs)
  assert(json:find('"label":"newest","report":{', 1, true) and json:find('"label":"highest","report":{', 1, true))
  -- the same pipeline twice: no diffs
  local none = cupel.policy_sensitivity({ { "a", newest }, { "b", newest } }, items, budget)
  assert(none:match('"diffs":(%b[])') == "[]", none)
  -- a text larger than the first buffer
  local many = {}
  for i = 1, 3000 do many[i] = { tokens = 1, score = 0.5, content = ("item %d"):format(i), timestamp = i, priority = -i } end
  local big = cupel.policy_sensitivity({ { "a", newest }, { "b", highest } }, cupel.items(many),
    cupel.budget({ max_tokens = 1000 }))
  assert(#big > 65536 and select(2, big:gsub('"statuses":', "")) == 2000, #big)
  -- errors
  raises(function() cupel.policy_sensitivity({ { "a", newest } }, items, budget) end, "INVALID_ARGUMENT",
    "variants holds 1 variant; policy sensitivity compares at least two")
  raises(function() cupel.policy_sensitivity(nil, items, budget) end, "NULL_POINTER", "variants is nil")
  raises(function() cupel.policy_sensitivity({ { "a", newest }, { "b", nil } }, items, budget) end, "NULL_POINTER",
    "variants[2].pipeline is nil")
  raises(function() cupel.policy_sensitivity({ { "a", newest }, { 5, highest } }, items, budget) end,
    "INVALID_ARGUMENT", "variants[2].label must be a string")
  raises(function() cupel.policy_sensitivity({ { "a", newest }, { "\255", highest } }, items, budget) end,
    "INVALID_ARGUMENT", "variants[2].label")
  raises(function() cupel.policy_sensitivity({ { "a", newest }, "b" }, items, budget) end, "INVALID_ARGUMENT",
    "variants[2] must be a table")
  raises(function() cupel.policy_sensitivity({ { "a", newest }, { "b", highest } }, nil, budget) end, "NULL_POINTER",
    "items is nil")
  raises(function() cupel.policy_sensitivity({ { "a", newest }, { "b", highest } }, items, nil) end, "NULL_POINTER",
    "budget is nil")
  -- a variant that fails names itself (1-based) and its label
  local cuts = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = cupel.tokenizer("o200k_base") })
  local cannot = cupel.pipeline({ slicer = cupel.greedy() })
  local long = cupel.items({ { tokens = 500, content = ("words "):rep(500), truncatable = true } })
  raises(function() cupel.policy_sensitivity({ { "a", cuts }, { "b", cannot } }, long, budget) end,
    "INVALID_ARGUMENT", 'variants[2] ("b") failed: item 1 is truncatable but the pipeline has no tokenizer')
  local pinned = cupel.items({ { tokens = 500, pinned = true, content = "big" } })
  raises(function() cupel.policy_sensitivity({ { "a", newest }, { "b", highest } }, pinned, budget) end,
    "INVALID_ARGUMENT", 'variants[1] ("a") failed: the pinned items need 500 tokens')
end)

test("analytics: a run's report, an empty report, a zero budget", function()
  local _, report = recency_pipeline():run(fixture_items(), fixture_budget(), { report = true })
  local a = report.analytics
  assert(math.abs(a.budget_utilization - 250 / 300) < 1e-12 and a.kind_diversity == 2 and a.timestamp_coverage == 1)
  assert(report.json:find('"analytics":{"budgetUtilization":0.8333333333333334,"kindDiversity":2,'
    .. '"timestampCoverage":1.0', 1, true), report.json)
  -- kinds compared case-insensitively; half with a timestamp
  local items = cupel.items({
    { tokens = 10, kind = "Message", timestamp = 1 }, { tokens = 10, kind = "message" },
    { tokens = 10, kind = "Document", timestamp = 2 }, { tokens = 10, kind = "Document" },
  })
  _, report = recency_pipeline():run(items, cupel.budget({ max_tokens = 80 }), { report = true })
  a = report.analytics
  assert(a.kind_diversity == 2 and a.timestamp_coverage == 0.5 and a.budget_utilization == 0.5)
  -- an empty report
  _, report = recency_pipeline():run(cupel.items(), fixture_budget(), { report = true })
  a = report.analytics
  assert(a.budget_utilization == 0 and a.kind_diversity == 0 and a.timestamp_coverage == 0)
  -- a zero budget: nothing fits, utilization 0 (not NaN)
  _, report = recency_pipeline():run(fixture_items(), cupel.budget({ max_tokens = 0 }), { report = true })
  a = report.analytics
  assert(a.budget_utilization == 0 and a.kind_diversity == 0 and a.timestamp_coverage == 0)
  -- sessions' and the slice stage's reports have them too
  _, report = cupel.session(recency_pipeline()):run(fixture_items(), fixture_budget(), { report = true })
  assert(report.analytics.kind_diversity == 2)
  _, report = cupel.slice(cupel.greedy(), fixture_items(), fixture_budget(), 0, { report = true })
  assert(report.analytics.kind_diversity >= 1)
end)

-- The events of one run of the fixture at `level`.
local function traced_events(level)
  local pipeline, events = recency_pipeline(), {}
  pipeline:set_trace(level, function(e) events[#events + 1] = e end)
  same(pipeline:run(fixture_items(), fixture_budget()), { 2, 3 }, "the traced run")
  return events
end

local function names(events)
  local t = {}
  for i, e in ipairs(events) do t[i] = e.name end
  return t
end

local STAGES = { "cupel.stage.classify", "cupel.stage.score", "cupel.stage.deduplicate", "cupel.stage.slice" }

test("tracing: events per level (6, 7, 9), in order, and their fields", function()
  local stages = traced_events("stages")
  same(names(stages), { STAGES[1], STAGES[2], STAGES[3], STAGES[4], "cupel.stage.place", "cupel.pipeline" }, "stages")
  local exclusions = traced_events(cupel.TRACE_EXCLUSIONS)
  same(names(exclusions), { STAGES[1], STAGES[2], STAGES[3], STAGES[4], "cupel.exclusion", "cupel.stage.place",
    "cupel.pipeline" }, "exclusions")
  local full = traced_events(cupel.TRACE_FULL)
  same(names(full), { STAGES[1], STAGES[2], STAGES[3], STAGES[4], "cupel.exclusion", "cupel.stage.place",
    "cupel.item.included", "cupel.item.included", "cupel.pipeline" }, "full")
  assert(traced_events(nil)[6].name == "cupel.pipeline" and #traced_events(nil) == 6, "nil is stages")
  -- a stage's span
  local classify, slice = full[1], full[4]
  assert(classify.kind == "stage" and classify.stage == "classify" and classify.verbosity == "Full")
  assert(classify.item_count_in == 3 and classify.item_count_out == 3 and classify.exclusion_count == 0)
  assert(slice.stage == "slice" and slice.item_count_in == 3 and slice.item_count_out == 2 and slice.exclusion_count == 1)
  assert(stages[1].verbosity == "StageOnly" and exclusions[1].verbosity == "StageAndExclusions")
  assert(classify.item == nil and classify.reason == nil and classify.max_tokens == nil)
  -- the exclusion: item 1 (alpha), 1-based
  local ex = full[5]
  assert(ex.kind == "exclusion" and ex.stage == "slice" and ex.item == 1 and ex.reason == "BudgetExceeded"
    and ex.reason_code == 10 and ex.item_kind == "Message" and ex.tokens == 100 and ex.score == nil)
  -- the included items
  local in1, in2 = full[7], full[8]
  assert(in1.kind == "included" and in1.item == 2 and in1.item_kind == "Document" and in1.tokens == 200
    and type(in1.score) == "number" and in1.reason == nil)
  assert(in2.item == 3 and in2.item_kind == "ToolOutput" and in2.tokens == 50 and in2.score >= in1.score)
  -- the pipeline's span, last
  local p = full[9]
  assert(p.kind == "pipeline" and p.stage == nil and p.max_tokens == 300 and p.item_count_in == 3
    and p.item_count_out == 2 and p.exclusion_count == 1)
  -- times: spans have a start and a duration, events a start
  for _, e in ipairs(full) do
    assert(e.start_unix_nanos > 0, e.name .. " has no start")
    if e.kind == "exclusion" or e.kind == "included" then
      assert(e.duration_nanos == 0, e.name)
    end
  end
  assert(p.start_unix_nanos <= classify.start_unix_nanos)
  assert(ffi.istype("uint64_t", p.start_unix_nanos), "nanoseconds since 1970 are above 2^53")
  -- off: no events; an unknown level: nothing changes
  local pipeline, n = recency_pipeline(), 0
  pipeline:set_trace("stages", function() n = n + 1 end)
  raises(function() pipeline:set_trace("verbose", function() end) end, "INVALID_ARGUMENT",
    'level is string "verbose"; expected "stages", "exclusions" or "full"')
  raises(function() pipeline:set_trace(2, function() end) end, "INVALID_ARGUMENT", "level must be")
  raises(function() pipeline:set_trace("full", 5) end, "INVALID_ARGUMENT", "callback must be a function, got number 5")
  pipeline:run(fixture_items(), fixture_budget())
  assert(n == 6, n)
  pipeline:set_trace(nil)
  pipeline:run(fixture_items(), fixture_budget())
  assert(n == 6, n)
  -- a callable table is a callback
  pipeline:set_trace("stages", setmetatable({}, { __call = function() n = n + 1 end }))
  pipeline:run(fixture_items(), fixture_budget())
  assert(n == 12, n)
  -- a failed run sends nothing
  pipeline:run(fixture_items(), fixture_budget())
  local before = n
  assert(not pcall(pipeline.run, pipeline, cupel.items({ { tokens = 500, pinned = true } }), fixture_budget()))
  assert(n == before)
  raises(function() Pipeline_set_trace(nil, "stages", print) end, "NULL_POINTER", "pipeline is nil")
  pipeline:free()
  raises(function() pipeline:set_trace("stages", print) end, "CLOSED", "pipeline was freed")
end)

test("tracing: an error in the callback is raised after the run; the run's handles cannot change", function()
  local pipeline, items, budget = recency_pipeline(), fixture_items(), fixture_budget()
  local seen = 0
  pipeline:set_trace("full", function(e)
    seen = seen + 1
    if e.name == "cupel.stage.score" then error({ why = "exporter is down" }) end
  end)
  local ok, err = pcall(pipeline.run, pipeline, items, budget)
  assert(not ok and type(err) == "table" and err.why == "exporter is down", tostring(err))
  assert(seen == 2, "the events after the error are dropped: " .. seen)
  -- a string error keeps its position
  pipeline:set_trace("stages", function() error("boom") end)
  ok, err = pcall(pipeline.run, pipeline, items, budget)
  assert(not ok and err:find("test.lua:%d+: boom"), err)
  -- the pipeline works on after it
  pipeline:set_trace(nil)
  same(pipeline:run(items, budget), { 2, 3 }, "after the error")
  -- the callback may read its run's handles, but not run, change or free them
  local read, refused = nil, {}
  pipeline:set_trace("exclusions", function(e)
    if e.kind == "exclusion" then read = items:get(e.item).content end
    for what, f in pairs({
      run = function() pipeline:run(items, budget) end,
      free = function() pipeline:free() end,
      trace = function() pipeline:set_trace(nil) end,
      tokenizer = function() pipeline:set_tokenizer(nil) end,
      push = function() items:add({ tokens = 1 }) end,
      set = function() items:set_pinned(1, true) end,
      items_free = function() items:free() end,
      budget = function() budget:reserve("Message", 1) end,
      budget_free = function() budget:free() end,
    }) do
      local fine, e2 = pcall(f)
      if not fine and e2.status_name == "INVALID_ARGUMENT" and e2.message:find("in use by a traced run", 1, true) then
        refused[what] = true
      end
    end
    -- another pipeline may run on the same items
    same(recency_pipeline():run(items, budget), { 2, 3 }, "a run inside the callback")
    assert(pipeline:to_json():find('"recency"', 1, true))
  end)
  same(pipeline:run(items, budget), { 2, 3 }, "the traced run")
  assert(read == "alpha", tostring(read))
  for _, what in ipairs({ "run", "free", "trace", "tokenizer", "push", "set", "items_free", "budget", "budget_free" }) do
    assert(refused[what], what .. " was not refused")
  end
  -- after the run they may again
  assert(items:len() == 3 and not items:get(1).pinned)
  items:add({ tokens = 1 })
  budget:reserve("Message", 1)
  pipeline:set_trace(nil)
  pipeline:free()
  -- an error in a session's and in the sensitivity's runs
  local p2 = recency_pipeline()
  p2:set_trace("stages", function() error("in a session") end)
  local session = cupel.session(p2)
  ok, err = pcall(session.run, session, fixture_items(), fixture_budget())
  assert(not ok and err:find("in a session", 1, true), tostring(err))
  ok, err = pcall(cupel.policy_sensitivity, { { "a", p2 }, { "b", recency_pipeline() } }, fixture_items(),
    fixture_budget())
  assert(not ok and err:find("in a session", 1, true), tostring(err))
  ok, err = pcall(cupel.select, { { text = "hello" } }, { max_tokens = 10, policy = p2 })
  assert(not ok and err:find("in a session", 1, true), tostring(err))
end)

test("tracing: the callback lives while a pipeline or a session holds it, and is freed after", function()
  -- LuaJIT has a few hundred callback slots: a callback not freed would
  -- exhaust them long before these loops end.
  local items, budget = fixture_items(), fixture_budget()
  local pipeline, n = recency_pipeline(), 0
  for _ = 1, 3000 do
    pipeline:set_trace("stages", function() n = n + 1 end) -- replaces (and frees) the last one
  end
  pipeline:run(items, budget)
  assert(n == 6)
  for _ = 1, 3000 do
    pipeline:set_trace("stages", function() n = n + 1 end)
    pipeline:set_trace(nil)
  end
  for _ = 1, 3000 do
    local p = recency_pipeline()
    p:set_trace("stages", function() n = n + 1 end)
    p:free()
  end
  for i = 1, 3000 do -- dropped: the collector frees the pipeline and its callback
    local p = recency_pipeline()
    p:set_trace("stages", function() n = n + 1 end)
    if i % 500 == 0 then collectgarbage("collect") end
  end
  -- a session made while a trace is set calls it, after the pipeline is freed
  local events = {}
  local p = recency_pipeline()
  p:set_trace("stages", function(e) events[#events + 1] = e.name end)
  local session = cupel.session(p)
  p:free()
  collectgarbage("collect")
  same(session:run(items, budget), { 2, 3 }, "the session's run")
  assert(#events == 6 and events[6] == "cupel.pipeline", #events)
  -- ... and after the pipeline's trace was replaced
  local p3 = recency_pipeline()
  local first, second = 0, 0
  p3:set_trace("stages", function() first = first + 1 end)
  local s3 = cupel.session(p3)
  p3:set_trace("stages", function() second = second + 1 end)
  s3:run(items, budget)
  p3:run(items, budget)
  assert(first == 6 and second == 6, first .. " " .. second)
  s3:free()
  p3:set_trace(nil)
  p3:run(items, budget)
  assert(first == 6 and second == 6)
  for _ = 1, 2000 do
    local q = recency_pipeline()
    q:set_trace("stages", function() end)
    cupel.session(q):free()
    q:free()
  end
  for _ = 1, 2000 do -- sessions and pipelines dropped, in either order
    local q = recency_pipeline()
    q:set_trace("stages", function() end)
    local _ = cupel.session(q)
  end
  collectgarbage("collect")
  collectgarbage("collect")
  session:free()
end)

test("tracing: traced runs in hot loops (the JIT never calls a callback)", function()
  local items, budget = fixture_items(), fixture_budget()
  local pipeline, n = recency_pipeline(), 0
  pipeline:set_trace("full", function() n = n + 1 end)
  local session = cupel.session(pipeline)
  for _ = 1, 5000 do pipeline:run(items, budget) end
  for _ = 1, 2000 do session:run(items, budget) end
  for _ = 1, 1000 do cupel.select({ { text = "a" }, { text = "b" } }, { max_tokens = 1, policy = pipeline }) end
  for _ = 1, 500 do cupel.policy_sensitivity({ { "a", pipeline }, { "b", pipeline } }, items, budget) end
  assert(n == 5000 * 9 + 2000 * 9 + 1000 * 8 + 500 * 18, n)
  -- untraced runs hot enough to be compiled, then a trace set: a C call
  -- compiled while it never called back would now (LuaJIT's "bad callback")
  local p2, s2, m = recency_pipeline(), nil, 0
  s2 = cupel.session(p2)
  for i = 1, 6000 do
    if i == 4000 then
      p2:set_trace("stages", function() m = m + 1 end)
      s2 = cupel.session(p2)
    end
    p2:run(items, budget)
    s2:run(items, budget)
    if i % 10 == 0 then cupel.policy_sensitivity({ { "a", p2 }, { "b", p2 } }, items, budget) end
  end
  assert(m == 2001 * 6 * 2 + 201 * 12, m)
end)

-- The long-hand pipeline for messages: the same items built by hand (texts
-- pushed with their tokenizer, the groups given, timestamps i when none has
-- one), run by `pipeline` within `budget`. Returns the placed indices.
local function long_hand(messages, groups, pipeline, budget, tok)
  local any_timestamp = false
  for _, m in ipairs(messages) do any_timestamp = any_timestamp or m.timestamp ~= nil end
  local list = {}
  for i, m in ipairs(messages) do
    list[i] = {
      text = m.text, score = m.score or 1.0, kind = m.kind, pinned = m.pinned, group = groups[i],
      timestamp = m.timestamp or (not any_timestamp and i or nil), priority = m.priority, relevance_hint = m.relevance,
      key = m.key,
    }
  end
  local items = cupel.items()
  items:push_texts(tok, list)
  return pipeline:run(items, budget)
end

-- cupel.select against the long hand: the same messages (the host's tables)
-- in the same order, and the groups in the report as given.
local function same_as_long_hand(messages, groups, o, pipeline, budget, tok, what)
  local kept, report = cupel.select(messages, setmetatable({ report = true }, { __index = o }))
  local placed = long_hand(messages, groups, pipeline, budget, tok)
  assert(#kept == #placed, ("%s: %d kept, %d placed"):format(what, #kept, #placed))
  for k, i in ipairs(placed) do
    assert(rawequal(kept[k], messages[i]), ("%s: message %d is not messages[%d]"):format(what, k, i))
  end
  for _, list in ipairs({ report.included, report.excluded }) do
    for _, d in ipairs(list) do
      assert(d.group == groups[d.index], ("%s: messages[%d] is in group %d, not %d"):format(what, d.index, d.group,
        groups[d.index]))
    end
  end
  return kept
end

local TOOL_CHAT = {
  { role = "system", text = "system: you are a terse coding assistant", kind = "SystemPrompt", pinned = true },
  { role = "user", text = "user: list the files" },
  { role = "assistant", text = "assistant: calling ls", tool_call_id = "t1" },
  { role = "tool", text = "tool: " .. ("file.txt "):rep(30), kind = "ToolOutput", tool_call_id = "t1" },
  { role = "assistant", text = "assistant: thirty files" },
  { role = "user", text = "user: which is the biggest?" },
}
local TOOL_CHAT_GROUPS = { 0, 0, 1, 1, 0, 0 }

local PARALLEL = {
  { text = "user: weather in Paris and Rome?" },
  { text = "assistant: two calls", tool_call_ids = { "p", "r" } },
  { text = "tool: Paris 20C", kind = "ToolOutput", tool_call_id = "p" },
  { text = "tool: Rome " .. ("25C and sunny, "):rep(20), kind = "ToolOutput", tool_call_id = "r" },
  { text = "note: first", group = "notes", kind = "Memory" },
  { text = "assistant: one more call", tool_call_id = "x" },
  { text = "note: second, the call's result", group = "notes", tool_call_id = "x", kind = "ToolOutput" },
  { text = "user: thanks" },
}
local PARALLEL_GROUPS = { 0, 1, 1, 1, 2, 2, 2, 0 }

test("the one-call path equals the long-hand pipeline: tool calls, parallel calls, a pinned system prompt", function()
  local o200k = cupel.tokenizer("o200k_base")
  for _, policy in ipairs({ "Chat", "ToolUse", "AgentLoop", "chat", "DocumentQa", "Rag" }) do
    for _, max in ipairs({ 0, 10, 25, 40, 60, 100, 1000 }) do
      local what = ("%s, %d tokens"):format(policy, max)
      local budget = cupel.budget({ max_tokens = max })
      local ok, err = pcall(same_as_long_hand, TOOL_CHAT, TOOL_CHAT_GROUPS, { max_tokens = max, policy = policy },
        cupel.preset(policy), budget, o200k, "tools, " .. what)
      if not ok then
        -- the pinned prompt over a tiny budget: both fail alike
        local a = select(2, pcall(cupel.select, TOOL_CHAT, { max_tokens = max, policy = policy }))
        local b = select(2, pcall(long_hand, TOOL_CHAT, TOOL_CHAT_GROUPS, cupel.preset(policy), budget, o200k))
        assert(getmetatable(a) == cupel.Error and getmetatable(b) == cupel.Error and a.message == b.message,
          tostring(err))
      end
      same_as_long_hand(PARALLEL, PARALLEL_GROUPS, { max_tokens = max, policy = policy }, cupel.preset(policy),
        budget, o200k, "parallel, " .. what)
    end
  end
  -- the call and its result go together
  local kept = cupel.select(TOOL_CHAT, { max_tokens = 40, policy = "Chat" })
  local texts = {}
  for k, m in ipairs(kept) do texts[k] = m.role end
  assert(table.concat(texts, " ") == "system user assistant user", table.concat(texts, " "))
  -- the host's tables come back unchanged
  assert(kept[1] == TOOL_CHAT[1] and kept[1].role == "system" and TOOL_CHAT[3].tool_call_id == "t1")
  -- nothing: no messages
  assert(#cupel.select({}, { max_tokens = 10, policy = "Chat" }) == 0)
end)

test("the one-call path: a policy document, a pipeline, a budget, timestamps, the tokenizer's precedence", function()
  local o200k, cl100k = cupel.tokenizer("o200k_base"), cupel.tokenizer("cl100k_base")
  local messages = {
    { text = "日本語のテキストです", priority = 3, relevance = 0.9, timestamp = 5000, score = 0.2 },
    { text = "hello world", priority = 1, relevance = 0.1, score = 0.9, key = 7 },
    { text = "🙂🙂🙂 emoji time", priority = 2, relevance = 0.5, timestamp = 1000, score = 0.5, kind = "Note" },
    { text = "another message here", relevance = 0.7, timestamp = 3000, score = 0.1, pinned = true },
  }
  assert(o200k:count(messages[1].text) ~= cl100k:count(messages[1].text))
  local groups = { 0, 0, 0, 0 }
  local policy = '  \n {"scorers":[{"type":"priority","weight":1},{"type":"reflexive","weight":2},'
    .. '{"type":"recency","weight":1}],"placerType":"uShaped","tokenizer":"cl100k_base"}'
  for _, max in ipairs({ 8, 15, 20, 30, 100 }) do
    local budget = cupel.budget({ max_tokens = max })
    -- a policy document: its tokenizer counts
    same_as_long_hand(messages, groups, { max_tokens = max, policy = policy }, cupel.pipeline_from_json(policy), budget,
      cl100k, "the policy document")
    -- the call's tokenizer first
    same_as_long_hand(messages, groups, { max_tokens = max, policy = policy, tokenizer = "o200k_base" },
      cupel.pipeline_from_json(policy), budget, o200k, "the tokenizer argument")
    same_as_long_hand(messages, groups, { max_tokens = max, policy = policy, tokenizer = o200k },
      cupel.pipeline_from_json(policy), budget, o200k, "a tokenizer handle")
    -- a pipeline object (the pushed scores), its own tokenizer
    local given = cupel.pipeline({ slicer = cupel.knapsack(1), placer = cupel.chronological() })
    same_as_long_hand(messages, groups, { max_tokens = max, policy = given }, given, budget, o200k, "a pipeline")
    local with_tok = cupel.pipeline({ slicer = cupel.greedy(), placer = cupel.chronological(), tokenizer = cl100k })
    same_as_long_hand(messages, groups, { max_tokens = max, policy = with_tok }, with_tok, budget, cl100k,
      "a pipeline with a tokenizer")
    -- a budget object
    local b = cupel.budget({ max_tokens = max + 10, target_tokens = max, output_reserve = 5 })
    same_as_long_hand(messages, groups, { budget = b, policy = "Rag" }, cupel.preset("Rag"), b, o200k, "a budget")
  end
  -- the counts in the report
  local _, report = cupel.select(messages, { max_tokens = 1000, policy = policy, report = true })
  local tokens = {}
  for _, d in ipairs(report.included) do tokens[d.index] = d.item_tokens end
  assert(tokens[1] == cl100k:count(messages[1].text), "the policy's tokenizer")
  _, report = cupel.select(messages, { max_tokens = 1000, policy = "Chat", report = true })
  for _, d in ipairs(report.included) do tokens[d.index] = d.item_tokens end
  assert(tokens[1] == o200k:count(messages[1].text), "o200k_base by default")
  _, report = cupel.select(messages, { max_tokens = 1000, policy = "Chat", tokenizer = "cl100k_base", report = true })
  for _, d in ipairs(report.included) do tokens[d.index] = d.item_tokens end
  assert(tokens[1] == cl100k:count(messages[1].text), "the argument")
  -- the pipeline's tokenizer removed: o200k_base
  local removed = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = cl100k })
  removed:set_tokenizer(nil)
  _, report = cupel.select(messages, { max_tokens = 1000, policy = removed, report = true })
  for _, d in ipairs(report.included) do tokens[d.index] = d.item_tokens end
  assert(tokens[1] == o200k:count(messages[1].text), "no tokenizer left")
  -- timestamps: positions when none has one (recency keeps the last ones)
  local plain = { { text = "one" }, { text = "two" }, { text = "three" } }
  local recency = cupel.pipeline({ scorer = cupel.scorers.recency(), slicer = cupel.greedy(),
    placer = cupel.chronological() })
  local kept = cupel.select(plain, { max_tokens = 2, policy = recency })
  assert(#kept == 2 and kept[1] == plain[2] and kept[2] == plain[3])
  same_as_long_hand(plain, { 0, 0, 0 }, { max_tokens = 2, policy = recency }, recency, cupel.budget({ max_tokens = 2 }),
    o200k, "timestamps as positions")
  -- given timestamps order the placement
  local stamped = { { text = "one", timestamp = 30 }, { text = "two", timestamp = 10 }, { text = "three", timestamp = 20 } }
  kept = cupel.select(stamped, { max_tokens = 10, policy = "Chat" })
  assert(kept[1] == stamped[2] and kept[2] == stamped[3] and kept[3] == stamped[1])
  -- the key reaches the items: a session-style duplicate is no error here (the pipeline ignores keys)
  assert(#cupel.select({ { text = "a", key = 1 }, { text = "b", key = 1 } }, { max_tokens = 10, policy = "Chat" }) == 2)
  -- a pipeline the format cannot write, with a built-in tokenizer: its name all the same
  local nested = cupel.pipeline({ slicer = cupel.quota(cupel.count_quota(cupel.greedy(),
    { { kind = "Message", require_count = 0, cap_count = 5 } }), { { kind = "Message", require_percent = 0, cap_percent = 100 } }),
    tokenizer = cl100k })
  assert(not pcall(nested.to_json, nested), "the format cannot write it")
  _, report = cupel.select(messages, { max_tokens = 1000, policy = nested, report = true })
  for _, d in ipairs(report.included) do tokens[d.index] = d.item_tokens end
  assert(tokens[1] == cl100k:count(messages[1].text), "an unwritable pipeline's tokenizer")
end)

test("the one-call path: no policy is Chat; empty group names and ids are none; key 0 is none", function()
  local o200k = cupel.tokenizer("o200k_base")
  local messages = {
    { text = "a", group = "", key = 0 }, -- none
    { text = "b", tool_call_id = "" }, -- none
    { text = "c", tool_call_ids = { "", nil, "t", n = 3 } }, -- group 1, with the next
    { text = "d", tool_call_id = "t", key = 0 },
    { text = "e", group = "g", tool_call_ids = { "" } }, -- alone: group 2
    { text = "f", tool_call_ids = {} }, -- none
    { text = "g", tool_call_id = "u", key = 18446744073709551615ULL }, -- alone: group 3
    { text = "h", group = "t" }, -- a group "t" is not the call "t": group 4
  }
  local groups = { 0, 0, 1, 1, 2, 0, 3, 4 }
  for _, max in ipairs({ 0, 2, 4, 6, 1000 }) do
    local budget = cupel.budget({ max_tokens = max })
    same_as_long_hand(messages, groups, { max_tokens = max }, cupel.preset("Chat"), budget, o200k, "no policy")
    same_as_long_hand(TOOL_CHAT, TOOL_CHAT_GROUPS, { max_tokens = max + 40 }, cupel.preset("Chat"),
      cupel.budget({ max_tokens = max + 40 }), o200k, "no policy, tools")
  end
  -- where Chat and AgentLoop differ, no policy is Chat
  local mixed = {
    { text = "a memory worth keeping", kind = "Memory", relevance = 1 },
    { text = "an older plain message", kind = "Message", relevance = 0 },
    { text = "a newer plain message", kind = "Message", relevance = 0 },
  }
  local function first(kept) return kept[1] == mixed[1] and 1 or 2 end
  assert(first(cupel.select(mixed, { max_tokens = 8, policy = "AgentLoop" })) == 1)
  assert(first(cupel.select(mixed, { max_tokens = 8, policy = "Chat" })) == 2)
  assert(first(cupel.select(mixed, { max_tokens = 8 })) == 2)
end)

test("the one-call path: bad input names messages[i].field, the budget, the policy, the tokenizer", function()
  local function sel(messages, o)
    return function() cupel.select(messages, o) end
  end
  local ok = { max_tokens = 100, policy = "Chat" }
  raises(sel(nil, ok), "NULL_POINTER", "messages is nil")
  raises(sel("hi", ok), "INVALID_ARGUMENT", "messages must be a table, got string")
  raises(sel({ { text = "a" }, "b" }, ok), "INVALID_ARGUMENT", "messages[2] must be a table, got string")
  raises(sel({ { text = "a" }, nil, { text = "c" }, n = 3 }, ok), "NULL_POINTER", "messages[2] is nil")
  raises(sel({ { text = "a" }, { text = "" } }, ok), "INVALID_ARGUMENT",
    "messages[2].text is empty; an item's content must be non-empty")
  raises(sel({ { kind = "Message" } }, ok), "NULL_POINTER", "messages[1].text is nil")
  raises(sel({ { text = 5 } }, ok), "INVALID_ARGUMENT", "messages[1].text must be a string, got number 5")
  raises(sel({ { text = "a" }, { text = "b" }, { text = "ok\255" } }, ok), "INVALID_ARGUMENT",
    "messages[3].text is not valid UTF-8 (at byte 3)")
  raises(sel({ { text = "a" }, { text = "b", score = 0 / 0 } }, ok), "INVALID_ARGUMENT", "messages[2].score is NaN")
  raises(sel({ { text = "a", score = "high" } }, ok), "INVALID_ARGUMENT", "messages[1].score must be a number")
  raises(sel({ { text = "a", kind = 5 } }, ok), "INVALID_ARGUMENT", "messages[1].kind must be a string")
  raises(sel({ { text = "a" }, { text = "b", kind = "" } }, ok), "INVALID_ARGUMENT", "messages[2].kind")
  raises(sel({ { text = "a", pinned = "yes" } }, ok), "INVALID_ARGUMENT", "messages[1].pinned must be a boolean")
  raises(sel({ { text = "a", group = 7 } }, ok), "INVALID_ARGUMENT", "messages[1].group must be a string, got number 7")
  raises(sel({ { text = "a", tool_call_id = true } }, ok), "INVALID_ARGUMENT", "messages[1].tool_call_id must be a string")
  raises(sel({ { text = "a", tool_call_ids = "x" } }, ok), "INVALID_ARGUMENT", "messages[1].tool_call_ids must be a table")
  raises(sel({ { text = "a", tool_call_ids = { "x", 5 } } }, ok), "INVALID_ARGUMENT",
    "messages[1].tool_call_ids[2] must be a string")
  raises(sel({ { text = "a", key = -1 } }, ok), "INVALID_ARGUMENT", "messages[1].key is -1; it must be >= 0")
  raises(sel({ { text = "a", timestamp = 1.5 } }, ok), "INVALID_ARGUMENT", "messages[1].timestamp is 1.5; expected an integer")
  raises(sel({ { text = "a", priority = "high" } }, ok), "INVALID_ARGUMENT", "messages[1].priority must be an integer")
  raises(sel({ { text = "a", relevance = {} } }, ok), "INVALID_ARGUMENT", "messages[1].relevance must be a number")
  -- the budget
  raises(sel({ { text = "a" } }, { max_tokens = -1, policy = "Chat" }), "INVALID_ARGUMENT", "max_tokens is -1; it must be >= 0")
  raises(sel({ { text = "a" } }, { max_tokens = 2.5, policy = "Chat" }), "INVALID_ARGUMENT", "max_tokens is 2.5")
  raises(sel({ { text = "a" } }, { policy = "Chat" }), "NULL_POINTER", "max_tokens is nil")
  raises(sel({ { text = "a" } }, { max_tokens = 5, budget = cupel.budget({ max_tokens = 5 }), policy = "Chat" }),
    "INVALID_ARGUMENT", "max_tokens and budget are both set")
  raises(sel({ { text = "a" } }, { budget = 5, policy = "Chat" }), "INVALID_ARGUMENT", "budget must be a cupel Budget")
  local freed_budget = cupel.budget({ max_tokens = 5 })
  freed_budget:free()
  raises(sel({ { text = "a" } }, { budget = freed_budget, policy = "Chat" }), "CLOSED", "budget was freed")
  raises(sel({ { text = "a" } }, nil), "NULL_POINTER", "o is nil")
  -- the policy
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = "Nope" }), "INVALID_ARGUMENT",
    'policy "Nope" is no preset; the presets are Chat')
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = "" }), "INVALID_ARGUMENT", 'policy "" is no preset')
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = 5 }), "INVALID_ARGUMENT",
    "policy must be a preset's name, a policy document (JSON text) or a cupel Pipeline, got number 5")
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = cupel.greedy() }), "INVALID_ARGUMENT",
    "policy must be a preset's name")
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = ' {"scorers":[{"type":"recency","weight":-1}]}' }),
    "INVALID_ARGUMENT", "policy: json $.scorers[0].weight: must be positive and finite (got -1)")
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = "{" }), "INVALID_ARGUMENT", "policy: json: malformed JSON")
  local freed = cupel.preset("Chat")
  freed:free()
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = freed }), "CLOSED", "policy was freed")
  -- the tokenizer
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = "Chat", tokenizer = "gpt2" }), "INVALID_ARGUMENT",
    'tokenizer "gpt2" is no known encoding')
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = "Chat", tokenizer = 5 }), "INVALID_ARGUMENT",
    "tokenizer must be a cupel Tokenizer")
  local tok = cupel.tokenizer("o200k_base")
  local pipeline = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = tok })
  tok:free()
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = "Chat", tokenizer = tok }), "CLOSED", "tokenizer was freed")
  -- a built-in tokenizer freed: the pipeline's own reference has its name
  assert(#cupel.select({ { text = "a" } }, { max_tokens = 5, policy = pipeline }) == 1)
  -- one from a vocabulary file, freed: nothing to count with
  local file = cupel.tokenizer_from_tiktoken(vocabulary())
  local with_file = cupel.pipeline({ slicer = cupel.greedy(), tokenizer = file })
  local _, report = cupel.select({ { text = "日本" } }, { max_tokens = 50, policy = with_file, report = true })
  assert(report.included[1].item_tokens == 6, "the vocabulary file's count (one token a byte)")
  file:free()
  raises(sel({ { text = "a" } }, { max_tokens = 5, policy = with_file }), "INVALID_ARGUMENT",
    "policy: the pipeline's tokenizer (from a vocabulary file) was freed")
  -- a failed run: the long-hand error
  raises(sel({ { text = ("long "):rep(50), pinned = true } }, { max_tokens = 5, policy = "Chat" }), "INVALID_ARGUMENT",
    "the pinned items need 51 tokens, but only 5 are available")
end)

test("the collector frees what was dropped", function()
  collectgarbage("collect")
  collectgarbage("collect")
  local before = cupel.live_handles()
  local vocab = vocabulary(NIHON_MERGES)
  for i = 1, 200 do
    local items = cupel.items({ { tokens = 1, score = 0.1 } })
    cupel.slice(cupel.greedy(), items, cupel.budget({ max_tokens = 10 }))
    local tok = i % 20 == 0 and cupel.tokenizer_from_tiktoken(vocab) or cupel.tokenizer("o200k_base")
    items:push_texts(tok, { "hello", "world" })
  end
  collectgarbage("collect")
  collectgarbage("collect")
  assert(cupel.live_handles() == before, cupel.live_handles() .. " live, " .. before .. " before")
end)

print(("test_cupel_lua: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
