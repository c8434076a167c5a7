// The C demo's pipeline (examples/demo.c) in C++, on the same bundled data:
// 0.6 x the retriever's score + 0.25 x recency + 0.15 x kind weight,
// deduplication, GreedySlice, chronological placement, max 8192 tokens with
// 1024 kept for the answer and a 4096 target; tool calls and their outputs
// in keep-together groups. Prints the same "placed:" line as the C demo.
#include "cupel.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char **argv) {
  std::ifstream in(argc > 1 ? argv[1] : "examples/data/rag_candidates.csv");
  std::string line;
  std::getline(in, line);  // kind,tokens,score,timestamp,pinned,group,title
  std::vector<int64_t> tokens, stamps;
  std::vector<double> scores;
  std::vector<std::string> kinds, titles;
  std::vector<size_t> timed;
  std::vector<bool> pinned;
  std::vector<uint64_t> groups;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string f[7];
    for (int i = 0; i < 6; i++) std::getline(row, f[i], ',');
    std::getline(row, f[6]);
    kinds.push_back(f[0]);
    tokens.push_back(std::stoll(f[1]));
    scores.push_back(std::stod(f[2]));
    if (!f[3].empty()) {
      timed.push_back(tokens.size() - 1);
      stamps.push_back(std::stoll(f[3]));
    }
    pinned.push_back(f[4] == "1");
    groups.push_back(std::stoull(f[5]));
    titles.push_back(f[6]);
  }
  try {
    cupel::Items items;
    items.push_many(tokens, scores, kinds);
    items.set_contents(0, titles);
    for (size_t k = 0; k < timed.size(); k++) items.set_timestamp(timed[k], stamps[k]);
    items.set_pinned_many(0, pinned);
    items.set_groups(0, groups);
    auto given = cupel::Scorer::given(), recency = cupel::Scorer::recency(), kind = cupel::Scorer::kind();
    auto blend = cupel::Scorer::composite({{&given, 0.6}, {&recency, 0.25}, {&kind, 0.15}});
    auto greedy = cupel::Slicer::greedy();
    auto chrono = cupel::Placer::chronological();
    cupel::Pipeline pipeline(&blend, greedy, &chrono);
    cupel::Budget budget(8192, 4096);
    budget.set_output_reserve(1024);
    cupel::Report report;
    auto placed = pipeline.run(items, budget, &report);
    std::cout << "placed:";
    for (size_t i : placed) std::cout << ' ' << i;
    std::cout << '\n' << placed.size() << " of " << items.size() << " items; " << report.excluded().size()
              << " left out\n";
  } catch (const cupel::Exception &e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
