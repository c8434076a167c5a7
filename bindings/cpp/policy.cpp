// Policies as data: a pipeline and a budget read from JSON (the .NET Cupel
// policy format, which a settings file can hold), written back, and the
// errors of a document that breaks a rule.
#include "cupel.hpp"

#include <iostream>

int main() {
  // Recency twice as strong as kind (documents over messages), counted with
  // cl100k_base when select() uses it.
  const char *policy = R"({
    "name": "support-chat",
    "scorers": [{"type": "recency", "weight": 2},
                {"type": "kind", "weight": 1, "kindWeights": {"Document": 1, "Message": 0.2}}],
    "slicerType": "greedy",
    "placerType": "chronological",
    "tokenizer": "cl100k_base"
  })";
  cupel::Pipeline pipeline = cupel::Pipeline::from_json(policy);
  cupel::Budget budget = cupel::Budget::from_json(R"({"maxTokens": 400, "targetTokens": 300})");

  cupel::Items items;
  items.push_many({100, 150, 120, 80}, {1, 1, 1, 1}, {"Message", "Document", "Document", "Message"});
  items.set_timestamps(0, {1, 2, 3, 4});
  std::cout << "placed:";
  for (size_t i : pipeline.run(items, budget)) std::cout << " " << i;
  std::cout << "\n";

  // Written back with every setting (keys in alphabetical order); reading it
  // again gives a pipeline that selects exactly as this one.
  std::string text = pipeline.to_json();
  std::cout << "round trip: " << (cupel::Pipeline::from_json(text).to_json() == text ? "same" : "differs") << "\n";
  std::cout << budget.to_json() << "\n";

  // A document that breaks a rule: the JSON path and the rule.
  for (const char *bad : {R"({"scorers": [{"type": "recency", "weight": -1}]})",
                          R"({"scorers": [{"type": "recency", "weight": 1}], "knapsackBucketSize": 50})",
                          R"({"scorers": [{"type": "recency", "weight": 1},})"}) {
    try {
      cupel::Pipeline::from_json(bad);
    } catch (const std::invalid_argument &e) {
      std::cout << "error: " << e.what() << "\n";
    }
  }
  return 0;
}
