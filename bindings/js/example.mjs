import { load } from "libcupel";

const cupel = await load(); // Node: the package's cupel.wasm; a browser: load(await fetch(wasmUrl))
const grep = Array.from({ length: 30 }, (_, i) => `src/auth/session.rs:${40 + i}: refresh_token.expires_at`).join("\n");
const messages = [
  { role: "system", text: "You are a coding assistant. Answer briefly.", kind: "SystemPrompt", pinned: true },
  { role: "user", text: "Why does the login test fail?" },
  // One assistant turn that makes two tool calls, and their results: kept or dropped together.
  { role: "assistant", text: "grep -rn refresh_token src/; cat src/auth/refresh.rs", kind: "ToolCall", toolCallIds: ["c1", "c2"] },
  { role: "tool", text: grep, kind: "ToolOutput", toolCallId: "c1" },
  { role: "tool", text: "fn refresh(t: &Token) -> Result<Token> { todo!() }", kind: "ToolOutput", toolCallId: "c2" },
  { role: "assistant", text: "refresh() is unimplemented, so an expired session cannot renew." },
  { role: "user", text: "Implement it, then run the auth tests." },
];

for (const maxTokens of [1000, 150]) {
  // Your own message objects come back, in prompt order.
  const kept = cupel.select(messages, { maxTokens, policy: "AgentLoop" });
  console.log(`${maxTokens} tokens: ${kept.length} of ${messages.length} messages`);
  for (const m of kept) console.log(`  ${m.role.padEnd(9)} ${m.text.split("\n")[0].slice(0, 52)}`);
}
