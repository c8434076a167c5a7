// Tests of bindings/cpp/cupel.hpp: every slicer, errors as exceptions (and
// their classes), reports, streams, simulation, read-back, reason names,
// null and moved-from handles; tokenizers (count, count_many, truncate with
// byte offsets on non-ASCII text, tiktoken files, threads) and items pushed
// from text; items that shrink (variants, truncatable items, the pipeline's
// tokenizer, what a report says was sent: Scenario S of issue 27); undoing
// pushes (truncate), packed strings, sessions (keys, volatile items, first,
// append, a failed run, reset, breakpoints, the report, Deferred), the
// library's version and live handles.
#include "cupel.hpp"

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

static int passed = 0, failed = 0;
#define CHECK(c)                                                               \
  do {                                                                         \
    if (c) {                                                                   \
      passed++;                                                                \
    } else {                                                                   \
      failed++;                                                                \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
    }                                                                          \
  } while (0)

// Runs `f`, which must throw `Class` (and so cupel::Exception) with `status`
// and a what() holding `needle`.
template <class Class = cupel::Exception, class F>
static void expect_error(F &&f, cupel_status status, const char *needle, int line = __builtin_LINE()) {
  try {
    f();
    failed++;
    std::fprintf(stderr, "line %d: expected %s, nothing thrown\n", line, cupel_status_str(status));
  } catch (const cupel::Exception &e) {
    bool ok = dynamic_cast<const Class *>(&e) != nullptr && e.status() == status &&
              std::strstr(e.what(), needle) != nullptr;
    if (ok) {
      passed++;
    } else {
      failed++;
      std::fprintf(stderr, "line %d: expected %s with \"%s\", got %s\n", line, cupel_status_str(status), needle,
                   e.what());
    }
  }
}

// Whether byte offset `i` of `s` is a UTF-8 character boundary.
static bool char_boundary(std::string_view s, size_t i) {
  return i == s.size() || (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80);
}

// `bytes` in standard base64 (as tiktoken files write tokens).
static std::string base64(std::string_view bytes) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? abc[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? abc[v & 63] : '=';
  }
  return out;
}

