// Items that shrink: a huge tool log offers a small placeholder variant, a
// long document may be cut to fit; the report says what each chosen item
// sends.
#include "cupel.hpp"

#include <iostream>

int main() {
  cupel::Tokenizer tok("o200k_base");
  std::string doc;
  for (int i = 0; i < 200; i++) doc += "Line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog.\n";

  cupel::Items items;
  items.push_text(tok, "What failed in the last build?", 0.9);
  items.push(9000, 0.8, "ToolOutput");  // far too big for the budget...
  items.set_content(1, "(the build log)");
  items.add_variant(1, {12, 0.1, "[output cleared: 9,000 tokens]"});  // ...so it offers a stand-in
  items.push_text(tok, doc, 0.6, "Document");
  items.set_truncatable(2, cupel::Keep::Head, 50);  // may be cut to its head, if 50 tokens or more remain

  auto greedy = cupel::Slicer::greedy();
  cupel::Pipeline pipeline(nullptr, greedy, nullptr);
  pipeline.set_tokenizer(tok);  // what the pipeline cuts with
  cupel::Budget budget(1000, 1000);
  cupel::Report report;
  pipeline.run(items, budget, &report);

  // A text on one line, "\n" shown as such; a long one by its ends (ASCII here).
  auto shown = [](std::string t) {
    if (t.size() > 60) t = t.substr(0, 24) + " ... " + t.substr(t.size() - 24);
    for (size_t at = t.find('\n'); at != std::string::npos; at = t.find('\n', at + 2)) t.replace(at, 1, "\\n");
    return "\"" + t + "\"";
  };
  std::vector<cupel::Decision> chosen = report.included();
  for (size_t k = 0; k < chosen.size(); k++) {
    const cupel::Decision &d = chosen[k];
    std::string text = report.text(items, k).value_or("");  // what to send: the variant, the cut or all
    std::cout << "item " << d.index << ": " << cupel::to_string(d.reason) << ", variant " << d.variant << ", "
              << d.added_tokens << " of " << d.item_tokens << " tokens";
    if (d.reason == cupel::Reason::Truncated)  // byte offsets into the item's content
      std::cout << ", bytes [0, " << d.head_end << ") of " << items.at(d.index).content->size();
    std::cout << "\n  sends " << shown(text) << "\n";
  }
  std::cout << "tokens used: " << report.selected_tokens() << "\n";
  return 0;
}
