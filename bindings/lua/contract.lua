-- The binding contract (tests/contract/contract.txt) run through this
-- binding's public API: every row whose `where` names lua.
--
--   CUPEL_LIB=/path/to/libcupel.so luajit bindings/lua/contract.lua [contract.txt]
--
-- The table is the argument, else $CUPEL_CONTRACT, else
-- ../../tests/contract/contract.txt from this file. Prints
-- "contract lua: N passed, M failed" and a line per failure; exits 1 when a
-- row fails (an unknown op, value or expect fails its row), 2 when the table
-- cannot be read.
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local cupel = require("cupel")

local LANG = "lua"

-- The error category -> status_name this runner checks; it must equal the
-- table's `@map lua` line (checked below, so the two cannot drift).
local MAP = {
  null = "NULL_POINTER",
  type = "INVALID_ARGUMENT",
  integer = "INVALID_ARGUMENT",
  value = "INVALID_ARGUMENT",
  range = "INVALID_ARGUMENT",
  closed = "CLOSED",
}

-- The table's argument names that this binding spells otherwise: the
-- number of pipelines given to policy sensitivity is the length of its
-- `variants` list (the Lua API takes { label, pipeline } pairs).
local ALIAS = { count = "variants" }

-- The arguments whose values are item indices (0-based in the table).
local INDEX_ARGS = { index = true, target_index = true, indices = true }

-- The keep values of truncation, as this binding spells them.
local KEEP = { head = cupel.KEEP_HEAD, tail = cupel.KEEP_TAIL, both_ends = cupel.KEEP_BOTH_ENDS }

-- The trace levels, as this binding spells them.
local LEVEL = { stages = cupel.TRACE_STAGES, exclusions = cupel.TRACE_EXCLUSIONS, full = cupel.TRACE_FULL }

-- The JSON texts of the table's VALUES.
local JSON_VALUES = {
  ["policy-null"] = "null",
  ["policy-malformed"] = '{"scorers":',
  ["policy-bad-weight"] = '{"scorers":[{"type":"recency","weight":-1}]}',
  ["policy-bad-type"] = '{"scorers":[{"type":"nope","weight":1}]}',
  ["budget-bad"] = '{"maxTokens":100,"targetTokens":250}',
  ["budget-missing"] = '{"targetTokens":1}',
}

local POLICY = '{"scorers":[{"type":"recency","weight":1}],"slicerType":"greedy","placerType":"chronological"}'
local BUDGET = '{"maxTokens":300,"targetTokens":250}'

local SENTENCE = "Hello, world! This is libcupel counting tokens."

local SENTINELS = { "18446744073709551615", "9223372036854775808", "9223372036854775807", "4294967295" }

-- A `closed` row's message holds one of these words, in any case.
local CLOSED_WORDS = { "closed", "disposed", "freed", "moved" }

-- ---- the table --------------------------------------------------------------------

local path = arg and arg[1] or os.getenv("CUPEL_CONTRACT") or here .. "../../tests/contract/contract.txt"
local file, err = io.open(path, "r")
if not file then
  io.stderr:write("contract lua: cannot read the table: " .. tostring(err) .. "\n")
  os.exit(2)
end

