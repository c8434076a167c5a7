-- libcupel for LuaJIT (Neovim plugins and any LuaJIT host), through ffi.
--
--   package.path = "/path/to/bindings/lua/?.lua;" .. package.path
--   local cupel = require("cupel")          -- loads libcupel: $CUPEL_LIB, else "cupel"
--
-- The declarations come from cupel_cdef.h beside this file (include/cupel.h
-- made ffi.cdef-ready by build.rs). Item indices are 1-based here, as Lua
-- lists are: item i of the list given to cupel.items is index i in every
-- result. Handles are freed by the garbage collector or at once with :free().
-- Failures raise an error object { status, status_name, message } whose
-- tostring is "STATUS_NAME: message"; catch it with pcall.

local ffi = require("ffi")

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local f = assert(io.open(here .. "cupel_cdef.h", "r"), "cupel_cdef.h must sit beside cupel.lua")
ffi.cdef(f:read("*a"))
f:close()

local C = ffi.load(os.getenv("CUPEL_LIB") or "cupel")

local M = {}

M.STATUS = {
  [0] = "OK", "NULL_POINTER", "INVALID_ARGUMENT", "BUFFER_TOO_SMALL", "SCARCITY",
  "UNSUPPORTED", "CAPACITY", "INTERNAL", "OVERFLOW",
}
M.REASON = {
  [0] = "Scored", [1] = "Pinned", [2] = "ZeroToken", [10] = "BudgetExceeded",
  [11] = "ScoredTooLow", [12] = "Deduplicated", [13] = "QuotaCapExceeded",
  [14] = "QuotaRequireDisplaced", [15] = "NegativeTokens", [16] = "PinnedOverride",
  [17] = "Filtered", [18] = "CountCapExceeded",
}
M.OVERFLOW_THROW, M.OVERFLOW_TRUNCATE, M.OVERFLOW_PROCEED = 0, 1, 2
M.SCARCITY_DEGRADE, M.SCARCITY_ERROR = 0, 1
M.DECAY_EXPONENTIAL, M.DECAY_STEP, M.DECAY_WINDOW = 0, 1, 2

local Error = {}
Error.__index = Error
Error.__tostring = function(e)
  return e.status_name .. ": " .. e.message
end
M.Error = Error

local function raise(status, message)
  error(setmetatable({
    status = status,
    status_name = M.STATUS[status] or tostring(status),
    message = message,
  }, Error), 2)
end

local function check(status)
  status = tonumber(status)
  if status ~= 0 then
    raise(status, ffi.string(C.cupel_last_error()))
  end
end

local SIZE_MAX = ffi.cast("size_t", -1)

-- A handle: `ptr` freed by the collector or by :free().
local function handle(class, ptr, free)
  return setmetatable({ ptr = ffi.gc(ptr, free), free_fn = free }, class)
end

local function make_class(name)
  local class = { __name = name }
  class.__index = class
  function class:free()
    if self.ptr ~= nil then
      ffi.gc(self.ptr, nil)
      self.free_fn(self.ptr)
      self.ptr = nil
    end
  end
  function class:raw()
    if self.ptr == nil then
      raise(1, "this " .. name .. " was freed")
    end
    return self.ptr
  end
  return class
end

local Items = make_class("Items")
local Budget = make_class("Budget")
local Slicer = make_class("Slicer")
local Scorer = make_class("Scorer")
local Placer = make_class("Placer")
local Pipeline = make_class("Pipeline")
local Stream = make_class("Stream")

local function new(class, ctype, create, free)
  local out = ffi.new(ctype .. "*[1]")
  check(create(out))
  return handle(class, out[0], free)
end

local function group_id(g)
  return ffi.cast("uint64_t", g or 0)
end

-- ---- items -----------------------------------------------------------------

