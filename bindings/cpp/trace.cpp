// Tracing: a callback gets each stage's span, each exclusion and the
// pipeline's span of every run (an OpenTelemetry exporter would make spans
// of them: each event has its start and duration).
#include "cupel.hpp"

#include <iostream>

int main() {
  cupel::Items items;
  items.push_many({100, 200, 50}, {0.9, 0.5, 0.1}, {"Message", "Document", "ToolOutput"});
  items.set_timestamps(0, {1000, 2000, 3000});
  cupel::Budget budget(300, 250);
  cupel::Pipeline pipeline = cupel::Pipeline::from_json(R"({"scorers": [{"type": "recency", "weight": 1}]})");

  // The pipeline owns the callback (and what it captures) until the trace is
  // cleared or replaced, or the pipeline is destroyed.
  pipeline.set_trace(cupel::TraceLevel::Exclusions, [](const cupel::TraceEvent &e) {
    std::cout << e.name;
    if (e.kind == cupel::TraceEventKind::Stage)
      std::cout << ": " << e.item_count_in << " in, " << e.item_count_out << " out";
    if (e.kind == cupel::TraceEventKind::Exclusion)
      std::cout << ": item " << e.item << " (" << e.item_kind << ", " << e.tokens << " tokens), " << e.reason_name;
    if (e.kind == cupel::TraceEventKind::Pipeline)
      std::cout << ": max " << e.max_tokens << " tokens, " << e.item_count_out << " of " << e.item_count_in
                << " items included";
    std::cout << "\n";
  });
  pipeline.run(items, budget);

  // An exception the callback throws never unwinds through the C library:
  // the run throws it once the library has returned.
  pipeline.set_trace(cupel::TraceLevel::Stages, [](const cupel::TraceEvent &) { throw std::runtime_error("no"); });
  try {
    pipeline.run(items, budget);
  } catch (const std::runtime_error &e) {
    std::cout << "the callback threw: " << e.what() << "\n";
  }
  pipeline.clear_trace();
  return 0;
}