// A tiktoken file: the 256 single bytes (rank = the byte), then `merges`
// ranked 256, 257, ... in order.
static std::string vocabulary(const std::vector<std::string> &merges) {
  std::string file;
  for (int b = 0; b < 256; b++) file += base64(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  for (size_t i = 0; i < merges.size(); i++) file += base64(merges[i]) + " " + std::to_string(256 + i) + "\n";
  return file;
}

// Every truncation of `text` by `tok` (each keep, max_tokens 0 .. count + 1)
// against the contract: the kept text is text[0, head_end) + text[tail_start,
// size), both offsets are character boundaries, the count is the head's plus
// the tail's and at most max_tokens, a text that fits is kept whole, 0 keeps
// nothing, HEAD keeps a prefix and TAIL a suffix that grow with max_tokens,
// BOTH_ENDS's head is HEAD's with ceil(max_tokens / 2). Returns whether some
// cut fell strictly inside the text (a real cut, not all or nothing).
static bool check_truncations(const cupel::Tokenizer &tok, std::string_view text, int line = __builtin_LINE()) {
  const int64_t whole = tok.count(text);
  bool inner_cut = false;
  for (cupel::Keep keep : {cupel::Keep::Head, cupel::Keep::Tail, cupel::Keep::BothEnds}) {
    size_t last_head = 0, last_tail = text.size() + 1;
    for (int64_t max = 0; max <= whole + 1; max++) {
      cupel::Truncation t = tok.truncate(text, max, keep);
      std::string_view head = text.substr(0, t.head_end), tail = text.substr(t.tail_start);
      bool ok = t.head_end <= t.tail_start && t.tail_start <= text.size() && char_boundary(text, t.head_end) &&
                char_boundary(text, t.tail_start) && t.text == std::string(head) + std::string(tail) &&
                t.tokens <= max && t.tokens == tok.count(head) + tok.count(tail);
      if (max >= whole) ok = ok && t.head_end == text.size() && t.tail_start == text.size() && t.tokens == whole;
      if (max == 0) ok = ok && t.head_end == 0 && t.tail_start == text.size() && t.text.empty();
      if (max < whole) {
        if (keep == cupel::Keep::Head) ok = ok && t.tail_start == text.size() && t.head_end >= last_head;
        if (keep == cupel::Keep::Tail) ok = ok && t.head_end == 0 && t.tail_start <= last_tail;
        if (keep == cupel::Keep::BothEnds)  // the head by the HEAD rule with ceil(max / 2) tokens
          ok = ok && t.head_end == tok.truncate(text, (max + 1) / 2, cupel::Keep::Head).head_end;
        inner_cut = inner_cut || (t.head_end > 0 && t.head_end < text.size()) ||
                    (t.tail_start > 0 && t.tail_start < text.size());
        last_head = t.head_end;
        last_tail = t.tail_start;
      }
      if (ok) {
        passed++;
      } else {
        failed++;
        std::fprintf(stderr, "line %d: truncate(\"%.*s\", %lld, keep %d) gave [%zu, %zu, %lld] \"%s\"\n", line,
                     static_cast<int>(text.size()), text.data(), static_cast<long long>(max), static_cast<int>(keep),
                     t.head_end, t.tail_start, static_cast<long long>(t.tokens), t.text.c_str());
      }
    }
  }
  return inner_cut;
}

// What the pipeline alone (given scores, `slicer`, `placer`) places: the
// order a session changes to keep its cached prefix.
static std::vector<size_t> pipeline_places(const cupel::Slicer &slicer, const cupel::Placer &placer,
                                           const cupel::Items &items, const cupel::Budget &budget) {
  return cupel::Pipeline(nullptr, slicer, &placer).run(items, budget);
}

int main() {
  using V = std::vector<size_t>;
  cupel::Items items;
  items.push_many({400, 100, 100, 200}, {0.9, 0.7, 0.5, 0.1});
  CHECK(items.size() == 4);
  cupel::Budget budget(300, 300);

  auto greedy = cupel::Slicer::greedy();
  CHECK(cupel::slice(greedy, items, budget) == (V{1, 2}));
  auto knapsack = cupel::Slicer::knapsack(100);
  CHECK(cupel::slice(knapsack, items, budget) == (V{2, 1}));

  cupel::Items kinds;
  kinds.push_many({200, 200, 300, 300, 200}, {0.9, 0.5, 0.8, 0.3, 0.7},
                  {"SystemPrompt", "SystemPrompt", "Message", "Message", "Document"});
  auto quota = cupel::Slicer::quota(greedy, {{"SystemPrompt", 30, 50}, {"Message", 0, 40}});
  cupel::Budget thousand(1000, 1000);
  CHECK(cupel::slice(quota, kinds, thousand) == (V{0, 1, 2}));

  cupel::Items tools;
  tools.push_many({100, 100, 100}, {0.9, 0.7, 0.5}, {"tool", "tool", "tool"});
  auto count = cupel::Slicer::count_quota(greedy, {{"tool", 0, 1}, {"memory", 1, 2}});
  cupel::Report report;
  CHECK(cupel::slice(count, tools, thousand, 0, &report) == (V{0}));
  CHECK(report.cap_excluded() == (V{1, 2}));
  auto shortfalls = report.shortfalls();
  CHECK(shortfalls.size() == 1 && shortfalls[0].kind == "memory" && shortfalls[0].satisfied == 0);
  auto cck = cupel::Slicer::count_constrained_knapsack(1, {{"tool", 2, 2}});
  CHECK(cupel::slice(cck, tools, thousand, 0, &report) == (V{0, 1}));
  CHECK(report.selected_tokens() == 200);

  auto strict = cupel::Slicer::count_quota(greedy, {{"memory", 1, 2}}, cupel::Scarcity::Error);
  expect_error<cupel::Error>([&] { cupel::slice(strict, tools, thousand); }, CUPEL_ERROR_SCARCITY, "memory");
  expect_error([&] { cupel::Slicer::count_quota(knapsack, {}); }, CUPEL_ERROR_UNSUPPORTED, "KnapsackSlice");
  expect_error<cupel::InvalidArgument>([] { cupel::Budget(10, 20); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                       "target_tokens 20 > max_tokens 10");
  expect_error([&] { cupel::Slicer::quota(greedy, {{"a", 60, 40}}); }, CUPEL_ERROR_INVALID_ARGUMENT,
               "require_percent 60 > cap_percent 40");
  expect_error([&] { items.push(1, 0.0 / 0.0); }, CUPEL_ERROR_INVALID_ARGUMENT, "NaN");
  CHECK(items.size() == 4);

  auto big = cupel::Slicer::knapsack(1);
  big.set_memory_limit(64);
  CHECK(big.memory_limit() == 64);
  expect_error([&] { cupel::slice(big, items, budget); }, CUPEL_ERROR_CAPACITY, "memory limit");

  // C's argument order: pinned tokens, then slack (or index, ceiling).
  CHECK(cupel::marginal_items(greedy, items, budget, 0, 150) == (V{2}));
  CHECK(cupel::marginal_items(greedy, items, budget, 0, 0).empty());
  CHECK(cupel::find_min_budget(greedy, items, 0, 0, 10000) == std::optional<int64_t>(600));
  CHECK(!cupel::find_min_budget(greedy, items, 0, 0, 599).has_value());

  cupel::Stream stream(200, 2);
  CHECK(!stream.push(100, 0.5));
  CHECK(stream.push(100, 0.4));
  CHECK(stream.finish() == (V{0, 1}));

  // Groups: a tool call (10, 0.9) and its result (200, 0.1) go together.
  cupel::Items pair;
  pair.push_many(std::vector<int64_t>{10, 200, 60}, std::vector<double>{0.9, 0.1, 0.5});
  pair.set_groups(0, {7, 7});
  cupel::Budget hundred(100, 100), enough(270, 270);
  CHECK(cupel::slice(greedy, pair, hundred) == (V{2}));
  CHECK(cupel::slice(greedy, pair, enough) == (V{2, 0, 1}));
  pair.set_group(1, 0);  // ungrouped, the call alone fits
  CHECK(cupel::slice(greedy, pair, hundred) == (V{0, 2}));
  expect_error([&] { pair.set_group(3, 1); }, CUPEL_ERROR_INVALID_ARGUMENT, "index 3 is out of range");
  cupel::Stream gs(100, 2);
  gs.push_grouped(30, 0.5, 5);
  gs.push_grouped(30, 0.5, 5);
  gs.push_grouped(50, 0.5, 0);
  gs.push_grouped(40, 0.5, 0);
  expect_error([&] { gs.push_grouped(1, 0.1, 5); }, CUPEL_ERROR_INVALID_ARGUMENT, "which ended before item 4");
  CHECK(gs.finish() == (V{0, 1, 3}));

  // The pipeline: attributes (bulk), scorers, placer, deduplication, report.
  {
    cupel::Items conv;
    conv.push_many(std::vector<int64_t>{50, 100, 100, 100, 100, -3, 5000},
                   std::vector<double>{0, 0, 0, 0, 0, 0, 0},
                   {"SystemPrompt", "Message", "Message", "ToolOutput", "Message", "Message", "Document"});
    conv.set_contents(0, {"You are helpful.", "hello", "how are you", "ls output", "hello", "broken", "a huge file"});
    conv.set_timestamps(0, {0, 86400000, 2 * 86400000LL, 3 * 86400000LL, 4 * 86400000LL});
    conv.set_pinned_many(0, {true});
    conv.set_priority(3, 5);
    conv.add_tag(3, "auth");
    conv.set_metadata(3, "cupel:trust", "0.9");
    auto recency = cupel::Scorer::recency();
    auto kind = cupel::Scorer::kind();
    auto blend = cupel::Scorer::composite({{&recency, 2.0}, {&kind, 1.0}});
    auto chrono = cupel::Placer::chronological();
    cupel::Pipeline p(&blend, greedy, &chrono);
    p.set_overflow(cupel::Overflow::Throw);
    cupel::Report r;
    cupel::Budget b(1000, 300);
    auto placed = p.run(conv, b, &r);
    CHECK(!placed.empty() && placed[0] == 0);
    auto inc = r.included();
    CHECK(inc.size() == placed.size() && inc[0].reason == cupel::Reason::Pinned);
    bool dedup = false, negative = false, over = false;
    for (const auto &d : r.excluded()) {
      if (d.index == 1) dedup = d.reason == cupel::Reason::Deduplicated && d.related == std::optional<size_t>(4);
      if (d.index == 5) negative = d.reason == cupel::Reason::NegativeTokens;
      if (d.index == 6) over = d.reason == cupel::Reason::BudgetExceeded && d.item_tokens == 5000;
    }
    CHECK(dedup && negative && over);
    CHECK(r.total_candidates() == 7);
    CHECK(std::string(cupel::to_string(cupel::Reason::CountCapExceeded)) == "CountCapExceeded");
    auto json = r.json(conv);
    CHECK(json.find("\"total_candidates\":7") != std::string::npos);
    cupel::Pipeline plain(nullptr, greedy, nullptr);
    plain.set_deduplication(false);
    cupel::Budget small(40, 40);
    expect_error([&] { plain.run(conv, small); }, CUPEL_ERROR_INVALID_ARGUMENT, "pinned items need 50 tokens");
    CHECK(r.tokens_over_budget() == 0);  // the Throw run above: within its target
    // Proceed keeps the pinned 50 over a target of 40: 10 over.
    cupel::Budget tight(1000, 40);
    plain.set_overflow(cupel::Overflow::Proceed);
    CHECK(plain.run(conv, tight, &r) == std::vector<size_t>{0});
    CHECK(r.tokens_over_budget() == 10);
    // The Place stage on its own: timestamps 0, 1 and 3 days; scores 0.5, 0.9, 0.1.
    CHECK(chrono.place(conv, {3, 1, 0}, {0.1, 0.9, 0.5}) == (std::vector<size_t>{0, 1, 3}));
    auto u = cupel::Placer::u_shaped();
    CHECK(u.place(conv, {3, 1, 0}, {0.1, 0.9, 0.5}) == (std::vector<size_t>{1, 3, 0}));
    CHECK(u.place(conv, {}, {}).empty());
    expect_error([&] { u.place(conv, {1, 2}, {0.5}); }, CUPEL_ERROR_INVALID_ARGUMENT, "2 indices and 1 scores");
    expect_error<cupel::OutOfRange>([&] { u.place(conv, {99}, {0.5}); }, CUPEL_ERROR_INVALID_ARGUMENT, "99");
    auto decay = cupel::Scorer::decay(cupel::DecayCurve::Step, 0, {{86400, 0.9}, {864000, 0.1}}, 5 * 86400000LL);
    CHECK(decay.score(conv).size() == 7);
    expect_error([] { cupel::Scorer::metadata_key("k", "v", 0); }, CUPEL_ERROR_INVALID_ARGUMENT, "boost");
  }

  // Read-back: every attribute, absent ones as nullopt.
  {
    cupel::Items rb;
    rb.push(10, 0.25);                   // no kind: the default
    rb.push(20, 0.75, "Document");
    rb.push(30, 0.5, "document");        // reads back as first spelled
    rb.set_content(1, "beta");
    rb.set_timestamp(1, -5);
    rb.set_priority(1, 3);
    rb.set_pinned(1, true);
    rb.set_relevance_hint(1, 0.125);
    rb.set_source(1, "Rag");
    rb.set_group(1, 9);
    rb.add_tag(1, "b");
    rb.add_tag(1, "a");
    rb.add_tag(1, "b");
    rb.set_metadata(1, "z", "1");
    rb.set_metadata(1, "y", "2");
    rb.set_metadata(1, "z", "3");  // replaces, keeps the key's place
    cupel::Item a = rb.at(0);
    CHECK(a.tokens == 10 && a.score == 0.25 && a.kind == "Message");
    CHECK(!a.content && !a.timestamp && !a.priority && !a.relevance_hint);
    CHECK(!a.pinned && a.source == "Chat" && a.group == 0 && a.tags.empty() && a.metadata.empty());
    cupel::Item b = rb.at(1);
    CHECK(b.tokens == 20 && b.score == 0.75 && b.kind == "Document");
    CHECK(b.content == std::optional<std::string>("beta"));
    CHECK(b.timestamp == std::optional<int64_t>(-5) && b.priority == std::optional<int64_t>(3));
    CHECK(b.pinned && b.relevance_hint == std::optional<double>(0.125) && b.source == "Rag" && b.group == 9);
    CHECK((b.tags == std::vector<std::string>{"b", "a", "b"}));
    CHECK((b.metadata == std::vector<std::pair<std::string, std::string>>{{"z", "3"}, {"y", "2"}}));
    CHECK(rb.at(2).kind == "Document");
    expect_error<cupel::OutOfRange>([&] { rb.at(3); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "index 3 is out of range: the list holds 3 items");
    expect_error<std::out_of_range>([&] { rb.at(SIZE_MAX); }, CUPEL_ERROR_INVALID_ARGUMENT, "index");
    // Strings come back whole, not cut at a NUL the C side never sees.
    rb.set_content(0, "x\xc3\xa9y");
    CHECK(rb.at(0).content == std::optional<std::string>("x\xc3\xa9y"));
  }

  // Reason names come from the library (cupel_reason_str).
  {
    const std::pair<cupel::Reason, const char *> names[] = {
        {cupel::Reason::Scored, "Scored"},
        {cupel::Reason::Pinned, "Pinned"},
        {cupel::Reason::ZeroToken, "ZeroToken"},
        {cupel::Reason::Variant, "Variant"},
        {cupel::Reason::Truncated, "Truncated"},
        {cupel::Reason::BudgetExceeded, "BudgetExceeded"},
        {cupel::Reason::ScoredTooLow, "ScoredTooLow"},
        {cupel::Reason::Deduplicated, "Deduplicated"},
        {cupel::Reason::QuotaCapExceeded, "QuotaCapExceeded"},
        {cupel::Reason::QuotaRequireDisplaced, "QuotaRequireDisplaced"},
        {cupel::Reason::NegativeTokens, "NegativeTokens"},
        {cupel::Reason::PinnedOverride, "PinnedOverride"},
        {cupel::Reason::Filtered, "Filtered"},
        {cupel::Reason::CountCapExceeded, "CountCapExceeded"},
    };
    for (const auto &n : names) CHECK(std::string(cupel::to_string(n.first)) == n.second);
    CHECK(static_cast<int>(cupel::Reason::Variant) == 3 && static_cast<int>(cupel::Reason::Truncated) == 4);
    CHECK(std::string(cupel::reason_name(5)) == "Unknown");
    CHECK(std::string(cupel::reason_name(-1)) == "Unknown");
    CHECK(std::string(cupel::reason_name(CUPEL_REASON_BUDGET_EXCEEDED)) == "BudgetExceeded");
  }

  // Kinds: none given is the default; empty, blank, NUL-holding or non-UTF-8 ones throw.
  {
    cupel::Items k;
    k.push(1, 0.5);
    CHECK(k.at(0).kind == "Message");
    expect_error<std::invalid_argument>([&] { k.push(1, 0.5, ""); }, CUPEL_ERROR_INVALID_ARGUMENT, "kind \"\"");
    expect_error<std::invalid_argument>([&] { k.push(1, 0.5, "  "); }, CUPEL_ERROR_INVALID_ARGUMENT, "kind");
    expect_error<std::invalid_argument>([&] { k.push(1, 0.5, std::string("Mes\0sage", 8)); },
                                        CUPEL_ERROR_INVALID_ARGUMENT, "kind holds a NUL byte at offset 3");
    expect_error<std::invalid_argument>([&] { k.push(1, 0.5, "\xff"); }, CUPEL_ERROR_INVALID_ARGUMENT, "UTF-8");
    expect_error<std::invalid_argument>([&] { k.push_many({1, 2}, {0.5, 0.5}, {"A", ""}); },
                                        CUPEL_ERROR_INVALID_ARGUMENT, "kinds[1]");
    expect_error<std::invalid_argument>([&] { k.push_many({1, 2}, {0.5}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                        "2 tokens, 1 scores");
    expect_error<std::invalid_argument>([&] { k.set_content(0, ""); }, CUPEL_ERROR_INVALID_ARGUMENT, "content");
    expect_error<std::invalid_argument>([&] { cupel::Budget(10, 10).reserve("", 1); },
                                        CUPEL_ERROR_INVALID_ARGUMENT, "kind");
    CHECK(k.size() == 1);
  }

  // Null and moved-from handles are refused before they reach C.
  {
    auto rec = cupel::Scorer::recency(), pri = cupel::Scorer::priority();
    expect_error<std::invalid_argument>([&] { cupel::Scorer::composite({{&rec, 1.0}, {nullptr, 1.0}}); },
                                        CUPEL_ERROR_NULL_POINTER, "children[1] is null");
    expect_error<std::invalid_argument>([&] { cupel::Scorer::composite({rec, nullptr}, {1, 1}); },
                                        CUPEL_ERROR_NULL_POINTER, "children[1] is null");
    expect_error<std::invalid_argument>([&] { cupel::Scorer::composite({rec, pri}, {1, 0.0 / 0.0}); },
                                        CUPEL_ERROR_INVALID_ARGUMENT, "weights[1] is NaN");
    expect_error<std::invalid_argument>([&] { cupel::Scorer::composite({rec, pri}, {1}); },
                                        CUPEL_ERROR_INVALID_ARGUMENT, "2 children and 1 weights");
    CHECK(cupel::Scorer::composite({rec, &pri}, {1, 2}).score(items).size() == 4);
    expect_error<std::invalid_argument>([&] { cupel::Scorer::scaled(nullptr); }, CUPEL_ERROR_NULL_POINTER,
                                        "inner is null");
    expect_error<std::invalid_argument>([&] { cupel::Slicer::quota(nullptr, {}); }, CUPEL_ERROR_NULL_POINTER,
                                        "inner is null");
    expect_error<std::invalid_argument>([&] { cupel::slice(greedy, nullptr, budget); }, CUPEL_ERROR_NULL_POINTER,
                                        "items is null");
    expect_error<std::invalid_argument>([&] { cupel::Pipeline(nullptr, nullptr, nullptr); },
                                        CUPEL_ERROR_NULL_POINTER, "slicer is null");
    CHECK(cupel::Pipeline(nullptr, greedy, nullptr).run(items, budget) == (V{1, 2}));

    cupel::Scorer gone = std::move(pri);
    expect_error<cupel::ClosedHandle>([&] { cupel::Scorer::composite({rec, pri}, {1, 1}); },
                                      CUPEL_ERROR_NULL_POINTER, "children[1] is a moved-from");
    expect_error<cupel::ClosedHandle>([&] { pri.score(items); }, CUPEL_ERROR_NULL_POINTER, "scorer");
    expect_error<cupel::ClosedHandle>([&] { cupel::Pipeline(&pri, greedy, nullptr); }, CUPEL_ERROR_NULL_POINTER,
                                      "scorer is a moved-from");
    cupel::Items held;
    held.push(5, 0.5);
    cupel::Items taker = std::move(held);
    expect_error<cupel::ClosedHandle>([&] { held.push(1, 0.5); }, CUPEL_ERROR_NULL_POINTER, "items");
    expect_error<cupel::ClosedHandle>([&] { held.size(); }, CUPEL_ERROR_NULL_POINTER, "items");
    expect_error<cupel::ClosedHandle>([&] { held.at(0); }, CUPEL_ERROR_NULL_POINTER, "items");
    expect_error<cupel::ClosedHandle>([&] { cupel::slice(greedy, held, budget); }, CUPEL_ERROR_NULL_POINTER,
                                      "items is a moved-from");
    CHECK(taker.size() == 1);
    cupel::Report taken;
    cupel::Report keeper = std::move(taken);
    expect_error<cupel::ClosedHandle>([&] { taken.included(); }, CUPEL_ERROR_NULL_POINTER, "report");
    expect_error<cupel::ClosedHandle>([&] { cupel::slice(greedy, items, budget, 0, &taken); },
                                      CUPEL_ERROR_NULL_POINTER, "report");
    cupel::Stream s1(10);
    cupel::Stream s2 = std::move(s1);
    expect_error<cupel::ClosedHandle>([&] { s1.push(1, 0.5); }, CUPEL_ERROR_NULL_POINTER, "stream");
    CHECK(!s2.push(1, 0.5));
    // ClosedHandle is a std::logic_error but no invalid_argument/out_of_range.
    try {
      held.clear();
      CHECK(false);
    } catch (const std::logic_error &e) {
      CHECK(dynamic_cast<const std::invalid_argument *>(&e) == nullptr);
      CHECK(dynamic_cast<const std::out_of_range *>(&e) == nullptr);
    }
  }

  // Indices out of range are std::out_of_range; nothing changes.
  {
    cupel::Items r3;
    r3.push_many({1, 2, 3}, {0.1, 0.2, 0.3});
    expect_error<cupel::OutOfRange>([&] { r3.set_content(3, "x"); }, CUPEL_ERROR_INVALID_ARGUMENT, "index 3");
    expect_error<cupel::OutOfRange>([&] { r3.set_timestamps(2, {1, 2}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "first 2 with 2 values is out of range");
    expect_error<cupel::OutOfRange>([&] { cupel::find_min_budget(greedy, r3, 0, 3, 100); },
                                    CUPEL_ERROR_INVALID_ARGUMENT, "target_index 3");
    expect_error<cupel::OutOfRange>(
        [&] { cupel::Placer::chronological().place(r3, {0, 7}, {0.5, 0.5}); }, CUPEL_ERROR_INVALID_ARGUMENT,
        "indices[1] is 7");
    CHECK(!r3.at(0).timestamp && !r3.at(2).content);
    // The message alone, and what() with the status name.
    try {
      r3.set_priority(5, 1);
    } catch (const cupel::Exception &e) {
      CHECK(std::string(e.message()) == "index 5 is out of range: the list holds 3 items");
      CHECK(std::string(e.what()) == std::string("CUPEL_ERROR_INVALID_ARGUMENT: ") + e.message());
    }
  }

  // Text in: counting. The contract's SENTENCE is 12 o200k tokens; a
  // string_view's length is honoured (no NUL needed).
  {
    const std::string sentence = "Hello, world! This is libcupel counting tokens.";
    cupel::Tokenizer o200k("o200k_base");
    cupel::Tokenizer cl100k(std::string("cl100k_base"));
    CHECK(o200k.count(sentence) == 12);
    CHECK(o200k.count("hello world") == 2 && cl100k.count("hello world") == 2);
    CHECK(o200k.count("") == 0 && o200k.count(std::string_view()) == 0);
    CHECK(o200k.count(std::string_view("hello world, and more", 11)) == 2);
    // Special tokens are ordinary text: more than one token each.
    CHECK(o200k.count("<|endoftext|>") > 1);
    // The two vocabularies differ: o200k is the larger one, so it needs fewer tokens for CJK.
    const std::string cjk = "日本語のテキストを数えます。漢字とひらがなとカタカナ。";
    CHECK(o200k.count(cjk) > 0 && o200k.count(cjk) < cl100k.count(cjk));

    // count_many: the counts in order, from any list of texts.
    std::vector<std::string> owned{sentence, "hello world", "", cjk};
    std::vector<int64_t> want{12, 2, 0, o200k.count(cjk)};
    CHECK(o200k.count_many(owned) == want);
    std::vector<std::string_view> views(owned.begin(), owned.end());
    CHECK(o200k.count_many(views) == want);
    CHECK(o200k.count_many({"a", sentence}) == (std::vector<int64_t>{1, 12}));
    CHECK(o200k.count_many(std::vector<std::string>{}).empty());
    // A batch large enough for two threads: the same counts as one by one.
    std::vector<std::string> batch;
    std::vector<int64_t> one_by_one;
    for (int i = 0; i < 3000; i++) {
      batch.push_back(std::to_string(i * 7919) + " " + (i % 3 ? cjk : sentence) + std::string(i % 5, '!'));
      one_by_one.push_back(o200k.count(batch.back()));
    }
    CHECK(o200k.count_many(batch) == one_by_one);

    // One tokenizer, four threads at once: the same counts.
    std::string big;
    for (int i = 0; i < 200; i++) big += sentence + " " + cjk + " 🙂👍🏽 " + std::to_string(i) + "\n";
    const int64_t serial = o200k.count(big);
    std::vector<int64_t> got(4, -1);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; k++)
      threads.emplace_back([&, k] {
        for (int rep = 0; rep < 5; rep++) got[k] = o200k.count(big);
      });
    for (auto &t : threads) t.join();
    CHECK(got == std::vector<int64_t>(4, serial));

    // Invalid UTF-8 names the argument and the offset of the first bad byte.
    expect_error<cupel::InvalidArgument>([&] { o200k.count("ab\xe6\x97"); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "text is not valid UTF-8 (invalid byte at offset 2)");
    expect_error<cupel::InvalidArgument>([&] { o200k.count_many({"fine", "\xff\xfe", "\xff"}); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "texts[1] is not valid UTF-8");
    expect_error<cupel::InvalidArgument>([&] { o200k.truncate("\xc3", 3); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "offset 0");

    // Unknown names list the known ones; a null or NUL-holding name is refused.
    expect_error<cupel::InvalidArgument>([] { cupel::Tokenizer("gpt2"); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "name \"gpt2\" is no known encoding; the known ones are \"o200k_base\" "
                                         "and \"cl100k_base\"");
    expect_error<cupel::InvalidArgument>([] { cupel::Tokenizer(""); }, CUPEL_ERROR_INVALID_ARGUMENT, "o200k_base");
    expect_error<cupel::InvalidArgument>([] { cupel::Tokenizer(nullptr); }, CUPEL_ERROR_NULL_POINTER,
                                         "name is null");
    expect_error<cupel::InvalidArgument>([] { cupel::Tokenizer(std::string("o200k\0base", 10)); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "name holds a NUL byte at offset 5");
  }

  // Text in: token-exact truncation, offsets in bytes.
  {
    cupel::Tokenizer tok("o200k_base");
    const std::string sentence = "Hello, world! This is libcupel counting tokens.";
    cupel::Truncation h = tok.truncate(sentence, 4);  // keep defaults to the head
    CHECK(h.text == "Hello, world!" && h.head_end == 13 && h.tail_start == 47 && h.tokens == 4);
    cupel::Truncation t = tok.truncate(sentence, 4, cupel::Keep::Tail);
    CHECK(t.text == "el counting tokens." && t.head_end == 0 && t.tail_start == 28 && t.tokens == 4);
    cupel::Truncation b = tok.truncate(sentence, 4, cupel::Keep::BothEnds);
    CHECK(b.text == "Hello, tokens." && b.head_end == 6 && b.tail_start == 39 && b.tokens == 4);
    cupel::Truncation all = tok.truncate(sentence, 12, cupel::Keep::BothEnds);
    CHECK(all.text == sentence && all.head_end == 47 && all.tail_start == 47 && all.tokens == 12);
    cupel::Truncation none = tok.truncate(sentence, 0, cupel::Keep::Tail);
    CHECK(none.text.empty() && none.head_end == 0 && none.tail_start == 47 && none.tokens == 0);

    // Non-ASCII: offsets are bytes on character boundaries, and
    // text[0, head_end) + text[tail_start, size) is the kept text.
    const std::string jp = "日本語のテキスト";  // 8 characters of 3 bytes
    cupel::Truncation j = tok.truncate(jp, 2, cupel::Keep::BothEnds);
    CHECK(j.head_end % 3 == 0 && j.tail_start % 3 == 0 && j.head_end > 0 && j.tail_start < jp.size());
    CHECK(j.text == jp.substr(0, j.head_end) + jp.substr(j.tail_start) && j.tokens <= 2);
    CHECK(check_truncations(tok, jp));
    // Emoji whose tokens end inside a character: the cut moves to a boundary.
    CHECK(check_truncations(tok, "👨‍👩‍👧‍👦 family 🙂👍🏽 thumbs, 🇯🇵 flag"));
    CHECK(check_truncations(tok, "Ünïcödé café – naïve résumé, Ελληνικά, русский, עברית, हिन्दी"));
    CHECK(check_truncations(tok, sentence));
    cupel::Tokenizer cl("cl100k_base");
    CHECK(check_truncations(cl, jp + " " + "🙂🙂🙂 emoji"));
    CHECK(!check_truncations(tok, "x"));  // one token: all or nothing

    expect_error<cupel::InvalidArgument>([&] { tok.truncate(sentence, -1); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "max_tokens is -1");
    expect_error<cupel::InvalidArgument>([&] { tok.truncate(sentence, 3, static_cast<cupel::Keep>(7)); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "keep is 7");
  }

  // Text in: a tiktoken file. 256 single bytes and the merges "ab" (rank
  // 256) and "abc" (257): with o200k's pattern (the default) "abc abc" is
  // the pieces "abc" (1 token) and " abc" (" " + "abc": 2); with the pattern
  // "." every character is a piece of its own.
  {
    const std::string vocab = vocabulary({"ab", "abc"});
    cupel::Tokenizer mini = cupel::Tokenizer::from_tiktoken(vocab);
    CHECK(mini.count("abc abc") == 3);
    CHECK(mini.count("abcabc") == 2);
    CHECK(mini.count("ab") == 1 && mini.count("ba") == 2);
    CHECK(mini.count("é") == 2);  // two bytes, no merge
    cupel::Tokenizer dots = cupel::Tokenizer::from_tiktoken(vocab, ".");
    CHECK(dots.count("abc abc") == 7);
    cupel::Tokenizer words = cupel::Tokenizer::from_tiktoken(vocab, std::string("[a-z]+|\\s+"));
    CHECK(words.count("abc abc") == 3 && words.count("abcabc") == 2);
    CHECK(mini.count_many({"abc", "abc abc", "x"}) == (std::vector<int64_t>{1, 3, 1}));
    cupel::Truncation cut = mini.truncate("abc abc", 2, cupel::Keep::Tail);
    CHECK(cut.text == " abc" && cut.head_end == 0 && cut.tail_start == 3 && cut.tokens == 2);
    // The library keeps its own copy of the bytes.
    std::string scratch = vocab;
    cupel::Tokenizer copy = cupel::Tokenizer::from_tiktoken(scratch);
    scratch.assign(scratch.size(), 'x');
    CHECK(copy.count("abc abc") == 3);

    // A malformed line is named; so are a duplicate, a missing byte, a bad pattern.
    expect_error<cupel::InvalidArgument>([&] { cupel::Tokenizer::from_tiktoken(vocab + "not-a-line\n"); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "line 259 of the vocabulary");
    expect_error<cupel::InvalidArgument>([&] { cupel::Tokenizer::from_tiktoken(vocab + base64("ab") + " 999\n"); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "line 259");
    expect_error<cupel::InvalidArgument>([&] { cupel::Tokenizer::from_tiktoken(vocab.substr(vocab.find('\n') + 1)); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "single byte 0x00");
    expect_error<cupel::InvalidArgument>([&] { cupel::Tokenizer::from_tiktoken(""); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "no tokens");
    expect_error<cupel::InvalidArgument>([&] { cupel::Tokenizer::from_tiktoken(vocab, "(unclosed"); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "pattern");
    expect_error<cupel::InvalidArgument>([&] { cupel::Tokenizer::from_tiktoken(vocab, std::string(".\0.", 3)); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "pattern holds a NUL byte at offset 1");
  }

  // Text in: items pushed from text read back their count and content; a
  // pipeline goes from strings to a context with no token numbers written.
  {
    cupel::Tokenizer tok("o200k_base");
    const std::string jp = "日本語のテキスト";
    cupel::Items texts;
    texts.push_text(tok, "hello world", 0.5);
    texts.push_text(tok, jp, 0.75, "Document");
    CHECK(texts.size() == 2);
    cupel::Item a = texts.at(0), b = texts.at(1);
    CHECK(a.tokens == 2 && a.content == std::optional<std::string>("hello world") && a.kind == "Message" &&
          a.score == 0.5);
    CHECK(b.tokens == tok.count(jp) && b.content == std::optional<std::string>(jp) && b.kind == "Document" &&
          b.score == 0.75);
    std::vector<std::string> many{"first text", "second, longer text with more tokens in it", jp};
    texts.push_texts(tok, many, {0.9, 0.1, 0.3}, {"Message", "ToolOutput", "Message"});
    texts.push_texts(tok, {"no kinds", "here"}, {0.2, 0.2});
    CHECK(texts.size() == 7);
    std::vector<int64_t> counts = tok.count_many(many);
    for (size_t i = 0; i < many.size(); i++)
      CHECK(texts.at(2 + i).tokens == counts[i] && texts.at(2 + i).content == std::optional<std::string>(many[i]));
    CHECK(texts.at(3).kind == "ToolOutput" && texts.at(6).kind == "Message" && texts.at(6).tokens == 1);

    // Errors name the element and change nothing.
    expect_error<cupel::InvalidArgument>([&] { texts.push_text(tok, "", 0.5); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "text is empty");
    expect_error<cupel::InvalidArgument>([&] { texts.push_text(tok, "\xff", 0.5); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "text is not valid UTF-8");
    expect_error<cupel::InvalidArgument>([&] { texts.push_text(tok, "x", 0.0 / 0.0); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "score is NaN");
    expect_error<cupel::InvalidArgument>([&] { texts.push_text(tok, "x", 0.5, " "); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "kind");
    expect_error<cupel::InvalidArgument>([&] { texts.push_text(nullptr, "x", 0.5); }, CUPEL_ERROR_NULL_POINTER,
                                         "tokenizer is null");
    expect_error<cupel::InvalidArgument>([&] { texts.push_texts(tok, {"a", "\xff\xfe"}, {0.5, 0.5}); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "texts[1] is not valid UTF-8");
    expect_error<cupel::InvalidArgument>([&] { texts.push_texts(tok, {"a", ""}, {0.5, 0.5}); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "texts[1] is empty");
    expect_error<cupel::InvalidArgument>([&] { texts.push_texts(tok, {"a", "b"}, {0.5, 1.0 / 0.0}); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "scores[1]");
    expect_error<cupel::InvalidArgument>([&] { texts.push_texts(tok, {"a", "b"}, {0.5, 0.5}, {"A", ""}); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "kinds[1]");
    expect_error<cupel::InvalidArgument>([&] { texts.push_texts(tok, {"a", "b"}, {0.5}); },
                                         CUPEL_ERROR_INVALID_ARGUMENT, "2 texts, 1 scores");
    CHECK(texts.size() == 7);

    // Strings in, a context out: the budget holds the best items whole.
    cupel::Budget fits(20, 20);
    auto chosen = cupel::slice(greedy, texts, fits);
    int64_t used = 0;
    for (size_t i : chosen) used += texts.at(i).tokens;
    CHECK(!chosen.empty() && used <= 20);

    // A moved-from tokenizer is refused wherever it goes.
    cupel::Tokenizer kept = std::move(tok);
    CHECK(kept.count("hello world") == 2);
    expect_error<cupel::ClosedHandle>([&] { tok.count("x"); }, CUPEL_ERROR_NULL_POINTER,
                                      "tokenizer is a moved-from (closed) handle");
    expect_error<cupel::ClosedHandle>([&] { tok.count_many({"x"}); }, CUPEL_ERROR_NULL_POINTER, "tokenizer");
    expect_error<cupel::ClosedHandle>([&] { tok.truncate("x", 1); }, CUPEL_ERROR_NULL_POINTER, "tokenizer");
    expect_error<cupel::ClosedHandle>([&] { texts.push_text(tok, "x", 0.5); }, CUPEL_ERROR_NULL_POINTER,
                                      "tokenizer is a moved-from");
    expect_error<cupel::ClosedHandle>([&] { texts.push_texts(tok, {"x"}, {0.5}); }, CUPEL_ERROR_NULL_POINTER,
                                      "tokenizer is a moved-from");
    CHECK(texts.size() == 7 && tok.get() == nullptr);
  }

  // Items that shrink, Scenario S (issue 27; the values computed through the
  // C ABI): a question, a huge tool log with a small placeholder variant, and
  // a 2800-token document that may be cut keeping its head. GreedySlice and
  // an exact KnapsackSlice choose the same options, in their own orders.
  {
    cupel::Tokenizer tok("o200k_base");
    std::string doc;
    for (int i = 0; i < 200; i++)
      doc += "Line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog.\n";
    CHECK(doc.size() == 10890 && tok.count(doc) == 2800);
    const std::string question = "What failed in the last build?", cleared = "[output cleared: 9,000 tokens]";
    cupel::Items s;
    s.push(40, 0.9, "Message");
    s.set_content(0, question);
    s.push(9000, 0.8, "ToolOutput");
    s.set_content(1, "(the build log)");
    s.add_variant(1, 12, 0.1, cleared);
    s.push_text(tok, doc, 0.6, "Document");
    s.set_truncatable(2, cupel::Keep::Head, 50);

    // Read back: the variant list and the truncatable state.
    const cupel::Item i0 = s.at(0), i1 = s.at(1), i2 = s.at(2);
    CHECK(i0.variants.empty() && !i0.truncatable);
    CHECK(i1.variants == (std::vector<cupel::Variant>{{12, 0.1, cleared}}) && !i1.truncatable);
    CHECK(i1.variants.size() == 1 && i1.variants[0].tokens == 12 && i1.variants[0].value == 0.1 &&
          i1.variants[0].content == std::optional<std::string>(cleared));
    CHECK(i2.variants.empty() && i2.tokens == 2800 &&
          i2.truncatable == std::optional<cupel::Truncatable>(cupel::Truncatable{cupel::Keep::Head, 50}));

    struct Want {
      size_t index;
      cupel::Reason reason;
      double score;
      size_t variant;
      int64_t added_tokens, item_tokens;
      size_t head_end, tail_start;
      std::string text;
    };
    const Want want[] = {
        {0, cupel::Reason::Scored, 0.9, 0, 40, 40, 30, 30, question},
        {1, cupel::Reason::Variant, 0.8 * 0.1, 1, 12, 9000, 15, 15, cleared},
        {2, cupel::Reason::Truncated, 0.6 * 948 / 2800, 0, 948, 2800, 3647, 10890, doc.substr(0, 3647)},
    };
    cupel::Budget b(1000, 1000);
    for (int knapsack_run = 0; knapsack_run < 2; knapsack_run++) {
      cupel::Slicer slicer = knapsack_run ? cupel::Slicer::knapsack(1) : cupel::Slicer::greedy();
      cupel::Pipeline p(nullptr, slicer, nullptr);
      cupel::Report r;
      // Without a tokenizer the truncatable item cannot be cut: the run fails, naming it.
      expect_error<cupel::InvalidArgument>([&] { p.run(s, b, &r); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                           "item 2 is truncatable but the pipeline has no tokenizer");
      CHECK(r.included().empty() && r.excluded().empty());  // a failed run leaves the report empty
      p.set_tokenizer(tok);
      const V order = knapsack_run ? V{1, 0, 2} : V{0, 1, 2};
      CHECK(p.run(s, b, &r) == order);
      const std::vector<cupel::Decision> inc = r.included();
      CHECK(inc.size() == 3 && r.excluded().empty() && r.selected_tokens() == 1000);
      const std::vector<std::optional<std::string>> texts = r.texts(s);
      CHECK(texts.size() == 3);
      for (size_t k = 0; k < 3 && inc.size() == 3 && texts.size() == 3; k++) {
        const Want &w = want[order[k]];
        const cupel::Decision &d = inc[k];
        CHECK(d.index == w.index && d.reason == w.reason && std::fabs(d.score - w.score) < 1e-12);
        CHECK(d.variant == w.variant && d.added_tokens == w.added_tokens && d.item_tokens == w.item_tokens);
        CHECK(d.head_end == w.head_end && d.tail_start == w.tail_start);
        CHECK(texts[k] == std::optional<std::string>(w.text) && r.text(s, k) == texts[k]);
      }
      CHECK(inc.size() == 3 && inc[2].index == 2 && std::fabs(inc[2].score - 0.2031428571) < 1e-9);  // ~0.2031428
      const std::string json = r.json(s);
      CHECK(json.find("\"tokens_added\":948") != std::string::npos &&
            json.find("\"head_end\":3647") != std::string::npos);

      // The report's text needs the list it was made from.
      expect_error<cupel::OutOfRange>([&] { r.text(s, 3); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                      "i 3 is out of range: the report includes 3 items");
      expect_error<cupel::InvalidArgument>([&] { r.text(nullptr, 0); }, CUPEL_ERROR_NULL_POINTER, "items is null");
      cupel::Items empty, plain, short_content;
      expect_error<cupel::InvalidArgument>([&] { r.texts(empty); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                           "is not in items, which holds 0 items");
      plain.push_many({40, 9000, 2800}, {0.9, 0.8, 0.6});
      expect_error<cupel::InvalidArgument>([&] { r.text(plain, order[0] == 1 ? 0 : 1); },
                                           CUPEL_ERROR_INVALID_ARGUMENT,
                                           "(item 1) is its variant 1, but items holds 0 variants of it");
      short_content.push_many({40, 9000, 2800}, {0.9, 0.8, 0.6});
      short_content.set_contents(0, {question, "(the build log)", "a short text"});
      short_content.add_variant(1, 12, 0.1, cleared);
      expect_error<cupel::InvalidArgument>([&] { r.texts(short_content); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                           "keeps bytes [0, 3647) and [10890, end) of a content of 12 bytes");
    }

    // The pipeline keeps its own reference to the tokenizer; null or
    // clear_tokenizer removes it.
    {
      cupel::Pipeline p(nullptr, greedy, nullptr);
      {
        cupel::Tokenizer short_lived("o200k_base");
        p.set_tokenizer(&short_lived);
      }
      cupel::Report r;
      CHECK(p.run(s, b, &r) == (V{0, 1, 2}) && r.selected_tokens() == 1000);
      p.set_tokenizer(nullptr);
      expect_error<cupel::InvalidArgument>([&] { p.run(s, b); }, CUPEL_ERROR_INVALID_ARGUMENT, "item 2");
      p.set_tokenizer(tok);
      CHECK(p.run(s, b).size() == 3);
      p.clear_tokenizer();
      expect_error<cupel::InvalidArgument>([&] { p.run(s, b); }, CUPEL_ERROR_INVALID_ARGUMENT, "tokenizer");
      p.clear_tokenizer();  // a no-op without one

      // No longer truncatable: the document is left out whole, no tokenizer needed.
      s.clear_truncatable(2);
      CHECK(!s.at(2).truncatable);
      CHECK(p.run(s, b, &r) == (V{0, 1}) && r.selected_tokens() == 52);
      const std::vector<cupel::Decision> ex = r.excluded();
      CHECK(ex.size() == 1 && ex[0].index == 2 && ex[0].reason == cupel::Reason::BudgetExceeded);
      CHECK(ex.size() == 1 && ex[0].variant == 0 && ex[0].added_tokens == 0 && ex[0].head_end == 0);
      s.clear_truncatable(2);  // a no-op now
      s.set_truncatable(2, {cupel::Keep::Tail, 2900});  // more than the item: never cut
      CHECK(s.at(2).truncatable == std::optional<cupel::Truncatable>(cupel::Truncatable{cupel::Keep::Tail, 2900}));
      p.set_tokenizer(tok);
      CHECK(p.run(s, b, &r) == (V{0, 1}));
    }
  }

  // Items that shrink: a variant without content is sent as nothing; an item
  // without content too (its cut is (0, 0)); a cut keeping both ends of
  // non-ASCII text falls on character boundaries, its offsets in bytes.
  {
    cupel::Tokenizer tok("o200k_base");
    std::string jp;
    for (int i = 0; i < 40; i++) jp += "日本語のテキストを数えます。";
    cupel::Items m;
    m.push(100, 0.9);               // 0: no content, a variant without content
    m.add_variant(0, {10, 0.5});
    m.push(5, 0.1);                 // 1: no content, as pushed
    m.push_text(tok, jp, 0.8);      // 2: cut keeping both ends
    m.set_truncatable(2, cupel::Keep::BothEnds, 4);
    CHECK(m.at(0).variants == (std::vector<cupel::Variant>{{10, 0.5, std::nullopt}}));
    CHECK(m.at(2).truncatable->keep == cupel::Keep::BothEnds && m.at(2).truncatable->min_tokens == 4);
    cupel::Budget small(60, 60);
    cupel::Pipeline p(nullptr, greedy, nullptr);
    p.set_tokenizer(tok);
    cupel::Report r;
    p.run(m, small, &r);
    const std::vector<cupel::Decision> inc = r.included();
    bool saw_variant = false, saw_plain = false, saw_cut = false;
    for (size_t k = 0; k < inc.size(); k++) {
      const cupel::Decision &d = inc[k];
      const std::optional<std::string> text = r.text(m, k);
      if (d.index == 0) {
        saw_variant = d.reason == cupel::Reason::Variant && d.variant == 1 && d.added_tokens == 10 && !text &&
                      d.head_end == 0 && d.tail_start == 0;
      } else if (d.index == 1) {
        saw_plain = d.reason == cupel::Reason::Scored && d.variant == 0 && d.added_tokens == 5 && !text &&
                    d.head_end == 0 && d.tail_start == 0;
      } else if (d.index == 2) {
        saw_cut = d.reason == cupel::Reason::Truncated && d.variant == 0 && d.added_tokens == 45 &&
                  d.added_tokens >= 4 && d.head_end > 0 && d.head_end < d.tail_start && d.tail_start < jp.size() &&
                  char_boundary(jp, d.head_end) && char_boundary(jp, d.tail_start) &&
                  text == jp.substr(0, d.head_end) + jp.substr(d.tail_start) &&
                  tok.count(jp.substr(0, d.head_end)) + tok.count(jp.substr(d.tail_start)) == d.added_tokens;
      }
    }
    CHECK(inc.size() == 3 && saw_variant && saw_plain && saw_cut);
    CHECK(r.selected_tokens() == 60);
  }

  // Items that shrink: bad input throws, names the argument and changes nothing.
  {
    cupel::Items e;
    e.push(100, 0.5);
    e.set_content(0, "x");
    using IA = cupel::InvalidArgument;
    expect_error<IA>([&] { e.add_variant(0, 5, 0.0); }, CUPEL_ERROR_INVALID_ARGUMENT, "value is 0 for a variant");
    expect_error<IA>([&] { e.add_variant(0, 5, 1.5, "y"); }, CUPEL_ERROR_INVALID_ARGUMENT, "value is 1.5");
    expect_error<IA>([&] { e.add_variant(0, 5, -0.5); }, CUPEL_ERROR_INVALID_ARGUMENT, "value is -0.5");
    expect_error<IA>([&] { e.add_variant(0, 5, 0.0 / 0.0); }, CUPEL_ERROR_INVALID_ARGUMENT, "value is NaN");
    expect_error<IA>([&] { e.add_variant(0, -1, 0.5); }, CUPEL_ERROR_INVALID_ARGUMENT, "tokens is -1");
    expect_error<IA>([&] { e.add_variant(0, 5, 0.5, ""); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "content of a variant of item 0 is empty");
    expect_error<IA>([&] { e.add_variant(0, {5, 0.5, std::string()}); }, CUPEL_ERROR_INVALID_ARGUMENT, "content");
    expect_error<IA>([&] { e.add_variant(0, 5, 0.5, "\xff\xfe"); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "content is not valid UTF-8");
    expect_error<IA>([&] { e.add_variant(0, 5, 0.5, std::string("a\0b", 3)); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "content holds a NUL byte at offset 1");
    expect_error<cupel::OutOfRange>([&] { e.add_variant(1, 5, 0.5); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "index 1 is out of range: the list holds 1 items");
    expect_error<cupel::OutOfRange>([&] { e.add_variant(SIZE_MAX, {5, 0.5}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "index");
    CHECK(e.at(0).variants.empty());
    e.set_truncatable(0, cupel::Keep::Tail, 3);
    expect_error<IA>([&] { e.set_truncatable(0, static_cast<cupel::Keep>(7), 1); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "keep is 7");
    expect_error<IA>([&] { e.set_truncatable(0, cupel::Keep::Head, -1); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "min_tokens is -1");
    expect_error<cupel::OutOfRange>([&] { e.set_truncatable(1, cupel::Keep::Head, 1); },
                                    CUPEL_ERROR_INVALID_ARGUMENT, "index 1 is out of range");
    expect_error<cupel::OutOfRange>([&] { e.clear_truncatable(1); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "index 1 is out of range");
    CHECK(e.size() == 1 &&
          e.at(0).truncatable == std::optional<cupel::Truncatable>(cupel::Truncatable{cupel::Keep::Tail, 3}));
    // At most 255 variants; the 256th is refused.
    for (int v = 1; v <= 255; v++) e.add_variant(0, v, 1.0);
    expect_error<IA>([&] { e.add_variant(0, 1, 1.0); }, CUPEL_ERROR_INVALID_ARGUMENT, "255 variants already");
    const cupel::Item full = e.at(0);
    CHECK(full.variants.size() == 255 && full.variants[254].tokens == 255 && !full.variants[0].content);

    // Moved-from handles are refused before they reach C.
    cupel::Items taker = std::move(e);
    expect_error<cupel::ClosedHandle>([&] { e.add_variant(0, 5, 0.5); }, CUPEL_ERROR_NULL_POINTER,
                                      "items is a moved-from");
    expect_error<cupel::ClosedHandle>([&] { e.add_variant(0, 5, 0.5, "y"); }, CUPEL_ERROR_NULL_POINTER, "items");
    expect_error<cupel::ClosedHandle>([&] { e.set_truncatable(0, cupel::Keep::Head, 1); },
                                      CUPEL_ERROR_NULL_POINTER, "items is a moved-from");
    expect_error<cupel::ClosedHandle>([&] { e.clear_truncatable(0); }, CUPEL_ERROR_NULL_POINTER, "items");
    cupel::Tokenizer tok("o200k_base");
    cupel::Pipeline p(nullptr, greedy, nullptr);
    cupel::Tokenizer tok_taker = std::move(tok);
    expect_error<cupel::ClosedHandle>([&] { p.set_tokenizer(tok); }, CUPEL_ERROR_NULL_POINTER,
                                      "tokenizer is a moved-from");
    expect_error<cupel::ClosedHandle>([&] { p.set_tokenizer(&tok); }, CUPEL_ERROR_NULL_POINTER,
                                      "tokenizer is a moved-from");
    cupel::Pipeline p_taker = std::move(p);
    expect_error<cupel::ClosedHandle>([&] { p.set_tokenizer(tok_taker); }, CUPEL_ERROR_NULL_POINTER,
                                      "pipeline is a moved-from");
    expect_error<cupel::ClosedHandle>([&] { p.clear_tokenizer(); }, CUPEL_ERROR_NULL_POINTER, "pipeline");
    cupel::Report r;
    cupel::Report r_taker = std::move(r);
    expect_error<cupel::ClosedHandle>([&] { r.texts(taker); }, CUPEL_ERROR_NULL_POINTER, "report");
    expect_error<cupel::ClosedHandle>([&] { r_taker.texts(e); }, CUPEL_ERROR_NULL_POINTER, "items is a moved-from");
    CHECK(taker.size() == 1 && taker.at(0).variants.size() == 255);
  }

  // Undoing pushes: truncate(len) drops the items from len on, with their
  // attributes and the kinds only they used.
  {
    cupel::Items t;
    t.push_many({1, 2, 3}, {0.1, 0.2, 0.3}, {"Message", "Odd", "Message"});
    t.set_content(2, "c");
    t.add_variant(2, 1, 0.5);
    t.truncate(1);
    CHECK(t.size() == 1 && t.at(0).tokens == 1);
    t.push(5, 0.5, "odd");  // "Odd" left with its only item: spelled as pushed now
    const cupel::Item again = t.at(1);
    CHECK(again.kind == "odd" && again.tokens == 5 && !again.content && again.variants.empty());
    t.truncate(2);  // the size itself: nothing to drop
    CHECK(t.size() == 2);
    expect_error<cupel::OutOfRange>([&] { t.truncate(3); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "len 3 is out of range: the list holds 2 items");
    CHECK(t.size() == 2);
    // The undo it is for: push, fail to set an attribute, go back.
    const size_t mark = t.size();
    t.push(7, 0.7);
    try {
      t.set_content(mark, "\xff");
      CHECK(false);
    } catch (const cupel::InvalidArgument &) {
      t.truncate(mark);
    }
    CHECK(t.size() == mark);
    t.truncate(0);
    CHECK(t.size() == 0);
    cupel::Items taker = std::move(t);
    expect_error<cupel::ClosedHandle>([&] { t.truncate(0); }, CUPEL_ERROR_NULL_POINTER, "items is a moved-from");
  }

  // Packed strings: kinds and contents as one buffer of NUL-terminated strings.
  {
    using namespace std::string_literals;
    cupel::Items pk;
    pk.push_many_packed({10, 20, 30}, {0.1, 0.2, 0.3}, "Document\0\0ToolOutput\0"s);
    pk.push_many_packed({40}, {0.4});  // no kinds: the default
    const int64_t tk[] = {1, 2};
    const double sc[] = {0.5, 0.6};
    pk.push_many_packed(2, tk, sc, "alpha\0beta\0"s);
    CHECK(pk.size() == 6);
    CHECK(pk.at(0).kind == "Document" && pk.at(1).kind == "Message" && pk.at(2).kind == "ToolOutput");
    CHECK(pk.at(3).kind == "Message" && pk.at(4).kind == "alpha" && pk.at(5).kind == "beta");
    CHECK(pk.at(2).tokens == 30 && pk.at(2).score == 0.3 && pk.at(5).tokens == 2 && pk.at(5).score == 0.6);
    pk.set_contents_packed(0, 3, "first\0\0third\0"s);
    CHECK(pk.at(0).content == std::optional<std::string>("first") && !pk.at(1).content &&
          pk.at(2).content == std::optional<std::string>("third"));
    pk.set_contents_packed(1, 2, "second\0\0"s);  // an empty string leaves item 2 as it is
    CHECK(pk.at(1).content == std::optional<std::string>("second") &&
          pk.at(2).content == std::optional<std::string>("third"));
    pk.set_contents_packed(6, 0, "");  // nothing, at the end
    using IA = cupel::InvalidArgument;
    expect_error<IA>([&] { pk.push_many_packed({1, 2}, {0.5, 0.5}, "A\0"s); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "kinds holds 1 NUL-terminated strings in 2 bytes; count is 2");
    expect_error<IA>([&] { pk.push_many_packed({1, 2}, {0.5, 0.5}, "A\0 \0"s); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "kinds[1]");
    expect_error<IA>([&] { pk.push_many_packed({1, 2}, {0.5, 0.5}, "A\0\xff\0"s); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "kinds[1] is not valid UTF-8");
    expect_error<IA>([&] { pk.push_many_packed({1, 2}, {0.5, 0.0 / 0.0}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "scores[1] is NaN");
    expect_error<IA>([&] { pk.push_many_packed({1, 2}, {0.5}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "2 tokens and 1 scores");
    expect_error<IA>([&] { pk.push_many_packed(2, nullptr, sc); }, CUPEL_ERROR_NULL_POINTER, "");
    CHECK(pk.size() == 6);
    expect_error<cupel::OutOfRange>([&] { pk.set_contents_packed(5, 2, "a\0b\0"s); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "first 5 with 2 values is out of range: the list holds 6 items");
    expect_error<IA>([&] { pk.set_contents_packed(0, 2, "a\0"s); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "contents holds 1 NUL-terminated strings in 2 bytes; count is 2");
    expect_error<IA>([&] { pk.set_contents_packed(0, 2, "a\0\xff\0"s); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "contents[1] is not valid UTF-8");
    CHECK(pk.at(0).content == std::optional<std::string>("first") &&
          pk.at(1).content == std::optional<std::string>("second"));
  }

  // Sessions: cache-stable selection across turns. Keys and volatile flags
  // read back; the first run is the pipeline's, the next ones append after
  // the previous output; a volatile item goes last; a failed run changes
  // nothing; reset starts over; the report and the breakpoints.
  {
    using V = std::vector<size_t>;
    using IA = cupel::InvalidArgument;
    cupel::Items chat;  // a pinned system prompt, then three messages, oldest first
    chat.push_many({100, 50, 60, 70}, {1.0, 0.9, 0.8, 0.7}, {"SystemPrompt", "Message", "Message", "Message"});
    chat.set_contents(0, {"system: be brief", "user: hi", "assistant: hello", "user: what is cupel?"});
    chat.set_timestamps(0, {0, 1000, 2000, 3000});
    chat.set_pinned(0, true);
    chat.set_keys(0, {1, 2, 3, 4});
    CHECK(chat.key(0) == 1 && chat.key(3) == 4 && !chat.is_volatile(1));
    const cupel::Item read = chat.at(2);
    CHECK(read.key == 3 && !read.is_volatile);
    chat.set_key(3, UINT64_MAX);  // every uint64_t is a key
    CHECK(chat.key(3) == UINT64_MAX && chat.at(3).key == UINT64_MAX);
    chat.set_key(3, 4);
    chat.set_volatile(2, true);
    CHECK(chat.is_volatile(2) && chat.at(2).is_volatile);
    chat.set_volatile_many(1, {false, false, false});
    CHECK(!chat.is_volatile(2) && !chat.at(2).is_volatile && chat.at(1).key == 2);
    expect_error<cupel::OutOfRange>([&] { chat.set_key(4, 9); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "index 4 is out of range");
    expect_error<cupel::OutOfRange>([&] { chat.set_volatile(4, true); }, CUPEL_ERROR_INVALID_ARGUMENT, "index 4");
    expect_error<cupel::OutOfRange>([&] { chat.key(4); }, CUPEL_ERROR_INVALID_ARGUMENT, "index 4");
    expect_error<cupel::OutOfRange>([&] { chat.is_volatile(4); }, CUPEL_ERROR_INVALID_ARGUMENT, "index 4");
    expect_error<cupel::OutOfRange>([&] { chat.set_keys(3, {7, 8}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "first 3 with 2 values is out of range");
    expect_error<cupel::OutOfRange>([&] { chat.set_volatile_many(4, {true}); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                    "first 4 with 1 values");
    CHECK(chat.key(3) == 4 && !chat.is_volatile(3));

    auto sl = cupel::Slicer::greedy();
    auto chrono = cupel::Placer::chronological();
    cupel::Budget turn(1000, 1000);
    std::optional<cupel::Pipeline> pipeline;
    pipeline.emplace(nullptr, sl, &chrono);
    const V fresh = pipeline->run(chat, turn);
    CHECK(fresh == (V{0, 1, 2, 3}));
    cupel::Session s(*pipeline);
    cupel::Session control(*pipeline);  // the same turns, without the failed runs
    pipeline.reset();                   // the sessions keep their own copies
    CHECK(s.slack() == 0.2);
    CHECK(s.last_action() == cupel::SessionAction::First);
    CHECK(s.stable_prefix() == (cupel::StablePrefix{0, 0}));
    CHECK(s.breakpoints().empty());

    // Turn 1: the pipeline's selection, nothing cached yet.
    CHECK(s.run(chat, turn) == fresh);
    CHECK(control.run(chat, turn) == fresh);
    CHECK(s.last_action() == cupel::SessionAction::First && std::string(cupel::to_string(s.last_action())) == "first");
    CHECK(s.stable_prefix() == (cupel::StablePrefix{0, 0}));
    // Turn 2, the same list: all of it is the stable prefix.
    CHECK(s.run(chat, turn) == fresh);
    CHECK(control.run(chat, turn) == fresh);
    CHECK(s.last_action() == cupel::SessionAction::Append);
    CHECK(s.stable_prefix() == (cupel::StablePrefix{4, 280}));
    // pinned after the system prompt; the stable prefix and the end fall together (the later mark)
    CHECK(s.breakpoints() ==
          (std::vector<cupel::Breakpoint>{{1, 100, cupel::BreakpointMark::Pinned}, {4, 280, cupel::BreakpointMark::End}}));

    // A failed run (duplicate keys) throws, names both indices and "key", and changes nothing.
    chat.push(40, 0.6);
    chat.set_content(4, "assistant: a context selector");
    chat.set_timestamp(4, 4000);
    chat.set_key(4, 2);
    cupel::Report failed_report;
    expect_error<IA>([&] { s.run(chat, turn, &failed_report); }, CUPEL_ERROR_INVALID_ARGUMENT,
                     "items 1 and 4 have the same key 2");
    CHECK(s.last_action() == cupel::SessionAction::Append && s.stable_prefix() == (cupel::StablePrefix{4, 280}));
    // Turn 3: the new item fits, so it goes after the old output, which is the stable prefix.
    chat.set_key(4, 5);
    cupel::Report report;
    const V turn3 = s.run(chat, turn, &report);
    CHECK(turn3 == (V{0, 1, 2, 3, 4}));
    CHECK(control.run(chat, turn) == turn3);
    CHECK(s.last_action() == cupel::SessionAction::Append);
    CHECK(s.stable_prefix() == (cupel::StablePrefix{4, 280}) && control.stable_prefix() == s.stable_prefix());
    CHECK(s.breakpoints() == control.breakpoints());
    const std::string json = report.json(chat);
    CHECK(json.find("\"session\":{\"action\":\"append\"") != std::string::npos);
    CHECK(json.find("\"stablePrefixItems\":4,\"stablePrefixTokens\":280") != std::string::npos);
    CHECK(json.find("\"breakpoints\":[{\"at\":\"pinned\",\"items\":1,\"tokens\":100}") != std::string::npos);
    // Turn 4: a volatile item (this turn's retrieved document, oldest by
    // timestamp) is placed after every other item.
    chat.push(30, 0.95, "Document");
    chat.set_content(5, "retrieved: cupel docs");
    chat.set_timestamp(5, 500);
    chat.set_volatile(5, true);
    CHECK(pipeline_places(sl, chrono, chat, turn) == (V{0, 5, 1, 2, 3, 4}));  // alone: after the pinned prompt
    const V turn4 = s.run(chat, turn);
    CHECK(turn4 == (V{0, 1, 2, 3, 4, 5}));
    CHECK(s.last_action() == cupel::SessionAction::Append && s.stable_prefix() == (cupel::StablePrefix{5, 320}));
    const std::vector<cupel::Breakpoint> bps = s.breakpoints();
    CHECK(!bps.empty() && bps.size() <= 4);
    for (size_t k = 1; k < bps.size(); k++) CHECK(bps[k - 1].items < bps[k].items && bps[k - 1].tokens < bps[k].tokens);
    CHECK(bps.back() == (cupel::Breakpoint{5, 320, cupel::BreakpointMark::End}));  // before the volatile item
    CHECK(std::string(cupel::to_string(cupel::BreakpointMark::Compaction)) == "compaction");

    // Deferred: an item the last run left out stays out while the session
    // appends, even when a larger budget would let the pipeline take it.
    {
      cupel::Items three;
      three.push_many({100, 200, 50}, {0.9, 0.5, 0.1});
      three.set_contents(0, {"a", "b", "c"});
      three.set_timestamps(0, {1, 2, 3});
      cupel::Pipeline given(nullptr, sl, &chrono);
      cupel::Session d(given);
      cupel::Budget small(300, 250), large(400, 400);
      CHECK(d.run(three, small) == (V{0, 2}));
      CHECK(given.run(three, large) == (V{0, 1, 2}));
      cupel::Report r;
      CHECK(d.run(three, large, &r) == (V{0, 2}));
      CHECK(d.last_action() == cupel::SessionAction::Append);
      const std::vector<cupel::Decision> out = r.excluded();
      CHECK(out.size() == 1 && out[0].index == 1 && out[0].reason == cupel::Reason::Deferred);
      CHECK(r.json(three).find("\"reason\":\"Deferred\"") != std::string::npos);
    }
    CHECK(std::string(cupel::to_string(cupel::Reason::Deferred)) == "Deferred");
    CHECK(std::string(cupel::reason_name(CUPEL_REASON_DEFERRED)) == "Deferred" && CUPEL_REASON_DEFERRED == 19);

    // Bad slack: refused naming the fraction, the slack unchanged.
    s.set_slack(0.3);
    CHECK(s.slack() == 0.3);
    s.set_slack(0);
    CHECK(s.slack() == 0);
    expect_error<IA>([&] { s.set_slack(1); }, CUPEL_ERROR_INVALID_ARGUMENT, "fraction is 1");
    expect_error<IA>([&] { s.set_slack(-0.1); }, CUPEL_ERROR_INVALID_ARGUMENT, "fraction is -0.1");
    expect_error<IA>([&] { s.set_slack(0.0 / 0.0); }, CUPEL_ERROR_INVALID_ARGUMENT, "fraction is NaN");
    CHECK(s.slack() == 0);

    // Reset: the next run is a first run again; the slack stays.
    s.reset();
    CHECK(s.last_action() == cupel::SessionAction::First && s.stable_prefix() == (cupel::StablePrefix{0, 0}));
    CHECK(s.breakpoints().empty() && s.slack() == 0);
    CHECK(s.run(chat, turn) == (V{0, 1, 2, 3, 4, 5}));
    CHECK(s.last_action() == cupel::SessionAction::First && s.stable_prefix() == (cupel::StablePrefix{0, 0}));

    // Null and moved-from handles; the session counts as a live handle.
    expect_error<IA>([] { cupel::Session bad(static_cast<const cupel::Pipeline *>(nullptr)); },
                     CUPEL_ERROR_NULL_POINTER, "pipeline is null");
    cupel::Pipeline gone(nullptr, sl, nullptr);
    cupel::Pipeline gone_taker = std::move(gone);
    expect_error<cupel::ClosedHandle>([&] { cupel::Session bad(gone); }, CUPEL_ERROR_NULL_POINTER,
                                      "pipeline is a moved-from");
    expect_error<IA>([&] { s.run(static_cast<const cupel::Items *>(nullptr), turn); }, CUPEL_ERROR_NULL_POINTER,
                     "items is null");
    const size_t live = cupel::live_handles();
    {
      cupel::Session extra(gone_taker);
      CHECK(cupel::live_handles() == live + 1);
      cupel::Session taker = std::move(extra);
      CHECK(cupel::live_handles() == live + 1);
      expect_error<cupel::ClosedHandle>([&] { extra.run(chat, turn); }, CUPEL_ERROR_NULL_POINTER,
                                        "session is a moved-from");
      expect_error<cupel::ClosedHandle>([&] { extra.set_slack(0.1); }, CUPEL_ERROR_NULL_POINTER, "session");
      expect_error<cupel::ClosedHandle>([&] { extra.stable_prefix(); }, CUPEL_ERROR_NULL_POINTER, "session");
      expect_error<cupel::ClosedHandle>([&] { extra.reset(); }, CUPEL_ERROR_NULL_POINTER, "session");
      CHECK(taker.run(chat, turn).size() == 6);
    }
    CHECK(cupel::live_handles() == live);
  }

  // The library: its version is the header's; live handles count the C
  // handles owned, a move transfers one, and destruction frees each once.
  {
    const std::string header_version = std::to_string(CUPEL_VERSION_MAJOR) + "." +
                                       std::to_string(CUPEL_VERSION_MINOR) + "." +
                                       std::to_string(CUPEL_VERSION_PATCH);
    CHECK(cupel::version() == CUPEL_VERSION_STRING && cupel::version() == header_version);
    CHECK(cupel::abi_version() == CUPEL_ABI_VERSION && cupel::abi_version() == 2);

    const size_t before = cupel::live_handles();
    CHECK(before > 0);  // this test's items, budget, slicers are alive
    {
      cupel::Items a;
      cupel::Budget bb(10, 10);
      cupel::Tokenizer t("o200k_base");
      CHECK(cupel::live_handles() == before + 3);
      cupel::Items moved_to = std::move(a);
      CHECK(cupel::live_handles() == before + 3);  // moved, not copied
      moved_to = cupel::Items();                   // the old list is freed, the new one kept
      CHECK(cupel::live_handles() == before + 3);
      cupel::Pipeline p(nullptr, greedy, nullptr);
      p.set_tokenizer(t);
      cupel::Report r;
      CHECK(cupel::live_handles() == before + 5);
      try {
        cupel::Budget bad(10, 20);
        CHECK(false);
      } catch (const cupel::InvalidArgument &) {
      }
      CHECK(cupel::live_handles() == before + 5);  // a failed constructor owns nothing
    }
    CHECK(cupel::live_handles() == before);
  }

  cupel::Slicer moved = std::move(greedy);  // RAII: the moved-from handle is empty
  CHECK(moved.get() != nullptr && greedy.get() == nullptr);
  expect_error<cupel::ClosedHandle>([&] { cupel::slice(greedy, items, budget); }, CUPEL_ERROR_NULL_POINTER,
                                    "slicer is a moved-from");
  auto b2 = budget.effective(50);
  CHECK(b2.first == 250 && b2.second == 250);

  std::printf("test_cupel_cpp: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