-- Adds items: tables { tokens = n, score, kind, content, timestamp (UTC ms),
-- priority, pinned, relevance_hint, source, tags = {...}, metadata = {k = v},
-- group }. The push is all or nothing.
function Items:push(list)
  local n = #list
  if n == 0 then
    return self
  end
  local first = tonumber(C.cupel_items_len(self:raw()))
  local tokens = ffi.new("int64_t[?]", n)
  local scores = ffi.new("double[?]", n)
  local kinds = ffi.new("const char *[?]", n)
  for i, it in ipairs(list) do
    if type(it.tokens) ~= "number" or it.tokens % 1 ~= 0 then
      raise(2, ("items[%d].tokens is %s; expected an integer"):format(i, tostring(it.tokens)))
    end
    tokens[i - 1] = it.tokens
    scores[i - 1] = it.score or 0
    kinds[i - 1] = it.kind -- nil: the default; the strings are kept alive by `list`
  end
  check(C.cupel_items_push_many(self.ptr, n, tokens, scores, kinds))
  local h = self.ptr
  for i, it in ipairs(list) do
    local at = first + i - 1
    if it.content ~= nil then check(C.cupel_items_set_content(h, at, it.content)) end
    if it.timestamp ~= nil then check(C.cupel_items_set_timestamp(h, at, it.timestamp)) end
    if it.priority ~= nil then check(C.cupel_items_set_priority(h, at, it.priority)) end
    if it.pinned then check(C.cupel_items_set_pinned(h, at, true)) end
    if it.relevance_hint ~= nil then check(C.cupel_items_set_relevance_hint(h, at, it.relevance_hint)) end
    if it.source ~= nil then check(C.cupel_items_set_source(h, at, it.source)) end
    for _, tag in ipairs(it.tags or {}) do check(C.cupel_items_add_tag(h, at, tag)) end
    for k, v in pairs(it.metadata or {}) do check(C.cupel_items_set_metadata(h, at, k, tostring(v))) end
    if it.group ~= nil and it.group ~= 0 then check(C.cupel_items_set_group(h, at, group_id(it.group))) end
  end
  return self
end

-- Puts item `index` (1-based) in keep-together group `group` (0: none).
function Items:set_group(index, group)
  check(C.cupel_items_set_group(self:raw(), index - 1, group_id(group)))
  return self
end

