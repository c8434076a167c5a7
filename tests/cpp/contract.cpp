// The binding contract (tests/contract/contract.txt) run through the C++
// binding's public API (bindings/cpp/cupel.hpp): every row whose `where`
// names cpp. Usage: contract_cpp [contract.txt] (default: $CUPEL_CONTRACT,
// else tests/contract/contract.txt next to this source's directory).
// Prints "contract cpp: N passed, M failed" and a line per failure; exits
// non-zero on a failure, an unknown op or an expect it cannot check.
#include "cupel.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

// The error class of each expect category, as this runner checks it; main()
// asserts it equals the table's `@map cpp` line, so the two cannot drift.
const std::map<std::string, std::string> kErrorClass = {
    {"null", "std::invalid_argument"}, {"type", "-"},          {"integer", "-"},
    {"value", "std::invalid_argument"}, {"range", "std::out_of_range"}, {"closed", "std::logic_error"},
};
const char *const kCategories[] = {"null", "type", "integer", "value", "range", "closed"};

// Where the C++ API names an argument otherwise than the table: (op, table
// argument) -> the name the C++ message uses. push_many takes vectors named
// tokens, scores and kinds.
const std::map<std::pair<std::string, std::string>, std::string> kAlias = {
    {{"items.push_many", "score"}, "scores"},
    {{"items.push_many", "kind"}, "kinds"},
};

struct Row {
  std::string id, op, arg, value, expect, where;
};

// A row that cannot be run as written (a value this language cannot express
// for that argument, an argument the op does not have): the row fails.
struct Inexpressible {
  std::string why;
};

bool names_cpp(const std::string &where) {
  if (where == "all" || where == "handles") return true;
  if (where == "dyn") return false;
  std::stringstream in(where);
  for (std::string w; std::getline(in, w, ',');)
    if (w == "cpp") return true;
  return false;
}

// ---- the fixture ----------------------------------------------------------

// The table's SENTENCE: 47 bytes, 12 tokens with o200k_base.
const char *const kSentence = "Hello, world! This is libcupel counting tokens.";

struct Fixture {
  cupel::Items items;
  cupel::Budget budget{300, 250};
  cupel::Slicer greedy = cupel::Slicer::greedy();
  cupel::Scorer recency = cupel::Scorer::recency();
  cupel::Scorer priority = cupel::Scorer::priority();
  cupel::Scorer kind = cupel::Scorer::kind();
  cupel::Placer chronological = cupel::Placer::chronological();
  cupel::Pipeline pipeline{&recency, greedy, &chronological};
  // KINDPIPE: scorer.kind's defaults (one entry, kind "Message" weight 1),
  // greedy, chronological.
  cupel::Scorer message_kind = cupel::Scorer::kind({{"Message", 1}});
  cupel::Pipeline kindpipe{&message_kind, greedy, &chronological};
  cupel::Stream stream{100};
  cupel::Tokenizer tokenizer{"o200k_base"};
  // Where a `closed` row moves a handle to: the handle lives on, its old
  // owner is moved-from.
  std::optional<cupel::Items> items_moved;

  Fixture() {
    items.push_many({100, 200, 50}, {0.9, 0.5, 0.1}, {"Message", "Document", "ToolOutput"});
    items.set_contents(0, {"alpha", "beta", "gamma"});
    items.set_timestamps(0, {1000, 2000, 3000});
  }
  // MESSAGES: the items as messages of the one-call path.
  std::vector<cupel::Message> messages() const {
    std::vector<cupel::Message> m(3);
    const char *texts[] = {"alpha", "beta", "gamma"}, *kinds[] = {"Message", "Document", "ToolOutput"};
    for (int i = 0; i < 3; i++) {
      m[i].text = texts[i];
      m[i].kind = kinds[i];
      m[i].timestamp = 1000 * (i + 1);
    }
    return m;
  }
  // The list the fixture's items live in now.
  const cupel::Items &live_items() const { return items.get() ? items : *items_moved; }
};

// ---- values -----------------------------------------------------------------

class Args {
 public:
  // A row with argument `-` (value `-`) changes nothing: the op's defaults.
  Args(const Row &r) : r_(r), used_(r.arg == "-" && r.value == "-") {}
  bool used() const { return used_; }

