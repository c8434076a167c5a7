--- libcupel for LuaJIT (Neovim plugins and any LuaJIT host), through ffi.
--
--   local cupel = require("cupel")   -- loads libcupel: $CUPEL_LIB, else ffi.load("cupel")
--
-- The declarations come from cupel_cdef.h, read from the directory this file
-- was loaded from (include/cupel.h made ffi.cdef-ready by build.rs; the rock
-- installs it beside cupel.lua). Item indices are 1-based here, as Lua lists
-- are: item i of the list given to cupel.items is index i in every argument,
-- result and error message. Handles are freed by the garbage collector or at
-- once with :free().
--
-- Failures raise an error object { status, status_name, message } (tostring:
-- "STATUS_NAME: message"; catch it with pcall). status is the C library's
-- status number and status_name its name without the CUPEL_ERROR_ prefix:
-- NULL_POINTER for a nil argument, INVALID_ARGUMENT for a value of the wrong
-- type, a fraction or a number that does not fit the C integer, or a value
-- outside its domain (an index out of range included), and the C library's
-- other statuses as it returns them. A handle used after :free() raises
-- status cupel.CLOSED (-1, a status of this binding only) named "CLOSED".
-- Messages name the argument as this binding spells it (the Lua parameter, or
-- list[3].kind for a field of a pushed item), and positions in messages are
-- 1-based too (a byte of a string, an element of a list). A failed call
-- changes nothing.
--
-- Texts (tokenizers, items pushed from text) are Lua strings of UTF-8 bytes
-- taken with their length: they may hold NUL bytes, and invalid UTF-8 is
-- refused naming the argument and the bad byte. Offsets into a text are byte
-- positions, 1-based as string.sub takes them.
--
-- Items that shrink instead of vanishing: an item's variants (smaller
-- stand-ins, `Items:add_variant` or `variants = { ... }` in an item table)
-- and truncation (`Items:set_truncatable` or `truncatable = ...`; the
-- pipeline needs a tokenizer, `Pipeline:set_tokenizer`). Each included
-- decision of a report says which variant was taken, the tokens it adds, the
-- cut (byte positions) and the text to send.
--
-- Sessions (`cupel.session`): a pipeline run turn after turn that changes the
-- previous turn's prompt only at its end whenever it can, so that a model
-- provider's prefix cache keeps serving it; items are matched from one turn
-- to the next by their key (`Items:set_key`, or kind, tokens and content),
-- and volatile items (`Items:set_volatile`) go last.
--
-- The one-call path (`cupel.select`): the host's messages, a budget and a
-- policy in, the messages to send out. Policies as data
-- (`cupel.pipeline_from_json`, `Pipeline:to_json`, `cupel.budget_from_json`,
-- `Budget:to_json`), presets (`cupel.preset`, `cupel.preset_names`), policy
-- sensitivity (`cupel.policy_sensitivity`, as JSON text), a report's
-- `analytics`, and tracing (`Pipeline:set_trace`: a Lua function called
-- with each span and event of a run; the C calls that may call it are never
-- JIT-compiled, and what it raises is raised after the run).
-- @module cupel

local ffi = require("ffi")

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local f = assert(io.open(here .. "cupel_cdef.h", "r"), "cupel_cdef.h must sit beside cupel.lua")
ffi.cdef(f:read("*a"))
f:close()

local C = ffi.load(os.getenv("CUPEL_LIB") or "cupel")

local M = {}

--- Status names by number: the C library's statuses (CUPEL_ERROR_ prefix
-- dropped) and this binding's CLOSED (-1).
M.STATUS = {
  [-1] = "CLOSED", [0] = "OK", "NULL_POINTER", "INVALID_ARGUMENT", "BUFFER_TOO_SMALL", "SCARCITY",
  "UNSUPPORTED", "CAPACITY", "INTERNAL", "OVERFLOW",
}
--- The status of a handle used after :free() (this binding's, not the C library's).
M.CLOSED = -1
--- The C enums: pipeline overflow strategies, count-quota scarcity, decay curves.
M.OVERFLOW_THROW, M.OVERFLOW_TRUNCATE, M.OVERFLOW_PROCEED = 0, 1, 2
M.SCARCITY_DEGRADE, M.SCARCITY_ERROR = 0, 1
M.DECAY_EXPONENTIAL, M.DECAY_STEP, M.DECAY_WINDOW = 0, 1, 2
--- What is kept of a text cut down (`Tokenizer:truncate`, and a truncatable
-- item in a run): its beginning, its end, or both (the middle goes). The values
-- are the strings themselves; either spelling works.
M.KEEP_HEAD, M.KEEP_TAIL, M.KEEP_BOTH_ENDS = "head", "tail", "both_ends"

local NULL_POINTER, INVALID_ARGUMENT = 1, 2

local Error = {}
Error.__index = Error
Error.__tostring = function(e)
  return e.status_name .. ": " .. e.message
end
--- The metatable of every error this module raises: getmetatable(e) == cupel.Error.
M.Error = Error

local function raise(status, message)
  error(setmetatable({
    status = status,
    status_name = M.STATUS[status] or tostring(status),
    message = message,
  }, Error), 3)
end

-- ---- argument checks ---------------------------------------------------------

local huge = math.huge
local int64_t, uint64_t = ffi.typeof("int64_t"), ffi.typeof("uint64_t")
local INT64_MAX_U = ffi.cast("uint64_t", 0x7fffffffffffffffULL)

-- A number as a message shows it: integers in full below 2^53, else the
-- shortest %g form that reads back (never a C sentinel the caller did not pass).
local function show(v)
  if type(v) == "cdata" then
    return (tostring(v):gsub("U?LL$", ""))
  end
  if type(v) ~= "number" then
    return tostring(v)
  end
  if v ~= v then return "nan" end
  if v == huge then return "inf" end
  if v == -huge then return "-inf" end
  if v % 1 == 0 and v > -2 ^ 53 and v < 2 ^ 53 then
    return ("%d"):format(v)
  end
  local s = ("%.14g"):format(v)
  if tonumber(s) ~= v then
    s = ("%.17g"):format(v)
  end
  return s
end

local Handle = {} -- the metatables of the handle classes, by metatable

-- What a value is, for "got ..." in a message.
local function describe(v)
  local mt = getmetatable(v)
  if type(v) == "table" and Handle[mt] then
    return "a cupel " .. mt.__name
  end
  if type(v) == "string" then
    return ("string %q"):format(#v > 40 and v:sub(1, 40) .. "..." or v)
  end
  if type(v) == "number" then
    return "number " .. show(v)
  end
  return type(v) == "nil" and "nil" or type(v)
end

local function null(name)
  raise(NULL_POINTER, name .. " is nil")
end

local function invalid(fmt, ...)
  raise(INVALID_ARGUMENT, fmt:format(...))
end

-- v, known to be a whole number: a Lua number or a 64-bit integer cdata.
local function whole(name, v)
  local t = type(v)
  if t == "number" then
    if v ~= v or v == huge or v == -huge or v % 1 ~= 0 then
      invalid("%s is %s; expected an integer", name, show(v))
    end
    return v
  elseif t == "cdata" and (ffi.istype(int64_t, v) or ffi.istype(uint64_t, v)) then
    if v < 2 ^ 53 and (ffi.istype(uint64_t, v) or v > -2 ^ 53) then
      return tonumber(v)
    end
    return v -- compared with care below: a uint64_t converts a negative number
  elseif v == nil then
    null(name)
  end
  invalid("%s must be an integer, got %s", name, describe(v))
end

-- v as an int64_t argument: refused before conversion when it does not fit.
local function i64(name, v)
  v = whole(name, v)
  if type(v) == "number" then
    if v < -2 ^ 63 or v >= 2 ^ 63 then
      invalid("%s is %s; it does not fit in a signed 64-bit integer", name, show(v))
    end
  elseif ffi.istype(uint64_t, v) and v > INT64_MAX_U then
    invalid("%s is %s; it does not fit in a signed 64-bit integer", name, show(v))
  end
  return v
end

-- v as an unsigned argument of `bits` bits (32 or 64).
local function unsigned(name, v, bits)
  v = whole(name, v)
  local negative
  if type(v) == "number" then
    negative = v < 0
  else
    negative = ffi.istype(int64_t, v) and v < 0
  end
  if negative then
    invalid("%s is %s; it must be >= 0", name, show(v))
  end
  if type(v) == "number" and v >= 2 ^ bits or bits < 64 and type(v) == "cdata" and v >= 2 ^ bits then
    invalid("%s is %s; it does not fit in an unsigned %d-bit integer", name, show(v), bits)
  end
  return v
end

local function u64(name, v)
  return unsigned(name, v, 64)
end

local function u32(name, v)
  return unsigned(name, v, 32)
end

-- v as a C int (an enum value).
local function cint(name, v)
  v = whole(name, v)
  if type(v) == "cdata" or v < -2 ^ 31 or v >= 2 ^ 31 then
    invalid("%s is %s; it does not fit in a C int", name, show(v))
  end
  return v
end

-- v (1-based) as the 0-based index of one of `len` items.
local function index(name, v, len)
  v = whole(name, v)
  if v < 1 or v > len then
    invalid("%s is %s, out of range: the list holds %d items", name, show(v), len)
  end
  return tonumber(v) - 1
end

local function number(name, v)
  if type(v) == "number" then
    return v
  elseif type(v) == "cdata" and (ffi.istype(int64_t, v) or ffi.istype(uint64_t, v)) then
    return tonumber(v)
  elseif v == nil then
    null(name)
  end
  invalid("%s must be a number, got %s", name, describe(v))
end

local function str(name, v)
  if type(v) == "string" then
    local nul = v:find("\0", 1, true)
    if nul then
      invalid("%s holds a NUL byte (at byte %d); C strings end there", name, nul)
    end
    return v
  elseif v == nil then
    null(name)
  end
  invalid("%s must be a string, got %s", name, describe(v))
end

-- v as a text: any Lua string (NUL bytes included; the C library takes its
-- length and checks that it is UTF-8).
local function text_of(name, v)
  if type(v) == "string" then
    return v
  elseif v == nil then
    null(name)
  end
  invalid("%s must be a string, got %s", name, describe(v))
end

local function boolean(name, v)
  if type(v) == "boolean" then
    return v
  elseif v == nil then
    null(name)
  end
  invalid("%s must be a boolean, got %s", name, describe(v))
end

local function list_of(name, v)
  if type(v) == "table" and not Handle[getmetatable(v)] then
    return v
  elseif v == nil then
    null(name)
  end
  invalid("%s must be a table, got %s", name, describe(v))
end

-- The length of list `t` (named `name`): t.n when set (table.pack's
-- convention, so that a nil last element is reported, not dropped), else #t.
local function list_length(name, t)
  if t.n == nil then
    return #t
  end
  local n = whole(name .. ".n", t.n)
  if type(n) ~= "number" or n < 0 or n >= 2 ^ 31 then
    invalid("%s.n is %s; expected the list's length (>= 0)", name, show(n))
  end
  return n
end

-- Optional arguments: nil gives the default.
local function opt(check, name, v, default)
  if v == nil then
    return default
  end
  return check(name, v)
end

local KEEP = { head = 0, tail = 1, both_ends = 2 }
local KEEP_NAME = { [0] = "head", "tail", "both_ends" }

-- A keep argument ("head", "tail" or "both_ends") as the C enum value.
local function keep_of(name, v)
  local k = KEEP[v]
  if k == nil then
    if v == nil then null(name) end
    if type(v) ~= "string" then
      invalid('%s must be "head", "tail" or "both_ends", got %s', name, describe(v))
    end
    invalid('%s is %s; expected "head", "tail" or "both_ends"', name, describe(v))
  end
  return k
end

-- C functions a library message may name, and this binding's methods for them.
local C_NAMES = {
  cupel_pipeline_set_tokenizer = "Pipeline:set_tokenizer",
  cupel_items_set_content = "Items:set_content",
}

-- The C library's message in this binding's terms: `arrays` maps a C array
-- name to how this binding spells element k (1-based: a format or a
-- function), item indices ("item 3", "(items 0, 1") become 1-based, or
-- what `item` makes of them, and the 0-based offset of a bad UTF-8 byte
-- becomes its 1-based position ("(at byte 3)", as string.sub counts).
local function lua_terms(msg, arrays, item)
  for name, to in pairs(arrays or {}) do
    msg = msg:gsub("%f[%w_]" .. name .. "%[(%d+)%]", function(k)
      k = tonumber(k) + 1
      if type(to) == "function" then
        return to(k)
      end
      return to:format(k)
    end)
  end
  item = item or function(k)
    return "item " .. k
  end
  msg = msg:gsub("%f[%w_]item (%d+)", function(k)
    return item(tonumber(k) + 1)
  end)
  msg = msg:gsub("%f[%w_]items (%d+) and (%d+)", function(a, b)
    return ("items %d and %d"):format(tonumber(a) + 1, tonumber(b) + 1)
  end)
  msg = msg:gsub("%(items ([%d, ]+)", function(list)
    return "(items " .. list:gsub("%d+", function(k)
      return tostring(tonumber(k) + 1)
    end)
  end)
  msg = msg:gsub("%(invalid byte at offset (%d+)%)", function(k)
    return ("(at byte %d)"):format(tonumber(k) + 1)
  end)
  -- the C functions a message points to, as this binding's methods
  msg = msg:gsub("%((cupel_[%w_]+)%)", function(c_name)
    local lua_name = C_NAMES[c_name]
    return lua_name and "(" .. lua_name .. ")" or nil
  end)
  return msg
end

-- Raises the C library's status and message, unless `status` is CUPEL_OK.
local function check(status, arrays, item)
  status = tonumber(status)
  if status ~= 0 then
    local m = C.cupel_last_error()
    raise(status, lua_terms(m ~= nil and ffi.string(m) or M.STATUS[status] or "failed", arrays, item))
  end
end

local text_out -- defined with the reports

-- ---- handles -------------------------------------------------------------------

-- The handles a traced run is using while its trace callback may run
-- (handle -> how many such runs use it): a callback must not change or free
-- them (the C library reads them during the call), so `mine` refuses.
local busy = {}

local function refuse_busy(class)
  raise(INVALID_ARGUMENT, class.arg .. " is in use by a traced run: its trace callback cannot change, run or free it")
end

-- Releases a hold on trace state `state` (`Pipeline:set_trace`); the last
-- hold frees its C callback.
local function release_trace(state)
  if state ~= nil then
    state.holders = state.holders - 1
    if state.holders == 0 then
      state.cb:free()
      state.cb = nil
    end
  end
end

local function make_class(name, arg)
  local class = { __name = name, arg = arg }
  class.__index = class
  Handle[class] = true
  --- Frees the handle now (the collector would otherwise). Idempotent; the
  -- handle raises CLOSED afterwards. A pipeline or session also lets go of
  -- its trace callback (`Pipeline:set_trace`).
  function class:free()
    if getmetatable(self) == class and self.ptr ~= nil then
      if busy[self] then refuse_busy(class) end
      ffi.gc(self.ptr, nil)
      self.free_fn(self.ptr)
      self.ptr = nil
      local trace = rawget(self, "trace")
      self.trace = nil
      release_trace(trace)
    end
  end
  return class
end

local Items = make_class("Items", "items")
local Budget = make_class("Budget", "budget")
local Slicer = make_class("Slicer", "slicer")
local Scorer = make_class("Scorer", "scorer")
local Placer = make_class("Placer", "placer")
local Pipeline = make_class("Pipeline", "pipeline")
local Stream = make_class("Stream", "stream")
local Tokenizer = make_class("Tokenizer", "tokenizer")
local Session = make_class("Session", "session")

-- The C pointer of handle argument `v`, which must be a live `class`.
local function ptr_of(class, name, v)
  if v == nil then
    null(name)
  end
  if getmetatable(v) ~= class then
    invalid("%s must be a cupel %s, got %s", name, class.__name, describe(v))
  end
  if v.ptr == nil then
    raise(M.CLOSED, name .. " was freed (used after :free())")
  end
  return v.ptr
end

-- The receiver of a method, named as the class's arguments are.
local function me(class, self)
  return ptr_of(class, class.arg, self)
end

-- The receiver of a method that changes it: refused while a traced run uses it.
local function mine(class, self)
  local p = ptr_of(class, class.arg, self)
  if busy[self] then refuse_busy(class) end
  return p
end

local function new(class, ctype, create, free, arrays)
  local out = ffi.new(ctype .. "*[1]")
  check(create(out), arrays)
  return setmetatable({ ptr = ffi.gc(out[0], free), free_fn = free }, class)
end

-- A 64-bit integer result: a Lua number when exact (below 2^53), else the cdata.
local function int_result(v)
  if ffi.istype(uint64_t, v) then
    -- (a negative bound would convert to a huge uint64_t)
    return v < 2 ^ 53 and tonumber(v) or v
  end
  if v < 2 ^ 53 and v > -2 ^ 53 then
    return tonumber(v)
  end
  return v
end

-- ---- items -----------------------------------------------------------------------

--- The list of candidate items (a cupel_items handle). Create one with `cupel.items`.
-- @type Items

-- The fields an item table may have beyond tokens, score and kind.
local ATTRIBUTES = { "content", "timestamp", "priority", "pinned", "relevance_hint", "source", "tags",
  "metadata", "group", "variants", "truncatable", "key", "volatile" }

-- A variant's fields checked (named `name`.tokens, ...): tokens >= 0, value
-- in (0, 1], content a non-empty string or nil.
local function checked_variant_fields(name, tokens, value, content)
  tokens = i64(name .. "tokens", tokens)
  if tokens < 0 then
    invalid("%stokens is %s; a variant's tokens must be >= 0", name, show(tokens))
  end
  value = number(name .. "value", value)
  if not (value > 0 and value <= 1) then
    invalid("%svalue is %s; it must be in (0, 1]: the share of the item's score the variant keeps", name,
      show(value))
  end
  content = opt(str, name .. "content", content, nil)
  if content == "" then
    invalid("%scontent is empty; leave it nil for a variant without content", name)
  end
  return tokens, value, content
end

-- A variant table { tokens, value, content } named `name`, checked.
local function checked_variant(name, v)
  v = list_of(name, v)
  for k in pairs(v) do
    if k ~= "tokens" and k ~= "value" and k ~= "content" then
      invalid("%s has the field %s; a variant has tokens, value and content", name, describe(k))
    end
  end
  return checked_variant_fields(name .. ".", v.tokens, v.value, v.content)
end

-- An item's `truncatable` field (named `name`), checked: nil or false (not
-- truncatable), true (keep the head, min_tokens 0), a keep string, or a
-- table { keep = "head", min_tokens = 0 }. Returns the keep (the C value)
-- and min_tokens, or nil.
local function checked_truncatable(name, t)
  if t == nil or t == false then
    return nil
  elseif t == true then
    return 0, 0
  elseif type(t) == "string" then
    return keep_of(name, t), 0
  elseif type(t) ~= "table" or Handle[getmetatable(t)] then
    invalid('%s must be true, a keep ("head", "tail", "both_ends") or a table { keep, min_tokens }, got %s',
      name, describe(t))
  end
  for k in pairs(t) do
    if k ~= "keep" and k ~= "min_tokens" then
      invalid("%s has the field %s; it has keep and min_tokens", name, describe(k))
    end
  end
  local keep = t.keep == nil and 0 or keep_of(name .. ".keep", t.keep)
  local min = opt(i64, name .. ".min_tokens", t.min_tokens, 0)
  if min < 0 then
    invalid("%s.min_tokens is %s; it must be >= 0", name, show(min))
  end
  return keep, min