local rows, map_columns, map_line = {}, nil, nil
local lineno = 0
for line in file:lines() do
  lineno = lineno + 1
  local cols = line:match("^#%s*@map%s+(.*)$")
  if cols then
    map_columns = {}
    for w in cols:gmatch("%S+") do map_columns[#map_columns + 1] = w end
  elseif line:match("^@map%s") then
    local f = {}
    for w in line:gmatch("%S+") do f[#f + 1] = w end
    if f[2] == LANG then map_line = f end
  elseif not line:match("^%s*#") and line:match("%S") then
    local f = {}
    for w in line:gmatch("%S+") do f[#f + 1] = w end
    if #f ~= 6 then
      io.stderr:write(("contract.txt:%d: not a row of six fields\n"):format(lineno))
      os.exit(2)
    end
    rows[#rows + 1] = { id = f[1], op = f[2], arg = f[3], value = f[4], expect = f[5], where = f[6] }
  end
end
file:close()

local function names_lang(where)
  if where == "all" or where == "dyn" or where == "handles" then
    return true -- lua is dynamically typed and has handles
  end
  for l in where:gmatch("[^,]+") do
    if l == LANG then return true end
  end
  return false
end

-- The @map check: the column names come from the `# @map  lang ...` line.
local map_problem
if not map_columns or not map_line then
  map_problem = "the table has no @map line for lua (or no column header)"
else
  for k = 2, #map_columns do
    local category, want = map_columns[k], map_line[k + 1]
    if MAP[category] ~= want then
      map_problem = ("@map lua gives %s for %s, this runner %s"):format(tostring(want), category,
        tostring(MAP[category]))
    end
  end
  for category in pairs(MAP) do
    local found = false
    for k = 2, #map_columns do
      if map_columns[k] == category then found = true end
    end
    if not found then map_problem = "this runner maps " .. category .. ", which the @map header lacks" end
  end
end

-- ---- the fixture ----------------------------------------------------------------

local FIXTURE = {
  { tokens = 100, score = 0.9, kind = "Message", content = "alpha", timestamp = 1000 },
  { tokens = 200, score = 0.5, kind = "Document", content = "beta", timestamp = 2000 },
  { tokens = 50, score = 0.1, kind = "ToolOutput", content = "gamma", timestamp = 3000 },
}

-- MESSAGES: the fixture's items as messages of the one-call path.
local function messages()
  local m = {}
  for i, it in ipairs(FIXTURE) do
    m[i] = { text = it.content, kind = it.kind, timestamp = it.timestamp }
  end
  return m
end

local function fixture()
  local fx = {}
  fx.items = cupel.items(FIXTURE)
  fx.budget = cupel.budget({ max_tokens = 300, target_tokens = 250 })
  fx.greedy = cupel.greedy()
  fx.recency = cupel.scorers.recency()
  fx.priority = cupel.scorers.priority()
  fx.kind = cupel.scorers.kind()
  fx.chronological = cupel.chronological()
  fx.pipeline = cupel.pipeline({ scorer = fx.recency, slicer = fx.greedy, placer = fx.chronological })
  fx.stream = cupel.stream(100)
  fx.tokenizer = cupel.tokenizer("o200k_base")
  return fx
end

-- ---- values -------------------------------------------------------------------------

local Unsupported = {} -- raised (as the error value's metatable) for what the runner cannot express

local function unsupported(why)
  error(setmetatable({ why = why }, Unsupported), 0)
end

-- The row's value for argument `name`, whose fixture value is `default`.
local function value_of(row, fx, name, default)
  local v = row.value
  if v == "null" then
    return nil
  elseif v == "closed" then
    if getmetatable(default) == nil or type(default.free) ~= "function" then
      unsupported("closed for " .. name .. ", which is no handle")
    end
    default:free()
    return default
  elseif v == "wrong-handle" then
    local m = getmetatable(default)
    if m == nil or type(default.free) ~= "function" then
      unsupported("wrong-handle for " .. name .. ", which is no handle")
    end
    return m == getmetatable(fx.recency) and fx.greedy or fx.recency
  elseif v == "end" then
    if not INDEX_ARGS[name] then unsupported("end for " .. name .. ", which is no index") end
    return #FIXTURE + 1
  elseif v == "bad-utf8" then
    return "\255\254"
  elseif v == "nan" then
    return 0 / 0
  elseif v == "inf" then
    return math.huge
  elseif v == "-inf" then
    return -math.huge
  elseif v == "2^63" then
    return 2 ^ 63
  elseif v == "2^64" then
    return 2 ^ 64
  elseif KEEP[v] then
    return KEEP[v]
  elseif LEVEL[v] then
    return LEVEL[v]
  elseif JSON_VALUES[v] then
    return JSON_VALUES[v]
  elseif v == "-" then
    unsupported("the value - for " .. name .. " (it replaces no argument)")
  elseif v == "true" then
    return true
  elseif v == "false" then
    return false
  elseif v:sub(1, 1) == '"' then
    if #v < 2 or v:sub(-1) ~= '"' then unsupported("unterminated string " .. v) end
    return (v:sub(2, -2):gsub("\\x(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
  end
  local n = tonumber(v)
  if n == nil then unsupported("the value " .. v) end
  if INDEX_ARGS[name] then n = n + 1 end
  return n
end

-- ---- ops ----------------------------------------------------------------------------------

-- Indices as the table writes results: 0-based, "[i, j]".
local function show_indices(t)
  local s = {}
  for i, x in ipairs(t) do s[i] = tostring(x - 1) end
  return "[" .. table.concat(s, ", ") .. "]"
end

-- Each op: function(A, fx) -> result text or nil, and a failed check or nil.
-- A(name, default) is the argument `name`: the row's value if the row
-- replaces it, else `default`.
local OPS = {}

local function item_methods(fx)
  return getmetatable(fx.items)
end

OPS["items.push"] = function(A, fx)
  local items = A("items", fx.items)
  item_methods(fx).add(items, { tokens = A("tokens", 10), score = A("score", 0.5), kind = A("kind", "Message") })
end

OPS["items.push_many"] = function(A, fx)
  local list = {}
  for i = 1, 11 do list[i] = { tokens = 7, score = 0.5, kind = "Message" } end
  list[12] = { tokens = A("tokens", 7), score = A("score", 0.5), kind = A("kind", "Message") }
  item_methods(fx).push(A("items", fx.items), list)
end

OPS["items.set_content"] = function(A, fx)
  fx.items:set_content(A("index", 1), A("content", "hello"))
end

OPS["items.set_timestamp"] = function(A, fx)
  fx.items:set_timestamp(A("index", 1), A("unix_millis", 5))
end

OPS["items.set_priority"] = function(A, fx)
  fx.items:set_priority(A("index", 1), A("priority", 1))
end

OPS["items.set_pinned"] = function(A, fx)
  fx.items:set_pinned(A("index", 1), A("pinned", true))
end

OPS["items.set_group"] = function(A, fx)
  fx.items:set_group(A("index", 1), A("group", 7))
end

OPS["items.add_tag"] = function(A, fx)
  fx.items:add_tag(A("index", 1), A("tag", "t"))
end

OPS["items.set_metadata"] = function(A, fx)
  fx.items:set_metadata(A("index", 1), A("key", "k"), A("value", "v"))
end

OPS["items.get"] = function(A, fx)
  local i = A("index", 2)
  local got = item_methods(fx).get(A("items", fx.items), i)
  local want = FIXTURE[i]
  if want then
    for _, field in ipairs({ "tokens", "score", "kind", "content", "timestamp" }) do
      if got[field] ~= want[field] then
        return nil, ("%s read back as %s, not %s"):format(field, tostring(got[field]), tostring(want[field]))
      end
    end
  end
end

OPS["items.close"] = function(A, fx)
  local items = A("items", fx.items)
  item_methods(fx).free(items)
end

OPS["budget.new"] = function(A)
  cupel.budget({ max_tokens = A("max_tokens", 1000), target_tokens = A("target_tokens", 800) })
end

OPS["budget.set_output_reserve"] = function(A, fx)
  getmetatable(fx.budget).set_output_reserve(A("budget", fx.budget), A("output_reserve", 10))
end

OPS["budget.set_safety_margin"] = function(A, fx)
  getmetatable(fx.budget).set_safety_margin(A("budget", fx.budget), A("percent", 5))
end

OPS["budget.reserve"] = function(A, fx)
  getmetatable(fx.budget).reserve(A("budget", fx.budget), A("kind", "Message"), A("tokens", 10))
end

OPS["slicer.knapsack"] = function(A)
  cupel.knapsack(A("bucket_size", 100))
end

OPS["slicer.quota"] = function(A, fx)
  cupel.quota(A("inner", fx.greedy),
    { { kind = A("kind", "Message"), require_percent = A("require_percent", 10), cap_percent = A("cap_percent", 50) } })
end

OPS["slicer.count_quota"] = function(A, fx)
  cupel.count_quota(A("inner", fx.greedy),
    { { kind = A("kind", "Message"), require_count = A("require_count", 1), cap_count = A("cap_count", 2) } })
end

OPS["scorer.kind"] = function(A)
  local kind = A("kind", "Message")
  if kind == nil then unsupported("a nil kind (a Lua table key cannot be nil)") end
  cupel.scorers.kind({ [kind] = A("weight", 1) })
end

OPS["scorer.composite"] = function(A, fx)
  cupel.scorers.composite({ fx.recency, fx.priority, A("children", fx.kind) }, { 1, 1, A("weights", 1) })
end

OPS["scorer.scaled"] = function(A, fx)
  cupel.scorers.scaled(A("inner", fx.recency))
end

OPS["scorer.metadata_key"] = function(A)
  cupel.scorers.metadata_key(A("key", "k"), A("value", "v"), A("boost", 2))
end

OPS["placer.place"] = function(A, fx)
  local placed = getmetatable(fx.chronological).place(A("placer", fx.chronological), A("items", fx.items),
    { 1, 2, A("indices", 3) }, { 0.5, 0.5, A("scores", 0.5) })
  return show_indices(placed)
end

OPS["pipeline.new"] = function(A, fx)
  cupel.pipeline({
    scorer = A("scorer", fx.recency), slicer = A("slicer", fx.greedy), placer = A("placer", fx.chronological),
  })
end

OPS["pipeline.run"] = function(A, fx)
  local placed = getmetatable(fx.pipeline).run(A("pipeline", fx.pipeline), A("items", fx.items),
    A("budget", fx.budget))
  return show_indices(placed)
end

OPS["slice"] = function(A, fx)
  return show_indices(cupel.slice(A("slicer", fx.greedy), A("items", fx.items), A("budget", fx.budget),
    A("pinned_tokens", 0)))
end

OPS["marginal_items"] = function(A, fx)
  return show_indices(cupel.marginal_items(A("slicer", fx.greedy), A("items", fx.items), A("budget", fx.budget),
    A("pinned_tokens", 0), A("slack_tokens", 150)))
end

OPS["find_min_budget"] = function(A, fx)
  local b = cupel.find_min_budget(A("slicer", fx.greedy), A("items", fx.items), A("pinned_tokens", 0),
    A("target_index", 3), A("search_ceiling", 1000))
  return b == nil and "none" or tostring(b)
end

OPS["stream.push"] = function(A, fx)
  getmetatable(fx.stream).push(A("stream", fx.stream), A("tokens", 10), A("score", 0.5))
end

OPS["reason.name"] = function(A)
  return cupel.reason_name(A("code", 0))
end

OPS["tokenizer.new"] = function(A)
  cupel.tokenizer(A("name", "o200k_base"))
end

local function tokenizer_methods(fx)
  return getmetatable(fx.tokenizer)
end

OPS["tokenizer.count"] = function(A, fx)
  return tostring(tokenizer_methods(fx).count(A("tokenizer", fx.tokenizer), A("text", SENTENCE)))
end

-- The replaced text is the list's last element; `n` keeps a nil one in the list.
OPS["tokenizer.count_many"] = function(A, fx)
  local counts = tokenizer_methods(fx).count_many(A("tokenizer", fx.tokenizer),
    { SENTENCE, A("texts", "hello world"), n = 2 })
  return "[" .. table.concat(counts, ",") .. "]"
end

-- The table's [head_end, tail_start, tokens] are 0-based offsets; this
-- binding's are 1-based string.sub positions: head_end, the last byte of the
-- head, is the same number, and tail_start, the first byte of the tail, is
-- one more. The kept text must be those two pieces.
OPS["tokenizer.truncate"] = function(A, fx)
  local text = A("text", SENTENCE)
  local kept, head_end, tail_start, tokens = tokenizer_methods(fx).truncate(A("tokenizer", fx.tokenizer), text,
    A("max_tokens", 4), A("keep", cupel.KEEP_HEAD))
  local result = ("[%d,%d,%d]"):format(head_end, tail_start - 1, tokens)
  if kept ~= text:sub(1, head_end) .. text:sub(tail_start) then
    return result, ("the kept text %q is not text:sub(1, %d) .. text:sub(%d)"):format(kept, head_end, tail_start)
  end
  return result
end

OPS["items.push_text"] = function(A, fx)
  local text = A("text", "hello world")
  local at = item_methods(fx).push_text(A("items", fx.items), A("tokenizer", fx.tokenizer), text, A("score", 0.5),
    A("kind", "Message"))
  local n = fx.items:len()
  local got = fx.items:get(4)
  if at ~= 4 or n ~= 4 or got.tokens ~= 2 or got.content ~= text then
    return nil, ("push_text gave index %s; %d items, item 4 has %s tokens and content %q"):format(tostring(at), n,
      tostring(got.tokens), tostring(got.content))
  end
end

-- The variant read back must be the one added: number 1, those fields.
OPS["items.add_variant"] = function(A, fx)
  local index, tokens, value, content = A("index", 1), A("tokens", 5), A("value", 0.5), A("content", "[cleared]")
  local number = item_methods(fx).add_variant(A("items", fx.items), index, tokens, value, content)
  local got = fx.items:variants(index)
  local v = got[1]
  if number ~= 1 or #got ~= 1 or v.tokens ~= tokens or v.value ~= value or v.content ~= content then
    return nil, ("add_variant gave %s; item %d reads back %d variants, the first %s"):format(tostring(number),
      index, #got, v and ("{ tokens = %s, value = %s, content = %s }"):format(tostring(v.tokens),
        tostring(v.value), tostring(v.content)) or "none")
  end
  local read = fx.items:get(index).variants
  if #read ~= 1 or read[1].tokens ~= tokens or read[1].content ~= content then
    return nil, "items:get(" .. index .. ").variants differs from items:variants"
  end
end

OPS["items.set_truncatable"] = function(A, fx)
  local index, keep, min_tokens = A("index", 2), A("keep", cupel.KEEP_HEAD), A("min_tokens", 1)
  item_methods(fx).set_truncatable(A("items", fx.items), index, keep, min_tokens)
  local got = fx.items:truncatable(index)
  if got == nil or got.keep ~= keep or got.min_tokens ~= min_tokens then
    return nil, ("item %d reads back %s"):format(index, got and ("{ keep = %s, min_tokens = %s }"):format(
      tostring(got.keep), tostring(got.min_tokens)) or "not truncatable")
  end
  local read = fx.items:get(index).truncatable
  if read == nil or read.keep ~= keep or read.min_tokens ~= min_tokens then
    return nil, "items:get(" .. index .. ").truncatable differs from items:truncatable"
  end
end

OPS["pipeline.set_tokenizer"] = function(A, fx)
  getmetatable(fx.pipeline).set_tokenizer(A("pipeline", fx.pipeline), A("tokenizer", fx.tokenizer))
end

-- Before the run: item 1 (0-based; 2 here) truncatable, keep head, min_tokens
-- 1, and the pipeline given `tokenizer` (nil: none). The result is the
-- number of included items.
OPS["pipeline.run_cut"] = function(A, fx)
  fx.items:set_truncatable(2, cupel.KEEP_HEAD, 1)
  local pipeline = A("pipeline", fx.pipeline)
  local methods = getmetatable(fx.pipeline)
  methods.set_tokenizer(pipeline, A("tokenizer", fx.tokenizer))
  local _, report = methods.run(pipeline, A("items", fx.items), A("budget", fx.budget), { report = true })
  return tostring(#report.included)
end

-- Sessions. The key read back must be the one set.
OPS["items.set_key"] = function(A, fx)
  local index, key = A("index", 1), A("key", 7)
  item_methods(fx).set_key(A("items", fx.items), index, key)
  if fx.items:key(index) ~= key or fx.items:get(index).key ~= key then
    return nil, ("item %d reads back the key %s"):format(index, tostring(fx.items:key(index)))
  end
end

OPS["items.set_volatile"] = function(A, fx)
  local index, is_volatile = A("index", 1), A("is_volatile", true)
  item_methods(fx).set_volatile(A("items", fx.items), index, is_volatile)
  if fx.items:volatile(index) ~= is_volatile or fx.items:get(index).volatile ~= is_volatile then
    return nil, ("item %d reads back volatile = %s"):format(index, tostring(fx.items:volatile(index)))
  end
end

OPS["session.new"] = function(A, fx)
  local s = cupel.session(A("pipeline", fx.pipeline))
  if s:last_action() ~= "first" or s:slack() ~= 0.2 then
    return nil, ("the new session's action is %s, its slack %s"):format(s:last_action(), tostring(s:slack()))
  end
end

-- The slack read back must be the one set.
OPS["session.set_slack"] = function(A, fx)
  local s = cupel.session(fx.pipeline)
  local fraction = A("fraction", 0.3)
  getmetatable(s).set_slack(A("session", s), fraction)
  if s:slack() ~= fraction then
    return nil, ("the slack reads back %s"):format(tostring(s:slack()))
  end
end

-- The session is made from the fixture's pipeline, which a `pipeline` row
-- then frees: the session keeps its own copy. The result is the number of
-- placed items.
OPS["session.run"] = function(A, fx)
  local s = cupel.session(fx.pipeline)
  A("pipeline", fx.pipeline)
  local placed = getmetatable(s).run(A("session", s), A("items", fx.items), A("budget", fx.budget))
  return tostring(#placed)
end

-- Items 1, 2, 3 get keys 1, 2, 3; `key` replaces the last one's.
OPS["session.run_keyed"] = function(A, fx)
  fx.items:set_keys(1, { 1, 2, A("key", 3) })
  local s = cupel.session(fx.pipeline)
  return tostring(#s:run(fx.items, fx.budget))
end

-- Two runs on the same list: the second's stable prefix, [items,tokens].
OPS["session.run_twice"] = function(A, fx)
  local s = cupel.session(fx.pipeline)
  local session, items, budget = A("session", s), A("items", fx.items), A("budget", fx.budget)
  local first = s.run(session, items, budget)
  local second = s.run(session, items, budget)
  local n, t = s:stable_prefix()
  local result = ("[%d,%d]"):format(n, t)
  if table.concat(first, ",") ~= table.concat(second, ",") or s:last_action() ~= "append" then
    return result, "the second run is not the first's output, appended"
  end
  return result
end

-- Policies as data, presets, sensitivity, analytics, tracing, the one-call path.

-- The number of items `pipeline` includes on the fixture's items and `budget`.
local function included(fx, pipeline, budget)
  local _, report = pipeline:run(fx.items, budget or fx.budget, { report = true })
  return tostring(#report.included)
end

OPS["pipeline.from_json"] = function(A, fx)
  return included(fx, cupel.pipeline_from_json(A("json", POLICY)))
end

-- The text read back and written again must be the same text.
OPS["pipeline.to_json"] = function(A, fx)
  local text = getmetatable(fx.pipeline).to_json(A("pipeline", fx.pipeline))
  local again = cupel.pipeline_from_json(text):to_json()
  if again ~= text then
    return nil, ("the text read back writes %q, not %q"):format(again, text)
  end
end

OPS["budget.from_json"] = function(A, fx)
  return included(fx, fx.pipeline, cupel.budget_from_json(A("json", BUDGET)))
end

OPS["budget.to_json"] = function(A, fx)
  local text = getmetatable(fx.budget).to_json(A("budget", fx.budget))
  local again = cupel.budget_from_json(text):to_json()
  if again ~= text then
    return nil, ("the text read back writes %q, not %q"):format(again, text)
  end
end

OPS["pipeline.preset"] = function(A, fx)
  return included(fx, cupel.preset(A("name", "Chat")))
end

-- Variants a = the fixture's pipeline, b = KINDPIPE; count 1 passes the
-- first only. The result is the number of diffs (each has one "statuses").
OPS["policy_sensitivity"] = function(A, fx)
  local kindpipe = cupel.pipeline({ scorer = cupel.scorers.kind({ Message = 1 }), slicer = fx.greedy,
    placer = fx.chronological })
  local all = { { label = "a", pipeline = A("pipelines", fx.pipeline) }, { label = "b", pipeline = kindpipe } }
  local variants = {}
  for i = 1, A("count", 2) do variants[i] = all[i] end
  local json = cupel.policy_sensitivity(variants, A("items", fx.items), A("budget", fx.budget))
  local _, diffs = json:gsub('"statuses":', "")
  return tostring(diffs)
end

-- [kind diversity, timestamp coverage]; the budget utilization must be 250/300.
OPS["report.analytics"] = function(A, fx)
  local _, report = getmetatable(fx.pipeline).run(A("pipeline", fx.pipeline), A("items", fx.items),
    A("budget", fx.budget), { report = true })
  local a = report.analytics
  local result = ("[%d,%s]"):format(a.kind_diversity, tostring(a.timestamp_coverage))
  if math.abs(a.budget_utilization - 250 / 300) > 1e-9 then
    return result, ("the budget utilization is %s, not 250/300"):format(tostring(a.budget_utilization))
  end
  return result
end

-- A counter as the callback; one run; the number of events.
OPS["pipeline.set_trace"] = function(A, fx)
  local n = 0
  local callback = A("callback", function() n = n + 1 end)
  getmetatable(fx.pipeline).set_trace(A("pipeline", fx.pipeline), A("level", cupel.TRACE_STAGES), callback)
  fx.pipeline:run(fx.items, fx.budget)
  return tostring(n)
end

OPS["select"] = function(A)
  local kept = cupel.select(A("messages", messages()), { max_tokens = A("max_tokens", 2), policy = A("policy", "Chat") })
  return tostring(#kept)
end

-- ---- checks -------------------------------------------------------------------------------------

-- Whether `msg` holds `word` with no letter, digit or '_' on either side.
local function has_word(msg, word)
  local from = 1
  while true do
    local s, e = msg:find(word, from, true)
    if not s then return false end
    local before, after = msg:sub(s - 1, s - 1), msg:sub(e + 1, e + 1)
    if not before:match("[%w_]") and not after:match("[%w_]") then return true end
    from = s + 1
  end
end

-- The positions (in Lua's base) the message must give.
local function positions_of(row, value)
  local p = {}
  if row.value == "end" then p[#p + 1] = tostring(#FIXTURE + 1) end
  if row.op == "items.push_many" then p[#p + 1] = "12" end
  if row.op == "tokenizer.count_many" and row.arg == "texts" then p[#p + 1] = "2" end
  if (row.op == "scorer.composite" and (row.arg == "children" or row.arg == "weights"))
      or (row.op == "placer.place" and (row.arg == "indices" or row.arg == "scores")) then
    p[#p + 1] = "3"
  end
  if INDEX_ARGS[row.arg] and row.value:match("^%-%d") then p[#p + 1] = tostring(value) end
  return p
end

local function run_row(row)
  local fx = fixture()
  local replaced -- the value the row passed, for the position check
  local function A(name, default)
    if row.arg == name then
      replaced = value_of(row, fx, name, default)
      return replaced
    end
    return default
  end
  local op = OPS[row.op]
  if not op then
    return false, "unknown op " .. row.op
  end
  local ok, result, check_failed = pcall(op, A, fx)
  if not ok and getmetatable(result) == Unsupported then
    return false, "cannot run: " .. result.why
  end
  local expect = row.expect
  if expect == "ok" or expect:match("^ok=") then
    if not ok then
      return false, "expected ok, got " .. tostring(result)
    end
    if check_failed then
      return false, "ok, but " .. check_failed
    end
    local want = expect:match("^ok=(.*)$")
    if want and tostring(result) ~= want then
      return false, ("expected %s, got %s"):format(want, tostring(result))
    end
    return true, result and "-> " .. tostring(result)
  end
  local status_name = MAP[expect]
  if not status_name then
    return false, "expect " .. expect .. " is not one this runner can check"
  end
  if ok then
    return false, ("expected %s (%s), but the call succeeded"):format(status_name, expect)
  end
  if getmetatable(result) ~= cupel.Error then
    return false, "not a cupel error: " .. tostring(result)
  end
  local msg = result.message
  if result.status_name ~= status_name then
    return false, ("expected %s, got %s"):format(status_name, tostring(result))
  end
  local name = ALIAS[row.arg] or row.arg
  if not has_word(msg, name) then
    return false, ("message %q does not name %s"):format(msg, name)
  end
  for _, pos in ipairs(positions_of(row, replaced)) do
    if not has_word(msg, pos) then
      return false, ("message %q does not give position %s"):format(msg, pos)
    end
  end
  for _, s in ipairs(SENTINELS) do
    if msg:find(s, 1, true) and not row.value:find(s, 1, true) then
      return false, ("message %q shows the sentinel %s"):format(msg, s)
    end
  end
  if expect == "closed" then
    local says = false
    for _, w in ipairs(CLOSED_WORDS) do says = says or has_word(msg:lower(), w) end
    if not says then
      return false, ("message %q does not say the handle was closed (%s)"):format(msg, table.concat(CLOSED_WORDS, "/"))
    end
  end
  local live, n = pcall(fx.items.len, fx.items)
  if live and n ~= #FIXTURE then
    return false, ("the items changed: %d items"):format(n)
  elseif not live and n.status_name ~= "CLOSED" then
    return false, "the items cannot be counted: " .. tostring(n)
  end
  return true, tostring(result)
end

-- ---- main ---------------------------------------------------------------------------------------

local passed, failed = 0, 0
if map_problem then
  failed = failed + 1
  print("FAILED @map: " .. map_problem)
end
for _, row in ipairs(rows) do
  if names_lang(row.where) then
    local ok, good, why = pcall(run_row, row)
    if ok and good then
      passed = passed + 1
      if os.getenv("CUPEL_CONTRACT_VERBOSE") then
        print(("ok     %s: %s"):format(row.id, why or ""))
      end
    else
      failed = failed + 1
      print(("FAILED %s: %s"):format(row.id, ok and why or "the runner failed: " .. tostring(good)))
    end
  end
end
print(("contract %s: %d passed, %d failed"):format(LANG, passed, failed))
os.exit(failed == 0 and 0 or 1)
