#include "cupel.h"
#include <stdio.h>

int main(void) {
  /* four scored candidates: tokens, relevance score, kind */
  const int64_t tokens[] = {400, 100, 100, 200};
  const double scores[] = {0.9, 0.7, 0.5, 0.1};
  const char *kinds[] = {"Document", "Message", "ToolOutput", "Document"};
  cupel_items *items = NULL;
  cupel_budget *budget = NULL;
  cupel_slicer *slicer = NULL;
  size_t chosen[4], n = 0, i;
  cupel_status st;

  cupel_items_new(&items);
  cupel_items_push_many(items, 4, tokens, scores, kinds);
  cupel_budget_new(300, 300, &budget); /* max tokens, target tokens */
  cupel_slicer_new_greedy(&slicer);

  st = cupel_slice(slicer, items, budget, 0, chosen, 4, &n, NULL);
  if (st != CUPEL_OK) {
    fprintf(stderr, "%s: %s\n", cupel_status_str(st), cupel_last_error());
    return 1;
  }
  for (i = 0; i < n; i++) printf("chose item %zu\n", chosen[i]);

  cupel_slicer_free(slicer);
  cupel_budget_free(budget);
  cupel_items_free(items);
  return 0;
}
