// Sessions: three turns of a chat through one cupel::Session. Each turn's
// prompt starts with the previous one wherever it can, so a provider's
// prompt cache serves that prefix; this turn's retrieved notes, volatile,
// always go last.
#include "cupel.hpp"

#include <iostream>
#include <string>
#include <vector>

struct Message {
  uint64_t key;  // the host's id of the message: the same from turn to turn
  int64_t tokens;
  double score;
  std::string text;
};

// The candidates of one turn: the whole history (the system prompt pinned),
// then the notes retrieved for this turn.
cupel::Items candidates(const std::vector<Message> &history, const std::string &notes) {
  cupel::Items items;
  for (const Message &m : history) {
    items.push(m.tokens, m.score);
    size_t i = items.size() - 1;
    items.set_content(i, m.text);
    items.set_timestamp(i, static_cast<int64_t>(m.key));
    items.set_key(i, m.key);
  }
  items.set_pinned(0, true);
  items.push(150, 0.9, "Document");
  items.set_content(items.size() - 1, notes);
  items.set_volatile(items.size() - 1, true);
  return items;
}

int main() {
  auto greedy = cupel::Slicer::greedy();
  auto chronological = cupel::Placer::chronological();
  cupel::Pipeline pipeline(nullptr, greedy, &chronological);
  cupel::Session session(pipeline);
  cupel::Budget budget(1000, 1000);

  std::vector<Message> history = {{1, 200, 1.0, "system: you are a coding assistant"},
                                   {2, 40, 0.5, "user: why does login fail?"}};
  const std::vector<Message> replies = {{3, 120, 0.5, "assistant: the refresh token expires early"},
                                        {4, 30, 0.5, "user: where is it set?"},
                                        {5, 450, 2.0, "tool: grep -rn refresh_ttl src/"},
                                        {6, 30, 0.5, "user: and the default?"}};
  for (int turn = 1; turn <= 3; turn++) {
    cupel::Items items = candidates(history, "notes for turn " + std::to_string(turn));
    std::vector<size_t> prompt = session.run(items, budget);
    cupel::StablePrefix cached = session.stable_prefix();
    std::cout << "turn " << turn << ": " << cupel::to_string(session.last_action()) << ", prompt";
    for (size_t i : prompt) std::cout << " " << (items.at(i).key ? std::to_string(items.at(i).key) : "notes");
    std::cout << "; stable prefix " << cached.items << " items, " << cached.tokens << " tokens\n";
    for (const cupel::Breakpoint &b : session.breakpoints())
      std::cout << "  cache breakpoint after " << b.items << " items (" << b.tokens << " tokens): "
                << cupel::to_string(b.mark) << "\n";
    if (turn < 3) {  // the turn's answer and the next question join the history
      history.push_back(replies[2 * (turn - 1)]);
      history.push_back(replies[2 * (turn - 1) + 1]);
    }
  }
  return 0;
}
