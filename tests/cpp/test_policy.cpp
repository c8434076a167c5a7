// Tests of bindings/cpp/cupel.hpp's policies as data (issue 29): pipelines
// and budgets from and to JSON (round trips, every validation error with its
// class and JSON path, what cannot be written), the presets against
// docs/policies.md's table, policy sensitivity (items matched by index, not
// content; errors; a buffer sized twice runs the traces once), report
// analytics (edge cases), tracing (events per level, their fields, the
// callback's lifetime, exceptions thrown by it, sessions, threads) and the
// one-call path against the long-hand calls on several data sets, with its
// errors.
#include "cupel.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
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

static bool contains(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

// The contract table's fixture: 3 items (tokens 100/200/50, scores
// 0.9/0.5/0.1, kinds Message/Document/ToolOutput, contents alpha/beta/gamma,
// timestamps 1000/2000/3000), a budget 300/250, recency + greedy +
// chronological.
struct Fixture {
  cupel::Items items;
  cupel::Budget budget{300, 250};
  cupel::Slicer greedy = cupel::Slicer::greedy();
  cupel::Scorer recency = cupel::Scorer::recency();
  cupel::Placer chronological = cupel::Placer::chronological();
  cupel::Pipeline pipeline{&recency, greedy, &chronological};
  Fixture() {
    items.push_many({100, 200, 50}, {0.9, 0.5, 0.1}, {"Message", "Document", "ToolOutput"});
    items.set_contents(0, {"alpha", "beta", "gamma"});
    items.set_timestamps(0, {1000, 2000, 3000});
  }
};

// ---- pipelines and budgets as JSON ------------------------------------------

static void test_pipeline_json() {
  Fixture f;
  const char *doc = R"({"scorers":[{"type":"recency","weight":2},{"type":"kind","weight":1,
      "kindWeights":{"Message":1,"Document":0.5}}],"slicerType":"knapsack","knapsackBucketSize":50,
      "placerType":"uShaped","deduplicationEnabled":false,"overflowStrategy":"truncate",
      "quotas":[{"kind":"Document","maxPercent":60}],"name":"mine","description":"a test",
      "tokenizer":"cl100k_base","sessionSlack":0.3})";
  cupel::Pipeline p = cupel::Pipeline::from_json(doc);
  std::string text = p.to_json();
  CHECK(contains(text, "\"knapsackBucketSize\": 50") && contains(text, "\"placerType\": \"uShaped\""));
  CHECK(contains(text, "\"tokenizer\": \"cl100k_base\"") && contains(text, "\"name\": \"mine\""));
  // Read back and written again: the same text, the same selection.
  cupel::Pipeline back = cupel::Pipeline::from_json(text);
  CHECK(back.to_json() == text);
  CHECK(back.run(f.items, f.budget) == p.run(f.items, f.budget));
  CHECK(cupel::to_json(p) == text && cupel::to_json(&p) == text);
  // From a std::string and a std::string_view too.
  std::string owned = doc;
  CHECK(cupel::Pipeline::from_json(owned).to_json() == text);
  CHECK(cupel::Pipeline::from_json(std::string_view(owned)).to_json() == text);
  // A pipeline built by hand, as its document: the fixture's.
  cupel::Pipeline hand_back = cupel::Pipeline::from_json(f.pipeline.to_json());
  CHECK(hand_back.run(f.items, f.budget) == f.pipeline.run(f.items, f.budget));
  CHECK(contains(f.pipeline.to_json(), "\"type\": \"recency\""));
  // A pipeline without a scorer is written as one "given" entry.
  cupel::Pipeline given(nullptr, f.greedy, nullptr);
  CHECK(contains(given.to_json(), "\"type\": \"given\"") && contains(given.to_json(), "\"placerType\": \"none\""));

  // Every validation error is InvalidArgument (std::invalid_argument) with the path and the rule.
  const cupel_status inv = CUPEL_ERROR_INVALID_ARGUMENT;
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json(""); }, inv, "json is empty");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json(std::string_view()); }, inv, "json is empty");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json("null"); }, inv, "json $:");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json("{\"scorers\":"); }, inv,
                                       "json: malformed JSON at line 1 column");
  expect_error<cupel::InvalidArgument>(
      [] { cupel::Pipeline::from_json(R"({"scorers":[{"type":"recency","weight":-0.5}]})"); }, inv,
      "json $.scorers[0].weight: must be positive and finite (got -0.5)");
  expect_error<cupel::InvalidArgument>(
      [] { cupel::Pipeline::from_json(R"({"scorers":[{"type":"nope","weight":1}]})"); }, inv, "recency");
  expect_error<cupel::InvalidArgument>(
      [] { cupel::Pipeline::from_json(R"({"scorers":[{"type":"recency","weight":1}],"knapsackBucketSize":5})"); },
      inv, "json $.knapsackBucketSize: only valid when slicerType is \"knapsack\"");
  expect_error<cupel::InvalidArgument>(
      [] {
        cupel::Pipeline::from_json(
            R"({"scorers":[{"type":"recency","weight":1}],"quotas":[{"kind":"A","minPercent":80,"maxPercent":20}]})");
      },
      inv, "json $.quotas[0]: minPercent 80 exceeds maxPercent 20");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json(R"({"scorers":[]})"); }, inv, "$.scorers");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json("{\"scorers\":\"\xff\xfe\"}"); }, inv, "json");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::from_json(static_cast<const char *>(nullptr)); },
                                       CUPEL_ERROR_NULL_POINTER, "json is null");
  try {
    cupel::Pipeline::from_json("[1]");
    CHECK(false);
  } catch (const std::invalid_argument &e) {  // the standard base
    CHECK(contains(e.what(), "CUPEL_ERROR_INVALID_ARGUMENT: json $"));
  }

  // What the format cannot hold: Error (std::runtime_error), CUPEL_ERROR_UNSUPPORTED.
  cupel::Slicer count = cupel::Slicer::count_quota(f.greedy, {{"Message", 0, 2}});
  cupel::Slicer nested = cupel::Slicer::quota(count, {{"Document", 0, 50}});
  cupel::Pipeline unwritable(&f.recency, nested, &f.chronological);
  expect_error<cupel::Error>([&] { unwritable.to_json(); }, CUPEL_ERROR_UNSUPPORTED, "");
  try {
    unwritable.to_json();
  } catch (const std::runtime_error &) {
    passed++;
  }

  // Moved-from and null pipelines.
  cupel::Pipeline moved = std::move(p);
  expect_error<cupel::ClosedHandle>([&] { p.to_json(); }, CUPEL_ERROR_NULL_POINTER, "pipeline is a moved-from");
  expect_error<cupel::ClosedHandle>([&] { cupel::to_json(p); }, CUPEL_ERROR_NULL_POINTER, "pipeline is a moved-from");
  expect_error<cupel::InvalidArgument>([] { cupel::to_json(static_cast<const cupel::Pipeline *>(nullptr)); },
                                       CUPEL_ERROR_NULL_POINTER, "pipeline is null");
  CHECK(moved.to_json() == text);
}

