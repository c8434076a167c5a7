-- luajit example_session.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

local pipeline = cupel.pipeline({ slicer = cupel.greedy(), placer = cupel.chronological() })
local session = cupel.session(pipeline)
local budget = cupel.budget({ max_tokens = 1000 })

-- The chat so far; key is the host's id of a message, the same every turn.
local history = {
  { key = 1, tokens = 200, score = 1.0, content = "system: you are a coding assistant", pinned = true },
  { key = 2, tokens = 40, score = 0.5, content = "user: why does login fail?" },
}
local replies = {
  { key = 3, tokens = 120, score = 0.5, content = "assistant: the refresh token expires early" },
  { key = 4, tokens = 30, score = 0.5, content = "user: where is it set?" },
  { key = 5, tokens = 450, score = 2.0, content = "tool: grep -rn refresh_ttl src/" },
  { key = 6, tokens = 30, score = 0.5, content = "user: and the default?" },
}

for turn = 1, 3 do
  -- Each turn's candidates: the whole history, then this turn's notes (volatile).
  local items = cupel.items()
  for _, m in ipairs(history) do
    items:add({ key = m.key, tokens = m.tokens, score = m.score, content = m.content, pinned = m.pinned,
      timestamp = m.key })
  end
  items:add({ tokens = 150, score = 0.9, kind = "Document", content = "notes for turn " .. turn, volatile = true })

  local prompt = session:run(items, budget)
  local names = {}
  for k, i in ipairs(prompt) do
    local key = items:get(i).key
    names[k] = key ~= 0 and tostring(key) or "notes"
  end
  local cached_items, cached_tokens = session:stable_prefix()
  print(("turn %d: %s, prompt %s; stable prefix %d items, %d tokens"):format(turn, session:last_action(),
    table.concat(names, " "), cached_items, cached_tokens))
  for _, b in ipairs(session:breakpoints()) do
    print(("  cache breakpoint after %d items (%d tokens): %s"):format(b.items, b.tokens, b.mark))
  end
  if turn < 3 then -- the turn's answer and the next question join the history
    history[#history + 1] = replies[2 * turn - 1]
    history[#history + 1] = replies[2 * turn]
  end
end
