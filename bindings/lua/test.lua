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