static void test_budget_json() {
  Fixture f;
  cupel::Budget b = cupel::Budget::from_json(
      R"({"maxTokens":1000,"targetTokens":800,"outputReserve":100,"reservedSlots":{"SystemPrompt":50},
          "estimationSafetyMarginPercent":5})");
  std::string text = b.to_json();
  CHECK(contains(text, "\"maxTokens\": 1000") && contains(text, "\"targetTokens\": 800"));
  CHECK(contains(text, "\"outputReserve\": 100") && contains(text, "\"systemprompt\": 50"));  // kinds lower-cased
  CHECK(contains(text, "\"estimationSafetyMarginPercent\": 5"));
  cupel::Budget back = cupel::Budget::from_json(text);
  CHECK(back.to_json() == text && cupel::to_json(back) == text);
  CHECK(back.effective(0) == b.effective(0) && back.effective(30) == b.effective(30));
  // The same budget built by hand writes the same text.
  cupel::Budget hand(1000, 800);
  hand.set_output_reserve(100);
  hand.reserve("SystemPrompt", 50);
  hand.set_safety_margin(5);
  CHECK(hand.to_json() == text);
  // The contract's BUDGET selects as the fixture's budget.
  cupel::Budget doc = cupel::Budget::from_json(R"({"maxTokens":300,"targetTokens":250})");
  CHECK(f.pipeline.run(f.items, doc) == f.pipeline.run(f.items, f.budget));

  const cupel_status inv = CUPEL_ERROR_INVALID_ARGUMENT;
  expect_error<cupel::InvalidArgument>([] { cupel::Budget::from_json(R"({"targetTokens":1})"); }, inv,
                                       "json $.maxTokens: required");
  expect_error<cupel::InvalidArgument>([] { cupel::Budget::from_json(R"({"maxTokens":100,"targetTokens":250})"); },
                                       inv, "json $");
  expect_error<cupel::InvalidArgument>([] { cupel::Budget::from_json(R"({"maxTokens":-1,"targetTokens":0})"); },
                                       inv, "json $.maxTokens");
  expect_error<cupel::InvalidArgument>([] { cupel::Budget::from_json(""); }, inv, "json is empty");
  expect_error<cupel::InvalidArgument>([] { cupel::Budget::from_json("{"); }, inv, "json: malformed JSON");
  expect_error<cupel::InvalidArgument>([] { cupel::Budget::from_json(static_cast<const char *>(nullptr)); },
                                       CUPEL_ERROR_NULL_POINTER, "json is null");
  cupel::Budget gone = std::move(b);
  expect_error<cupel::ClosedHandle>([&] { b.to_json(); }, CUPEL_ERROR_NULL_POINTER, "budget is a moved-from");
  expect_error<cupel::InvalidArgument>([] { cupel::to_json(static_cast<const cupel::Budget *>(nullptr)); },
                                       CUPEL_ERROR_NULL_POINTER, "budget is null");
}

// ---- presets ----------------------------------------------------------------

static void test_presets() {
  const std::vector<std::string> names = {"Chat",        "CodeReview", "Rag",       "DocumentQa",
                                          "ToolUse",     "LongRunning", "Debugging", "AgentLoop"};
  CHECK(cupel::preset_names() == names);
  // docs/policies.md's table, as documents: each preset writes exactly what
  // the document for its row reads as (weights, slicer, bucket size, placer,
  // deduplication on, overflow throw, the KindScorer's default weights).
  struct Row {
    const char *name, *scorers, *slicer, *placer;
  };
  const Row table[] = {
      {"Chat", R"({"type":"recency","weight":3},{"type":"kind","weight":1})", "greedy", "chronological"},
      {"CodeReview", R"({"type":"kind","weight":2},{"type":"priority","weight":2},{"type":"recency","weight":1})",
       "greedy", "chronological"},
      {"Rag", R"({"type":"reflexive","weight":3},{"type":"kind","weight":1})", "greedy", "uShaped"},
      {"DocumentQa", R"({"type":"kind","weight":2},{"type":"reflexive","weight":2},{"type":"priority","weight":1})",
       "knapsack\",\"knapsackBucketSize\":100,\"x\":\"", "uShaped"},
      {"ToolUse", R"({"type":"kind","weight":2},{"type":"recency","weight":2},{"type":"priority","weight":1})",
       "greedy", "chronological"},
      {"LongRunning", R"({"type":"recency","weight":3},{"type":"frequency","weight":1},{"type":"kind","weight":1})",
       "greedy", "chronological"},
      {"Debugging", R"({"type":"priority","weight":3},{"type":"kind","weight":2},{"type":"recency","weight":1})",
       "greedy", "chronological"},
      {"AgentLoop", R"({"type":"recency","weight":3},{"type":"kind","weight":2},{"type":"reflexive","weight":1})",
       "greedy", "chronological"},
  };
  for (const Row &row : table) {
    cupel::Pipeline preset = cupel::Pipeline::preset(row.name);
    std::string written = preset.to_json();
    std::string doc = std::string("{\"name\":\"") + row.name + "\",\"scorers\":[" + row.scorers +
                      "],\"slicerType\":\"" + row.slicer + "\",\"placerType\":\"" + row.placer +
                      "\",\"deduplicationEnabled\":true,\"overflowStrategy\":\"throw\"";
    if (std::string(row.name) == "AgentLoop") {  // ours: its description, session slack and tokenizer
      std::optional<std::string> description = cupel::detail::top_level_string(written, "description");
      CHECK(description && contains(*description, "agent loop"));
      doc += ",\"description\":\"" + description.value_or("") + "\",\"sessionSlack\":0.2,\"tokenizer\":\"o200k_base\"";
    }
    doc += "}";
    std::string expected = cupel::Pipeline::from_json(doc).to_json();
    if (written != expected) std::fprintf(stderr, "preset %s:\n%s\nexpected:\n%s\n", row.name, written.c_str(), expected.c_str());
    CHECK(written == expected);
    // Case-insensitive, from a std::string too.
    std::string lower = row.name;
    for (char &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(cupel::Pipeline::preset(lower).to_json() == written);
  }
  // The weights are visible in the document.
  std::string chat = cupel::Pipeline::preset("Chat").to_json();
  CHECK(contains(chat, "\"weight\": 3.0") && contains(chat, "\"weight\": 1.0"));

  const cupel_status inv = CUPEL_ERROR_INVALID_ARGUMENT;
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::preset("Nope"); }, inv,
                                       "name \"Nope\" is no preset; the presets are Chat, CodeReview");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::preset(""); }, inv, "is no preset");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::preset(std::string("Chat\0x", 6)); }, inv,
                                       "name holds a NUL byte");
  expect_error<cupel::InvalidArgument>([] { cupel::Pipeline::preset(static_cast<const char *>(nullptr)); },
                                       CUPEL_ERROR_NULL_POINTER, "name is null");
}

