-- The one-call path's cross-binding driver (tests/select_agreement.rs):
-- reads the cases' JSON file, calls `cupel.select` on each and prints
-- `case K: i j ...` (the kept messages' indices, 0-based as in every
-- driver, in prompt order) or `case K: error` (the message on stderr).
--
--   CUPEL_LIB=target/release/libcupel.so luajit bindings/lua/select_cross.lua cases.json
--
-- A case: `max_tokens`, `messages` (`key` as decimal text), and optionally
-- `policy` and `tokenizer`. A JSON null is nil (a list with one keeps its
-- length in `n`).
local here = arg[0]:match("^(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. package.path
local cupel = require("cupel")
local ffi = require("ffi")

-- A JSON reader for the cases' file: objects, arrays (with `n`), strings
-- (escapes, \u with surrogate pairs, as UTF-8), numbers, true, false, null
-- (nil).
local function decode(text)
  local pos = 1
  local value
  local function fail(what)
    error(("JSON: %s at byte %d"):format(what, pos))
  end
  local function blank()
    pos = text:find("[^ \t\r\n]", pos) or #text + 1
  end
  local function utf8(c)
    if c < 0x80 then return string.char(c) end
    if c < 0x800 then return string.char(0xC0 + math.floor(c / 0x40), 0x80 + c % 0x40) end
    if c < 0x10000 then
      return string.char(0xE0 + math.floor(c / 0x1000), 0x80 + math.floor(c / 0x40) % 0x40, 0x80 + c % 0x40)
    end
    return string.char(0xF0 + math.floor(c / 0x40000), 0x80 + math.floor(c / 0x1000) % 0x40,
      0x80 + math.floor(c / 0x40) % 0x40, 0x80 + c % 0x40)
  end
  local ESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
  local function str()
    pos = pos + 1 -- the opening quote
    local out = {}
    while true do
      local stop = text:find('["\\]', pos)
      if not stop then fail("an unterminated string") end
      out[#out + 1] = text:sub(pos, stop - 1)
      pos = stop + 1
      if text:sub(stop, stop) == '"' then break end
      local e = text:sub(pos, pos)
      if e == "u" then
        local c = tonumber(text:sub(pos + 1, pos + 4), 16)
        pos = pos + 5
        if c >= 0xD800 and c < 0xDC00 and text:sub(pos, pos + 1) == "\\u" then
          local low = tonumber(text:sub(pos + 2, pos + 5), 16)
          c = 0x10000 + (c - 0xD800) * 0x400 + (low - 0xDC00)
          pos = pos + 6
        end
        out[#out + 1] = utf8(c)
      elseif ESC[e] then
        out[#out + 1] = ESC[e]
        pos = pos + 1
      else
        fail("a bad escape")
      end
    end
    return table.concat(out)
  end
  function value()
    blank()
    local c = text:sub(pos, pos)
    if c == "{" then
      pos = pos + 1
      local t = {}
      blank()
      if text:sub(pos, pos) == "}" then
        pos = pos + 1
        return t
      end
      while true do
        blank()
        local k = str()
        blank()
        if text:sub(pos, pos) ~= ":" then fail("no colon") end
        pos = pos + 1
        t[k] = value()
        blank()
        c = text:sub(pos, pos)
        pos = pos + 1
        if c == "}" then return t end
        if c ~= "," then fail("no comma") end
      end
    elseif c == "[" then
      pos = pos + 1
      local t, n = {}, 0
      blank()
      if text:sub(pos, pos) == "]" then
        pos = pos + 1
        t.n = 0
        return t
      end
      while true do
        n = n + 1
        t[n] = value()
        blank()
        c = text:sub(pos, pos)
        pos = pos + 1
        if c == "]" then
          t.n = n
          return t
        end
        if c ~= "," then fail("no comma") end
      end
    elseif c == '"' then
      return str()
    elseif text:sub(pos, pos + 3) == "true" then
      pos = pos + 4
      return true
    elseif text:sub(pos, pos + 4) == "false" then
      pos = pos + 5
      return false
    elseif text:sub(pos, pos + 3) == "null" then
      pos = pos + 4
      return nil
    end
    local number = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if not number then fail("an unexpected character") end
    pos = pos + #number
    return tonumber(number)
  end
  return value()
end

-- A decimal text as a uint64_t.
local function u64(s)
  local v = 0ULL
  for d in s:gmatch("%d") do v = v * 10 + (d:byte() - 48) end
  return v
end

local f = assert(io.open(arg[1], "rb"))
local cases = decode(f:read("*a")).cases
f:close()

for k = 1, cases.n do
  local c = cases[k]
  local messages = {}
  for i = 1, c.messages.n do
    local m = c.messages[i]
    if m.key ~= nil then m.key = u64(m.key) end
    messages[i] = m
  end
  local ok, kept = pcall(cupel.select, messages, { max_tokens = c.max_tokens, policy = c.policy, tokenizer = c.tokenizer })
  if ok then
    local index = {}
    for i, m in ipairs(messages) do index[m] = i - 1 end
    local out = {}
    for j, m in ipairs(kept) do out[j] = " " .. index[m] end
    print(("case %d:%s"):format(k - 1, table.concat(out)))
  elseif getmetatable(kept) == cupel.Error then
    print(("case %d: error"):format(k - 1))
    io.stderr:write(("case %d: %s\n"):format(k - 1, tostring(kept)))
  else
    error(kept, 0)
  end
end