  int64_t i64(const char *arg, int64_t dflt) {
    if (!mine(arg)) return dflt;
    if (r_.value == "end") return 3;
    return parse_i64();
  }
  uint64_t u64(const char *arg, uint64_t dflt) {
    if (!mine(arg)) return dflt;
    if (r_.value[0] == '-') throw Inexpressible{"a negative " + r_.arg + " does not fit uint64_t"};
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(r_.value.c_str(), &end, 10);
    if (r_.value.empty() || *end || errno == ERANGE)
      throw Inexpressible{r_.value + " is not a uint64_t for " + r_.arg};
    return static_cast<uint64_t>(v);
  }
  std::size_t index(const char *arg, std::size_t dflt) {
    if (!mine(arg)) return dflt;
    if (r_.value == "end") return 3;
    int64_t v = parse_i64();
    if (v < 0) throw Inexpressible{"a negative index does not fit std::size_t"};
    return static_cast<std::size_t>(v);
  }
  uint32_t u32(const char *arg, uint32_t dflt) {
    if (!mine(arg)) return dflt;
    int64_t v = parse_i64();
    if (v < 0 || v > static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
      throw Inexpressible{r_.value + " does not fit uint32_t"};
    return static_cast<uint32_t>(v);
  }
  double f64(const char *arg, double dflt) {
    if (!mine(arg)) return dflt;
    const std::string &v = r_.value;
    if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    char *end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end) throw Inexpressible{v + " is not a number for " + r_.arg};
    return d;
  }
  bool boolean(const char *arg, bool dflt) {
    if (!mine(arg)) return dflt;
    if (r_.value == "true") return true;
    if (r_.value == "false") return false;
    throw Inexpressible{r_.value + " is not a bool for " + r_.arg};
  }
  // A string: "..." with \xHH escapes, or bad-utf8 (the bytes FF FE).
  std::string str(const char *arg, const std::string &dflt) {
    if (!mine(arg)) return dflt;
    const std::string &v = r_.value;
    if (v == "bad-utf8") return "\xff\xfe";
    if (v.size() < 2 || v.front() != '"' || v.back() != '"')
      throw Inexpressible{v + " is not a string value (a C++ std::string cannot be null)"};
    std::string out;
    for (std::size_t i = 1; i + 1 < v.size(); i++) {
      if (v[i] == '\\' && i + 3 < v.size() && v[i + 1] == 'x') {
        out.push_back(static_cast<char>(std::stoi(v.substr(i + 2, 2), nullptr, 16)));
        i += 3;
      } else {
        out.push_back(v[i]);
      }
    }
    return out;
  }
  // A string that may be null (a `const char *` argument): null gives nullopt.
  std::optional<std::string> nullable_str(const char *arg, const std::string &dflt) {
    if (r_.arg == arg && r_.value == "null") {
      used_ = true;
      return std::nullopt;
    }
    return str(arg, dflt);
  }
  // A JSON text: POLICY/BUDGET by default, the table's named documents,
  // a "..." string; null gives nullopt (a `const char *` argument).
  std::optional<std::string> json(const char *arg, const std::string &dflt) {
    if (r_.arg == arg) {
      static const std::map<std::string, std::string> named = {
          {"policy-null", "null"},
          {"policy-malformed", "{\"scorers\":"},
          {"policy-bad-weight", "{\"scorers\":[{\"type\":\"recency\",\"weight\":-1}]}"},
          {"policy-bad-type", "{\"scorers\":[{\"type\":\"nope\",\"weight\":1}]}"},
          {"budget-bad", "{\"maxTokens\":100,\"targetTokens\":250}"},
          {"budget-missing", "{\"targetTokens\":1}"},
      };
      auto found = named.find(r_.value);
      if (found != named.end()) {
        used_ = true;
        return found->second;
      }
    }
    return nullable_str(arg, dflt);
  }
  // Whether `arg` is given as null (a callback, an array).
  bool null(const char *arg) {
    if (r_.arg != arg || r_.value != "null") return false;
    used_ = true;
    return true;
  }
  // A trace level: stages, exclusions, full, or a number cast to cupel::TraceLevel.
  cupel::TraceLevel level(const char *arg, cupel::TraceLevel dflt) {
    if (!mine(arg)) return dflt;
    if (r_.value == "stages") return cupel::TraceLevel::Stages;
    if (r_.value == "exclusions") return cupel::TraceLevel::Exclusions;
    if (r_.value == "full") return cupel::TraceLevel::Full;
    return static_cast<cupel::TraceLevel>(parse_i64());
  }
  // A truncation's keep: head, tail, both_ends, or a number cast to cupel::Keep.
  cupel::Keep keep(const char *arg, cupel::Keep dflt) {
    if (!mine(arg)) return dflt;
    if (r_.value == "head") return cupel::Keep::Head;
    if (r_.value == "tail") return cupel::Keep::Tail;
    if (r_.value == "both_ends") return cupel::Keep::BothEnds;
    return static_cast<cupel::Keep>(parse_i64());
  }
  // A handle argument: null gives nullptr, closed moves the handle away first
  // (into `moved` when the fixture keeps it) and gives the moved-from one.
  template <class T>
  const T *handle(const char *arg, T &h, std::optional<T> *moved = nullptr) {
    if (!mine(arg)) return &h;
    if (r_.value == "null") return nullptr;
    if (r_.value == "closed") {
      close(h, moved);
      return &h;
    }
    if (r_.value == "wrong-handle") throw Inexpressible{"a handle of another type does not compile in C++"};
    throw Inexpressible{r_.value + " is not a handle value"};
  }
  // The receiver of a method: only `closed` applies (a method cannot be
  // called on a null object).
  template <class T>
  T &receiver(const char *arg, T &h, std::optional<T> *moved = nullptr) {
    if (!mine(arg)) return h;
    if (r_.value == "closed") {
      close(h, moved);
      return h;
    }
    throw Inexpressible{"the receiver " + r_.arg + " cannot be " + r_.value};
  }