// ---- policy sensitivity ---------------------------------------------------------

static void test_sensitivity() {
  // Four items, the first and the last of the same content: a chat preset
  // and a kind-only policy disagree about items 1 and 3.
  cupel::Items items;
  items.push_many({100, 200, 50, 100}, {0.9, 0.5, 0.1, 0.9}, {"Message", "Document", "ToolOutput", "Message"});
  items.set_contents(0, {"alpha", "beta", "gamma", "alpha"});
  items.set_timestamps(0, {1000, 2000, 3000, 4000});
  cupel::Budget budget(300, 250);
  cupel::Pipeline chat = cupel::Pipeline::preset("Chat");
  cupel::Pipeline kind = cupel::Pipeline::from_json(R"({"scorers":[{"type":"kind","weight":1}]})");
  std::string json = cupel::policy_sensitivity({{"a", chat}, {"b", kind}}, items, budget);
  // The diffs come first (keys in alphabetical order): items 1 and 3, by
  // index, although item 3's content is item 0's.
  const std::string diffs =
      R"({"diffs":[{"content":"beta","index":1,"statuses":[{"label":"a","status":"Excluded"},{"label":"b","status":"Included"}]},)"
      R"({"content":"alpha","index":3,"statuses":[{"label":"a","status":"Included"},{"label":"b","status":"Excluded"}]}],"variants":[)";
  CHECK(json.compare(0, diffs.size(), diffs) == 0);
  if (json.compare(0, diffs.size(), diffs) != 0) std::fprintf(stderr, "%s\n", json.substr(0, 400).c_str());
  // Each variant's report, in order, as Report::json writes it (but for timings).
  std::size_t a = json.find(R"({"label":"a","report":{"analytics":)"), b = json.find(R"({"label":"b","report":{)");
  CHECK(a != std::string::npos && b != std::string::npos && a < b);
  // Three variants, labels any UTF-8; a pipeline through a pointer.
  cupel::Pipeline rag = cupel::Pipeline::preset("Rag");
  std::string three = cupel::policy_sensitivity({{"chat", &chat}, {"kind", kind}, {"répertoire", rag}}, items, budget);
  CHECK(contains(three, R"("label":"répertoire")"));
  // Identical pipelines: no diffs.
  CHECK(cupel::policy_sensitivity({{"x", chat}, {"y", chat}}, items, budget).compare(0, 22, "{\"diffs\":[],\"variants\"") ==
        0);

  const cupel_status inv = CUPEL_ERROR_INVALID_ARGUMENT;
  expect_error<cupel::InvalidArgument>([&] { cupel::policy_sensitivity({{"a", chat}}, items, budget); }, inv,
                                       "count is 1");
  expect_error<cupel::InvalidArgument>([&] { cupel::policy_sensitivity({}, items, budget); }, inv, "count is 0");
  expect_error<cupel::InvalidArgument>(
      [&] {
        cupel::policy_sensitivity({{"a", chat}, {"b", static_cast<const cupel::Pipeline *>(nullptr)}}, items, budget);
      },
      CUPEL_ERROR_NULL_POINTER, "pipelines[1] is null");
  expect_error<cupel::InvalidArgument>(
      [&] { cupel::policy_sensitivity({{std::string("a\0b", 3), chat}, {"b", kind}}, items, budget); }, inv,
      "labels[0] holds a NUL byte");
  expect_error<cupel::InvalidArgument>(
      [&] { cupel::policy_sensitivity({{"a", chat}, {"\xff", kind}}, items, budget); }, inv, "labels[1]");
  expect_error<cupel::InvalidArgument>(
      [&] { cupel::policy_sensitivity({{"a", chat}, {"b", kind}}, static_cast<const cupel::Items *>(nullptr), budget); },
      CUPEL_ERROR_NULL_POINTER, "items is null");
  expect_error<cupel::InvalidArgument>(
      [&] { cupel::policy_sensitivity({{"a", chat}, {"b", kind}}, items, static_cast<const cupel::Budget *>(nullptr)); },
      CUPEL_ERROR_NULL_POINTER, "budget is null");
  // A variant whose run fails fails the call, naming its index and label.
  cupel::Items pinned;
  pinned.push(500, 1.0);
  pinned.set_pinned(0, true);
  pinned.push(10, 1.0);
  expect_error<cupel::InvalidArgument>([&] { cupel::policy_sensitivity({{"a", chat}, {"b", kind}}, pinned, budget); },
                                       CUPEL_ERROR_INVALID_ARGUMENT, "variant 0 (\"a\") failed: the pinned items need 500");
  cupel::Pipeline gone = std::move(kind);
  expect_error<cupel::ClosedHandle>([&] { cupel::policy_sensitivity({{"a", chat}, {"b", kind}}, items, budget); },
                                    CUPEL_ERROR_NULL_POINTER, "pipelines[1] is a moved-from");

  // An item whose text grows sixfold in JSON (control characters are
  // escaped as \u0001): the first buffer is short and the call is repeated
  // to size it, yet each variant's trace sees one run.
  cupel::Items big;
  big.push(100, 0.9, "Message");
  big.set_content(0, std::string(20000, '\x01'));
  big.push(100, 0.5, "Document");
  big.set_content(1, "short");
  cupel::Budget hundred(100, 100);
  int events_a = 0, events_b = 0;
  chat.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &) { events_a++; });
  gone.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &) { events_b++; });
  std::string long_json = cupel::policy_sensitivity({{"a", chat}, {"b", gone}}, big, hundred);
  CHECK(long_json.size() > 2 * 6 * 20000 && long_json.back() == '}');
  CHECK(events_a == 6 && events_b == 6);
  // A callback that throws: the call throws it.
  gone.set_trace(cupel::TraceLevel::Stages, [](const cupel::TraceEvent &) { throw std::domain_error("in b"); });
  try {
    cupel::policy_sensitivity({{"a", chat}, {"b", gone}}, items, budget);
    CHECK(false);
  } catch (const std::domain_error &e) {
    CHECK(std::string(e.what()) == "in b");
  }
}

// ---- analytics --------------------------------------------------------------------

