// The presets: the .NET Cupel presets by name, and libcupel's AgentLoop.
#include "cupel.hpp"

#include <iostream>

int main() {
  std::cout << "presets:";
  for (const std::string &name : cupel::preset_names()) std::cout << " " << name;
  std::cout << "\n";

  cupel::Items items;
  items.push_many({100, 150, 120, 80}, {1, 1, 1, 1}, {"Message", "Document", "Document", "Message"});
  items.set_timestamps(0, {1, 2, 3, 4});
  items.set_relevance_hints(0, {0.9, 0.1, 0.8, 0.3});
  cupel::Budget budget(400, 300);
  for (const char *name : {"Chat", "rag", "DocumentQa"}) {  // any case
    cupel::Pipeline preset = cupel::Pipeline::preset(name);
    std::cout << name << " placed:";
    for (size_t i : preset.run(items, budget)) std::cout << " " << i;
    std::cout << "\n";
  }
  // A preset is an ordinary pipeline: its document shows every setting.
  std::cout << cupel::Pipeline::preset("Chat").to_json() << "\n";
  try {
    cupel::Pipeline::preset("Chatty");
  } catch (const std::invalid_argument &e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}