 private:
  bool mine(const char *arg) {
    if (r_.arg != arg) return false;
    used_ = true;
    return true;
  }
  int64_t parse_i64() {
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(r_.value.c_str(), &end, 10);
    if (r_.value.empty() || *end || errno == ERANGE)
      throw Inexpressible{r_.value + " is not an int64_t for " + r_.arg};
    return v;
  }
  template <class T>
  static void close(T &h, std::optional<T> *moved) {
    if (moved)
      moved->emplace(std::move(h));
    else
      T gone(std::move(h));
  }
  const Row &r_;
  bool used_;
};

// ---- ops ----------------------------------------------------------------------

struct Outcome {
  std::string result;      // an ok call's result as text: "[2]", "150", "none", "Scored"
  std::string check_what;  // an ok call whose op check failed: what read back wrong
};

std::string list(const std::vector<std::size_t> &v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Numbers as the table writes a result list: "[12,1]", no spaces.
std::string tight_list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// A double as the table writes it: 1 for 1.0, 0.5 for 0.5.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// How many times `needle` occurs in `text`.
std::size_t occurrences(const std::string &text, const std::string &needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) n++;
  return n;
}

// The POLICY and BUDGET documents.
const char *const kPolicy = R"({"scorers":[{"type":"recency","weight":1}],"slicerType":"greedy","placerType":"chronological"})";
const char *const kBudget = R"({"maxTokens":300,"targetTokens":250})";

// items.get: reads the item back and compares it with the fixture's.
void get_item(const cupel::Items &items, std::size_t index, Outcome &o) {
  static const int64_t tokens[] = {100, 200, 50};
  static const double scores[] = {0.9, 0.5, 0.1};
  static const char *kinds[] = {"Message", "Document", "ToolOutput"};
  static const char *contents[] = {"alpha", "beta", "gamma"};
  cupel::Item it = items.at(index);
  if (index >= 3) return;
  if (it.tokens != tokens[index]) o.check_what = "tokens";
  if (it.score != scores[index]) o.check_what = "score";
  if (it.kind != kinds[index]) o.check_what = "kind";
  if (it.content != std::optional<std::string>(contents[index])) o.check_what = "content";
  if (it.timestamp != std::optional<int64_t>(1000 * static_cast<int64_t>(index + 1))) o.check_what = "timestamp";
}

