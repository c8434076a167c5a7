// Slices four candidates with GreedySlice and a QuotaSlice through cupel.hpp,
// reads an item and the report's reasons back, and shows two errors.
#include "cupel.hpp"

#include <iostream>

int main() {
  cupel::Items items;
  items.push_many({400, 100, 100, 200}, {0.9, 0.7, 0.5, 0.1}, {"Document", "Message", "ToolOutput", "Document"});
  items.set_content(1, "What changed since yesterday?");
  cupel::Budget budget(300, 300);

  auto greedy = cupel::Slicer::greedy();
  for (size_t i : cupel::slice(greedy, items, budget)) std::cout << "greedy chose item " << i << "\n";

  // Documents may take at most 30 % of a 1000-token budget.
  auto quota = cupel::Slicer::quota(greedy, {{"Document", 0.0, 30.0}});
  cupel::Budget thousand(1000, 1000);
  cupel::Report report;
  for (size_t i : cupel::slice(quota, items, thousand, 0, &report)) std::cout << "quota chose item " << i << "\n";
  std::cout << "tokens used: " << report.selected_tokens() << "\n";
  for (const cupel::Decision &d : report.excluded())
    std::cout << "left out item " << d.index << ": " << cupel::to_string(d.reason) << "\n";

  cupel::Item item = items.at(1);
  std::cout << "item 1: " << item.tokens << " tokens, " << item.kind << ", \"" << item.content.value_or("")
            << "\", timestamp " << (item.timestamp ? std::to_string(*item.timestamp) : "none") << "\n";

  try {
    cupel::Budget bad(10, 20);  // throws: target above max
  } catch (const std::invalid_argument &e) {
    std::cout << "error: " << e.what() << "\n";
  }
  try {
    items.at(4);  // throws: there are 4 items, 0 to 3
  } catch (const std::out_of_range &e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}
