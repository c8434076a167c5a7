// The one-call path: a conversation in, the messages to send out, in prompt
// order. A pinned system prompt, a tool call with its result and two
// parallel calls with theirs (each call kept or dropped with its results),
// a budget of 60 tokens and the "Chat" preset.
#include "cupel.hpp"

#include <iostream>
#include <vector>

int main() {
  std::vector<cupel::Message> messages = {
      {"You are a coding assistant. Answer briefly.", "SystemPrompt", /*pinned=*/true},
      {"Why does the nightly build fail?"},
      {"grep the build log for errors", "Message"},
      {"error: undefined reference to `cupel_version' (and 212 more lines of linker output)", "ToolOutput"},
      {"read build.rs and Cargo.toml"},
      {"build.rs: links libcupel from target/release", "ToolOutput"},
      {"Cargo.toml: crate-type = [\"cdylib\", \"staticlib\"]", "ToolOutput"},
      {"And how do I fix it?"},
  };
  messages[2].tool_call_id = "call_1";  // a call and its result: one group
  messages[3].tool_call_id = "call_1";
  messages[4].tool_call_ids = {"call_2", "call_3"};  // two parallel calls and both results: one group
  messages[5].tool_call_id = "call_2";
  messages[6].tool_call_id = "call_3";

  // Counted with o200k_base, selected by the Chat preset, in prompt order.
  for (const cupel::Message &m : cupel::select(messages, 60)) std::cout << m.kind << ": " << m.text << "\n";

  // The same with another preset, by index into the messages.
  std::cout << "AgentLoop keeps";
  for (size_t i : cupel::select_indices(messages, 60, "AgentLoop")) std::cout << " " << i;
  std::cout << "\n";

  messages[1].text = "";
  try {
    cupel::select(messages, 60);
  } catch (const std::invalid_argument &e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}