// Runs the row's op on a fresh fixture; returns false for an unknown op.
bool call(const Row &r, Fixture &f, Args &a, Outcome &o) {
  const std::string &op = r.op;
  if (op == "items.push") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    int64_t tokens = a.i64("tokens", 10);
    double score = a.f64("score", 0.5);
    std::string kind = a.str("kind", "Message");
    items.push(tokens, score, kind);
  } else if (op == "items.push_many") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    std::vector<int64_t> tokens(12, 7);
    std::vector<double> scores(12, 0.5);
    std::vector<std::string> kinds(12, "Message");
    tokens[11] = a.i64("tokens", 7);
    scores[11] = a.f64("score", 0.5);
    kinds[11] = a.str("kind", "Message");
    items.push_many(tokens, scores, kinds);
  } else if (op == "items.set_content") {
    std::size_t index = a.index("index", 0);
    f.items.set_content(index, a.str("content", "hello"));
  } else if (op == "items.set_timestamp") {
    std::size_t index = a.index("index", 0);
    f.items.set_timestamp(index, a.i64("unix_millis", 5));
  } else if (op == "items.set_priority") {
    std::size_t index = a.index("index", 0);
    f.items.set_priority(index, a.i64("priority", 1));
  } else if (op == "items.set_pinned") {
    std::size_t index = a.index("index", 0);
    f.items.set_pinned(index, a.boolean("pinned", true));
  } else if (op == "items.set_group") {
    std::size_t index = a.index("index", 0);
    f.items.set_group(index, a.u64("group", 7));
  } else if (op == "items.add_tag") {
    std::size_t index = a.index("index", 0);
    f.items.add_tag(index, a.str("tag", "t"));
  } else if (op == "items.set_metadata") {
    std::size_t index = a.index("index", 0);
    std::string key = a.str("key", "k");
    f.items.set_metadata(index, key, a.str("value", "v"));
  } else if (op == "items.get") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    get_item(items, a.index("index", 1), o);
  } else if (op == "budget.new") {
    int64_t max = a.i64("max_tokens", 1000);
    cupel::Budget b(max, a.i64("target_tokens", 800));
  } else if (op == "budget.set_output_reserve") {
    auto &budget = a.receiver("budget", f.budget);
    budget.set_output_reserve(a.i64("output_reserve", 10));
  } else if (op == "budget.set_safety_margin") {
    auto &budget = a.receiver("budget", f.budget);
    budget.set_safety_margin(a.f64("percent", 5));
  } else if (op == "budget.reserve") {
    auto &budget = a.receiver("budget", f.budget);
    std::string kind = a.str("kind", "Message");
    budget.reserve(kind, a.i64("tokens", 10));
  } else if (op == "slicer.knapsack") {
    cupel::Slicer::knapsack(a.i64("bucket_size", 100));
  } else if (op == "slicer.quota") {
    const cupel::Slicer *inner = a.handle("inner", f.greedy);
    cupel::Quota q{a.str("kind", "Message"), a.f64("require_percent", 10), a.f64("cap_percent", 50)};
    cupel::Slicer::quota(inner, {q});
  } else if (op == "slicer.count_quota") {
    const cupel::Slicer *inner = a.handle("inner", f.greedy);
    cupel::CountQuota q{a.str("kind", "Message"), a.u32("require_count", 1), a.u32("cap_count", 2)};
    cupel::Slicer::count_quota(inner, {q});
  } else if (op == "scorer.kind") {
    std::string kind = a.str("kind", "Message");
    cupel::Scorer::kind({{kind, a.f64("weight", 1)}});
  } else if (op == "scorer.composite") {
    std::vector<cupel::Ref<cupel::Scorer>> children{f.recency, f.priority, a.handle("children", f.kind)};
    std::vector<double> weights{1, 1, a.f64("weights", 1)};
    cupel::Scorer::composite(children, weights);
  } else if (op == "scorer.scaled") {
    cupel::Scorer::scaled(a.handle("inner", f.recency));
  } else if (op == "scorer.metadata_key") {
    std::string key = a.str("key", "k"), value = a.str("value", "v");
    cupel::Scorer::metadata_key(key, value, a.f64("boost", 2));
  } else if (op == "placer.place") {
    const cupel::Placer &placer = a.receiver("placer", f.chronological);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    std::vector<std::size_t> indices{0, 1, a.index("indices", 2)};
    std::vector<double> scores{0.5, 0.5, a.f64("scores", 0.5)};
    o.result = list(placer.place(items, indices, scores));
  } else if (op == "pipeline.new") {
    const cupel::Scorer *scorer = a.handle("scorer", f.recency);
    const cupel::Slicer *slicer = a.handle("slicer", f.greedy);
    const cupel::Placer *placer = a.handle("placer", f.chronological);
    cupel::Pipeline p(scorer, slicer, placer);
  } else if (op == "pipeline.run") {
    const cupel::Pipeline &pipeline = a.receiver("pipeline", f.pipeline);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    o.result = list(pipeline.run(items, budget));
  } else if (op == "slice") {
    const cupel::Slicer *slicer = a.handle("slicer", f.greedy);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    o.result = list(cupel::slice(slicer, items, budget, a.i64("pinned_tokens", 0)));
  } else if (op == "marginal_items") {
    const cupel::Slicer *slicer = a.handle("slicer", f.greedy);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    int64_t pinned = a.i64("pinned_tokens", 0);
    o.result = list(cupel::marginal_items(slicer, items, budget, pinned, a.i64("slack_tokens", 150)));
  } else if (op == "find_min_budget") {
    const cupel::Slicer *slicer = a.handle("slicer", f.greedy);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    int64_t pinned = a.i64("pinned_tokens", 0);
    std::size_t target = a.index("target_index", 2);
    auto b = cupel::find_min_budget(slicer, items, pinned, target, a.i64("search_ceiling", 1000));
    o.result = b ? std::to_string(*b) : "none";
  } else if (op == "stream.push") {
    auto &stream = a.receiver("stream", f.stream);
    int64_t tokens = a.i64("tokens", 10);
    stream.push(tokens, a.f64("score", 0.5));
  } else if (op == "tokenizer.new") {
    std::optional<std::string> name = a.nullable_str("name", "o200k_base");
    // std::string cannot be null: the `const char *` constructor takes null.
    cupel::Tokenizer t = name ? cupel::Tokenizer(*name) : cupel::Tokenizer(static_cast<const char *>(nullptr));
  } else if (op == "tokenizer.count") {
    const cupel::Tokenizer &tokenizer = a.receiver("tokenizer", f.tokenizer);
    o.result = std::to_string(tokenizer.count(a.str("text", kSentence)));
  } else if (op == "tokenizer.count_many") {
    const cupel::Tokenizer &tokenizer = a.receiver("tokenizer", f.tokenizer);
    std::vector<std::string> texts{kSentence, a.str("texts", "hello world")};
    o.result = tight_list(tokenizer.count_many(texts));
  } else if (op == "tokenizer.truncate") {
    const cupel::Tokenizer &tokenizer = a.receiver("tokenizer", f.tokenizer);
    std::string text = a.str("text", kSentence);
    int64_t max_tokens = a.i64("max_tokens", 4);
    cupel::Truncation t = tokenizer.truncate(text, max_tokens, a.keep("keep", cupel::Keep::Head));
    if (t.text != text.substr(0, t.head_end) + text.substr(t.tail_start)) o.check_what = "the kept text";
    o.result = tight_list({static_cast<int64_t>(t.head_end), static_cast<int64_t>(t.tail_start), t.tokens});
  } else if (op == "items.push_text") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    const cupel::Tokenizer *tokenizer = a.handle("tokenizer", f.tokenizer);
    std::string text = a.str("text", "hello world");
    double score = a.f64("score", 0.5);
    items.push_text(tokenizer, text, score, a.str("kind", "Message"));
    cupel::Item it = items.size() == 4 ? items.at(3) : cupel::Item{};
    if (items.size() != 4 || it.tokens != 2 || it.content != std::optional<std::string>(text))
      o.check_what = "the pushed item (4 items, item 3 with 2 tokens and the text as content)";
  } else if (op == "items.add_variant") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    std::size_t index = a.index("index", 0);
    int64_t tokens = a.i64("tokens", 5);
    double value = a.f64("value", 0.5);
    std::string content = a.str("content", "[cleared]");
    items.add_variant(index, tokens, value, content);
    if (items.at(index).variants != std::vector<cupel::Variant>{{tokens, value, content}})
      o.check_what = "the variant (one, of those tokens, value and content)";
  } else if (op == "items.set_truncatable") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    std::size_t index = a.index("index", 1);
    cupel::Keep keep = a.keep("keep", cupel::Keep::Head);
    int64_t min_tokens = a.i64("min_tokens", 1);
    items.set_truncatable(index, keep, min_tokens);
    if (items.at(index).truncatable != std::optional<cupel::Truncatable>(cupel::Truncatable{keep, min_tokens}))
      o.check_what = "the truncation (truncatable, with that keep and min_tokens)";
  } else if (op == "pipeline.set_tokenizer") {
    auto &pipeline = a.receiver("pipeline", f.pipeline);
    pipeline.set_tokenizer(a.handle("tokenizer", f.tokenizer));
  } else if (op == "pipeline.run_cut") {
    auto &pipeline = a.receiver("pipeline", f.pipeline);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    const cupel::Tokenizer *tokenizer = a.handle("tokenizer", f.tokenizer);
    f.items.set_truncatable(1, cupel::Keep::Head, 1);
    pipeline.set_tokenizer(tokenizer);
    cupel::Report report;
    pipeline.run(items, budget, &report);
    o.result = std::to_string(report.included().size());
  } else if (op == "items.set_key") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    std::size_t index = a.index("index", 0);
    uint64_t key = a.u64("key", 7);
    items.set_key(index, key);
    if (items.key(index) != key || items.at(index).key != key) o.check_what = "the key";
  } else if (op == "items.set_volatile") {
    auto &items = a.receiver("items", f.items, &f.items_moved);
    std::size_t index = a.index("index", 0);
    bool is_volatile = a.boolean("is_volatile", true);
    items.set_volatile(index, is_volatile);
    if (items.is_volatile(index) != is_volatile || items.at(index).is_volatile != is_volatile)
      o.check_what = "the volatile flag";
  } else if (op == "session.new") {
    cupel::Session session(a.handle("pipeline", f.pipeline));
    if (session.last_action() != cupel::SessionAction::First || session.slack() != 0.2)
      o.check_what = "the new session (action first, slack 0.2)";
  } else if (op == "session.set_slack") {
    cupel::Session own(f.pipeline);
    auto &session = a.receiver("session", own);
    double fraction = a.f64("fraction", 0.3);
    session.set_slack(fraction);
    if (session.slack() != fraction) o.check_what = "the slack";
  } else if (op == "session.run") {
    // The session is made from the fixture's pipeline, which a `pipeline`
    // row then closes: the session keeps its own copy.
    cupel::Session own(f.pipeline);
    a.receiver("pipeline", f.pipeline);
    auto &session = a.receiver("session", own);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    o.result = std::to_string(session.run(items, budget).size());
  } else if (op == "session.run_keyed") {
    // Items 0, 1, 2 get keys 1, 2, 3; `key` replaces the last one's.
    auto &items = a.receiver("items", f.items, &f.items_moved);
    items.set_keys(0, {1, 2, a.u64("key", 3)});
    cupel::Session own(f.pipeline);
    auto &session = a.receiver("session", own);
    o.result = std::to_string(session.run(items, a.handle("budget", f.budget)).size());
  } else if (op == "session.run_twice") {
    // Two runs on the same list: the second's stable prefix, [items, tokens].
    cupel::Session own(f.pipeline);
    auto &session = a.receiver("session", own);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    std::vector<std::size_t> first = session.run(items, budget);
    std::vector<std::size_t> second = session.run(items, budget);
    cupel::StablePrefix sp = session.stable_prefix();
    if (second != first || session.last_action() != cupel::SessionAction::Append)
      o.check_what = "the second run (the first's output, appended)";
    o.result = tight_list({static_cast<int64_t>(sp.items), sp.tokens});
  } else if (op == "pipeline.from_json") {
    std::optional<std::string> json = a.json("json", kPolicy);
    cupel::Pipeline p = json ? cupel::Pipeline::from_json(*json)
                             : cupel::Pipeline::from_json(static_cast<const char *>(nullptr));
    o.result = std::to_string(p.run(f.items, f.budget).size());
  } else if (op == "pipeline.to_json") {
    // The free form, so that the pipeline can be null.
    std::string text = cupel::to_json(a.handle("pipeline", f.pipeline));
    if (cupel::Pipeline::from_json(text).to_json() != text) o.check_what = "the round trip";
  } else if (op == "budget.from_json") {
    std::optional<std::string> json = a.json("json", kBudget);
    cupel::Budget b = json ? cupel::Budget::from_json(*json) : cupel::Budget::from_json(static_cast<const char *>(nullptr));
    o.result = std::to_string(f.pipeline.run(f.items, b).size());
  } else if (op == "budget.to_json") {
    std::string text = cupel::to_json(a.handle("budget", f.budget));
    if (cupel::Budget::from_json(text).to_json() != text) o.check_what = "the round trip";
  } else if (op == "pipeline.preset") {
    std::optional<std::string> name = a.nullable_str("name", "Chat");
    cupel::Pipeline p = name ? cupel::Pipeline::preset(*name) : cupel::Pipeline::preset(static_cast<const char *>(nullptr));
    o.result = std::to_string(p.run(f.items, f.budget).size());
  } else if (op == "policy_sensitivity") {
    std::vector<std::pair<std::string, cupel::Ref<cupel::Pipeline>>> variants{{"a", f.pipeline}, {"b", f.kindpipe}};
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    int64_t count = a.i64("count", 2);
    if (count < 0 || count > 2) throw Inexpressible{"count " + std::to_string(count) + " is not 0, 1 or 2 variants"};
    variants.resize(static_cast<std::size_t>(count), variants[0]);
    std::string json = cupel::policy_sensitivity(variants, items, budget);
    o.result = std::to_string(occurrences(json, "\"statuses\":"));
  } else if (op == "report.analytics") {
    const cupel::Pipeline &pipeline = a.receiver("pipeline", f.pipeline);
    const cupel::Budget *budget = a.handle("budget", f.budget);
    cupel::Report report;
    pipeline.run(f.items, budget, &report);
    const cupel::Items *items = a.handle("items", f.items, &f.items_moved);
    std::size_t kinds = report.kind_diversity(items);
    double coverage = report.timestamp_coverage(items);
    if (std::fabs(report.budget_utilization() - 250.0 / 300.0) > 1e-9) o.check_what = "the budget utilization";
    o.result = "[" + std::to_string(kinds) + "," + number(coverage) + "]";
  } else if (op == "pipeline.set_trace") {
    // The free form, so that the pipeline can be null.
    auto *pipeline = const_cast<cupel::Pipeline *>(a.handle("pipeline", f.pipeline));
    cupel::TraceLevel level = a.level("level", cupel::TraceLevel::Stages);
    std::size_t events = 0;
    cupel::TraceCallback counter;
    if (!a.null("callback")) counter = [&events](const cupel::TraceEvent &) { events++; };
    cupel::set_trace(pipeline, level, counter);
    f.pipeline.run(f.items, f.budget);
    o.result = std::to_string(events);
  } else if (op == "select") {
    std::vector<cupel::Message> messages = f.messages();
    const cupel::Message *data = a.null("messages") ? nullptr : messages.data();
    int64_t max_tokens = a.i64("max_tokens", 2);
    std::optional<std::string> policy = a.nullable_str("policy", "Chat");
    std::vector<cupel::Message> kept =
        policy ? cupel::select(data, messages.size(), max_tokens, *policy)
               : cupel::select(data, messages.size(), max_tokens, static_cast<const char *>(nullptr));
    o.result = std::to_string(kept.size());
  } else if (op == "reason.name") {
    o.result = cupel::to_string(static_cast<cupel::Reason>(a.i64("code", 0)));
  } else {
    return false;
  }
  return true;
}