end

-- Checks the attributes of item table `it` beyond tokens, score and kind
-- (fields named by at(field)); returns whether it has any.
local function checked_attributes(it, at)
  local more = false
  for _, k in ipairs(ATTRIBUTES) do
    if it[k] ~= nil then more = true end
  end
  if more then
    opt(str, at("content"), it.content)
    opt(i64, at("timestamp"), it.timestamp)
    opt(i64, at("priority"), it.priority)
    opt(boolean, at("pinned"), it.pinned)
    opt(number, at("relevance_hint"), it.relevance_hint)
    opt(str, at("source"), it.source)
    for i, tag in ipairs(opt(list_of, at("tags"), it.tags, {})) do
      str(at("tags") .. ("[%d]"):format(i), tag)
    end
    for key, value in pairs(opt(list_of, at("metadata"), it.metadata, {})) do
      if type(key) ~= "string" then
        invalid("%s has the key %s; metadata keys must be strings", at("metadata"), describe(key))
      end
      str(at("metadata") .. ("[%q]"):format(key), key)
      str(at("metadata") .. ("[%q]"):format(key), value)
    end
    opt(u64, at("group"), it.group)
    opt(u64, at("key"), it.key)
    opt(boolean, at("volatile"), it.volatile)
    local variants = opt(list_of, at("variants"), it.variants, {})
    if #variants > 255 then
      invalid("%s has %d variants; an item has at most 255", at("variants"), #variants)
    end
    for k, v in ipairs(variants) do
      checked_variant(at("variants") .. ("[%d]"):format(k), v)
    end
    checked_truncatable(at("truncatable"), it.truncatable)
  end
  return more
end

-- Checks item table `it`, whose fields are named by at(field), and returns
-- what is pushed: tokens, score, kind, and whether it has other attributes.
local function checked_item(it, at)
  local tokens = i64(at("tokens"), it.tokens)
  local score = opt(number, at("score"), it.score, 0)
  local kind = opt(str, at("kind"), it.kind, nil)
  return tokens, score, kind, checked_attributes(it, at)
end

-- Sets the attributes of item table `it` on item `at` (0-based) of `h`;
-- messages name the item `name`.
local function set_attributes(h, at, it, name)
  local function ok(status)
    if tonumber(status) ~= 0 then
      local msg = lua_terms(ffi.string(C.cupel_last_error()), nil, function() return name end)
      if not msg:find(name, 1, true) then
        msg = name .. ": " .. msg
      end
      raise(tonumber(status), msg)
    end
  end
  if it.content ~= nil then ok(C.cupel_items_set_content(h, at, it.content)) end
  if it.timestamp ~= nil then ok(C.cupel_items_set_timestamp(h, at, it.timestamp)) end
  if it.priority ~= nil then ok(C.cupel_items_set_priority(h, at, it.priority)) end
  if it.pinned then ok(C.cupel_items_set_pinned(h, at, true)) end
  if it.relevance_hint ~= nil then ok(C.cupel_items_set_relevance_hint(h, at, it.relevance_hint)) end
  if it.source ~= nil then ok(C.cupel_items_set_source(h, at, it.source)) end
  for _, tag in ipairs(it.tags or {}) do ok(C.cupel_items_add_tag(h, at, tag)) end
  local keys = {}
  for k in pairs(it.metadata or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do ok(C.cupel_items_set_metadata(h, at, k, it.metadata[k])) end
  if it.group ~= nil and it.group ~= 0 then ok(C.cupel_items_set_group(h, at, it.group)) end
  for _, v in ipairs(it.variants or {}) do ok(C.cupel_items_add_variant(h, at, v.tokens, v.value, v.content)) end
  local keep, min_tokens = checked_truncatable("truncatable", it.truncatable)
  if keep then ok(C.cupel_items_set_truncatable(h, at, keep, min_tokens)) end
  if it.key ~= nil and it.key ~= 0 then ok(C.cupel_items_set_key(h, at, it.key)) end
  if it.volatile then ok(C.cupel_items_set_volatile(h, at, true)) end
end

-- Pushes the item tables `list` to `h` (which holds `first` items), all or
-- nothing; at(i, field) names a field of list[i], whole(i) the item.
local function push_all(h, first, list, at, whole_name)
  local n = #list
  if n == 0 then
    return
  end
  local tokens = ffi.new("int64_t[?]", n)
  local scores = ffi.new("double[?]", n)
  local kinds = ffi.new("const char *[?]", n)
  local more = false
  for i = 1, n do
    local it = list[i]
    if type(it) ~= "table" then
      if it == nil then null(whole_name(i)) end
      invalid("%s must be a table, got %s", whole_name(i), describe(it))
    end
    local m
    tokens[i - 1], scores[i - 1], kinds[i - 1], m = checked_item(it, function(field) return at(i, field) end)
    more = more or m
  end
  local arrays = {
    tokens = function(k) return at(k, "tokens") end,
    scores = function(k) return at(k, "score") end,
    kinds = function(k) return at(k, "kind") end,
  }
  if more then
    -- A trial run on a scratch list: the attributes the C library refuses
    -- are found before anything is added to `h`.
    local out = ffi.new("cupel_items *[1]")
    check(C.cupel_items_new(out))
    local scratch = ffi.gc(out[0], C.cupel_items_free)
    check(C.cupel_items_push_many(scratch, n, tokens, scores, kinds), arrays)
    for i = 1, n do
      set_attributes(scratch, i - 1, list[i], whole_name(i))
    end
    ffi.gc(scratch, nil)
    C.cupel_items_free(scratch)
  end
  check(C.cupel_items_push_many(h, n, tokens, scores, kinds), arrays)
  if more then
    for i = 1, n do
      set_attributes(h, first + i - 1, list[i], "item " .. (first + i))
    end
  end
end

--- Adds items, all or nothing.
-- @param list a list of item tables: { tokens = n (required), score = 0,
-- kind = "Message", content, timestamp (UTC ms), priority, pinned,
-- relevance_hint, source, tags = { ... }, metadata = { key = "value" },
-- group (keep-together group id, 0 or nil: none), variants = { { tokens,
-- value, content }, ... } (as `Items:add_variant`), truncatable (true, a keep
-- "head" / "tail" / "both_ends", or { keep, min_tokens }: as
-- `Items:set_truncatable`), key (identity key for sessions, 0 or nil: none;
-- as `Items:set_key`), volatile (a boolean, as `Items:set_volatile`) }
-- @return self
function Items:push(list)
  local h = mine(Items, self)
  list = list_of("list", list)
  push_all(h, tonumber(C.cupel_items_len(h)), list, function(i, field)
    return ("list[%d].%s"):format(i, field)
  end, function(i)
    return ("list[%d]"):format(i)
  end)
  return self
end

--- Adds one item, all or nothing.
-- @param item an item table, as in `Items:push`
-- @return the new item's index (1-based)
function Items:add(item)
  local h = mine(Items, self)
  local at = tonumber(C.cupel_items_len(h)) + 1
  push_all(h, at - 1, { list_of("item", item) }, function(_, field)
    return "item." .. field
  end, function()
    return "item " .. at
  end)
  return at
end

--- Adds one item made from a text: its tokens are the text's count with
-- `tokenizer`, its content is the text.
-- @param tokenizer a Tokenizer
-- @param text a non-empty UTF-8 string
-- @param score its score (finite; default 0)
-- @param kind its kind (default "Message")
-- @return the new item's index (1-based)
function Items:push_text(tokenizer, text, score, kind)
  local h = mine(Items, self)
  local t = ptr_of(Tokenizer, "tokenizer", tokenizer)
  local s = text_of("text", text)
  local sc = opt(number, "score", score, 0)
  local k = opt(str, "kind", kind, nil)
  local at = tonumber(C.cupel_items_len(h)) + 1
  check(C.cupel_items_push_text(h, t, s, #s, sc, k))
  return at
end

-- Fields a text item must not have: the text gives them.
local FROM_TEXT = { tokens = "its tokens are its text's count", content = "its content is its text" }

--- Adds items made from texts, all or nothing: each item's tokens are its
-- text's count with `tokenizer` (counted on up to two threads), its content
-- the text.
-- @param tokenizer a Tokenizer
-- @param list a list whose elements are strings (the text; score 0, kind
-- "Message") or item tables as `Items:push` takes, with `text` (a non-empty
-- UTF-8 string) in place of `tokens` and `content`: { text = "...", score = 0,
-- kind = "Message", timestamp, priority, pinned, relevance_hint, source, tags,
-- metadata, group, key, volatile }. list.n, when set, is its length (a nil element is then
-- reported by its position).
-- @return self
function Items:push_texts(tokenizer, list)
  local h = mine(Items, self)
  local t = ptr_of(Tokenizer, "tokenizer", tokenizer)
  list = list_of("list", list)
  local n = list_length("list", list)
  if n == 0 then
    return self
  end
  local first = tonumber(C.cupel_items_len(h))
  local texts = ffi.new("const char *[?]", n)
  local lens = ffi.new("size_t[?]", n)
  local scores = ffi.new("double[?]", n)
  local kinds = ffi.new("const char *[?]", n)
  local names, keep, more = {}, {}, false -- the texts' names; the strings, kept alive for the call
  for i = 1, n do
    local it, s = list[i], nil
    local function at(field)
      return ("list[%d].%s"):format(i, field)
    end
    if type(it) == "string" then
      names[i] = ("list[%d]"):format(i)
      s = it
    elseif type(it) == "table" and not Handle[getmetatable(it)] then
      for field, why in pairs(FROM_TEXT) do
        if it[field] ~= nil then
          invalid("%s is set; an item pushed from a text has none: %s", at(field), why)
        end
      end
      names[i] = at("text")
      s = text_of(names[i], it.text)
      scores[i - 1] = opt(number, at("score"), it.score, 0)
      kinds[i - 1] = opt(str, at("kind"), it.kind, nil)
      more = checked_attributes(it, at) or more
    elseif it == nil then
      null(("list[%d]"):format(i))
    else
      invalid("list[%d] must be a string or a table, got %s", i, describe(it))
    end
    keep[i], texts[i - 1], lens[i - 1] = s, s, #s
  end
  local function attributes(on, base, name)
    for i = 1, n do
      if type(list[i]) == "table" then
        set_attributes(on, base + i - 1, list[i], name(i))
      end
    end
  end
  if more then
    -- A trial run on a scratch list of blank items: the attributes the C
    -- library refuses are found before anything is added to `h`.
    local out = ffi.new("cupel_items *[1]")
    check(C.cupel_items_new(out))
    local scratch = ffi.gc(out[0], C.cupel_items_free)
    check(C.cupel_items_push_many(scratch, n, ffi.new("int64_t[?]", n), ffi.new("double[?]", n), nil))
    attributes(scratch, 0, function(i) return ("list[%d]"):format(i) end)
    ffi.gc(scratch, nil)
    C.cupel_items_free(scratch)
  end
  check(C.cupel_items_push_texts(h, t, n, texts, lens, scores, kinds), {
    texts = function(k) return names[k] end,
    scores = function(k) return ("list[%d].score"):format(k) end,
    kinds = function(k) return ("list[%d].kind"):format(k) end,
  })
  if more then
    attributes(h, first, function(i) return "item " .. (first + i) end)
  end
  return self
end

--- The number of items.
function Items:len()
  return tonumber(C.cupel_items_len(me(Items, self)))
end

--- Removes every item.
function Items:clear()
  C.cupel_items_clear(mine(Items, self))
end

-- The receiver and the 0-based index of item argument `index`; `changes`:
-- the method changes the list (refused while a traced run uses it).
local function item_at(self, i, name, changes)
  local h = (changes and mine or me)(Items, self)
  return h, index(name or "index", i, tonumber(C.cupel_items_len(h)))
end

--- Sets item `index`'s content (non-empty UTF-8).
-- @param index the item (1-based)
-- @param content a string
-- @return self
function Items:set_content(index, content)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_content(h, i, str("content", content)))
  return self
end

--- Sets item `index`'s timestamp.
-- @param index the item (1-based)
-- @param unix_millis UTC milliseconds since 1970
-- @return self
function Items:set_timestamp(index, unix_millis)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_timestamp(h, i, i64("unix_millis", unix_millis)))
  return self
end

--- Sets item `index`'s priority (read by the priority scorer).
-- @param index the item (1-based)
-- @param priority an integer
-- @return self
function Items:set_priority(index, priority)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_priority(h, i, i64("priority", priority)))
  return self
end

--- Pins or unpins item `index` (a pinned item is always placed).
-- @param index the item (1-based)
-- @param pinned a boolean
-- @return self
function Items:set_pinned(index, pinned)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_pinned(h, i, boolean("pinned", pinned)))
  return self