static void test_analytics() {
  Fixture f;
  cupel::Report report;
  // An empty report: all three are 0.
  CHECK(report.budget_utilization() == 0 && report.kind_diversity(f.items) == 0 &&
        report.timestamp_coverage(f.items) == 0);
  f.pipeline.run(f.items, f.budget, &report);
  CHECK(std::fabs(report.budget_utilization() - 250.0 / 300.0) < 1e-12);
  CHECK(report.kind_diversity(f.items) == 2 && report.timestamp_coverage(f.items) == 1.0);
  cupel::Report::Analytics a = report.analytics(f.items);
  CHECK(a.budget_utilization == report.budget_utilization() && a.kind_diversity == 2 && a.timestamp_coverage == 1.0);
  CHECK(contains(report.json(f.items), "\"analytics\":{\"budgetUtilization\":"));
  // Kinds compared case-insensitively; half the included items timed.
  cupel::Items mixed;
  mixed.push_many({10, 10, 10, 10}, {1, 1, 1, 1}, {"Message", "message", "MESSAGE", "Document"});
  mixed.set_timestamp(0, 5);
  mixed.set_timestamp(3, 6);
  cupel::Budget forty(40, 40);
  cupel::Report r2;
  f.pipeline.run(mixed, forty, &r2);
  CHECK(r2.kind_diversity(mixed) == 2 && r2.timestamp_coverage(mixed) == 0.5 && r2.budget_utilization() == 1.0);
  // A zero budget: utilization 0 (the peers give NaN), nothing included.
  cupel::Budget zero(0, 0);
  cupel::Report r3;
  f.pipeline.run(f.items, zero, &r3);
  CHECK(r3.budget_utilization() == 0 && r3.kind_diversity(f.items) == 0 && r3.timestamp_coverage(f.items) == 0);
  // The wrong list, a null list, a moved-from report.
  cupel::Items one;
  one.push(10, 1.0);
  expect_error<cupel::InvalidArgument>([&] { report.kind_diversity(one); }, CUPEL_ERROR_INVALID_ARGUMENT, "");
  expect_error<cupel::InvalidArgument>([&] { report.timestamp_coverage(one); }, CUPEL_ERROR_INVALID_ARGUMENT, "");
  expect_error<cupel::InvalidArgument>([&] { report.kind_diversity(static_cast<const cupel::Items *>(nullptr)); },
                                       CUPEL_ERROR_NULL_POINTER, "items is null");
  cupel::Report moved = std::move(report);
  expect_error<cupel::ClosedHandle>([&] { report.budget_utilization(); }, CUPEL_ERROR_NULL_POINTER,
                                    "report is a moved-from");
  CHECK(moved.kind_diversity(f.items) == 2);
}

// ---- tracing ------------------------------------------------------------------------

static std::vector<cupel::TraceEvent> traced_run(cupel::TraceLevel level) {
  Fixture f;
  std::vector<cupel::TraceEvent> events;
  f.pipeline.set_trace(level, [&](const cupel::TraceEvent &e) { events.push_back(e); });
  CHECK(f.pipeline.traced());
  f.pipeline.run(f.items, f.budget);
  return events;
}

