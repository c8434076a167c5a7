// Counts tokens with the built-in o200k_base vocabulary, cuts a text to a
// token budget keeping both ends, and slices items pushed as plain text.
#include "cupel.hpp"

#include <iostream>

int main() {
  cupel::Tokenizer tok("o200k_base");
  std::cout << "tokens: " << tok.count("Hello, world! This is libcupel counting tokens.") << "\n";

  // Keep 8 tokens: 4 from the start, the rest from the end. Offsets are bytes.
  std::string line = "Résumé: the middle of this line goes, both ends stay — 終わり";
  cupel::Truncation cut = tok.truncate(line, 8, cupel::Keep::BothEnds);
  std::cout << "kept " << cut.tokens << " of " << tok.count(line) << " tokens: bytes [0, " << cut.head_end
            << ") and [" << cut.tail_start << ", " << line.size() << "): \"" << cut.text << "\"\n";

  // Items from text: the tokenizer counts, the text is the content.
  cupel::Items items;
  items.push_text(tok, "What changed since yesterday?", 0.9);
  items.push_texts(tok, {"build log: 3 warnings, 0 errors", "Design notes: the cache keeps every vocabulary."},
                   {0.4, 0.7}, {"ToolOutput", "Document"});
  for (size_t i = 0; i < items.size(); i++) {
    cupel::Item it = items.at(i);
    std::cout << "item " << i << ": " << it.tokens << " tokens, " << it.kind << "\n";
  }
  cupel::Budget budget(20, 20);
  auto greedy = cupel::Slicer::greedy();
  for (size_t i : cupel::slice(greedy, items, budget)) std::cout << "chose: " << *items.at(i).content << "\n";
  return 0;
}
