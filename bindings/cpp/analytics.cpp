// Report analytics: how much of the budget a run used, how many kinds it
// kept, and how many of the kept items have a timestamp.
#include "cupel.hpp"

#include <iostream>

int main() {
  cupel::Items items;
  items.push_many({120, 300, 60, 40}, {0.9, 0.4, 0.7, 0.8}, {"SystemPrompt", "Document", "ToolOutput", "message"});
  items.set_timestamp(2, 1700000000000);
  items.set_timestamp(3, 1700000060000);
  cupel::Budget budget(400, 300);
  cupel::Pipeline pipeline = cupel::Pipeline::preset("ToolUse");
  cupel::Report report;
  pipeline.run(items, budget, &report);

  std::cout << "tokens used: " << report.selected_tokens() << " of max " << report.effective_max_tokens() << "\n";
  std::cout << "budget utilization: " << report.budget_utilization() << "\n";  // used / max_tokens
  std::cout << "kind diversity: " << report.kind_diversity(items) << "\n";   // distinct kinds kept
  std::cout << "timestamp coverage: " << report.timestamp_coverage(items) << "\n";  // share kept with a time
  cupel::Report::Analytics all = report.analytics(items);  // the three at once
  std::cout << "analytics: " << all.budget_utilization << ", " << all.kind_diversity << ", "
            << all.timestamp_coverage << "\n";
  return 0;
}