static void test_trace() {
  // The contract's fixture: 6 events at stages, 7 at exclusions, 9 at full.
  std::vector<cupel::TraceEvent> stages = traced_run(cupel::TraceLevel::Stages);
  std::vector<cupel::TraceEvent> exclusions = traced_run(cupel::TraceLevel::Exclusions);
  std::vector<cupel::TraceEvent> full = traced_run(cupel::TraceLevel::Full);
  CHECK(stages.size() == 6 && exclusions.size() == 7 && full.size() == 9);
  const char *names[] = {"cupel.stage.classify", "cupel.stage.score", "cupel.stage.deduplicate",
                         "cupel.stage.slice", "cupel.stage.place", "cupel.pipeline"};
  const char *stage_names[] = {"classify", "score", "deduplicate", "slice", "place", ""};
  for (std::size_t i = 0; i < stages.size(); i++) {
    CHECK(stages[i].name == names[i] && stages[i].stage == stage_names[i]);
    CHECK(stages[i].kind == (i < 5 ? cupel::TraceEventKind::Stage : cupel::TraceEventKind::Pipeline));
    CHECK(stages[i].verbosity == "StageOnly" && !stages[i].reason && stages[i].reason_name.empty());
    CHECK(stages[i].start_unix_nanos > 0);
  }
  CHECK(stages[0].item_count_in == 3 && stages[0].item_count_out == 3);
  const cupel::TraceEvent &pipeline = stages[5];
  CHECK(pipeline.max_tokens == 300 && pipeline.item_count_in == 3 && pipeline.item_count_out == 2 &&
        pipeline.exclusion_count == 1 && pipeline.duration_nanos > 0);
  // At exclusions: item 0 (100 tokens, the oldest Message) is left out by
  // the slice stage, which fills the target with items 1 and 2.
  CHECK(exclusions[3].name == "cupel.stage.slice" && exclusions[3].exclusion_count == 1 &&
        exclusions[3].item_count_in == 3 && exclusions[3].item_count_out == 2);
  const cupel::TraceEvent &ex = exclusions[4];
  CHECK(ex.kind == cupel::TraceEventKind::Exclusion && ex.name == "cupel.exclusion" && ex.item == 0);
  CHECK(ex.stage == "slice" && ex.reason == cupel::Reason::BudgetExceeded && ex.reason_name == "BudgetExceeded");
  CHECK(ex.item_kind == "Message" && ex.tokens == 100 && ex.verbosity == "StageAndExclusions");
  CHECK(exclusions[5].name == "cupel.stage.place" && exclusions[6].name == "cupel.pipeline");
  // At full: the included items after the place span, in placed order.
  CHECK(full[5].name == "cupel.stage.place" && full[6].name == "cupel.item.included" &&
        full[7].name == "cupel.item.included" && full[8].name == "cupel.pipeline");
  CHECK(full[6].kind == cupel::TraceEventKind::Included && full[6].item == 1 && full[6].item_kind == "Document" &&
        full[6].tokens == 200 && full[6].score > 0 && !full[6].reason && full[6].reason_name.empty());
  CHECK(full[7].item == 2 && full[7].item_kind == "ToolOutput" && full[7].tokens == 50 && full[7].score == 1.0);
  CHECK(full[8].verbosity == "Full" && full[8].item_count_out == 2);

  Fixture f;
  int count = 0;
  auto counter = [&](const cupel::TraceEvent &) { count++; };
  // Off: clear_trace, an empty callback.
  f.pipeline.set_trace(cupel::TraceLevel::Full, counter);
  f.pipeline.clear_trace();
  CHECK(!f.pipeline.traced());
  f.pipeline.run(f.items, f.budget);
  CHECK(count == 0);
  f.pipeline.set_trace(cupel::TraceLevel::Stages, counter);
  f.pipeline.set_trace(cupel::TraceLevel::Stages, cupel::TraceCallback());
  f.pipeline.run(f.items, f.budget);
  CHECK(count == 0 && !f.pipeline.traced());
  // A failed run sends nothing.
  cupel::Items over;
  over.push(500, 1.0);
  over.set_pinned(0, true);
  over.push(10, 1.0);
  f.pipeline.set_trace(cupel::TraceLevel::Full, counter);
  expect_error<cupel::InvalidArgument>([&] { f.pipeline.run(over, f.budget); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                       "the pinned items need 500 tokens");
  CHECK(count == 0);

  // The pipeline owns the callback: what it captures lives while it is set.
  auto held = std::make_shared<int>(0);
  f.pipeline.set_trace(cupel::TraceLevel::Stages, [held](const cupel::TraceEvent &) { ++*held; });
  CHECK(held.use_count() == 2);
  f.pipeline.run(f.items, f.budget);
  CHECK(*held == 6);
  {
    cupel::Pipeline moved = std::move(f.pipeline);  // the trace moves with the pipeline
    CHECK(held.use_count() == 2 && !f.pipeline.traced() && moved.traced());
    moved.run(f.items, f.budget);
    CHECK(*held == 12);
    // A session copies the pipeline with its trace, and keeps the callback
    // alive after the pipeline dropped it.
    std::optional<cupel::Session> session(moved);
    moved.clear_trace();
    CHECK(held.use_count() == 2 && !moved.traced());
    session->run(f.items, f.budget);
    CHECK(*held == 18);
    moved.run(f.items, f.budget);
    CHECK(*held == 18);
    session.reset();
    CHECK(held.use_count() == 1);
    f.pipeline = std::move(moved);
  }
  f.pipeline.set_trace(cupel::TraceLevel::Stages, [held](const cupel::TraceEvent &) { ++*held; });
  {
    cupel::Pipeline replaced = cupel::Pipeline::preset("Chat");
    std::swap(replaced, f.pipeline);  // the fixture's pipeline is destroyed at the end of the block
  }
  CHECK(held.use_count() == 1);
  expect_error<cupel::ClosedHandle>([&] { cupel::Pipeline gone = std::move(f.pipeline); f.pipeline.set_trace(cupel::TraceLevel::Stages, counter); },
                                    CUPEL_ERROR_NULL_POINTER, "pipeline is a moved-from");
  expect_error<cupel::InvalidArgument>([&] { cupel::set_trace(nullptr, cupel::TraceLevel::Stages, counter); },
                                       CUPEL_ERROR_NULL_POINTER, "pipeline is null");
  {
    cupel::Pipeline p = cupel::Pipeline::preset("Chat");
    count = 0;
    cupel::set_trace(&p, cupel::TraceLevel::Exclusions, counter);
    p.run(f.items, f.budget);
    CHECK(count == 7);  // Chat's kind weights exclude the same item of the fixture
    expect_error<cupel::InvalidArgument>(
        [&] { p.set_trace(static_cast<cupel::TraceLevel>(3), counter); }, CUPEL_ERROR_INVALID_ARGUMENT, "level");
    count = 0;
    p.run(f.items, f.budget);
    CHECK(count == 7);  // an unknown level changed nothing
  }

  // A callback that throws: nothing unwinds through C; the run throws it
  // (the same exception) and the run's later events are not delivered.
  {
    Fixture g;
    int seen = 0;
    g.pipeline.set_trace(cupel::TraceLevel::Full, [&](const cupel::TraceEvent &e) {
      seen++;
      if (e.name == "cupel.stage.score") throw std::out_of_range("host says no");
    });
    try {
      g.pipeline.run(g.items, g.budget);
      CHECK(false);
    } catch (const std::out_of_range &e) {
      CHECK(std::string(e.what()) == "host says no" && dynamic_cast<const cupel::Exception *>(&e) == nullptr);
    }
    CHECK(seen == 2);
    // Anything thrown, not only std::exception.
    g.pipeline.set_trace(cupel::TraceLevel::Stages, [](const cupel::TraceEvent &) { throw 42; });
    try {
      g.pipeline.run(g.items, g.budget);
      CHECK(false);
    } catch (int v) {
      CHECK(v == 42);
    }
    // The pipeline works on: a later run delivers again.
    seen = 0;
    g.pipeline.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &) { seen++; });
    CHECK(g.pipeline.run(g.items, g.budget).size() == 2 && seen == 6);
    // Through a session: the session has taken the turn all the same.
    g.pipeline.set_trace(cupel::TraceLevel::Stages, [](const cupel::TraceEvent &) { throw std::runtime_error("s"); });
    cupel::Session session(g.pipeline);
    try {
      session.run(g.items, g.budget);
      CHECK(false);
    } catch (const std::runtime_error &e) {
      CHECK(std::string(e.what()) == "s");
    }
    CHECK(session.last_action() == cupel::SessionAction::First);
    // A callback that runs another traced pipeline: each run gets its own events and exceptions.
    Fixture inner;
    int inner_seen = 0, outer_seen = 0;
    inner.pipeline.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &) {
      inner_seen++;
      throw std::logic_error("inner");
    });
    g.pipeline.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &e) {
      outer_seen++;
      if (e.name == "cupel.pipeline") {
        try {
          inner.pipeline.run(inner.items, inner.budget);
        } catch (const std::logic_error &) {
          outer_seen += 100;
        }
      }
    });
    g.pipeline.run(g.items, g.budget);
    CHECK(outer_seen == 106 && inner_seen == 1);
  }

  // Threads: each run's events go to its own thread, each thread's
  // exceptions to its own run.
  {
    Fixture t;
    std::atomic<int> events{0};
    const std::thread::id main_thread = std::this_thread::get_id();
    t.pipeline.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &) {
      events++;
      if (std::this_thread::get_id() == main_thread) throw std::runtime_error("main");
    });
    const cupel::Pipeline &shared = t.pipeline;
    std::vector<std::thread> threads;
    std::atomic<int> ok_runs{0};
    for (int k = 0; k < 4; k++)
      threads.emplace_back([&] {
        for (int r = 0; r < 25; r++)
          if (shared.run(t.items, t.budget).size() == 2) ok_runs++;
      });
    for (std::thread &th : threads) th.join();
    CHECK(ok_runs == 100 && events == 600);
    try {
      shared.run(t.items, t.budget);
      CHECK(false);
    } catch (const std::runtime_error &e) {
      CHECK(std::string(e.what()) == "main");
    }
  }
}

// ---- the one-call path ------------------------------------------------------------