// ---- checks -------------------------------------------------------------------

// The most derived standard exception class of `e`, spelled as in @map.
std::string std_class(const std::exception &e) {
  if (dynamic_cast<const std::out_of_range *>(&e)) return "std::out_of_range";
  if (dynamic_cast<const std::invalid_argument *>(&e)) return "std::invalid_argument";
  if (dynamic_cast<const std::domain_error *>(&e)) return "std::domain_error";
  if (dynamic_cast<const std::length_error *>(&e)) return "std::length_error";
  if (dynamic_cast<const std::logic_error *>(&e)) return "std::logic_error";
  if (dynamic_cast<const std::runtime_error *>(&e)) return "std::runtime_error";
  return std::string("std::exception (") + typeid(e).name() + ")";
}

// Whether `msg` holds `word` with no letter, digit or '_' on either side.
bool has_word(const std::string &msg, const std::string &word) {
  auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t p = msg.find(word); p != std::string::npos; p = msg.find(word, p + 1)) {
    bool before = p > 0 && part(msg[p - 1]);
    bool after = p + word.size() < msg.size() && part(msg[p + word.size()]);
    if (!before && !after) return true;
  }
  return false;
}

// The element position an error message must give (0-based, as C++ counts), or "".
std::string position_of(const Row &r) {
  if (r.value == "end") return "3";
  if (r.op == "items.push_many") return "11";
  if (r.op == "tokenizer.count_many" && r.arg == "texts") return "1";
  if ((r.op == "scorer.composite" && (r.arg == "children" || r.arg == "weights")) ||
      (r.op == "placer.place" && (r.arg == "indices" || r.arg == "scores")))
    return "2";
  if (r.value.size() > 1 && r.value[0] == '-' && std::isdigit(static_cast<unsigned char>(r.value[1])) &&
      (r.arg.find("index") != std::string::npos || r.arg == "indices"))
    return r.value;
  return "";
}