-- Sets the groups of items first .. first + #groups - 1 in one call.
function Items:set_groups(first, groups)
  local ids = ffi.new("uint64_t[?]", math.max(#groups, 1))
  for i, g in ipairs(groups) do ids[i - 1] = group_id(g) end
  check(C.cupel_items_set_groups(self:raw(), first - 1, #groups, ids))
  return self
end

function Items:len()
  return tonumber(C.cupel_items_len(self:raw()))
end

function Items:clear()
  C.cupel_items_clear(self:raw())
end

function M.items(list)
  local items = new(Items, "cupel_items", C.cupel_items_new, C.cupel_items_free)
  return items:push(list or {})
end

-- ---- budget, slicers, scorers, placers --------------------------------------

-- { max_tokens, target_tokens = max_tokens, output_reserve, safety_margin_percent, reserved = { kind = tokens } }
function M.budget(o)
  local target = o.target_tokens or o.max_tokens
  local b = new(Budget, "cupel_budget", function(out) return C.cupel_budget_new(o.max_tokens, target, out) end,
    C.cupel_budget_free)
  if o.output_reserve then check(C.cupel_budget_set_output_reserve(b.ptr, o.output_reserve)) end
  if o.safety_margin_percent then check(C.cupel_budget_set_safety_margin(b.ptr, o.safety_margin_percent)) end
  for kind, tokens in pairs(o.reserved or {}) do check(C.cupel_budget_reserve(b.ptr, kind, tokens)) end
  return b
end

-- The effective max and target after `pinned_tokens`.
function Budget:effective(pinned_tokens)
  local max, target = ffi.new("int64_t[1]"), ffi.new("int64_t[1]")
  check(C.cupel_budget_effective(self:raw(), pinned_tokens or 0, max, target))
  return tonumber(max[0]), tonumber(target[0])
end

local function slicer(create)
  return new(Slicer, "cupel_slicer", create, C.cupel_slicer_free)
end

function M.greedy()
  return slicer(C.cupel_slicer_new_greedy)
end

function M.knapsack(bucket_size)
  return slicer(function(out) return C.cupel_slicer_new_knapsack(bucket_size or 100, out) end)
end

-- quotas: { { kind = , require_percent = , cap_percent = }, ... }
function M.quota(inner, quotas)
  local q = ffi.new("cupel_quota[?]", math.max(#quotas, 1))
  for i, e in ipairs(quotas) do
    q[i - 1].kind = e.kind
    q[i - 1].require_percent = e.require_percent or 0
    q[i - 1].cap_percent = e.cap_percent or 100
  end
  return slicer(function(out) return C.cupel_slicer_new_quota(inner:raw(), q, #quotas, out) end)
end

local function counts(entries)
  local e = ffi.new("cupel_count_quota[?]", math.max(#entries, 1))
  for i, x in ipairs(entries) do
    e[i - 1].kind = x.kind
    e[i - 1].require_count = x.require_count or 0
    e[i - 1].cap_count = x.cap_count or 0
  end
  return e
end

-- entries: { { kind = , require_count = , cap_count = }, ... }
function M.count_quota(inner, entries, scarcity)
  local e = counts(entries)
  return slicer(function(out)
    return C.cupel_slicer_new_count_quota(inner:raw(), e, #entries, scarcity or 0, out)
  end)
end

function M.count_constrained_knapsack(bucket_size, entries, scarcity)
  local e = counts(entries)
  return slicer(function(out)
    return C.cupel_slicer_new_count_constrained_knapsack(bucket_size, e, #entries, scarcity or 0, out)
  end)
end

local function scorer(create)
  return new(Scorer, "cupel_scorer", create, C.cupel_scorer_free)
end

local function weights(ctype, field, w)
  local names = {}
  for k in pairs(w or {}) do names[#names + 1] = k end
  table.sort(names)
  local arr = ffi.new(ctype .. "[?]", math.max(#names, 1))
  for i, k in ipairs(names) do
    arr[i - 1][field] = k
    arr[i - 1].weight = w[k]
  end
  return arr, #names
end

M.scorers = {
  given = function() return scorer(C.cupel_scorer_new_given) end,
  recency = function() return scorer(C.cupel_scorer_new_recency) end,
  priority = function() return scorer(C.cupel_scorer_new_priority) end,
  frequency = function() return scorer(C.cupel_scorer_new_frequency) end,
  reflexive = function() return scorer(C.cupel_scorer_new_reflexive) end,
  -- w: { Kind = weight }, or nil for the spec's defaults.
  kind = function(w)
    if w == nil then
      return scorer(function(out) return C.cupel_scorer_new_kind(nil, 0, out) end)
    end
    local arr, n = weights("cupel_kind_weight", "kind", w)
    return scorer(function(out) return C.cupel_scorer_new_kind(arr, n, out) end)
  end,
  tag = function(w)
    local arr, n = weights("cupel_tag_weight", "tag", w)
    return scorer(function(out) return C.cupel_scorer_new_tag(arr, n, out) end)
  end,
  -- parts: { { scorer, weight }, ... }
  composite = function(parts)
    local kids = ffi.new("const cupel_scorer *[?]", math.max(#parts, 1))
    local ws = ffi.new("double[?]", math.max(#parts, 1))
    for i, p in ipairs(parts) do
      kids[i - 1] = p[1]:raw()
      ws[i - 1] = p[2]
    end
    return scorer(function(out) return C.cupel_scorer_new_composite(kids, ws, #parts, out) end)
  end,
  scaled = function(inner)
    return scorer(function(out) return C.cupel_scorer_new_scaled(inner:raw(), out) end)
  end,
  metadata_trust = function(default_score)
    return scorer(function(out) return C.cupel_scorer_new_metadata_trust(default_score or 0.5, out) end)
  end,
  metadata_key = function(key, value, boost)
    return scorer(function(out) return C.cupel_scorer_new_metadata_key(key, value, boost, out) end)
  end,
  -- { curve = cupel.DECAY_*, duration_secs, windows = { { max_age_secs, score }, ... },
  --   reference_time (UTC ms), null_timestamp_score = 0.5 }
  decay = function(o)
    local ws = o.windows or {}
    local arr = ffi.new("cupel_decay_window[?]", math.max(#ws, 1))
    for i, w in ipairs(ws) do
      arr[i - 1].max_age_secs = w[1]
      arr[i - 1].score = w[2]
    end
    return scorer(function(out)
      return C.cupel_scorer_new_decay(o.curve, o.duration_secs or 0, #ws > 0 and arr or nil, #ws,
        o.reference_time, o.null_timestamp_score or 0.5, out)
    end)
  end,
}

-- The score of every item of `items`, in item order.
function Scorer:score(items)
  local n = items:len()
  local out = ffi.new("double[?]", math.max(n, 1))
  local len = ffi.new("size_t[1]")
  check(C.cupel_scorer_score(self:raw(), items:raw(), out, n, len))
  local t = {}
  for i = 1, tonumber(len[0]) do t[i] = out[i - 1] end
  return t
end

function M.chronological()
  return new(Placer, "cupel_placer", C.cupel_placer_new_chronological, C.cupel_placer_free)
end

function M.u_shaped()
  return new(Placer, "cupel_placer", C.cupel_placer_new_u_shaped, C.cupel_placer_free)
end

-- ---- runs and reports ------------------------------------------------------------

-- Calls f(out, capacity, out_len) and returns the indices, 1-based.
local function indices(capacity, f)
  local out = ffi.new("size_t[?]", math.max(capacity, 1))
  local len = ffi.new("size_t[1]")
  check(f(out, capacity, len))
  local t = {}
  for i = 1, tonumber(len[0]) do t[i] = tonumber(out[i - 1]) + 1 end
  return t
end

local function decision(d)
  local group = d.group
  return {
    index = tonumber(d.item_index) + 1,
    score = d.score,
    reason = M.REASON[d.reason] or tostring(d.reason),
    reason_code = d.reason,
    item_tokens = tonumber(d.item_tokens),
    available_tokens = tonumber(d.available_tokens),
    related_index = d.related_index ~= SIZE_MAX and tonumber(d.related_index) + 1 or nil,
    -- Exact below 2^53; larger ids stay uint64_t cdata.
    group = group < 2 ^ 53 and tonumber(group) or group,
    group_tokens = tonumber(d.group_tokens),
  }
end

local function read_report(r, items)
  local rep = { included = {}, excluded = {}, shortfalls = {}, cap_excluded = {} }
  local d = ffi.new("cupel_decision[1]")
  for i = 0, tonumber(C.cupel_report_included_count(r)) - 1 do
    check(C.cupel_report_included(r, i, d))
    rep.included[#rep.included + 1] = decision(d[0])
  end
  for i = 0, tonumber(C.cupel_report_excluded_count(r)) - 1 do
    check(C.cupel_report_excluded(r, i, d))
    rep.excluded[#rep.excluded + 1] = decision(d[0])
  end
  local kind, req, sat = ffi.new("const char *[1]"), ffi.new("uint32_t[1]"), ffi.new("uint32_t[1]")
  for i = 0, tonumber(C.cupel_report_shortfall_count(r)) - 1 do
    check(C.cupel_report_shortfall(r, i, kind, req, sat))
    rep.shortfalls[#rep.shortfalls + 1] = { kind = ffi.string(kind[0]), required = req[0], satisfied = sat[0] }
  end
  local x = ffi.new("size_t[1]")
  for i = 0, tonumber(C.cupel_report_cap_excluded_count(r)) - 1 do
    check(C.cupel_report_cap_excluded(r, i, x))
    rep.cap_excluded[#rep.cap_excluded + 1] = tonumber(x[0]) + 1
  end
  rep.total_candidates = tonumber(C.cupel_report_total_candidates(r))
  rep.total_tokens_considered = tonumber(C.cupel_report_total_tokens_considered(r))
  rep.effective_max_tokens = tonumber(C.cupel_report_effective_max_tokens(r))
  rep.effective_target_tokens = tonumber(C.cupel_report_effective_target_tokens(r))
  rep.selected_tokens = tonumber(C.cupel_report_selected_tokens(r))
  local len = ffi.new("size_t[1]")
  local st = C.cupel_report_json(r, items:raw(), nil, 0, len)
  if tonumber(st) ~= 3 then check(st) end
  local buf = ffi.new("char[?]", tonumber(len[0]) + 1)
  check(C.cupel_report_json(r, items:raw(), buf, tonumber(len[0]) + 1, len))
  rep.json = ffi.string(buf, len[0])
  return rep
end

-- Runs f(report or nil) and returns f's indices and the report (when wanted).
local function with_report(wanted, items, f)
  if not wanted then
    return f(nil), nil
  end
  local out = ffi.new("cupel_report *[1]")
  check(C.cupel_report_new(out))
  local r = ffi.gc(out[0], C.cupel_report_free)
  local ok, result = pcall(f, r)
  if not ok then
    error(result, 0)
  end
  local report = read_report(r, items)
  ffi.gc(r, nil)
  C.cupel_report_free(r)
  return result, report
end

-- { scorer = nil (the pushed scores), slicer, placer = nil, deduplication = true, overflow = cupel.OVERFLOW_THROW }
function M.pipeline(o)
  local p = new(Pipeline, "cupel_pipeline", function(out)
    return C.cupel_pipeline_new(o.scorer and o.scorer:raw() or nil, o.slicer:raw(),
      o.placer and o.placer:raw() or nil, out)
  end, C.cupel_pipeline_free)
  check(C.cupel_pipeline_set_deduplication(p.ptr, o.deduplication ~= false))
  check(C.cupel_pipeline_set_overflow(p.ptr, o.overflow or 0))
  return p
end

-- All six stages: the placed indices (1-based), and with { report = true } the report.
function Pipeline:run(items, budget, opts)
  return with_report(opts and opts.report, items, function(r)
    return indices(items:len(), function(out, cap, len)
      return C.cupel_pipeline_run(self:raw(), items:raw(), budget:raw(), out, cap, len, r)
    end)
  end)
end

-- The Sort and Slice stages alone: selected indices (1-based) and the report.
function M.slice(s, items, budget, opts)
  opts = opts or {}
  return with_report(opts.report, items, function(r)
    return indices(items:len(), function(out, cap, len)
      return C.cupel_slice(s:raw(), items:raw(), budget:raw(), opts.pinned_tokens or 0, out, cap, len, r)
    end)
  end)
end

function M.marginal_items(s, items, budget, slack_tokens, pinned_tokens)
  return indices(items:len(), function(out, cap, len)
    return C.cupel_marginal_items(s:raw(), items:raw(), budget:raw(), pinned_tokens or 0, slack_tokens, out, cap, len)
  end)
end

-- The smallest budget selecting item `index` (1-based), or nil.
function M.find_min_budget(s, items, index, ceiling, pinned_tokens)
  local out = ffi.new("int64_t[1]")
  check(C.cupel_find_min_budget(s:raw(), items:raw(), pinned_tokens or 0, index - 1, ceiling, out))
  local b = tonumber(out[0])
  return b >= 0 and b or nil
end

function M.stream(target_tokens, batch_size)
  local s = new(Stream, "cupel_stream", function(out)
    return C.cupel_stream_new(target_tokens, batch_size or 0, out)
  end, C.cupel_stream_free)
  s.pushed = 0
  return s
end

-- Offers the next item (in keep-together group `group`, 0/nil: none); true once full.
function Stream:push(tokens, score, group)
  local full = ffi.new("bool[1]")
  check(C.cupel_stream_push_grouped(self:raw(), tokens, score, group_id(group), full))
  self.pushed = self.pushed + 1
  return full[0]
end

-- The taken indices (1-based), in the order taken.
function Stream:finish()
  return indices(self.pushed, function(out, cap, len)
    return C.cupel_stream_finish(self:raw(), out, cap, len)
  end)
end

function M.version()
  return ffi.string(C.cupel_version())
end

function M.live_handles()
  return tonumber(C.cupel_live_handles())
end

return M
