// Cross-binding check driver for the C++ binding: reads the cases
// tests/common/cross.rs writes and prints one result line per case.
#include "cupel.hpp"

#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

using Tokens = std::deque<std::string>;

static std::string pop(Tokens &t) {
  std::string s = t.front();
  t.pop_front();
  return s;
}

static Tokens split(const std::string &line) {
  Tokens t;
  std::istringstream in(line);
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

static cupel::Scorer scorer(Tokens &t) {
  std::string name = pop(t);
  if (name == "recency") return cupel::Scorer::recency();
  if (name == "priority") return cupel::Scorer::priority();
  if (name == "frequency") return cupel::Scorer::frequency();
  if (name == "reflexive") return cupel::Scorer::reflexive();
  if (name == "given") return cupel::Scorer::given();
  if (name == "kind" || name == "tag") {
    int n = std::stoi(pop(t));
    std::vector<std::pair<std::string, double>> w;
    for (int i = 0; i < n; i++) {
      std::string k = pop(t);
      w.emplace_back(k, std::stod(pop(t)));
    }
    return name == "kind" ? cupel::Scorer::kind(w) : cupel::Scorer::tag(w);
  }
  if (name == "composite") {
    int n = std::stoi(pop(t));
    std::vector<std::unique_ptr<cupel::Scorer>> kids;
    std::vector<std::pair<const cupel::Scorer *, double>> parts;
    for (int i = 0; i < n; i++) {
      double w = std::stod(pop(t));
      kids.push_back(std::make_unique<cupel::Scorer>(scorer(t)));
      parts.emplace_back(kids.back().get(), w);
    }
    return cupel::Scorer::composite(parts);
  }
  if (name == "scaled") {
    cupel::Scorer inner = scorer(t);
    return cupel::Scorer::scaled(inner);
  }
  if (name == "trust") return cupel::Scorer::metadata_trust(std::stod(pop(t)));
  if (name == "key") {
    std::string k = pop(t), v = pop(t);
    return cupel::Scorer::metadata_key(k, v, std::stod(pop(t)));
  }
  // decay curve duration null ref W (age score)*W
  int curve = std::stoi(pop(t));
  double duration = std::stod(pop(t)), null_score = std::stod(pop(t));
  int64_t ref = std::stoll(pop(t));
  int n = std::stoi(pop(t));
  std::vector<std::pair<double, double>> w;
  for (int i = 0; i < n; i++) {
    double a = std::stod(pop(t));
    w.emplace_back(a, std::stod(pop(t)));
  }
  return cupel::Scorer::decay(static_cast<cupel::DecayCurve>(curve), duration, w, ref, null_score);
}

static cupel::Slicer slicer(Tokens &t) {
  std::string name = pop(t);
  if (name == "greedy") return cupel::Slicer::greedy();
  if (name == "knapsack") return cupel::Slicer::knapsack(std::stoll(pop(t)));
  if (name == "quota") {
    int n = std::stoi(pop(t));
    std::vector<cupel::Quota> q;
    for (int i = 0; i < n; i++) {
      std::string k = pop(t);
      double r = std::stod(pop(t));
      q.push_back({k, r, std::stod(pop(t))});
    }
    return cupel::Slicer::quota(cupel::Slicer::greedy(), q);
  }
  int64_t bucket = name == "countknapsack" ? std::stoll(pop(t)) : 0;
  int n = std::stoi(pop(t));
  std::vector<cupel::CountQuota> e;
  for (int i = 0; i < n; i++) {
    std::string k = pop(t);
    uint32_t r = std::stoul(pop(t));
    e.push_back({k, r, static_cast<uint32_t>(std::stoul(pop(t)))});
  }
  if (name == "countquota") return cupel::Slicer::count_quota(cupel::Slicer::greedy(), e);
  return cupel::Slicer::count_constrained_knapsack(bucket, e);
}

static std::string unhex(const std::string &h) {
  std::string s;
  for (size_t i = 0; i + 1 < h.size(); i += 2) s.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return s;
}

int main(int argc, char **argv) {
  std::ifstream in(argv[argc - 1]);
  for (std::string line; std::getline(in, line);) {
    if (line != "case") continue;
    std::getline(in, line);
    Tokens b = split(line);
    pop(b);
    std::getline(in, line);
    Tokens st = split(line);
    pop(st);
    cupel::Scorer sc = scorer(st);
    std::getline(in, line);
    Tokens sl = split(line);
    pop(sl);
    cupel::Slicer slc = slicer(sl);
    std::getline(in, line);
    size_t n = std::stoul(line.substr(6));
    cupel::Items items;
    for (size_t i = 0; i < n; i++) {
      std::getline(in, line);
      Tokens t = split(line);
      int64_t tokens = std::stoll(pop(t));
      std::string kind = pop(t);
      items.push(tokens, 0.0, kind);
      if (pop(t) == "1") items.set_pinned(i, true);
      items.set_group(i, std::stoull(pop(t)));
      std::string ts = pop(t), prio = pop(t), hint = pop(t);
      if (ts != "-") items.set_timestamp(i, std::stoll(ts));
      if (prio != "-") items.set_priority(i, std::stoll(prio));
      if (hint != "-") items.set_relevance_hint(i, std::stod(hint));
      int ntags = std::stoi(pop(t));
      for (int k = 0; k < ntags; k++) items.add_tag(i, pop(t));
      int nmeta = std::stoi(pop(t));
      for (int k = 0; k < nmeta; k++) {
        std::string key = pop(t);
        items.set_metadata(i, key, pop(t));
      }
      items.set_content(i, unhex(pop(t)));
    }
    std::getline(in, line);  // end
    cupel::Budget budget(std::stoll(b[0]), std::stoll(b[1]));
    budget.set_output_reserve(std::stoll(b[2]));
    cupel::Placer placer = b[5] == "u" ? cupel::Placer::u_shaped() : cupel::Placer::chronological();
    cupel::Pipeline p(&sc, slc, &placer);
    p.set_deduplication(b[3] == "1");
    p.set_overflow(static_cast<cupel::Overflow>(std::stoi(b[4])));
    cupel::Report r;
    try {
      auto placed = p.run(items, budget, &r);
      std::cout << 'P';
      for (size_t i : placed) std::cout << ' ' << i;
      std::cout << "|I";
      for (const auto &d : r.included()) std::cout << ' ' << d.index << ':' << static_cast<int>(d.reason);
      std::cout << "|E";
      for (const auto &d : r.excluded()) std::cout << ' ' << d.index << ':' << static_cast<int>(d.reason);
      std::cout << '\n';
    } catch (const cupel::Exception &e) {
      std::cout << "error " << static_cast<int>(e.status()) << '\n';
    }
  }
}