// The status a cupel exception of an expect category carries.
cupel_status status_of(const std::string &expect) {
  if (expect == "null" || expect == "closed") return CUPEL_ERROR_NULL_POINTER;
  return CUPEL_ERROR_INVALID_ARGUMENT;
}

// Runs one row; returns "" when it passed, else why it failed.
std::string run_row(const Row &r) {
  std::optional<Fixture> fx;
  try {
    fx.emplace();
  } catch (const std::exception &e) {
    return std::string("fixture: ") + e.what();
  }
  Fixture &f = *fx;
  Args a(r);
  Outcome o;
  std::string thrown_class, message;
  const cupel::Exception *cupel_error = nullptr;
  cupel_status status = CUPEL_OK;
  bool threw = false;
  try {
    if (!call(r, f, a, o)) return "unknown op " + r.op;
  } catch (const Inexpressible &x) {
    return "cannot run in C++: " + x.why;
  } catch (const std::exception &e) {
    threw = true;
    thrown_class = std_class(e);
    message = e.what();
    cupel_error = dynamic_cast<const cupel::Exception *>(&e);
    if (cupel_error) {
      status = cupel_error->status();
      message = cupel_error->message();
    }
  } catch (...) {
    return "threw something that is no std::exception";
  }
  if (!a.used()) return "op " + r.op + " has no argument " + r.arg;

  if (r.expect.compare(0, 2, "ok") == 0) {
    if (threw) return "expected ok, got " + thrown_class + ": " + message;
    if (!o.check_what.empty()) return "ok, but " + o.check_what + " read back wrong";
    if (r.expect.size() > 2) {
      if (r.expect[2] != '=') return "expect " + r.expect + " is not ok or ok=V";
      if (o.result != r.expect.substr(3)) return "expected " + r.expect.substr(3) + ", got " + o.result;
    }
    return "";
  }
  auto cls = kErrorClass.find(r.expect);
  if (cls == kErrorClass.end() || cls->second == "-")
    return "expect " + r.expect + " has no C++ error class in @map: cannot check it";
  if (!threw) return "expected " + cls->second + ", nothing thrown (result " + o.result + ")";
  if (thrown_class != cls->second) return "expected " + cls->second + ", got " + thrown_class + ": " + message;
  if (!cupel_error) return "threw " + thrown_class + " that is no cupel::Exception: " + message;
  if (status != status_of(r.expect))
    return std::string("expected status ") + cupel_status_str(status_of(r.expect)) + ", got " +
           cupel_status_str(status) + ": " + message;
  auto alias = kAlias.find({r.op, r.arg});
  const std::string &name = alias == kAlias.end() ? r.arg : alias->second;
  if (message.find(name) == std::string::npos) return "message \"" + message + "\" does not name " + name;
  std::string pos = position_of(r);
  if (!pos.empty() && !has_word(message, pos)) return "message \"" + message + "\" does not give position " + pos;
  for (const char *s : {"18446744073709551615", "9223372036854775808", "9223372036854775807", "4294967295"})
    if (message.find(s) != std::string::npos && r.value.find(s) == std::string::npos)
      return "message \"" + message + "\" shows the sentinel " + s;
  if (r.expect == "closed") {
    std::string lower = message;
    for (char &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool says = false;
    for (const char *w : {"closed", "disposed", "freed", "moved"}) says = says || has_word(lower, w);
    if (!says) return "message \"" + message + "\" does not say the handle was closed (closed/disposed/freed/moved)";
  }
  std::size_t n = f.live_items().size();
  if (n != 3) return "the items changed: " + std::to_string(n) + " items";
  return "";
}

std::string default_path() {
  std::string here = __FILE__;  // tests/cpp/contract.cpp
  std::size_t slash = here.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : here.substr(0, slash);
  return dir + "/../contract/contract.txt";
}

}  // namespace

