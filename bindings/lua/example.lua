-- luajit example.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

-- The conversation as the host keeps it: tables with a text (other fields
-- are the host's own). A call and its results are kept or dropped together.
local messages = {
  { role = "system", text = "You are a coding assistant. Answer briefly.", kind = "SystemPrompt", pinned = true },
  { role = "user", text = "The login test fails since this morning." },
  { role = "assistant", text = "Let me read the log and the config.", tool_call_ids = { "call_1", "call_2" } },
  { role = "tool", text = ("FAIL auth::login: expected 200, got 401\n"):rep(8), kind = "ToolOutput",
    tool_call_id = "call_1" },
  { role = "tool", text = "refresh_ttl = 0", kind = "ToolOutput", tool_call_id = "call_2" },
  { role = "assistant", text = "The refresh token expires at once: refresh_ttl is 0." },
  { role = "user", text = "What should it be?" },
}

for _, max_tokens in ipairs({ 200, 120 }) do
  -- The messages to send, in order: the host's own tables.
  local kept = cupel.select(messages, { max_tokens = max_tokens, policy = "Chat" })
  print(("max_tokens = %d: %d of %d messages"):format(max_tokens, #kept, #messages))
  for _, m in ipairs(kept) do
    print(("  %-9s %s"):format(m.role, m.text:match("[^\n]*")))
  end
end