// The long-hand calls on `messages`, one setter per attribute and message,
// with the groups given as the rules number them.
static std::vector<size_t> long_hand(const std::vector<cupel::Message> &ms, const std::vector<uint64_t> &groups,
                                     const cupel::Pipeline &pipeline, const cupel::Budget &budget,
                                     const char *tokenizer) {
  cupel::Tokenizer tok(tokenizer);
  cupel::Items items;
  bool any_timestamp = false;
  for (const cupel::Message &m : ms) any_timestamp = any_timestamp || m.timestamp;
  for (size_t i = 0; i < ms.size(); i++) {
    items.push_text(tok, ms[i].text, ms[i].score, ms[i].kind);
    if (groups[i]) items.set_group(i, groups[i]);
    if (ms[i].pinned) items.set_pinned(i, true);
    if (!any_timestamp) items.set_timestamp(i, static_cast<int64_t>(i));
    if (ms[i].timestamp) items.set_timestamp(i, *ms[i].timestamp);
    if (ms[i].priority) items.set_priority(i, *ms[i].priority);
    if (ms[i].relevance) items.set_relevance_hint(i, *ms[i].relevance);
    if (ms[i].key) items.set_key(i, ms[i].key);
  }
  return pipeline.run(items, budget);
}

static std::vector<std::string> texts_of(const std::vector<cupel::Message> &ms) {
  std::vector<std::string> out;
  for (const cupel::Message &m : ms) out.push_back(m.text);
  return out;
}

static std::vector<std::string> texts_at(const std::vector<cupel::Message> &ms, const std::vector<size_t> &at) {
  std::vector<std::string> out;
  for (size_t i : at) out.push_back(ms[i].text);
  return out;
}

// select() and select_indices() against the long hand: the same messages,
// in the same order; and a selection that keeps some and drops some.
static void same_as_long_hand(const std::vector<cupel::Message> &ms, const std::vector<uint64_t> &groups,
                              const std::vector<size_t> &indices, const std::vector<cupel::Message> &kept,
                              const cupel::Pipeline &pipeline, const cupel::Budget &budget, const char *tokenizer,
                              int line = __builtin_LINE()) {
  std::vector<size_t> want = long_hand(ms, groups, pipeline, budget, tokenizer);
  bool ok = indices == want && texts_of(kept) == texts_at(ms, want) && !want.empty() && want.size() < ms.size();
  if (ok) {
    passed++;
  } else {
    failed++;
    std::fprintf(stderr, "line %d: select gave", line);
    for (size_t i : indices) std::fprintf(stderr, " %zu", i);
    std::fprintf(stderr, ", the long hand");
    for (size_t i : want) std::fprintf(stderr, " %zu", i);
    std::fprintf(stderr, " (of %zu)\n", ms.size());
  }
}

static cupel::Message msg(std::string text, std::string kind = "Message") {
  cupel::Message m;
  m.text = std::move(text);
  m.kind = std::move(kind);
  return m;
}