int main(int argc, char **argv) {
  const char *env = std::getenv("CUPEL_CONTRACT");
  std::string path = argc > 1 ? argv[1] : env && *env ? env : default_path();
  std::ifstream in(path);
  if (!in) {
    std::cerr << "contract_cpp: cannot read " << path << "\n";
    return 2;
  }
  int passed = 0, failed = 0, lineno = 0;
  bool map_seen = false;
  for (std::string line; std::getline(in, line);) {
    lineno++;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty() || f[0][0] == '#') continue;
    if (f[0] == "@map") {
      if (f.size() != 8) {
        std::cout << "FAILED @map (line " << lineno << "): not a language and six classes\n";
        failed++;
      } else if (f[1] == "cpp") {
        map_seen = true;
        for (int k = 0; k < 6; k++) {
          if (kErrorClass.at(kCategories[k]) != f[2 + k]) {
            std::cout << "FAILED @map: the table maps " << kCategories[k] << " to " << f[2 + k]
                      << ", this runner to " << kErrorClass.at(kCategories[k]) << "\n";
            failed++;
          }
        }
      }
      continue;
    }
    if (f.size() != 6) {
      std::cout << "FAILED line " << lineno << ": not a row of six fields\n";
      failed++;
      continue;
    }
    Row r{f[0], f[1], f[2], f[3], f[4], f[5]};
    if (!names_cpp(r.where)) continue;
    std::string why = run_row(r);
    if (why.empty()) {
      passed++;
    } else {
      failed++;
      std::cout << "FAILED " << r.id << ": " << why << "\n";
    }
  }
  if (!map_seen) {
    std::cout << "FAILED @map: the table has no `@map cpp` line\n";
    failed++;
  }
  std::cout << "contract cpp: " << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
