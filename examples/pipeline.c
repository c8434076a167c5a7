/* The whole pipeline from C, start to end: items with their contents, a
 * scorer, a slicer, a placer, one run, then the report (why each item is in
 * or out) and its JSON. Compiled and run by tests/examples.rs, which checks
 * its output against docs/c-api.md.
 *
 *   cargo build --release
 *   cc -std=c99 -Iinclude examples/pipeline.c -Ltarget/release -lcupel \
 *      -Wl,-rpath,"$PWD/target/release" -o target/pipeline
 *   ./target/pipeline [report.json]
 */
#include "cupel.h"
#include <stdio.h>
#include <stdlib.h>

/* Stops with the library's message (it names the argument) on failure. */
#define MUST(call)                                                                \
  do {                                                                            \
    cupel_status st_ = (call);                                                    \
    if (st_ != CUPEL_OK) {                                                        \
      fprintf(stderr, "%s: %s: %s\n", #call, cupel_status_str(st_), cupel_last_error()); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

typedef struct {
  const char *kind, *content;
  int64_t tokens, minute; /* minute of the conversation: its timestamp */
  uint64_t group;         /* a tool call and its result share a group */
  int pinned;
} message;

static const message conversation[] = {
    {"SystemPrompt", "You are a coding assistant.", 120, 0, 0, 1},
    {"Message", "user: login fails with 401 since Monday", 40, 1, 0, 0},
    {"ToolCall", "call: grep -rn refresh_token src/", 25, 2, 1, 0},
    {"ToolOutput", "src/auth/refresh.rs:42: if token.expires_at < now ...", 310, 2, 1, 0},
    {"Document", "docs/auth.md: tokens expire after 3600 s", 180, 3, 0, 0},
    {"Document", "docs/auth.md: tokens expire after 3600 s", 180, 4, 0, 0}, /* a duplicate */
    {"ToolCall", "call: kubectl logs auth-7f9", 20, 5, 2, 0},
    {"ToolOutput", "auth-7f9: clock skew of 400 s detected ...", 450, 5, 2, 0},
    {"Message", "user: it only happens on the staging cluster", 30, 6, 0, 0},
};

/* One line of the report: item number, kind (read back from the list),
 * tokens, the reason's name, the content. */
static void print_decision(const cupel_items *items, const cupel_decision *d) {
  const char *kind = NULL, *text = NULL;
  size_t kind_len = 0, text_len = 0;
  MUST(cupel_items_kind(items, d->item_index, &kind, &kind_len));
  MUST(cupel_items_content(items, d->item_index, &text, &text_len));
  printf("  #%zu %-12.*s %4lld  %-14s %.*s", d->item_index, (int)kind_len, kind,
         (long long)d->item_tokens, cupel_reason_str(d->reason), (int)text_len, text);
}

int main(int argc, char **argv) {
  const char *json_path = argc > 1 ? argv[1] : "report.json";
  const size_t n = sizeof conversation / sizeof conversation[0];
  cupel_items *items = NULL;
  cupel_scorer *recency = NULL, *kind = NULL, *scorer = NULL;
  cupel_slicer *slicer = NULL;
  cupel_placer *placer = NULL;
  cupel_pipeline *pipeline = NULL;
  cupel_budget *budget = NULL;
  cupel_report *report = NULL;
  const cupel_scorer *parts[2];
  const double weights[2] = {2.0, 1.0};
  size_t placed[16], count = 0, i;
  char *json;
  size_t json_len = 0;
  int64_t total = 0;

  /* The candidates: tokens, a score (unused here: the scorer decides), kind;
   * then content, timestamp, group and pinned flag by index. */
  MUST(cupel_items_new(&items));
  for (i = 0; i < n; i++) {
    const message *m = &conversation[i];
    MUST(cupel_items_push(items, m->tokens, 0.0, m->kind));
    MUST(cupel_items_set_content(items, i, m->content));
    MUST(cupel_items_set_timestamp(items, i, m->minute * 60000));
    if (m->group) MUST(cupel_items_set_group(items, i, m->group));
    if (m->pinned) MUST(cupel_items_set_pinned(items, i, true));
  }

  /* Score: 2 parts recency, 1 part the kind's default weight. Slice: the
   * exact best total score (knapsack, bucket size 1). Place: oldest first. */
  MUST(cupel_scorer_new_recency(&recency));
  MUST(cupel_scorer_new_kind(NULL, 0, &kind));
  parts[0] = recency;
  parts[1] = kind;
  MUST(cupel_scorer_new_composite(parts, weights, 2, &scorer));
  MUST(cupel_slicer_new_knapsack(1, &slicer));
  MUST(cupel_placer_new_chronological(&placer));
  MUST(cupel_pipeline_new(scorer, slicer, placer, &pipeline));

  /* A 1,000-token window that keeps 200 for the answer; aim for 700. */
  MUST(cupel_budget_new(1000, 700, &budget));
  MUST(cupel_budget_set_output_reserve(budget, 200));

  MUST(cupel_report_new(&report));
  MUST(cupel_pipeline_run(pipeline, items, budget, placed, 16, &count, report));

  printf("In the prompt, in this order:\n");
  for (i = 0; i < count; i++) {
    cupel_decision d;
    MUST(cupel_report_included(report, i, &d));
    print_decision(items, &d);
    printf("\n");
    total += d.item_tokens;
  }
  printf("  = %lld tokens, pinned ones included\n", (long long)total);
  printf("Left out:\n");
  for (i = 0; i < cupel_report_excluded_count(report); i++) {
    cupel_decision d;
    MUST(cupel_report_excluded(report, i, &d));
    print_decision(items, &d);
    if (d.reason == CUPEL_REASON_DEDUPLICATED) printf("  (a copy of #%zu)", d.related_index);
    if (d.reason == CUPEL_REASON_BUDGET_EXCEEDED)
      printf("  (needs %lld, %lld left)", (long long)d.group_tokens, (long long)d.available_tokens);
    printf("\n");
  }

  /* The SelectionReport as JSON: ask for the length, then write it. */
  if (cupel_report_json(report, items, NULL, 0, &json_len) != CUPEL_ERROR_BUFFER_TOO_SMALL) return 1;
  json = malloc(json_len + 1);
  MUST(cupel_report_json(report, items, json, json_len + 1, &json_len));
  {
    FILE *out = fopen(json_path, "w");
    if (!out || fputs(json, out) == EOF || fclose(out) != 0) {
      perror(json_path);
      return 1;
    }
  }
  printf("The SelectionReport as JSON (%s) is in %s\n", "every item, its reason, the stage timings", json_path);

  free(json);
  cupel_report_free(report);
  cupel_budget_free(budget);
  cupel_pipeline_free(pipeline);
  cupel_placer_free(placer);
  cupel_slicer_free(slicer);
  cupel_scorer_free(scorer);
  cupel_scorer_free(kind);
  cupel_scorer_free(recency);
  cupel_items_free(items);
  return 0;
}