end

--- Sets item `index`'s future-relevance hint (read by the reflexive scorer).
-- @param index the item (1-based)
-- @param hint a number (clamped to [0, 1] by the scorer)
-- @return self
function Items:set_relevance_hint(index, hint)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_relevance_hint(h, i, number("hint", hint)))
  return self
end

--- Sets item `index`'s source ("Chat" unless set).
-- @param index the item (1-based)
-- @param source a non-blank string
-- @return self
function Items:set_source(index, source)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_source(h, i, str("source", source)))
  return self
end

--- Puts item `index` in keep-together group `group` (0: none).
-- @param index the item (1-based)
-- @param group an id in [0, 2^64) (a number, or a uint64_t cdata above 2^53)
-- @return self
function Items:set_group(index, group)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_group(h, i, u64("group", group)))
  return self
end

--- Sets the groups of items first .. first + #groups - 1 in one call.
-- @param first the first item (1-based)
-- @param groups a list of group ids (0: none)
-- @return self
function Items:set_groups(first, groups)
  local h = mine(Items, self)
  local len = tonumber(C.cupel_items_len(h))
  groups = list_of("groups", groups)
  local f0 = #groups == 0 and 0 or index("first", first, len)
  if f0 + #groups > len then
    invalid("groups has %d ids from item %d on, past the last item, %d", #groups, f0 + 1, len)
  end
  local ids = ffi.new("uint64_t[?]", math.max(#groups, 1))
  for i, g in ipairs(groups) do
    ids[i - 1] = u64(("groups[%d]"):format(i), g)
  end
  check(C.cupel_items_set_groups(h, f0, #groups, ids), { groups = "groups[%d]" })
  return self
end

--- Gives item `index` an identity key for sessions (`cupel.session`): any
-- non-zero number that names the same message, tool call or document from
-- one turn's list to the next (0, the default, is no key). A keyed item is
-- the same item as last turn when its key, tokens and content are the same;
-- a keyless one when its kind, tokens and content are. Keys must be unique
-- in a list for `Session:run` (it raises INVALID_ARGUMENT naming both items);
-- `Pipeline:run` ignores them.
-- @param index the item (1-based)
-- @param key an integer in [0, 2^64) (a number, or a uint64_t cdata above 2^53)
-- @return self
function Items:set_key(index, key)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_key(h, i, u64("key", key)))
  return self
end

--- Sets the keys of items first .. first + #keys - 1 in one call
-- (duplicates are refused by `Session:run`, not here).
-- @param first the first item (1-based)
-- @param keys a list of keys (0: none)
-- @return self
function Items:set_keys(first, keys)
  local h = mine(Items, self)
  local len = tonumber(C.cupel_items_len(h))
  keys = list_of("keys", keys)
  local f0 = #keys == 0 and 0 or index("first", first, len)
  if f0 + #keys > len then
    invalid("keys has %d keys from item %d on, past the last item, %d", #keys, f0 + 1, len)
  end
  local arr = ffi.new("uint64_t[?]", math.max(#keys, 1))
  for i, k in ipairs(keys) do
    arr[i - 1] = u64(("keys[%d]"):format(i), k)
  end
  check(C.cupel_items_set_keys(h, f0, #keys, arr), { keys = "keys[%d]" })
  return self
end

--- Item `index`'s identity key (0: none).
-- @param index the item (1-based)
-- @return the key: a number below 2^53, else a uint64_t cdata
function Items:key(index)
  local h, i = item_at(self, index)
  local out = ffi.new("uint64_t[1]")
  check(C.cupel_items_key(h, i, out))
  return int_result(out[0])
end

--- Marks item `index` volatile (or not): expected to change every turn (the
-- open file in an editor, this turn's retrieved documents). A session places
-- every volatile item after every other item, so that its changes never
-- break the cached prefix. A group is volatile when any member is; an item
-- with neither key nor content is treated as volatile. `Pipeline:run`
-- ignores it.
-- @param index the item (1-based)
-- @param is_volatile a boolean
-- @return self
function Items:set_volatile(index, is_volatile)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_volatile(h, i, boolean("is_volatile", is_volatile)))
  return self
end

--- Sets the volatile flags of items first .. first + #flags - 1 in one call.
-- @param first the first item (1-based)
-- @param flags a list of booleans
-- @return self
function Items:set_volatile_many(first, flags)
  local h = mine(Items, self)
  local len = tonumber(C.cupel_items_len(h))
  flags = list_of("flags", flags)
  local f0 = #flags == 0 and 0 or index("first", first, len)
  if f0 + #flags > len then
    invalid("flags has %d flags from item %d on, past the last item, %d", #flags, f0 + 1, len)
  end
  local arr = ffi.new("bool[?]", math.max(#flags, 1))
  for i, v in ipairs(flags) do
    arr[i - 1] = boolean(("flags[%d]"):format(i), v)
  end
  check(C.cupel_items_set_volatile_many(h, f0, #flags, arr), { is_volatile = "flags[%d]" })
  return self
end

--- Whether item `index` was marked volatile (`Items:set_volatile`).
-- @param index the item (1-based)
-- @return a boolean
function Items:volatile(index)
  local h, i = item_at(self, index)
  local out = ffi.new("bool[1]")
  check(C.cupel_items_volatile(h, i, out))
  return out[0]
end

--- Adds a tag to item `index`.
-- @param index the item (1-based)
-- @param tag a UTF-8 string
-- @return self
function Items:add_tag(index, tag)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_add_tag(h, i, str("tag", tag)))
  return self
end

--- Sets metadata entry `key` of item `index` (setting it again replaces it).
-- @param index the item (1-based)
-- @param key a UTF-8 string
-- @param value a UTF-8 string
-- @return self
function Items:set_metadata(index, key, value)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_set_metadata(h, i, str("key", key), str("value", value)))
  return self
end

local ptr_out, len_out = ffi.new("const char *[1]"), ffi.new("size_t[1]")
local ptr2_out, len2_out = ffi.new("const char *[1]"), ffi.new("size_t[1]")

-- The string the last read-back call pointed at (nil for NULL).
local function read_string(p, n)
  if p[0] == nil then
    return nil
  end
  return ffi.string(p[0], n[0])
end

-- The variants of item `i` (0-based) of `h`, read back.
local function variants_of(h, i)
  local count, tokens, value = ffi.new("size_t[1]"), ffi.new("int64_t[1]"), ffi.new("double[1]")
  check(C.cupel_items_variant_count(h, i, count))
  local t = {}
  for v = 1, tonumber(count[0]) do
    check(C.cupel_items_variant(h, i, v, tokens, value, ptr_out, len_out))
    t[v] = { tokens = int_result(tokens[0]), value = value[0], content = read_string(ptr_out, len_out) }
  end
  return t
end

-- How item `i` (0-based) of `h` may be cut, read back: { keep, min_tokens } or nil.
local function truncatable_of(h, i)
  local yes, keep, min = ffi.new("bool[1]"), ffi.new("int[1]"), ffi.new("int64_t[1]")
  check(C.cupel_items_truncatable(h, i, yes, keep, min))
  if not yes[0] then
    return nil
  end
  return { keep = KEEP_NAME[tonumber(keep[0])], min_tokens = int_result(min[0]) }
end

--- Adds a variant to item `index`: a smaller stand-in (a summary, a
-- placeholder such as "[output cleared]") that selection may take instead of
-- the item, at most one option per item. A variant of a pinned item, or of
-- one pushed with 0 tokens, is never chosen; a grouped item's variant v gives
-- its group an option (every member at its variant v, or as pushed).
-- @param index the item (1-based)
-- @param tokens what it adds to the context (>= 0; may exceed the item's), or
-- a table { tokens, value, content } holding all three
-- @param value the share of the item's score it keeps, in (0, 1]
-- @param content its text (a non-empty UTF-8 string), or nil for none
-- @return the variant's number: 1, 2, ... in the order added (0 is the item
-- as pushed); an item has at most 255
function Items:add_variant(index, tokens, value, content)
  local h, i = item_at(self, index, nil, true)
  local t, v, c
  if type(tokens) == "table" and value == nil and content == nil then
    t, v, c = checked_variant("variant", tokens)
  else
    t, v, c = checked_variant_fields("", tokens, value, content)
  end
  check(C.cupel_items_add_variant(h, i, t, v, c))
  local count = ffi.new("size_t[1]")
  check(C.cupel_items_variant_count(h, i, count))
  return tonumber(count[0])
end

--- The variants of item `index`.
-- @param index the item (1-based)
-- @return a list { { tokens, value, content (nil: none) }, ... }, variant 1
-- first (empty for none)
function Items:variants(index)
  local h, i = item_at(self, index)
  return variants_of(h, i)
end

--- Makes item `index` truncatable: a pipeline run with a tokenizer
-- (`Pipeline:set_tokenizer`) may include it cut down (as `Tokenizer:truncate`
-- cuts) to fill what the slicer left, if at least `min_tokens` remain; its
-- score then scales by the kept share of its tokens. The item needs content
-- (a run fails naming it otherwise, as it does without a tokenizer). A pinned
-- item, a member of a group and an item a count cap excluded are never cut;
-- `cupel.slice` never cuts. Setting it again replaces keep and min_tokens.
-- @param index the item (1-based)
-- @param keep "head" (default), "tail" or "both_ends" (cupel.KEEP_HEAD, ...)
-- @param min_tokens the fewest tokens worth keeping (>= 0; default 0)
-- @return self
function Items:set_truncatable(index, keep, min_tokens)
  local h, i = item_at(self, index, nil, true)
  local k = keep ~= nil and keep_of("keep", keep) or 0
  local m = opt(i64, "min_tokens", min_tokens, 0)
  check(C.cupel_items_set_truncatable(h, i, k, m))
  return self
end

--- Makes item `index` no longer truncatable (a no-op if it was not).
-- @param index the item (1-based)
-- @return self
function Items:clear_truncatable(index)
  local h, i = item_at(self, index, nil, true)
  check(C.cupel_items_clear_truncatable(h, i))
  return self
end

--- How item `index` may be cut.
-- @param index the item (1-based)
-- @return { keep = "head" | "tail" | "both_ends", min_tokens }, or nil when
-- it is not truncatable
function Items:truncatable(index)
  local h, i = item_at(self, index)
  return truncatable_of(h, i)
end

--- Removes the items after the first `len`, with all their attributes (undoes
-- pushes: note `items:len()`, push and set, and on failure truncate back).
-- @param len the number of items to keep (0 .. items:len())
-- @return self
function Items:truncate(len)
  local h = mine(Items, self)
  local have = tonumber(C.cupel_items_len(h))
  local n = whole("len", len)
  if n < 0 or n > have then
    invalid("len is %s; it must be in 0 .. %d (the list holds %d items; truncate only shortens it)", show(n),
      have, have)
  end
  check(C.cupel_items_truncate(h, n))
  return self
end

--- Reads item `index` back.
-- @param index the item (1-based)
-- @return a table { tokens, score, kind, content (nil: none), timestamp (UTC
-- ms, nil: none), priority (nil: none), pinned, relevance_hint (nil: none),
-- source, group (0: none), tags = { ... } (in the order added), metadata =
-- { key = value }, variants = { { tokens, value, content }, ... } (as
-- `Items:variants`), truncatable (nil, or { keep, min_tokens }), key (0:
-- none), volatile }. 64-bit integers are Lua numbers below 2^53, else cdata.
function Items:get(index)
  local h, i = item_at(self, index)
  local t = {}
  local i64o, f64o, u64o = ffi.new("int64_t[1]"), ffi.new("double[1]"), ffi.new("uint64_t[1]")
  local present, pinned, count = ffi.new("bool[1]"), ffi.new("bool[1]"), ffi.new("size_t[1]")
  check(C.cupel_items_tokens(h, i, i64o))
  t.tokens = int_result(i64o[0])
  check(C.cupel_items_score(h, i, f64o))
  t.score = f64o[0]
  check(C.cupel_items_kind(h, i, ptr_out, len_out))
  t.kind = read_string(ptr_out, len_out)
  check(C.cupel_items_content(h, i, ptr_out, len_out))
  t.content = read_string(ptr_out, len_out)
  check(C.cupel_items_source(h, i, ptr_out, len_out))
  t.source = read_string(ptr_out, len_out)
  check(C.cupel_items_timestamp(h, i, present, i64o))
  t.timestamp = present[0] and int_result(i64o[0]) or nil
  check(C.cupel_items_priority(h, i, present, i64o))
  t.priority = present[0] and int_result(i64o[0]) or nil
  check(C.cupel_items_relevance_hint(h, i, present, f64o))
  if present[0] then t.relevance_hint = f64o[0] end
  check(C.cupel_items_pinned(h, i, pinned))
  t.pinned = pinned[0]
  check(C.cupel_items_group(h, i, u64o))
  t.group = int_result(u64o[0])
  t.tags = {}
  check(C.cupel_items_tag_count(h, i, count))
  for k = 0, tonumber(count[0]) - 1 do
    check(C.cupel_items_tag(h, i, k, ptr_out, len_out))
    t.tags[k + 1] = read_string(ptr_out, len_out)
  end
  t.metadata = {}
  check(C.cupel_items_metadata_count(h, i, count))
  for k = 0, tonumber(count[0]) - 1 do
    check(C.cupel_items_metadata_entry(h, i, k, ptr_out, len_out, ptr2_out, len2_out))
    t.metadata[read_string(ptr_out, len_out)] = read_string(ptr2_out, len2_out)
  end
  t.variants = variants_of(h, i)
  t.truncatable = truncatable_of(h, i)
  check(C.cupel_items_key(h, i, u64o))
  t.key = int_result(u64o[0])
  check(C.cupel_items_volatile(h, i, pinned))
  t.volatile = pinned[0]
  return t
end

--- Creates a list of items.
-- @param list nil, or a list of item tables as `Items:push` takes
-- @return an Items handle
function M.items(list)
  local items = new(Items, "cupel_items", C.cupel_items_new, C.cupel_items_free)
  if list ~= nil then
    items:push(list)
  end
  return items
end

-- ---- tokenizers ------------------------------------------------------------------

--- A tokenizer (a cupel_tokenizer handle): a vocabulary and its
-- pre-tokenization pattern, counting exactly as tiktoken's encode_ordinary
-- (special tokens such as <|endoftext|> are ordinary text). Create one with
-- `cupel.tokenizer` or `cupel.tokenizer_from_tiktoken`. It never changes once
-- made. Texts are UTF-8 strings (NUL bytes allowed); offsets are 1-based bytes.
-- @type Tokenizer

--- Creates a tokenizer for a built-in encoding.
-- @param name "o200k_base" (GPT-4o, GPT-4.1, o-series, GPT-5) or
-- "cl100k_base" (GPT-4, GPT-3.5, text-embedding-3); another name raises
-- INVALID_ARGUMENT, listing the known ones
-- @return a Tokenizer handle
function M.tokenizer(name)
  local n = str("name", name)
  return new(Tokenizer, "cupel_tokenizer", function(out) return C.cupel_tokenizer_new(n, out) end,
    C.cupel_tokenizer_free)
end

--- Creates a tokenizer from any byte-level BPE vocabulary in tiktoken's file
-- format (lines of `base64(token) rank`, as Llama 3 and the OpenAI encodings
-- ship it). The library keeps its own copy.
-- @param ranks the file's bytes, a string (e.g. io.open(path, "rb"):read("*a"))
-- @param pattern the pre-tokenization regular expression as tiktoken writes
-- it (nil: o200k_base's)
-- @return a Tokenizer handle; a malformed vocabulary raises INVALID_ARGUMENT
-- naming its line, a bad pattern naming the problem and its byte (1-based)
function M.tokenizer_from_tiktoken(ranks, pattern)
  local r = text_of("ranks", ranks)
  local p = opt(str, "pattern", pattern, nil)
  local out = ffi.new("cupel_tokenizer *[1]")
  local status = tonumber(C.cupel_tokenizer_from_tiktoken(ffi.cast("const uint8_t *", r), #r, p, out))
  if status ~= 0 then
    local m = C.cupel_last_error()
    m = m ~= nil and ffi.string(m) or M.STATUS[status] or "failed"
    -- the pattern's byte offsets, 0-based in C, as 1-based positions
    m = m:gsub("^(pattern: .* at byte )(%d+)$", function(what, k) return what .. (tonumber(k) + 1) end)
    raise(status, m)
  end
  return setmetatable({ ptr = ffi.gc(out[0], C.cupel_tokenizer_free), free_fn = C.cupel_tokenizer_free },
    Tokenizer)
end

--- Counts the tokens of a text.
-- @param text a UTF-8 string
-- @return the number of tokens
function Tokenizer:count(text)
  local h = me(Tokenizer, self)
  local s = text_of("text", text)
  local out = ffi.new("int64_t[1]")
  check(C.cupel_tokenizer_count(h, s, #s, out))
  return int_result(out[0])
end

--- Counts many texts at once (on two threads for large batches), all or nothing.
-- @param texts a list of UTF-8 strings (texts.n, when set, is its length, so
-- that a nil element is reported by its position)
-- @return the counts, in the order of `texts`
function Tokenizer:count_many(texts)
  local h = me(Tokenizer, self)
  texts = list_of("texts", texts)
  local n = list_length("texts", texts)
  local ptrs = ffi.new("const char *[?]", math.max(n, 1))
  local lens = ffi.new("size_t[?]", math.max(n, 1))
  for i = 1, n do
    local s = text_of(("texts[%d]"):format(i), texts[i])
    ptrs[i - 1], lens[i - 1] = s, #s
  end
  local out = ffi.new("int64_t[?]", math.max(n, 1))
  check(C.cupel_tokenizer_count_many(h, n, ptrs, lens, out), { texts = "texts[%d]" })
  local counts = {}
  for i = 1, n do counts[i] = int_result(out[i - 1]) end
  return counts
end

--- Cuts a text to at most `max_tokens` tokens, keeping its head, its tail or
-- both ends, at token boundaries that are character boundaries (the C ABI's
-- cupel_tokenizer_truncate gives the exact rules). No marker is inserted:
-- `text:sub(1, head_end) .. "[...]" .. text:sub(tail_start)` writes one (whose
-- tokens the caller reserves first; a token may span a seam).
-- @param text a UTF-8 string
-- @param max_tokens the most tokens to keep (>= 0)
-- @param keep "head" (default), "tail" or "both_ends" (cupel.KEEP_HEAD,
-- KEEP_TAIL, KEEP_BOTH_ENDS); with both_ends the head gets ceil(max_tokens / 2)
-- @return kept, head_end, tail_start, tokens: the kept text, which is
-- `text:sub(1, head_end) .. text:sub(tail_start)` (1-based inclusive byte
-- positions, as string.sub takes them: head_end 0 keeps no head, tail_start
-- #text + 1 no tail; a text that fits gives #text and #text + 1), and the
-- head's count plus the tail's (each counted on its own; never above max_tokens)
function Tokenizer:truncate(text, max_tokens, keep)
  local h = me(Tokenizer, self)
  local s = text_of("text", text)
  local max = i64("max_tokens", max_tokens)
  local k = keep ~= nil and keep_of("keep", keep) or 0
  local head, tail, tokens = ffi.new("size_t[1]"), ffi.new("size_t[1]"), ffi.new("int64_t[1]")
  check(C.cupel_tokenizer_truncate(h, s, #s, max, k, head, tail, tokens))
  local head_end, tail_start = tonumber(head[0]), tonumber(tail[0]) + 1
  local kept = s
  if head_end < #s then
    kept = s:sub(1, head_end) .. s:sub(tail_start)
  end
  return kept, head_end, tail_start, int_result(tokens[0])
end

-- ---- budget ------------------------------------------------------------------------

--- A token budget (a cupel_budget handle). Create one with `cupel.budget`.
-- @type Budget

--- Sets the tokens kept back for the model's output.
-- @param output_reserve tokens (>= 0)
-- @return self
function Budget:set_output_reserve(output_reserve)
  local h = mine(Budget, self)
  check(C.cupel_budget_set_output_reserve(h, i64("output_reserve", output_reserve)))
  return self
end

--- Sets the safety margin, a percentage of the budget kept free.
-- @param percent a number in [0, 100]
-- @return self
function Budget:set_safety_margin(percent)
  local h = mine(Budget, self)
  check(C.cupel_budget_set_safety_margin(h, number("percent", percent)))
  return self
end

--- Reserves tokens for a kind (setting it again replaces the value).
-- @param kind a kind name
-- @param tokens tokens (>= 0)
-- @return self
function Budget:reserve(kind, tokens)
  local h = mine(Budget, self)
  check(C.cupel_budget_reserve(h, str("kind", kind), i64("tokens", tokens)))
  return self
end

--- The effective max and target tokens after `pinned_tokens` (default 0).
-- @return max_tokens, target_tokens
function Budget:effective(pinned_tokens)
  local h = me(Budget, self)
  local max, target = ffi.new("int64_t[1]"), ffi.new("int64_t[1]")
  check(C.cupel_budget_effective(h, opt(i64, "pinned_tokens", pinned_tokens, 0), max, target))
  return int_result(max[0]), int_result(target[0])
end

--- Creates a budget.
-- @param o { max_tokens (required), target_tokens = max_tokens,
-- output_reserve, safety_margin_percent, reserved = { Kind = tokens } }
-- @return a Budget handle
function M.budget(o)
  o = list_of("o", o)
  local max = i64("max_tokens", o.max_tokens)
  local target = opt(i64, "target_tokens", o.target_tokens, max)
  local b = new(Budget, "cupel_budget", function(out) return C.cupel_budget_new(max, target, out) end,
    C.cupel_budget_free)
  if o.output_reserve ~= nil then b:set_output_reserve(o.output_reserve) end
  if o.safety_margin_percent ~= nil then b:set_safety_margin(o.safety_margin_percent) end
  local kinds = {}
  for kind in pairs(opt(list_of, "reserved", o.reserved, {})) do kinds[#kinds + 1] = kind end
  table.sort(kinds, function(x, y) return tostring(x) < tostring(y) end)
  for _, kind in ipairs(kinds) do b:reserve(kind, o.reserved[kind]) end
  return b
end

-- ---- slicers ---------------------------------------------------------------------------

--- A slicer (a cupel_slicer handle): `cupel.greedy`, `knapsack`, `quota`,
-- `count_quota`, `count_constrained_knapsack`.
-- @type Slicer

local function new_slicer(create, arrays)
  return new(Slicer, "cupel_slicer", create, C.cupel_slicer_free, arrays)
end

--- Creates a GreedySlice (value density fill).
function M.greedy()
  return new_slicer(C.cupel_slicer_new_greedy)
end

--- Creates a KnapsackSlice.
-- @param bucket_size tokens per bucket (> 0; default 100)
function M.knapsack(bucket_size)
  local b = opt(i64, "bucket_size", bucket_size, 100)
  return new_slicer(function(out) return C.cupel_slicer_new_knapsack(b, out) end)
end

--- Creates a QuotaSlice over `inner`.
-- @param inner a Slicer
-- @param quotas a list of { kind, require_percent = 0, cap_percent = 100 }
function M.quota(inner, quotas)
  local p = ptr_of(Slicer, "inner", inner)
  quotas = list_of("quotas", quotas)
  local q = ffi.new("cupel_quota[?]", math.max(#quotas, 1))
  for i, e in ipairs(quotas) do
    local at = ("quotas[%d]."):format(i)
    e = list_of(at:sub(1, -2), e)
    q[i - 1].kind = str(at .. "kind", e.kind)
    q[i - 1].require_percent = opt(number, at .. "require_percent", e.require_percent, 0)
    q[i - 1].cap_percent = opt(number, at .. "cap_percent", e.cap_percent, 100)
  end
  return new_slicer(function(out) return C.cupel_slicer_new_quota(p, q, #quotas, out) end, { quotas = "quotas[%d]" })
end

local function counts(entries)
  entries = list_of("entries", entries)
  local e = ffi.new("cupel_count_quota[?]", math.max(#entries, 1))
  for i, x in ipairs(entries) do
    local at = ("entries[%d]."):format(i)
    x = list_of(at:sub(1, -2), x)
    e[i - 1].kind = str(at .. "kind", x.kind)
    e[i - 1].require_count = opt(u32, at .. "require_count", x.require_count, 0)
    e[i - 1].cap_count = opt(u32, at .. "cap_count", x.cap_count, 0)
  end
  return e, #entries
end

--- Creates a CountQuotaSlice over `inner`.
-- @param inner a Slicer (not a knapsack)
-- @param entries a list of { kind, require_count = 0, cap_count = 0 }
-- @param scarcity cupel.SCARCITY_DEGRADE (default) or cupel.SCARCITY_ERROR
function M.count_quota(inner, entries, scarcity)
  local p = ptr_of(Slicer, "inner", inner)
  local e, n = counts(entries)
  local s = opt(cint, "scarcity", scarcity, 0)
  return new_slicer(function(out)
    return C.cupel_slicer_new_count_quota(p, e, n, s, out)
  end, { entries = "entries[%d]" })
end

--- Creates a CountConstrainedKnapsackSlice.
-- @param bucket_size tokens per bucket (> 0)
-- @param entries a list of { kind, require_count = 0, cap_count = 0 }
-- @param scarcity cupel.SCARCITY_DEGRADE (default) or cupel.SCARCITY_ERROR
function M.count_constrained_knapsack(bucket_size, entries, scarcity)
  local b = i64("bucket_size", bucket_size)
  local e, n = counts(entries)
  local s = opt(cint, "scarcity", scarcity, 0)
  return new_slicer(function(out)
    return C.cupel_slicer_new_count_constrained_knapsack(b, e, n, s, out)
  end, { entries = "entries[%d]" })
end

--- Bounds the working memory of one slice call with this slicer.
-- @param bytes the bound (default 1 GiB)
-- @return self
function Slicer:set_memory_limit(bytes)
  local h = me(Slicer, self)
  check(C.cupel_slicer_set_memory_limit(h, u64("bytes", bytes)))
  return self
end

--- The memory bound of one slice call, in bytes.
function Slicer:memory_limit()
  return int_result(C.cupel_slicer_memory_limit(me(Slicer, self)))
end

-- ---- scorers -------------------------------------------------------------------------------

--- A scorer (a cupel_scorer handle): the constructors are in `cupel.scorers`.
-- @type Scorer

local function new_scorer(create, arrays)
  return new(Scorer, "cupel_scorer", create, C.cupel_scorer_free, arrays)
end

-- A { name = weight } table as a C array sorted by name, and the names.
local function weight_table(ctype, field, w)
  w = list_of("weights", w)
  local names = {}
  for k in pairs(w) do
    if type(k) ~= "string" then
      invalid("weights has the key %s; its keys must be strings", describe(k))
    end
    names[#names + 1] = k
  end
  table.sort(names)
  local arr = ffi.new(ctype .. "[?]", math.max(#names, 1))
  for i, k in ipairs(names) do
    local at = ("weights[%q]"):format(k)
    arr[i - 1][field] = str(at, k)
    arr[i - 1].weight = number(at, w[k])
  end
  -- C's weights[k] is the k-th name in sorted order.
  return arr, #names, { weights = function(k) return ("weights[%q]"):format(names[k]) end }
end

--- The scorer constructors.
M.scorers = {}

--- The scores pushed with the items.
function M.scorers.given() return new_scorer(C.cupel_scorer_new_given) end
--- Newer timestamps score higher.
function M.scorers.recency() return new_scorer(C.cupel_scorer_new_recency) end
--- Higher priorities score higher.
function M.scorers.priority() return new_scorer(C.cupel_scorer_new_priority) end
--- Items sharing tags with many others score higher.
function M.scorers.frequency() return new_scorer(C.cupel_scorer_new_frequency) end
--- The items' relevance hints.
function M.scorers.reflexive() return new_scorer(C.cupel_scorer_new_reflexive) end

--- Scores by kind.
-- @param w { Kind = weight }, or nil for the specification's defaults
function M.scorers.kind(w)
  if w == nil then
    return new_scorer(function(out) return C.cupel_scorer_new_kind(nil, 0, out) end)
  end
  local arr, n, arrays = weight_table("cupel_kind_weight", "kind", w)
  return new_scorer(function(out) return C.cupel_scorer_new_kind(arr, n, out) end, arrays)
end

--- Scores by tags.
-- @param w { tag = weight }
function M.scorers.tag(w)
  local arr, n, arrays = weight_table("cupel_tag_weight", "tag", w)
  return new_scorer(function(out) return C.cupel_scorer_new_tag(arr, n, out) end, arrays)
end

--- A weighted sum of scorers.
-- @param children a list of Scorers
-- @param weights a list of weights (> 0), one per child
function M.scorers.composite(children, weights)
  children = list_of("children", children)
  weights = list_of("weights", weights)
  local n = math.max(#children, #weights)
  local kids = ffi.new("const cupel_scorer *[?]", math.max(n, 1))
  local ws = ffi.new("double[?]", math.max(n, 1))
  for i = 1, n do
    kids[i - 1] = ptr_of(Scorer, ("children[%d]"):format(i), children[i])
    ws[i - 1] = number(("weights[%d]"):format(i), weights[i])
  end
  return new_scorer(function(out) return C.cupel_scorer_new_composite(kids, ws, n, out) end,
    { weights = "weights[%d]", children = "children[%d]" })
end

--- `inner`'s scores scaled to [0, 1].
-- @param inner a Scorer
function M.scorers.scaled(inner)
  local p = ptr_of(Scorer, "inner", inner)
  return new_scorer(function(out) return C.cupel_scorer_new_scaled(p, out) end)
end

--- The trust an item's "cupel:trust" metadata gives.
-- @param default_score the score without it (default 0.5)
function M.scorers.metadata_trust(default_score)
  local d = opt(number, "default_score", default_score, 0.5)
  return new_scorer(function(out) return C.cupel_scorer_new_metadata_trust(d, out) end)
end

--- Boosts items whose metadata `key` is `value`.
-- @param key a string
-- @param value a string
-- @param boost the factor (> 0, finite)
function M.scorers.metadata_key(key, value, boost)
  key, value, boost = str("key", key), str("value", value), number("boost", boost)
  return new_scorer(function(out) return C.cupel_scorer_new_metadata_key(key, value, boost, out) end)
end

--- Scores by the age of the timestamps.
-- @param o { curve = cupel.DECAY_*, duration_secs, windows = { { max_age_secs,
-- score }, ... } (youngest first, for DECAY_STEP), reference_time (UTC ms),
-- null_timestamp_score = 0.5 }
function M.scorers.decay(o)
  o = list_of("o", o)
  local curve = cint("curve", o.curve)
  local duration = opt(number, "duration_secs", o.duration_secs, 0)
  local ws = opt(list_of, "windows", o.windows, {})
  local arr = ffi.new("cupel_decay_window[?]", math.max(#ws, 1))
  for i, w in ipairs(ws) do
    w = list_of(("windows[%d]"):format(i), w)
    arr[i - 1].max_age_secs = number(("windows[%d][1]"):format(i), w[1])
    arr[i - 1].score = number(("windows[%d][2]"):format(i), w[2])
  end
  local ref = i64("reference_time", o.reference_time)
  local null_score = opt(number, "null_timestamp_score", o.null_timestamp_score, 0.5)
  return new_scorer(function(out)
    return C.cupel_scorer_new_decay(curve, duration, #ws > 0 and arr or nil, #ws, ref, null_score, out)
  end, { windows = "windows[%d]" })
end

--- The score of every item of `items`, in item order.
-- @param items an Items handle
-- @return a list of numbers
function Scorer:score(items)
  local h = me(Scorer, self)
  local ih = ptr_of(Items, "items", items)
  local n = tonumber(C.cupel_items_len(ih))
  local out = ffi.new("double[?]", math.max(n, 1))
  local len = ffi.new("size_t[1]")
  check(C.cupel_scorer_score(h, ih, out, n, len))
  local t = {}
  for i = 1, tonumber(len[0]) do t[i] = out[i - 1] end
  return t
end

-- ---- placers --------------------------------------------------------------------------------

--- A placer (a cupel_placer handle): `cupel.chronological`, `cupel.u_shaped`.
-- @type Placer

--- Creates a ChronologicalPlacer (oldest first).
function M.chronological()
  return new(Placer, "cupel_placer", C.cupel_placer_new_chronological, C.cupel_placer_free)
end

--- Creates a UShapedPlacer (the best items at both edges).
function M.u_shaped()
  return new(Placer, "cupel_placer", C.cupel_placer_new_u_shaped, C.cupel_placer_free)
end

-- Calls f(out, capacity, out_len) and returns the indices, 1-based.
local function index_list(capacity, f)
  local out = ffi.new("size_t[?]", math.max(capacity, 1))
  local len = ffi.new("size_t[1]")
  check(f(out, capacity, len))
  local t = {}
  for i = 1, tonumber(len[0]) do t[i] = tonumber(out[i - 1]) + 1 end
  return t
end

--- The Place stage alone: orders items `indices` with `scores`.
-- @param items an Items handle
-- @param indices a list of item indices (1-based)
-- @param scores a list of scores, one per index
-- @return the item indices (1-based) in placed order
function Placer:place(items, indices, scores)
  local h = me(Placer, self)
  local ih = ptr_of(Items, "items", items)
  local len = tonumber(C.cupel_items_len(ih))
  indices = list_of("indices", indices)
  scores = list_of("scores", scores)
  local n = math.max(#indices, #scores)
  local ix = ffi.new("size_t[?]", math.max(n, 1))
  local sc = ffi.new("double[?]", math.max(n, 1))
  for i = 1, n do
    ix[i - 1] = index(("indices[%d]"):format(i), indices[i], len)
    sc[i - 1] = number(("scores[%d]"):format(i), scores[i])
  end
  local out = ffi.new("size_t[?]", math.max(n, 1))
  local got = ffi.new("size_t[1]")
  check(C.cupel_placer_place(h, ih, ix, sc, n, out, n, got), { indices = "indices[%d]", scores = "scores[%d]" })
  local t = {}
  for i = 1, tonumber(got[0]) do t[i] = tonumber(out[i - 1]) + 1 end
  return t
end

-- ---- runs and reports ------------------------------------------------------------------------

--- The name of a reason code, as the JSON report writes it ("BudgetExceeded",
-- ...; "Unknown" for a number that is no reason).
-- @param code a reason code (a `cupel_decision.reason`)
function M.reason_name(code)
  code = whole("code", code)
  if type(code) == "cdata" or code < -2 ^ 31 or code >= 2 ^ 31 then
    return "Unknown"
  end
  return ffi.string(C.cupel_reason_str(tonumber(code)))
end

--- Reason names by code, as the C library names them (cupel_reason_str).
M.REASON = {}
for code = 0, 255 do
  local name = M.reason_name(code)
  if name ~= "Unknown" then
    M.REASON[code] = name
  end
end

local SIZE_MAX = ffi.cast("size_t", -1)

-- The text f(buf, capacity, out_len) writes under the C library's buffer
-- rules (buf NULL and capacity 0 ask for the length), in two calls.
text_out = function(f, arrays)
  local len = ffi.new("size_t[1]")
  local st = tonumber(f(nil, 0, len))
  if st ~= 0 and st ~= 3 then check(st, arrays) end
  local n = tonumber(len[0])
  local buf = ffi.new("char[?]", n + 1)
  check(f(buf, n + 1, len), arrays)
  return ffi.string(buf, len[0])
end

local function decision(d)
  return {
    index = tonumber(d.item_index) + 1,
    score = d.score,
    reason = M.reason_name(d.reason),
    reason_code = d.reason,
    item_tokens = int_result(d.item_tokens),
    available_tokens = int_result(d.available_tokens),
    related_index = d.related_index ~= SIZE_MAX and tonumber(d.related_index) + 1 or nil,
    group = int_result(d.group),
    group_tokens = int_result(d.group_tokens),
  }
end

-- What the run chose of included entry `i` (0-based) of report `r` over
-- list `items`, into decision table `t`: the variant, the tokens it adds, the
-- cut as 1-based byte positions, and the text to send.
local function chosen(r, items, i, t)
  local variant, added = ffi.new("size_t[1]"), ffi.new("int64_t[1]")
  local head, tail = ffi.new("size_t[1]"), ffi.new("size_t[1]")
  check(C.cupel_report_included_variant(r, i, variant, added))
  check(C.cupel_report_included_cut(r, i, head, tail))
  local v, item = tonumber(variant[0]), t.index - 1
  t.variant, t.tokens_added = v, int_result(added[0])
  t.head_end, t.tail_start = tonumber(head[0]), tonumber(tail[0]) + 1
  if v > 0 then
    local tokens, value = ffi.new("int64_t[1]"), ffi.new("double[1]")
    check(C.cupel_items_variant(items, item, v, tokens, value, ptr_out, len_out))
    t.text = read_string(ptr_out, len_out)
  else
    check(C.cupel_items_content(items, item, ptr_out, len_out))
    local content = read_string(ptr_out, len_out)
    if content ~= nil and t.head_end < #content then
      content = content:sub(1, t.head_end) .. content:sub(t.tail_start)
    end
    t.text = content
  end
end

local function read_report(r, items)
  local rep = { included = {}, excluded = {}, shortfalls = {}, cap_excluded = {} }
  local d = ffi.new("cupel_decision[1]")
  for i = 0, tonumber(C.cupel_report_included_count(r)) - 1 do
    check(C.cupel_report_included(r, i, d))
    local t = decision(d[0])
    chosen(r, items, i, t)
    rep.included[#rep.included + 1] = t
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
  rep.total_candidates = int_result(C.cupel_report_total_candidates(r))
  rep.total_tokens_considered = int_result(C.cupel_report_total_tokens_considered(r))
  rep.tokens_over_budget = int_result(C.cupel_report_tokens_over_budget(r))
  rep.effective_max_tokens = int_result(C.cupel_report_effective_max_tokens(r))
  rep.effective_target_tokens = int_result(C.cupel_report_effective_target_tokens(r))
  rep.selected_tokens = int_result(C.cupel_report_selected_tokens(r))
  local ratio, count = ffi.new("double[1]"), ffi.new("size_t[1]")
  rep.analytics = {}
  check(C.cupel_report_budget_utilization(r, ratio))
  rep.analytics.budget_utilization = ratio[0]
  check(C.cupel_report_kind_diversity(r, items, count))
  rep.analytics.kind_diversity = tonumber(count[0])
  check(C.cupel_report_timestamp_coverage(r, items, ratio))
  rep.analytics.timestamp_coverage = ratio[0]
  rep.json = text_out(function(buf, cap, len)
    return C.cupel_report_json(r, items, buf, cap, len)
  end)
  return rep
end

-- Runs f(report or nil) and returns f's indices and the report (when wanted).
local function with_report(opts, items, f)
  opts = opt(list_of, "opts", opts, {})
  if not opts.report then
    return f(nil), nil
  end
  local out = ffi.new("cupel_report *[1]")
  check(C.cupel_report_new(out))
  local r = ffi.gc(out[0], C.cupel_report_free)
  local result = f(r)
  local report = read_report(r, items)
  ffi.gc(r, nil)
  C.cupel_report_free(r)
  return result, report
end

-- ---- tracing -----------------------------------------------------------------------------

--- The trace levels (`Pipeline:set_trace`): a span per stage and the
-- pipeline's; also an event per excluded item; also one per included item.
-- The values are the strings themselves.
M.TRACE_STAGES, M.TRACE_EXCLUSIONS, M.TRACE_FULL = "stages", "exclusions", "full"

local TRACE_LEVEL = { stages = 0, exclusions = 1, full = 2 }
local TRACE_KIND = { [0] = "pipeline", "stage", "exclusion", "included" }

-- A trace level argument as the C value.
local function level_of(name, v)
  local l = TRACE_LEVEL[v]
  if l == nil then
    if v == nil then null(name) end
    if type(v) ~= "string" then
      invalid('%s must be "stages", "exclusions" or "full", got %s', name, describe(v))
    end
    invalid('%s is %s; expected "stages", "exclusions" or "full"', name, describe(v))
  end
  return l
end

-- A cupel_trace_event as a Lua table (strings copied: the event's pointers
-- live only during the callback).
local function trace_event(e)
  local kind = TRACE_KIND[tonumber(e.kind)] or tostring(tonumber(e.kind))
  local t = {
    kind = kind,
    name = ffi.string(e.name),
    verbosity = ffi.string(e.verbosity),
    start_unix_nanos = int_result(e.start_unix_nanos),
    duration_nanos = int_result(e.duration_nanos),
  }
  if e.stage ~= nil then t.stage = ffi.string(e.stage) end
  if kind == "pipeline" or kind == "stage" then
    t.item_count_in = tonumber(e.item_count_in)
    t.item_count_out = tonumber(e.item_count_out)
    t.exclusion_count = tonumber(e.exclusion_count)
    if kind == "pipeline" then t.max_tokens = int_result(e.max_tokens) end
  else
    t.item = tonumber(e.item) + 1
    t.item_kind = e.item_kind ~= nil and ffi.string(e.item_kind, e.item_kind_len) or ""
    t.tokens = int_result(e.tokens)
    if kind == "exclusion" then
      t.reason_code = tonumber(e.reason)
      t.reason = e.reason_name ~= nil and ffi.string(e.reason_name) or M.reason_name(t.reason_code)
    else
      t.score = e.score
    end
  end
  return t
end

local function deliver(fn, e)
  fn(trace_event(e))
end

-- A trace's state: the Lua function, the C callback that calls it, the
-- first error it raised during the current run, and the holds on it (the
-- pipeline, and each session made while it was set: they share the C
-- callback, which is freed when the last lets go).
local function new_trace(fn)
  local state = { fn = fn, holders = 1 }
  -- Runs on the C library's stack: nothing may be raised through it. The
  -- first error is kept (the remaining events are dropped) and raised when
  -- the run returns.
  state.cb = ffi.cast("cupel_trace_fn", function(_, e)
    if state.err == nil and not state.muted then
      local ok, err = pcall(deliver, state.fn, e)
      if not ok then
        state.err = err == nil and "error in the trace callback" or err
      end
    end
  end)
  return state
end

-- The C calls that may call a trace callback. LuaJIT may not enter a Lua
-- callback from a C function that JIT-compiled code called, so these
-- functions are never compiled (a trace that reaches them stops there) and
-- their C calls are always made by the interpreter.
local function c_pipeline_run(h, ih, bh, out, cap, len, r)
  return C.cupel_pipeline_run(h, ih, bh, out, cap, len, r)
end
local function c_session_run(h, ih, bh, out, cap, len, r)
  return C.cupel_session_run(h, ih, bh, out, cap, len, r)
end
local function c_sensitivity(ps, ls, n, ih, bh, buf, cap, len)
  return C.cupel_policy_sensitivity(ps, ls, n, ih, bh, buf, cap, len)
end
jit.off(c_pipeline_run)
jit.off(c_session_run)
jit.off(c_sensitivity)

-- Calls f(...) (a C call above) with the trace states `traces` (a list;
-- may be empty) ready, the handles `handles` marked busy meanwhile; raises
-- the first error a trace callback raised, once the call has returned.
local function traced(traces, handles, f, ...)
  if #traces == 0 then
    return f(...)
  end
  local saved = {}
  for i, t in ipairs(traces) do
    saved[i] = t.err
    t.err = nil
  end
  for _, h in ipairs(handles) do busy[h] = (busy[h] or 0) + 1 end
  local status = f(...)
  for _, h in ipairs(handles) do
    local n = busy[h] - 1
    busy[h] = n > 0 and n or nil
  end
  local err
  for i, t in ipairs(traces) do
    if err == nil then err = t.err end
    t.err = saved[i]
  end
  if err ~= nil then
    error(err, 0)
  end
  return status
end

-- The trace states of `pipeline` (a list of at most one).
local function traces_of(handle)
  local t = rawget(handle, "trace")
  return t and { t } or {}
end

--- Traces the pipeline's runs: during each successful run (`Pipeline:run`,
-- `cupel.select` with this pipeline, `cupel.policy_sensitivity`, and the
-- runs of sessions made while it is set) `callback(event)` is called for
-- every event of `level`, in order: each stage's span (classify, score,
-- deduplicate, slice, place) followed by its exclusions, the place stage's
-- also by the included items, and the pipeline's span last. A failed run
-- sends nothing.
--
-- An event is a table: kind ("pipeline", "stage", "exclusion", "included"),
-- name ("cupel.pipeline", "cupel.stage.classify", ..., "cupel.exclusion",
-- "cupel.item.included"), verbosity ("StageOnly", "StageAndExclusions",
-- "Full"), start_unix_nanos and duration_nanos (0 for events; uint64_t
-- cdata above 2^53); a stage's span has stage ("classify", ...),
-- item_count_in, item_count_out and exclusion_count, the pipeline's the
-- same (items in, included, all exclusions) and max_tokens; an exclusion
-- has item (1-based), reason (the name, "BudgetExceeded"), reason_code,
-- item_kind and tokens; an included item has item, item_kind, tokens and
-- score. Never content or metadata: `items:get(event.item)` has them.
--
-- An error the callback raises does not pass through the C library: the
-- run's remaining events are dropped, the run completes, and the error is
-- raised, as it was, from the call that ran the pipeline (whose result is
-- lost). While its run lasts, the callback cannot run, change or free the
-- pipeline, its items or its budget (INVALID_ARGUMENT); it may read them.
--
-- The pipeline holds the callback until it is cleared, replaced, or the
-- pipeline freed (sessions made meanwhile hold it too, until they are freed).
-- @param level "stages", "exclusions" or "full" (cupel.TRACE_STAGES, ...);
-- nil: "stages"
-- @param callback a function(event), or nil to stop tracing
-- @return self
function Pipeline:set_trace(level, callback)
  local h = mine(Pipeline, self)
  local l = opt(level_of, "level", level, 0)
  local old = rawget(self, "trace")
  if callback == nil then
    check(C.cupel_pipeline_set_trace(h, l, nil, nil))
    self.trace = nil
    ffi.gc(h, C.cupel_pipeline_free)
    release_trace(old)
    return self
  end
  local mt = getmetatable(callback)
  if type(callback) ~= "function" and not (type(mt) == "table" and mt.__call) then
    invalid("callback must be a function, got %s", describe(callback))
  end
  local state = new_trace(callback)
  local st = C.cupel_pipeline_set_trace(h, l, state.cb, nil)
  if tonumber(st) ~= 0 then
    release_trace(state)
    check(st)
  end
  self.trace = state
  ffi.gc(h, function(p)
    C.cupel_pipeline_free(p)
    release_trace(state)
  end)
  release_trace(old)
  return self
end

--- A pipeline of the six stages (a cupel_pipeline handle). Create one with `cupel.pipeline`.
-- @type Pipeline

--- Creates a pipeline (over copies of the scorer, slicer and placer).
-- @param o { scorer = nil (the pushed scores), slicer (required), placer =
-- nil (the slicer's order), deduplication = true, overflow = cupel.OVERFLOW_THROW,
-- tokenizer = nil (see `Pipeline:set_tokenizer`) }
-- @return a Pipeline handle
function M.pipeline(o)
  o = list_of("o", o)
  local sc = o.scorer ~= nil and ptr_of(Scorer, "scorer", o.scorer) or nil
  local sl = ptr_of(Slicer, "slicer", o.slicer)
  local pl = o.placer ~= nil and ptr_of(Placer, "placer", o.placer) or nil
  local dedup = opt(boolean, "deduplication", o.deduplication, true)
  local overflow = opt(cint, "overflow", o.overflow, 0)
  local tk = o.tokenizer ~= nil and ptr_of(Tokenizer, "tokenizer", o.tokenizer) or nil
  local p = new(Pipeline, "cupel_pipeline", function(out)
    return C.cupel_pipeline_new(sc, sl, pl, out)
  end, C.cupel_pipeline_free)
  check(C.cupel_pipeline_set_deduplication(p.ptr, dedup))
  check(C.cupel_pipeline_set_overflow(p.ptr, overflow))
  if tk ~= nil then
    check(C.cupel_pipeline_set_tokenizer(p.ptr, tk))
    p.tokenizer = o.tokenizer
  end
  return p
end

--- Gives the pipeline the tokenizer it cuts truncatable items with
-- (`Items:set_truncatable`); nil removes it. The pipeline keeps its own
-- reference: the tokenizer may be freed afterwards. A run with a truncatable
-- item and no tokenizer raises INVALID_ARGUMENT naming the item.
-- @param tokenizer a Tokenizer, or nil
-- @return self
function Pipeline:set_tokenizer(tokenizer)
  local h = mine(Pipeline, self)
  local t = tokenizer ~= nil and ptr_of(Tokenizer, "tokenizer", tokenizer) or nil
  check(C.cupel_pipeline_set_tokenizer(h, t))
  self.tokenizer = tokenizer -- what `cupel.select` counts with, unless told otherwise
  return self
end

--- Runs all six stages.
-- @param items an Items handle
-- @param budget a Budget handle
-- @param opts nil, or { report = true } for the report
-- @return the placed indices (1-based), and the report when asked for:
-- { included, excluded (decisions: { index, score, reason, reason_code,
-- item_tokens, available_tokens, related_index, group, group_tokens }),
-- shortfalls, cap_excluded, totals, json }. An included decision also says
-- what was chosen of the item: variant (0: as pushed, also when cut; v: its
-- variant v, reason "Variant"), tokens_added (what it adds to the context;
-- selected_tokens sums them, item_tokens stays the item's own count),
-- head_end and tail_start (the kept bytes of the item's content as 1-based
-- byte positions, as `Tokenizer:truncate` gives them: content:sub(1,
-- head_end) .. content:sub(tail_start); #content and #content + 1 when not
-- cut, reason "Truncated" when cut; 0 and 1 without content) and text (the
-- text to send: the variant's content when variant > 0, else the content
-- with the cut applied; nil when there is none).
function Pipeline:run(items, budget, opts)
  local h = mine(Pipeline, self)
  local ih = ptr_of(Items, "items", items)
  local bh = ptr_of(Budget, "budget", budget)
  local traces = traces_of(self)
  return with_report(opts, ih, function(r)
    return index_list(tonumber(C.cupel_items_len(ih)), function(out, cap, len)
      return traced(traces, { self, items, budget }, c_pipeline_run, h, ih, bh, out, cap, len, r)
    end)
  end)
end

--- The Sort and Slice stages alone.
-- @param slicer a Slicer
-- @param items an Items handle
-- @param budget a Budget handle
-- @param pinned_tokens tokens already taken by pinned items (default 0)
-- @param opts nil, or { report = true } for the report
-- @return the selected indices (1-based), and the report when asked for
function M.slice(slicer, items, budget, pinned_tokens, opts)
  local sh = ptr_of(Slicer, "slicer", slicer)
  local ih = ptr_of(Items, "items", items)
  local bh = ptr_of(Budget, "budget", budget)
  local pinned = opt(i64, "pinned_tokens", pinned_tokens, 0)
  return with_report(opts, ih, function(r)
    return index_list(tonumber(C.cupel_items_len(ih)), function(out, cap, len)
      return C.cupel_slice(sh, ih, bh, pinned, out, cap, len, r)
    end)
  end)
end

--- The items selected with `slack_tokens` more budget but not without
-- (GetMarginalItems).
-- @param slicer a Slicer
-- @param items an Items handle
-- @param budget a Budget handle
-- @param pinned_tokens tokens already taken by pinned items (nil: 0)
-- @param slack_tokens the extra tokens (>= 0)
-- @return item indices (1-based)
function M.marginal_items(slicer, items, budget, pinned_tokens, slack_tokens)
  local sh = ptr_of(Slicer, "slicer", slicer)
  local ih = ptr_of(Items, "items", items)
  local bh = ptr_of(Budget, "budget", budget)
  local pinned = opt(i64, "pinned_tokens", pinned_tokens, 0)
  local slack = i64("slack_tokens", slack_tokens)
  return index_list(tonumber(C.cupel_items_len(ih)), function(out, cap, len)
    return C.cupel_marginal_items(sh, ih, bh, pinned, slack, out, cap, len)
  end)
end

--- The smallest budget that selects item `target_index` (FindMinBudgetFor).
-- @param slicer a Slicer
-- @param items an Items handle
-- @param pinned_tokens tokens already taken by pinned items (nil: 0)
-- @param target_index the item (1-based)
-- @param search_ceiling the largest budget tried
-- @return the budget in tokens, or nil when even the ceiling does not select it
function M.find_min_budget(slicer, items, pinned_tokens, target_index, search_ceiling)
  local sh = ptr_of(Slicer, "slicer", slicer)
  local ih = ptr_of(Items, "items", items)
  local pinned = opt(i64, "pinned_tokens", pinned_tokens, 0)
  local target = index("target_index", target_index, tonumber(C.cupel_items_len(ih)))
  local ceiling = i64("search_ceiling", search_ceiling)
  local out = ffi.new("int64_t[1]")
  check(C.cupel_find_min_budget(sh, ih, pinned, target, ceiling, out))
  local b = out[0]
  return b >= 0 and int_result(b) or nil
end

-- ---- policies as data, presets, sensitivity -------------------------------------------------

-- The JSON readers' messages with 1-based byte positions ("at byte 3").
local function json_terms(msg)
  return (msg:gsub("(invalid UTF%-8 at byte )(%d+)", function(what, k) return what .. (tonumber(k) + 1) end))
end

-- Raises the JSON reader's status and message, unless `status` is CUPEL_OK.
local function check_json(status)
  status = tonumber(status)
  if status ~= 0 then
    local m = C.cupel_last_error()
    raise(status, json_terms(m ~= nil and ffi.string(m) or M.STATUS[status] or "failed"))
  end
end

--- Reads a policy document (JSON: the .NET Cupel policy format and
-- libcupel's extensions, docs/policies.md) into a new pipeline.
-- @param json the document, a UTF-8 string
-- @return a Pipeline handle; a bad document raises INVALID_ARGUMENT whose
-- message gives the JSON path and the rule (`json $.scorers[1].weight: must
-- be positive and finite (got -0.5)`), or the line and column of malformed JSON
function M.pipeline_from_json(json)
  local s = text_of("json", json)
  local out = ffi.new("cupel_pipeline *[1]")
  check_json(C.cupel_pipeline_from_json(s, #s, out))
  return setmetatable({ ptr = ffi.gc(out[0], C.cupel_pipeline_free), free_fn = C.cupel_pipeline_free }, Pipeline)
end

--- Writes the pipeline as a policy document: every setting (keys in
-- alphabetical order), so that `cupel.pipeline_from_json` of it selects
-- exactly as this pipeline does. The trace is not part of it.
-- @return the JSON text; a pipeline the format cannot hold (a slicer nested
-- otherwise than count quotas around quotas around greedy, knapsack or
-- stream; a tokenizer from a vocabulary file) raises UNSUPPORTED
function Pipeline:to_json()
  local h = me(Pipeline, self)
  return text_out(function(buf, cap, len) return C.cupel_pipeline_to_json(h, buf, cap, len) end)
end

--- Builds a preset pipeline by name, matched case-insensitively: the .NET
-- presets "Chat", "CodeReview", "Rag", "DocumentQa", "ToolUse",
-- "LongRunning", "Debugging", and libcupel's "AgentLoop" (docs/policies.md).
-- @param name a preset's name (`cupel.preset_names()` lists them)
-- @return a Pipeline handle; an unknown name raises INVALID_ARGUMENT listing the presets
function M.preset(name)
  local n = str("name", name)
  return new(Pipeline, "cupel_pipeline", function(out) return C.cupel_pipeline_preset(n, out) end,
    C.cupel_pipeline_free)
end

--- The presets' names, in the library's order.
-- @return a list of strings
function M.preset_names()
  local t = {}
  for i = 0, tonumber(C.cupel_preset_count()) - 1 do
    t[#t + 1] = ffi.string(C.cupel_preset_name(i))
  end
  return t
end

--- Reads a budget document (JSON): { "maxTokens", "targetTokens" (both
-- required), "outputReserve", "reservedSlots": { kind: tokens },
-- "estimationSafetyMarginPercent" }, validated as `cupel.budget` validates.
-- @param json the document, a UTF-8 string
-- @return a Budget handle; a bad document raises INVALID_ARGUMENT with the JSON path
function M.budget_from_json(json)
  local s = text_of("json", json)
  local out = ffi.new("cupel_budget *[1]")
  check_json(C.cupel_budget_from_json(s, #s, out))
  return setmetatable({ ptr = ffi.gc(out[0], C.cupel_budget_free), free_fn = C.cupel_budget_free }, Budget)
end

--- Writes the budget as a budget document (every field; reserved kinds
-- lower-cased, as they are compared).
-- @return the JSON text
function Budget:to_json()
  local h = me(Budget, self)
  return text_out(function(buf, cap, len) return C.cupel_budget_to_json(h, buf, cap, len) end)
end

--- Policy sensitivity: runs each variant's pipeline on the same items and
-- budget, and says which items the choice of policy decides.
-- @param variants a list of at least two { label = "a", pipeline = p } (or
-- { "a", p }): a label (a UTF-8 string) and a Pipeline
-- @param items an Items handle
-- @param budget a Budget handle
-- @return the JSON text { "variants": [{ "label", "report" }], "diffs":
-- [{ "index", "content", "statuses": [{ "label", "status" }] }] }: each
-- run's report (as a report's json), and every item included by one
-- variant and excluded by another, in push order, with its status
-- ("Included" or "Excluded") under each label. Items are matched by
-- position, never by content. NOTE: "index" in the JSON is the C library's
-- 0-based push index (item index + 1 here). LuaJIT has no JSON library;
-- decode it with the host's (vim.json.decode in Neovim, lua-cjson).
function M.policy_sensitivity(variants, items, budget)
  variants = list_of("variants", variants)
  local n = list_length("variants", variants)
  if n < 2 then
    invalid("variants holds %d variant%s; policy sensitivity compares at least two", n, n == 1 and "" or "s")
  end
  local ps = ffi.new("const cupel_pipeline *[?]", n)
  local ls = ffi.new("const char *[?]", n)
  local labels, handles, traces = {}, { items, budget }, {}
  for i = 1, n do
    local at = ("variants[%d]"):format(i)
    local v = list_of(at, variants[i])
    local label, pipeline = v.label, v.pipeline
    if label == nil and pipeline == nil then label, pipeline = v[1], v[2] end
    labels[i] = str(at .. ".label", label)
    ls[i - 1] = labels[i]
    ps[i - 1] = ptr_of(Pipeline, at .. ".pipeline", pipeline)
    handles[#handles + 1] = pipeline
    local t = rawget(pipeline, "trace")
    if t ~= nil then traces[#traces + 1] = t end
  end
  local ih = ptr_of(Items, "items", items)
  local bh = ptr_of(Budget, "budget", budget)
  local arrays = {
    pipelines = function(k) return ("variants[%d].pipeline"):format(k) end,
    labels = function(k) return ("variants[%d].label"):format(k) end,
  }
  -- One run into a buffer with room to spare. When the text is larger, the
  -- runs are made again (their trace callbacks muted: they have had the
  -- events) into a larger buffer; the reports' timings make the length vary
  -- from one run to the next.
  local cap = 65536
  local buf, len = ffi.new("char[?]", cap), ffi.new("size_t[1]")
  local st = tonumber(traced(traces, handles, c_sensitivity, ps, ls, n, ih, bh, buf, cap, len))
  while st == 3 do
    cap = tonumber(len[0]) + math.floor(tonumber(len[0]) / 4) + 1024
    buf = ffi.new("char[?]", cap)
    for _, t in ipairs(traces) do t.muted = true end
    st = tonumber(c_sensitivity(ps, ls, n, ih, bh, buf, cap, len))
    for _, t in ipairs(traces) do t.muted = nil end
  end
  if st ~= 0 then
    -- a variant's run failed: its index, 1-based
    local m = C.cupel_last_error()
    m = m ~= nil and ffi.string(m) or M.STATUS[st] or "failed"
    raise(st, lua_terms(m:gsub("^variant (%d+)", function(k) return "variants[" .. (tonumber(k) + 1) .. "]" end),
      arrays))
  end
  return ffi.string(buf, len[0])
end

-- ---- the one-call path ------------------------------------------------------------------------

-- The built-in tokenizers the one-call path has made, by name (kept: making
-- one reads its vocabulary).
local builtin_tokenizers = {}

local function builtin_tokenizer(name, what)
  local t = builtin_tokenizers[name]
  if t == nil then
    local out = ffi.new("cupel_tokenizer *[1]")
    local st = tonumber(C.cupel_tokenizer_new(name, out))
    if st ~= 0 then
      raise(st, (ffi.string(C.cupel_last_error()):gsub("^name ", what .. " ")))
    end
    t = setmetatable({ ptr = ffi.gc(out[0], C.cupel_tokenizer_free), free_fn = C.cupel_tokenizer_free }, Tokenizer)
    builtin_tokenizers[name] = t
  end
  return t
end

-- The policy argument of `cupel.select` as a pipeline (nil: the Chat preset).
local policy_pipeline
function policy_pipeline(policy)
  if type(policy) == "string" then
    if policy:match("^%s*{") then
      local out = ffi.new("cupel_pipeline *[1]")
      local st = tonumber(C.cupel_pipeline_from_json(policy, #policy, out))
      if st ~= 0 then
        raise(st, "policy: " .. json_terms(ffi.string(C.cupel_last_error())))
      end
      return setmetatable({ ptr = ffi.gc(out[0], C.cupel_pipeline_free), free_fn = C.cupel_pipeline_free }, Pipeline)
    end
    local name = str("policy", policy)
    local out = ffi.new("cupel_pipeline *[1]")
    local st = tonumber(C.cupel_pipeline_preset(name, out))
    if st ~= 0 then
      raise(st, (ffi.string(C.cupel_last_error()):gsub("^name ", "policy ")))
    end
    return setmetatable({ ptr = ffi.gc(out[0], C.cupel_pipeline_free), free_fn = C.cupel_pipeline_free }, Pipeline)
  elseif policy == nil then
    return policy_pipeline("Chat")
  elseif getmetatable(policy) == Pipeline then
    ptr_of(Pipeline, "policy", policy)
    return policy
  end
  invalid("policy must be a preset's name, a policy document (JSON text) or a cupel Pipeline, got %s",
    describe(policy))
end

-- The tokenizer a policy's pipeline has: its built-in encoding
-- (cupel_pipeline_tokenizer_name), else the one given to it in Lua (a
-- vocabulary file's, while it is not freed), else nil.
local function policy_tokenizer(pipeline)
  local name = C.cupel_pipeline_tokenizer_name(ptr_of(Pipeline, "policy", pipeline))
  if name ~= nil then
    return builtin_tokenizer(ffi.string(name), "policy's tokenizer")
  end
  local given = rawget(pipeline, "tokenizer")
  if given ~= nil and given.ptr == nil then
    invalid("policy: the pipeline's tokenizer (from a vocabulary file) was freed; pass the one to count with as tokenizer")
  end
  return given
end

-- The fields of a message, checked (named messages[i].field); returns its
-- group keys (a list of strings, "g" .. group or "c" .. call id).
local function checked_message(m, at)
  text_of(at("text"), m.text)
  opt(str, at("kind"), m.kind)
  opt(boolean, at("pinned"), m.pinned)
  opt(number, at("score"), m.score)
  opt(i64, at("timestamp"), m.timestamp)
  opt(i64, at("priority"), m.priority)
  opt(number, at("relevance"), m.relevance)
  opt(u64, at("key"), m.key) -- 0: none
  -- Group names and call ids: nil or "" is none.
  local keys = {}
  local function add(prefix, name, v)
    if v ~= nil and str(name, v) ~= "" then keys[#keys + 1] = prefix .. v end
  end
  add("g", at("group"), m.group)
  add("c", at("tool_call_id"), m.tool_call_id)
  if m.tool_call_ids ~= nil then
    local ids = list_of(at("tool_call_ids"), m.tool_call_ids)
    for k = 1, list_length(at("tool_call_ids"), ids) do
      add("c", ("%s[%d]"):format(at("tool_call_ids"), k), ids[k])
    end
  end
  return keys
end

-- Keep-together groups: messages sharing a group key are one group,
-- transitively; groups numbered 1, 2, ... by their first message; 0: none.
local function message_groups(keys_of, n)
  local parent, owner = {}, {}
  local function find(x)
    while parent[x] ~= x do
      parent[x] = parent[parent[x]]
      x = parent[x]
    end
    return x
  end
  for i = 1, n do
    parent[i] = i
    for _, k in ipairs(keys_of[i]) do
      local o = owner[k]
      if o == nil then
        owner[k] = i
      else
        local a, b = find(i), find(o)
        if a ~= b then
          if a < b then parent[b] = a else parent[a] = b end
        end
      end
    end
  end
  local groups, number, count, any = {}, {}, 0, false
  for i = 1, n do
    if #keys_of[i] > 0 then
      local r = find(i)
      if number[r] == nil then
        count = count + 1
        number[r] = count
      end
      groups[i] = number[r]
      any = true
    else
      groups[i] = 0
    end
  end
  return groups, any
end

--- The one-call path: the messages to send, in prompt order, chosen by a
-- policy within a budget.
-- @param messages a list of message tables: text (required, a non-empty
-- UTF-8 string), kind ("Message"), pinned (false), group (a string: messages
-- with the same group are kept or dropped together), tool_call_id (a tool
-- result's, or a single call's, id), tool_call_ids (a list: the ids of a
-- message that makes several calls), key (an integer, for sessions; 0:
-- none), timestamp (Unix ms), priority (an integer), relevance (the
-- reflexive scorer's hint), score (the given scorer's; 1.0). Other fields
-- are ignored. A group or id that is "" (or nil) is none. Messages sharing
-- a group, a tool_call_id or one of their tool_call_ids are one
-- keep-together group, transitively (group names and call ids are
-- separate); every message with one is in a group. When no message has a
-- timestamp, message i gets timestamp i.
-- @param o { max_tokens = n (target the same) or budget = a Budget; policy
-- = a preset's name ("Chat"), a policy document (a string whose first
-- non-blank character is "{") or a Pipeline (nil: "Chat"); tokenizer = a built-in
-- encoding's name or a Tokenizer (default: the policy's tokenizer, else
-- "o200k_base"); report = true for the report as well }
-- @return the kept messages (the tables given, unchanged) in the order the
-- placer gives, and the report (item i is messages[i]) when asked for.
-- Errors as the long-hand calls give them, naming messages[i].field.
function M.select(messages, o)
  messages = list_of("messages", messages)
  o = list_of("o", o)
  local n = list_length("messages", messages)
  local keys_of = {}
  local has_timestamp = false
  for i = 1, n do
    local m = messages[i]
    local name = ("messages[%d]"):format(i)
    if m == nil then null(name) end
    if type(m) ~= "table" or Handle[getmetatable(m)] then
      invalid("%s must be a table, got %s", name, describe(m))
    end
    keys_of[i] = checked_message(m, function(field) return name .. "." .. field end)
    has_timestamp = has_timestamp or m.timestamp ~= nil
  end
  local budget
  if o.budget ~= nil then
    if o.max_tokens ~= nil then
      invalid("max_tokens and budget are both set; give one")
    end
    ptr_of(Budget, "budget", o.budget)
    budget = o.budget
  else
    local max = i64("max_tokens", o.max_tokens)
    budget = new(Budget, "cupel_budget", function(out) return C.cupel_budget_new(max, max, out) end,
      C.cupel_budget_free)
  end
  local pipeline = policy_pipeline(o.policy)
  local tok = o.tokenizer
  if tok == nil then
    tok = policy_tokenizer(pipeline) or builtin_tokenizer("o200k_base", "tokenizer")
  elseif type(tok) == "string" then
    tok = builtin_tokenizer(str("tokenizer", tok), "tokenizer")
  else
    ptr_of(Tokenizer, "tokenizer", tok)
  end

  -- The long-hand calls: the items from the texts, then their attributes.
  local items = M.items()
  local h = items.ptr
  if n > 0 then
    local texts = ffi.new("const char *[?]", n)
    local lens = ffi.new("size_t[?]", n)
    local scores = ffi.new("double[?]", n)
    local kinds = ffi.new("const char *[?]", n)
    for i = 1, n do
      local m = messages[i]
      texts[i - 1], lens[i - 1] = m.text, #m.text
      scores[i - 1] = m.score == nil and 1.0 or m.score
      kinds[i - 1] = m.kind
    end
    local function field(name) return function(k) return ("messages[%d].%s"):format(k, name) end end
    check(C.cupel_items_push_texts(h, tok.ptr, n, texts, lens, scores, kinds),
      { texts = field("text"), scores = field("score"), kinds = field("kind") },
      function(k) return ("messages[%d]"):format(k) end)
    local groups, any_group = message_groups(keys_of, n)
    local column = function(ctype, f)
      local a = ffi.new(ctype .. "[?]", n)
      for i = 1, n do a[i - 1] = f(messages[i], i) end
      return a
    end
    local every = function(name)
      for i = 1, n do
        if messages[i][name] == nil then return false end
      end
      return true
    end
    if any_group then
      check(C.cupel_items_set_groups(h, 0, n, column("uint64_t", function(_, i) return groups[i] end)))
    end
    local pinned, keyed = false, false
    for i = 1, n do
      pinned = pinned or messages[i].pinned == true
      keyed = keyed or messages[i].key ~= nil
    end
    if pinned then
      check(C.cupel_items_set_pinned_many(h, 0, n, column("bool", function(m) return m.pinned == true end)))
    end
    if not has_timestamp then
      check(C.cupel_items_set_timestamps(h, 0, n, column("int64_t", function(_, i) return i end)))
    elseif every("timestamp") then
      check(C.cupel_items_set_timestamps(h, 0, n, column("int64_t", function(m) return m.timestamp end)))
    else
      for i = 1, n do
        local t = messages[i].timestamp
        if t ~= nil then check(C.cupel_items_set_timestamp(h, i - 1, t)) end
      end
    end
    if every("priority") then
      check(C.cupel_items_set_priorities(h, 0, n, column("int64_t", function(m) return m.priority end)))
    else
      for i = 1, n do
        local p = messages[i].priority
        if p ~= nil then check(C.cupel_items_set_priority(h, i - 1, p)) end
      end
    end
    if every("relevance") then
      check(C.cupel_items_set_relevance_hints(h, 0, n, column("double", function(m) return m.relevance end)),
        { hints = field("relevance") })
    else
      for i = 1, n do
        local r = messages[i].relevance
        if r ~= nil then
          check(C.cupel_items_set_relevance_hint(h, i - 1, r), nil, function() return ("messages[%d]"):format(i) end)
        end
      end
    end
    if keyed then
      check(C.cupel_items_set_keys(h, 0, n, column("uint64_t", function(m) return m.key or 0 end)))
    end
  end

  local placed, report = pipeline:run(items, budget, { report = o.report })
  local kept = {}
  for k, i in ipairs(placed) do kept[k] = messages[i] end
  return kept, report
end

-- ---- sessions ---------------------------------------------------------------------------

--- A session (a cupel_session handle): a conversation's context, turn after
-- turn, changing the previous turn's prompt only at its end whenever it can,
-- so that a model provider's prefix cache keeps serving it. Create one with
-- `cupel.session`. One coroutine or thread at a time per session.
-- @type Session

--- What a session run did (`Session:last_action`): the first run (or the
-- first after a reset, and before any run), an append after the previous
-- output, a compaction. The values are the strings themselves, as the
-- report's JSON writes them.
M.SESSION_FIRST, M.SESSION_APPEND, M.SESSION_COMPACT = "first", "append", "compact"

local ACTION_NAME = { [0] = "first", "append", "compact" }
local MARK_NAME = { [0] = "pinned", "compaction", "stable", "end" }

--- Creates a session over a copy of `pipeline` (the pipeline may be freed
-- right after; the session keeps working). The slack is the pipeline's (a
-- policy document's sessionSlack), else 0.2. The session keeps the
-- pipeline's trace callback as it is now (`Pipeline:set_trace`).
-- @param pipeline a Pipeline
-- @return a Session handle
function M.session(pipeline)
  local p = ptr_of(Pipeline, "pipeline", pipeline)
  local s = new(Session, "cupel_session", function(out) return C.cupel_session_new(p, out) end, C.cupel_session_free)
  local trace = rawget(pipeline, "trace")
  if trace ~= nil then
    -- the session's copy of the pipeline calls the same C callback
    trace.holders = trace.holders + 1
    s.trace = trace
    ffi.gc(s.ptr, function(q)
      C.cupel_session_free(q)
      release_trace(trace)
    end)
  end
  return s
end

--- The slack: the share of the effective target a compaction leaves free
-- for the turns after it.
-- @return a number in [0, 1) (0.2 unless set)
function Session:slack()
  local h = me(Session, self)
  local out = ffi.new("double[1]")
  check(C.cupel_session_slack(h, out))
  return out[0]
end

--- Sets the slack: a compaction's non-pinned, non-volatile items total at
-- most floor((1 - fraction) x target). Outside [0, 1) or NaN raises
-- INVALID_ARGUMENT naming `fraction`, and the slack stays as it was.
-- @param fraction a number in [0, 1)
-- @return self
function Session:set_slack(fraction)
  local h = mine(Session, self)
  check(C.cupel_session_set_slack(h, number("fraction", fraction)))
  return self
end

--- One turn: the prompt's items, as `Pipeline:run` gives them. The first run
-- (and the first after `Session:reset`) is the pipeline's selection, volatile
-- items last; later runs append the new items the pipeline selects after the
-- previous output while they fit, and otherwise compact once, with room to
-- spare (`Session:set_slack`), keeping the longest prefix of the previous
-- output that costs little score. An item the last run left out stays out
-- until the next compaction (reason "Deferred" in the report when the
-- pipeline alone would take it). Two items with the same non-zero key raise
-- INVALID_ARGUMENT naming both (1-based). A failed run changes nothing.
-- @param items an Items handle
-- @param budget a Budget handle
-- @param opts nil, or { report = true } for the report (as `Pipeline:run`'s;
-- its json has a top-level "session" object: action, stablePrefixItems,
-- stablePrefixTokens, breakpoints)
-- @return the placed indices (1-based) in prompt order, and the report when asked for
function Session:run(items, budget, opts)
  local h = mine(Session, self)
  local ih = ptr_of(Items, "items", items)
  local bh = ptr_of(Budget, "budget", budget)
  local traces = traces_of(self)
  return with_report(opts, ih, function(r)
    return index_list(tonumber(C.cupel_items_len(ih)), function(out, cap, len)
      return traced(traces, { self, items, budget }, c_session_run, h, ih, bh, out, cap, len, r)
    end)
  end)
end

--- The last run's stable prefix: how many leading items of its output are
-- identical (by identity and option) to the leading items of the run before
-- it, and their tokens; where a host puts its cache breakpoint. 0, 0 before
-- any run, after a first run and after the first run that follows a reset.
-- @return items, tokens
function Session:stable_prefix()
  local h = me(Session, self)
  local n, t = ffi.new("size_t[1]"), ffi.new("int64_t[1]")
  check(C.cupel_session_stable_prefix(h, n, t))
  return tonumber(n[0]), int_result(t[0])
end

--- What the last successful run did.
-- @return "first" (also before any run and after a reset), "append" or
-- "compact" (cupel.SESSION_FIRST, SESSION_APPEND, SESSION_COMPACT)
function Session:last_action()
  local h = me(Session, self)
  local out = ffi.new("cupel_session_action[1]")
  check(C.cupel_session_last_action(h, out))
  return ACTION_NAME[tonumber(out[0])] or tostring(tonumber(out[0]))
end

--- The last run's cache breakpoints (providers allow up to four per
-- request), ascending and distinct, at most 4; none before any run.
-- @return a list of { items, tokens, mark }: a breakpoint after the first
-- `items` items of the output (so after the item at position `items` of the
-- 1-based list `Session:run` returned), which add `tokens` tokens; `mark`
-- says what it marks: "pinned" (after the leading pinned items),
-- "compaction" (after the prefix the last compaction kept), "stable" (after
-- the stable prefix) or "end" (after the last non-volatile item)
function Session:breakpoints()
  local h = me(Session, self)
  local cap = 4
  local out, len = ffi.new("cupel_breakpoint[?]", cap), ffi.new("size_t[1]")
  local st = tonumber(C.cupel_session_breakpoints(h, out, cap, len))
  if st == 3 then -- BUFFER_TOO_SMALL: len is what it needs
    cap = tonumber(len[0])
    out = ffi.new("cupel_breakpoint[?]", cap)
    st = C.cupel_session_breakpoints(h, out, cap, len)
  end
  check(st)
  local t = {}
  for i = 1, tonumber(len[0]) do
    local b = out[i - 1]
    t[i] = { items = tonumber(b.items), tokens = int_result(b.tokens), mark = MARK_NAME[b.mark] or tostring(b.mark) }
  end
  return t
end

--- Forgets every run: the next run is a first run (the pipeline's output,
-- stable prefix 0). The slack stays.
-- @return self
function Session:reset()
  check(C.cupel_session_reset(mine(Session, self)))
  return self
end

-- ---- streams ----------------------------------------------------------------------------

--- A stream slicer (a cupel_stream handle). Create one with `cupel.stream`.
-- @type Stream

--- Creates a stream that takes items one at a time.
-- @param target_tokens the budget
-- @param batch_size items decided at a time (0 or nil: the default, 32)
-- @return a Stream handle
function M.stream(target_tokens, batch_size)
  local t = i64("target_tokens", target_tokens)
  local b = opt(u64, "batch_size", batch_size, 0)
  local s = new(Stream, "cupel_stream", function(out)
    return C.cupel_stream_new(t, b, out)
  end, C.cupel_stream_free)
  s.pushed = 0
  return s
end

--- Offers the next item.
-- @param tokens its tokens (>= 0)
-- @param score its score (finite)
-- @param group its keep-together group (0 or nil: none)
-- @return true once the budget is spent
function Stream:push(tokens, score, group)
  local h = me(Stream, self)
  local full = ffi.new("bool[1]")
  check(C.cupel_stream_push_grouped(h, i64("tokens", tokens), number("score", score),
    opt(u64, "group", group, 0), full))
  self.pushed = self.pushed + 1
  return full[0]
end

--- Ends the stream.
-- @return the taken indices (1-based), in the order taken
function Stream:finish()
  local h = me(Stream, self)
  return index_list(self.pushed, function(out, cap, len)
    return C.cupel_stream_finish(h, out, cap, len)
  end)
end

--- The library's version, "MAJOR.MINOR.PATCH".
function M.version()
  return ffi.string(C.cupel_version())
end

--- The number of live native handles (a leak check).
function M.live_handles()
  return tonumber(C.cupel_live_handles())
end

return M
