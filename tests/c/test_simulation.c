/* Budget simulation: cupel_marginal_items and cupel_find_min_budget. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_marginal_items(void) {
  const int64_t t[] = {100, 100, 100};
  const double s[] = {0.7, 0.9, 0.8};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *g = greedy(), *cq = NULL, *quota = NULL, *nested = NULL;
  cupel_budget *b = make_budget(300, 250);
  size_t out[3] = {777, 777, 777}, n = 0;
  /* at 250: items 1 and 2 (density order); at 150: item 1 only */
  CHECK_OK(cupel_marginal_items(g, items, b, 0, 100, out, 3, &n));
  CHECK_INDICES(out, n, 2);
  CHECK_OK(cupel_marginal_items(g, items, b, 0, 0, out, 3, &n));
  CHECK_NONE(n);
  CHECK_OK(cupel_marginal_items(g, items, b, 0, 250, out, 3, &n));
  CHECK_INDICES(out, n, 1, 2);
  CHECK_STATUS(cupel_marginal_items(g, items, b, 0, 250, out, 1, &n), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 2);
  CHECK_STATUS(cupel_marginal_items(g, items, b, 0, -1, out, 3, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("slack_tokens is -1");
  CHECK_STATUS(cupel_marginal_items(g, items, b, 0, 251, out, 3, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_marginal_items(g, items, b, -1, 10, out, 3, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_marginal_items(NULL, items, b, 0, 10, out, 3, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_marginal_items(g, NULL, b, 0, 10, out, 3, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_marginal_items(g, items, NULL, 0, 10, out, 3, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_marginal_items(g, items, b, 0, 10, NULL, 3, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_marginal_items(g, items, b, 0, 10, out, 3, NULL), CUPEL_ERROR_NULL_POINTER);
  /* QuotaSlice is not monotonic, also nested in a count quota */
  CHECK_OK(cupel_slicer_new_quota(g, NULL, 0, &quota));
  CHECK_STATUS(cupel_marginal_items(quota, items, b, 0, 10, out, 3, &n), CUPEL_ERROR_UNSUPPORTED);
  CHECK_MSG("GetMarginalItems is not defined for a QuotaSlice: its selection");
  CHECK_OK(cupel_slicer_new_count_quota(quota, NULL, 0, CUPEL_SCARCITY_DEGRADE, &nested));
  CHECK_STATUS(cupel_marginal_items(nested, items, b, 0, 10, out, 3, &n), CUPEL_ERROR_UNSUPPORTED);
  CHECK_MSG("CountQuotaSlice that contains a QuotaSlice");
  CHECK_OK(cupel_slicer_new_count_quota(g, NULL, 0, CUPEL_SCARCITY_DEGRADE, &cq));
  CHECK_OK(cupel_marginal_items(cq, items, b, 0, 100, out, 3, &n));
  CHECK_INDICES(out, n, 2);
  cupel_slicer_free(cq);
  cupel_slicer_free(nested);
  cupel_slicer_free(quota);
  cupel_slicer_free(g);
  cupel_budget_free(b);
  cupel_items_free(items);
}

static void test_find_min_budget(void) {
  const int64_t t[] = {100, 100, 100};
  const double s[] = {0.9, 0.8, 0.7};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *g = greedy(), *k = NULL, *cq = NULL, *cck = NULL, *quota = NULL, *nested = NULL;
  int64_t b = 12345;
  CHECK_OK(cupel_find_min_budget(g, items, 0, 2, 1000, &b));
  CHECK(b == 300);
  CHECK_OK(cupel_find_min_budget(g, items, 0, 0, 1000, &b));
  CHECK(b == 100);
  CHECK_OK(cupel_find_min_budget(g, items, 50, 2, 1000, &b)); /* pinned tokens come first */
  CHECK(b == 350);
  CHECK_OK(cupel_find_min_budget(g, items, 0, 2, 299, &b));
  CHECK(b == -1);
  CHECK_OK(cupel_slicer_new_knapsack(1, &k));
  CHECK_OK(cupel_find_min_budget(k, items, 0, 2, 1000, &b));
  CHECK(b == 300);
  b = 12345;
  CHECK_STATUS(cupel_find_min_budget(g, items, 0, 3, 1000, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("target_index 3 is out of range");
  CHECK_STATUS(cupel_find_min_budget(g, items, 0, 0, 99, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("search_ceiling 99 < tokens 100");
  CHECK_STATUS(cupel_find_min_budget(g, items, -1, 0, 1000, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_find_min_budget(NULL, items, 0, 0, 1000, &b), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_find_min_budget(g, NULL, 0, 0, 1000, &b), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_find_min_budget(g, items, 0, 0, 1000, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK(b == 12345);
  CHECK_OK(cupel_slicer_new_count_quota(g, NULL, 0, CUPEL_SCARCITY_DEGRADE, &cq));
  CHECK_STATUS(cupel_find_min_budget(cq, items, 0, 0, 1000, &b), CUPEL_ERROR_UNSUPPORTED);
  CHECK_MSG("CountQuotaSlice");
  CHECK_OK(cupel_slicer_new_count_constrained_knapsack(1, NULL, 0, CUPEL_SCARCITY_DEGRADE, &cck));
  CHECK_STATUS(cupel_find_min_budget(cck, items, 0, 0, 1000, &b), CUPEL_ERROR_UNSUPPORTED);
  CHECK_OK(cupel_slicer_new_quota(g, NULL, 0, &quota));
  CHECK_STATUS(cupel_find_min_budget(quota, items, 0, 0, 1000, &b), CUPEL_ERROR_UNSUPPORTED);
  CHECK_OK(cupel_slicer_new_quota(cq, NULL, 0, &nested));
  CHECK_STATUS(cupel_find_min_budget(nested, items, 0, 0, 1000, &b), CUPEL_ERROR_UNSUPPORTED);
  CHECK(b == 12345);
  cupel_slicer_free(nested);
  cupel_slicer_free(quota);
  cupel_slicer_free(cck);
  cupel_slicer_free(cq);
  cupel_slicer_free(k);
  cupel_slicer_free(g);
  cupel_items_free(items);
}

int main(void) {
  test_marginal_items();
  test_find_min_budget();
  return check_summary("test_simulation");
}
