// Slices four candidates with GreedySlice and a QuotaSlice, through cupel.hpp.
#include "cupel.hpp"

#include <iostream>

int main() {
  try {
    cupel::Items items;
    items.push_many({400, 100, 100, 200}, {0.9, 0.7, 0.5, 0.1}, {"Document", "Message", "ToolOutput", "Document"});
    cupel::Budget budget(300, 300);

    auto greedy = cupel::Slicer::greedy();
    for (size_t i : cupel::slice(greedy, items, budget)) std::cout << "greedy chose item " << i << "\n";

    // Documents may take at most 30 % of a 1000-token budget.
    auto quota = cupel::Slicer::quota(greedy, {{"Document", 0.0, 30.0}});
    cupel::Budget thousand(1000, 1000);
    cupel::Report report;
    for (size_t i : cupel::slice(quota, items, thousand, 0, &report)) std::cout << "quota chose item " << i << "\n";
    std::cout << "tokens used: " << report.selected_tokens() << "\n";

    cupel::Budget bad(10, 20);  // throws: target above max
  } catch (const cupel::Error &e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}
