// Policy sensitivity: the same items and budget under two policies, and the
// items they disagree about (matched by index: items 0 and 3 have the same
// text and are two items).
#include "cupel.hpp"

#include <iostream>

int main() {
  cupel::Items items;
  items.push_many({100, 200, 50, 100}, {0.9, 0.5, 0.1, 0.9}, {"Message", "Document", "ToolOutput", "Message"});
  items.set_contents(0, {"see the log", "design notes", "exit 1", "see the log"});
  items.set_timestamps(0, {1000, 2000, 3000, 4000});
  cupel::Budget budget(300, 250);

  cupel::Pipeline chat = cupel::Pipeline::preset("Chat");
  cupel::Pipeline by_kind = cupel::Pipeline::from_json(R"({"scorers": [{"type": "kind", "weight": 1}]})");
  std::string json = cupel::policy_sensitivity({{"chat", chat}, {"by-kind", by_kind}}, items, budget);

  // JSON text: {"diffs": [...], "variants": [{"label", "report"}, ...]}.
  // C++'s standard library reads no JSON: hand it to yours (nlohmann::json,
  // simdjson, ...). The diffs come first (keys are in alphabetical order):
  std::size_t start = json.find('[');
  std::cout << json.substr(start, json.find(",\"variants\":") - start) << "\n";
  return 0;
}