static void test_select() {
  cupel::Tokenizer o200k("o200k_base");

  // 1. A chat: a pinned system prompt, no timestamps (positions), the Chat preset.
  std::vector<cupel::Message> chat = {
      msg("You are a careful assistant. Answer briefly.", "SystemPrompt"),
      msg("What does the build log say about the linker?"),
      msg("It fails at the final link step with an undefined reference to cupel_version."),
      msg("Which library provides it?"),
      msg("libcupel, built by cargo build --release --lib; add -lcupel."),
      msg("Thanks. And the rpath?"),
  };
  chat[0].pinned = true;
  const std::vector<uint64_t> no_groups(chat.size(), 0);
  int64_t all = 0;
  for (const cupel::Message &m : chat) all += o200k.count(m.text);
  const int64_t max = all / 2;
  {
    cupel::Pipeline p = cupel::Pipeline::preset("Chat");
    cupel::Budget b(max, max);
    same_as_long_hand(chat, no_groups, cupel::select_indices(chat, max), cupel::select(chat, max), p, b, "o200k_base");
    std::vector<cupel::Message> kept = cupel::select(chat, max);
    CHECK(!kept.empty() && kept[0].text == chat[0].text && kept[0].pinned && kept[0].kind == "SystemPrompt");
    // The default policy is Chat; a preset name any case; a std::string.
    CHECK(texts_of(cupel::select(chat, max, "chat")) == texts_of(kept));
    CHECK(texts_of(cupel::select(chat, max, std::string("Chat"))) == texts_of(kept));
    CHECK(texts_of(cupel::select(chat.data(), chat.size(), max)) == texts_of(kept));
    // Everything fits: all, in the given order; nothing fits: the pinned prompt alone cannot.
    CHECK(texts_of(cupel::select(chat, all)) == texts_of(chat));
    CHECK(cupel::select(std::vector<cupel::Message>{}, 100).empty());
    CHECK(cupel::select(std::vector<cupel::Message>{msg("hello")}, 0).empty());
  }

  // 2. An agent loop with tool calls: a call and its result, two parallel
  // calls and their results (one group, transitively), a group field
  // joining two notes, and a result whose call was dropped from the list.
  std::vector<cupel::Message> agent = {
      msg("You are a coding agent.", "SystemPrompt"),                                  // 0
      msg("Find where the refresh token TTL is set."),                                 // 1
      msg("call grep(refresh_ttl)"),                                                   // 2: group 1 (c1)
      msg(std::string(400, 'x') + " grep output", "ToolOutput"),                       // 3: group 1 (c1)
      msg("call read(a.rs) and read(b.rs)"),                                           // 4: group 2 (c2, c3)
      msg("contents of a.rs: const REFRESH_TTL: u64 = 3600;", "ToolOutput"),           // 5: group 2 (c2)
      msg("contents of b.rs: fn ttl() -> u64 { REFRESH_TTL }", "ToolOutput"),          // 6: group 2 (c3)
      msg("note: TTL is in seconds", "Memory"),                                        // 7: group 3 (notes)
      msg("orphan result of an earlier call", "ToolOutput"),                           // 8: group 4 (c9)
      msg("note: the default is one hour", "Memory"),                                  // 9: group 3 (notes)
      msg("So where is it set?"),                                                      // 10
  };
  agent[0].pinned = true;
  agent[2].tool_call_id = "c1";
  agent[3].tool_call_id = "c1";
  agent[4].tool_call_ids = {"c2", "c3"};
  agent[5].tool_call_id = "c2";
  agent[6].tool_call_id = "c3";
  agent[7].group = "notes";
  agent[8].tool_call_id = "c9";
  agent[9].group = "notes";
  const std::vector<uint64_t> agent_groups = {0, 0, 1, 1, 2, 2, 2, 3, 4, 3, 0};
  CHECK(cupel::detail::message_groups(agent.data(), agent.size()) == agent_groups);
  {
    cupel::Pipeline p = cupel::Pipeline::preset("AgentLoop");
    cupel::Budget b(120, 120);
    std::vector<size_t> got = cupel::select_indices(agent, 120, "AgentLoop");
    same_as_long_hand(agent, agent_groups, got, cupel::select(agent, 120, "AgentLoop"), p, b, "o200k_base");
    // Groups kept whole: the big grep output's call goes with it.
    bool has2 = false, has3 = false;
    for (size_t i : got) {
      has2 = has2 || i == 2;
      has3 = has3 || i == 3;
    }
    CHECK(has2 == has3);
    // The ToolUse preset, on the same data.
    cupel::Pipeline tool_use = cupel::Pipeline::preset("ToolUse");
    same_as_long_hand(agent, agent_groups, cupel::select_indices(agent, 120, "ToolUse"),
                      cupel::select(agent, 120, "ToolUse"), tool_use, b, "o200k_base");
  }
  // Transitive unions: a group shared with a call's result joins them all;
  // a group and a call id of the same text are not shared; an empty one is none.
  {
    std::vector<cupel::Message> t = {msg("a"), msg("b"), msg("c"), msg("d"), msg("e"), msg("f")};
    t[0].tool_call_ids = {"x", "y"};
    t[1].tool_call_id = "y";
    t[1].group = "g";
    t[2].group = "g";  // joins 0 and 1 through 1
    t[3].group = "x";  // a group named like a call id: its own group
    t[4].tool_call_id = "";
    t[4].group = "";  // none
    t[5].tool_call_ids = {"", "z"};
    CHECK((cupel::detail::message_groups(t.data(), t.size()) == std::vector<uint64_t>{1, 1, 1, 2, 0, 3}));
    // Numbered by first message: the later message's links join the earlier group.
    std::vector<cupel::Message> u = {msg("a"), msg("b"), msg("c")};
    u[0].group = "late";
    u[1].tool_call_id = "k";
    u[2].tool_call_id = "k";
    u[2].group = "late";
    CHECK((cupel::detail::message_groups(u.data(), u.size()) == std::vector<uint64_t>{1, 1, 1}));
  }

  // No policy is Chat (here Chat and AgentLoop differ); key 0, empty group
  // names and ids are none; a message with an id nobody shares is a group.
  {
    std::vector<cupel::Message> mixed = {msg("a memory worth keeping", "Memory"), msg("an older plain message"),
                                         msg("a newer plain message")};
    mixed[0].relevance = 1.0;
    mixed[1].relevance = mixed[2].relevance = 0.0;
    CHECK(cupel::select_indices(mixed, 8, "AgentLoop") != cupel::select_indices(mixed, 8, "Chat"));
    for (int64_t m : {0, 4, 8, 10, 14}) {
      CHECK(cupel::select_indices(mixed, m) == cupel::select_indices(mixed, m, "Chat"));
      CHECK(cupel::select_indices(mixed, m, nullptr) == cupel::select_indices(mixed, m, "Chat"));
    }
    std::vector<cupel::Message> e = {msg("a"), msg("b"), msg("c"), msg("d"), msg("e")};
    e[0].key = 0;
    e[1].tool_call_ids = {"", "t"};
    e[2].tool_call_id = "t";
    e[3].tool_call_ids = {""};
    e[3].group = "";
    e[4].tool_call_id = "lonely";
    e[4].key = std::numeric_limits<uint64_t>::max();
    CHECK((cupel::detail::message_groups(e.data(), e.size()) == std::vector<uint64_t>{0, 1, 1, 0, 2}));
    CHECK(cupel::select(e, 100).size() == 5);
  }

  // 3. Every attribute: timestamps (some), priorities, relevance, keys,
  // scores; a policy document; a budget object with an output reserve.
  std::vector<cupel::Message> rich;
  for (int i = 0; i < 12; i++) {
    cupel::Message m = msg("message number " + std::to_string(i) + " about topic " + std::to_string(i % 4),
                           i % 3 == 0 ? "Document" : "Message");
    if (i % 2 == 0) m.timestamp = 1700000000000 + 1000 * i;
    if (i % 3 != 2) m.priority = (i * 7) % 5;
    if (i % 4 != 3) m.relevance = (i % 5) / 4.0;
    m.key = static_cast<uint64_t>(100 + i);
    m.score = 0.1 + (i % 6) / 6.0;
    rich.push_back(m);
  }
  rich[5].pinned = true;
  rich[7].group = "pair";
  rich[8].group = "pair";
  std::vector<uint64_t> rich_groups(rich.size(), 0);
  rich_groups[7] = rich_groups[8] = 1;
  {
    const char *doc = R"({"scorers":[{"type":"priority","weight":2},{"type":"reflexive","weight":2},
        {"type":"recency","weight":1},{"type":"given","weight":1}],"placerType":"uShaped"})";
    cupel::Pipeline p = cupel::Pipeline::from_json(doc);
    cupel::Budget b(60, 50);
    b.set_output_reserve(5);
    same_as_long_hand(rich, rich_groups, cupel::select_indices(rich, b, doc), cupel::select(rich, b, doc), p, b,
                      "o200k_base");
    // The Rag preset (reflexive and kind, U-shaped): not the given order.
    cupel::Pipeline rag = cupel::Pipeline::preset("Rag");
    cupel::Budget b2(70, 70);
    same_as_long_hand(rich, rich_groups, cupel::select_indices(rich, 70, "Rag"), cupel::select(rich, 70, "Rag"), rag,
                      b2, "o200k_base");
    // The document with leading blanks is a document, not a preset name.
    std::string spaced = std::string(" \n\t") + doc;
    CHECK(cupel::select_indices(rich, b, spaced) == cupel::select_indices(rich, b, doc));
  }

  // 4. A pipeline object (used as it is, trace and all), the knapsack.
  {
    cupel::Scorer recency = cupel::Scorer::recency();
    cupel::Scorer kind = cupel::Scorer::kind();
    cupel::Scorer both = cupel::Scorer::composite({{&recency, 1.0}, {&kind, 2.0}});
    cupel::Slicer knapsack = cupel::Slicer::knapsack(10);
    cupel::Placer chronological = cupel::Placer::chronological();
    cupel::Pipeline p(&both, knapsack, &chronological);
    int events = 0;
    p.set_trace(cupel::TraceLevel::Stages, [&](const cupel::TraceEvent &) { events++; });
    cupel::Budget b(90, 80);
    std::vector<size_t> got = cupel::select_indices(agent, b, p);
    CHECK(events == 6);
    same_as_long_hand(agent, agent_groups, got, cupel::select(agent, b, &p), p, b, "o200k_base");
    // A callback that throws: select throws it.
    p.set_trace(cupel::TraceLevel::Stages, [](const cupel::TraceEvent &) { throw std::runtime_error("trace"); });
    try {
      cupel::select(agent, b, p);
      CHECK(false);
    } catch (const std::runtime_error &e) {
      CHECK(std::string(e.what()) == "trace");
    }
  }

  // 5. The tokenizer: the argument, else the policy's, else o200k_base. A
  // text that o200k_base and cl100k_base count differently, and a budget of
  // the smaller count: it is kept only when counted with the smaller one.
  {
    cupel::Tokenizer cl100k("cl100k_base");
    const std::string text = "コンテキストウィンドウに何を入れるかを決めるライブラリです。";
    const int64_t o = o200k.count(text), c = cl100k.count(text);
    CHECK(o != c);
    const int64_t small = std::min(o, c);
    const bool o_fits = o <= small, c_fits = c <= small;
    std::vector<cupel::Message> one = {msg(text)};
    auto kept = [&](const cupel::Policy &policy, std::string_view tokenizer = {}) {
      return cupel::select(one, small, policy, tokenizer).size() == 1;
    };
    const char *cl_doc = R"({"scorers":[{"type":"recency","weight":1}],"tokenizer":"cl100k_base"})";
    CHECK(kept("Chat") == o_fits);
    CHECK(kept("AgentLoop") == o_fits);                  // the preset names o200k_base
    CHECK(kept(cl_doc) == c_fits);                       // the policy's
    CHECK(kept(cl_doc, "o200k_base") == o_fits);         // the argument first
    CHECK(kept("Chat", "cl100k_base") == c_fits);
    cupel::Pipeline with_cl = cupel::Pipeline::preset("Chat");
    with_cl.set_tokenizer(cl100k);
    CHECK(kept(with_cl) == c_fits);                      // a pipeline's, by its name
    // A pipeline the format cannot write: without a tokenizer, o200k_base;
    // with a built-in one, its name all the same; with one from a
    // vocabulary file, select cannot name it and asks for the argument.
    cupel::Slicer greedy = cupel::Slicer::greedy();
    cupel::Slicer count = cupel::Slicer::count_quota(greedy, {{"Message", 0, 5}});
    cupel::Slicer nested = cupel::Slicer::quota(count, {{"Document", 0, 50}});
    cupel::Pipeline odd(nullptr, nested, nullptr);
    CHECK(kept(odd) == o_fits);
    odd.set_tokenizer(cl100k);
    CHECK(kept(odd) == c_fits);
    std::string bytes_file;  // a tiktoken file of the 256 single bytes, in base64
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int b = 0; b < 256; b++)
      bytes_file += std::string{abc[b >> 2], abc[(b & 3) << 4], '=', '='} + " " + std::to_string(b) + "\n";
    cupel::Tokenizer from_file = cupel::Tokenizer::from_tiktoken(bytes_file);
    for (cupel::Pipeline *q : {&odd, &with_cl}) {
      q->set_tokenizer(from_file);
      expect_error<cupel::Error>([&] { kept(*q); }, CUPEL_ERROR_UNSUPPORTED, "pass the tokenizer argument");
      CHECK(kept(*q, "cl100k_base") == c_fits);
      q->clear_tokenizer();
      CHECK(kept(*q) == o_fits);
    }
  }

  // 6. Bad input: the long-hand errors, naming the message and the field.
  {
    const cupel_status inv = CUPEL_ERROR_INVALID_ARGUMENT;
    std::vector<cupel::Message> bad = {msg("fine"), msg(""), msg("fine too")};
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100); }, inv, "messages[1].text is empty");
    bad[1].text = "\xff\xfe";
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100); }, inv, "messages[1].text is not valid UTF-8");
    bad[1].text = "ok";
    bad[2].kind = "";
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100); }, inv, "messages[2].kind");
    bad[2].kind = std::string("Mess\0age", 8);
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100); }, inv, "messages[2].kind holds a NUL byte");
    bad[2].kind = "Message";
    bad[0].score = std::numeric_limits<double>::quiet_NaN();
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100); }, inv, "messages[0].score is NaN");
    bad[0].score = 1.0;
    CHECK(cupel::select(bad, 100).size() == 3);
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, -1); }, inv, "max_tokens is -1");
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100, "Nope"); }, inv,
                                         "policy \"Nope\" is no preset; the presets are Chat");
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100, "   "); }, inv, "policy");
    expect_error<cupel::InvalidArgument>(
        [&] { cupel::select(bad, 100, R"({"scorers":[{"type":"recency","weight":-1}]})"); }, inv,
        "policy $.scorers[0].weight: must be positive and finite (got -1)");
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100, "{\"scorers\":"); }, inv,
                                         "policy: malformed JSON at line 1");
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, 100, "Chat", "p50k"); }, inv,
                                         "tokenizer \"p50k\" is no known encoding");
    expect_error<cupel::InvalidArgument>([&] { cupel::select(nullptr, 3, 100); }, CUPEL_ERROR_NULL_POINTER,
                                         "messages is null");
    CHECK(cupel::select(nullptr, 0, 100).empty());
    // A null policy is none: the Chat preset.
    CHECK(cupel::select_indices(bad, 100, static_cast<const char *>(nullptr)) == cupel::select_indices(bad, 100));
    CHECK(cupel::select_indices(bad, 100, static_cast<const cupel::Pipeline *>(nullptr)) ==
          cupel::select_indices(bad, 100, "Chat"));
    CHECK(cupel::select_indices(bad, 100, nullptr, "cl100k_base") ==
          cupel::select_indices(bad, 100, "Chat", "cl100k_base"));
    cupel::Pipeline p = cupel::Pipeline::preset("Chat");
    cupel::Pipeline q = std::move(p);
    expect_error<cupel::ClosedHandle>([&] { cupel::select(bad, 100, p); }, CUPEL_ERROR_NULL_POINTER,
                                      "policy is a moved-from");
    cupel::Budget b(100, 100);
    cupel::Budget c = std::move(b);
    expect_error<cupel::ClosedHandle>([&] { cupel::select(bad, b); }, CUPEL_ERROR_NULL_POINTER,
                                      "budget is a moved-from");
    expect_error<cupel::InvalidArgument>([&] { cupel::select(bad, static_cast<const cupel::Budget *>(nullptr)); },
                                         CUPEL_ERROR_NULL_POINTER, "budget is null");
    // A pinned message over the budget, as the long hand gives it.
    std::vector<cupel::Message> pinned = {msg(std::string(200, 'y'))};
    pinned[0].pinned = true;
    expect_error<cupel::InvalidArgument>([&] { cupel::select(pinned, 10); }, CUPEL_ERROR_INVALID_ARGUMENT,
                                         "the pinned items need");
  }
}

int main() {
  test_pipeline_json();
  test_budget_json();
  test_presets();
  test_sensitivity();
  test_analytics();
  test_trace();
  test_select();
  std::printf("test_policy_cpp: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
