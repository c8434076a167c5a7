#include "cupel.h"
#include <stdio.h>

/* Prints an item's decision: in or out, its number, the reason, its content. */
static void show(const char *where, const cupel_items *items, const cupel_decision *d) {
  const char *text;
  size_t len;
  cupel_items_content(items, d->item_index, &text, &len);
  printf("%s #%zu %-15s %.*s\n", where, d->item_index, cupel_reason_str(d->reason), (int)len, text);
}

int main(void) {
  /* Five candidates for a prompt: tokens, relevance score, kind, content. */
  const int64_t tokens[] = {120, 400, 60, 60, 200};
  const double scores[] = {1.0, 0.9, 0.8, 0.8, 0.3};
  const char *kinds[] = {"SystemPrompt", "Document", "Message", "Message", "Document"};
  const char *contents[] = {"You are a coding assistant.", "docs/auth.md (400 tokens)",
                            "user: why does login fail?", "user: why does login fail?",
                            "CHANGELOG.md (200 tokens)"};
  cupel_items *items = NULL;
  cupel_budget *budget = NULL;
  cupel_slicer *greedy = NULL;
  cupel_pipeline *pipeline = NULL;
  cupel_report *report = NULL;
  size_t placed[5], n = 0, i;

  cupel_items_new(&items);
  cupel_items_push_many(items, 5, tokens, scores, kinds);
  for (i = 0; i < 5; i++) cupel_items_set_content(items, i, contents[i]);
  cupel_items_set_pinned(items, 0, true);       /* the system prompt always goes in */
  cupel_budget_new(600, 500, &budget);          /* max tokens, target tokens */
  cupel_slicer_new_greedy(&greedy);             /* best score per token first */
  cupel_pipeline_new(NULL, greedy, NULL, &pipeline); /* NULL scorer: the scores above */
  cupel_report_new(&report);

  if (cupel_pipeline_run(pipeline, items, budget, placed, 5, &n, report) != CUPEL_OK) {
    fprintf(stderr, "cupel: %s\n", cupel_last_error()); /* names the bad argument */
    return 1;
  }
  for (i = 0; i < cupel_report_included_count(report); i++) {
    cupel_decision d;
    cupel_report_included(report, i, &d);
    show("in: ", items, &d);
  }
  for (i = 0; i < cupel_report_excluded_count(report); i++) {
    cupel_decision d;
    cupel_report_excluded(report, i, &d);
    show("out:", items, &d);
  }

  cupel_report_free(report);
  cupel_pipeline_free(pipeline);
  cupel_slicer_free(greedy);
  cupel_budget_free(budget);
  cupel_items_free(items);
  return 0;
}
