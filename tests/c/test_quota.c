/* QuotaSlice through cupel_slice: worked example, rounding, nesting. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* quota-basic of the conformance vectors (spec 004 worked budgets) */
static void test_quota_basic(void) {
  const int64_t t[] = {200, 200, 300, 300, 200};
  const double s[] = {0.9, 0.5, 0.8, 0.3, 0.7};
  const char *k[] = {"SystemPrompt", "SystemPrompt", "Message", "Message", "Document"};
  cupel_quota q[2] = {{"SystemPrompt", 30.0, 50.0}, {"Message", 0.0, 40.0}};
  cupel_items *items = make_items(5, t, s, k);
  cupel_slicer *g = greedy(), *quota = NULL;
  cupel_report *r = NULL;
  size_t out[5], n = 99;
  CHECK_OK(cupel_slicer_new_quota(g, q, 2, &quota));
  cupel_slicer_free(g); /* the decorator keeps its own copy */
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(slice_into(quota, items, 1000, 1000, out, 5, &n, r));
  CHECK_INDICES(out, n, 0, 1, 2);
  CHECK(cupel_report_selected_tokens(r) == 700);
  CHECK(cupel_report_effective_target_tokens(r) == 1000);
  CHECK(cupel_report_shortfall_count(r) == 0);
  CHECK(cupel_report_cap_excluded_count(r) == 0);
  cupel_report_free(r);
  cupel_items_free(items);
  cupel_slicer_free(quota);
}

/* spec 004 rounding example: two kinds require 33 % of 1000; floors leave
 * tokens unallocated. A and B hold 100 tokens each, C 400 one-token items:
 * C's budget is floor(340 * 400 / 600) = 226, not 227. */
static void test_quota_rounding(void) {
  cupel_items *items = NULL;
  cupel_slicer *g = greedy(), *quota = NULL;
  cupel_quota q[2] = {{"A", 33.0, 100.0}, {"B", 33.0, 100.0}};
  size_t out[402], n = 0, i, c_count = 0;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push(items, 100, 0.9, "A"));
  CHECK_OK(cupel_items_push(items, 100, 0.9, "B"));
  for (i = 0; i < 400; i++) CHECK(cupel_items_push(items, 1, 0.5, "C") == CUPEL_OK);
  CHECK_OK(cupel_slicer_new_quota(g, q, 2, &quota));
  CHECK_OK(slice_into(quota, items, 1000, 1000, out, 402, &n, NULL));
  for (i = 0; i < n; i++) c_count += out[i] >= 2;
  CHECK(n == 228);
  CHECK(c_count == 226);
  CHECK(out[0] == 0 && out[1] == 1);
  cupel_items_free(items);
  cupel_slicer_free(g);
  cupel_slicer_free(quota);
}

/* Quota over quota: the outer gives A 50 %, the inner caps A at half of it. */
static void test_quota_over_quota(void) {
  cupel_items *items = NULL;
  cupel_slicer *g = greedy(), *inner = NULL, *outer = NULL;
  cupel_quota qi[1] = {{"a", 0.0, 50.0}};
  cupel_quota qo[1] = {{"A", 50.0, 50.0}};
  size_t out[20], n = 0, i;
  CHECK_OK(cupel_items_new(&items));
  for (i = 0; i < 10; i++) CHECK(cupel_items_push(items, 100, 0.99 - 0.01 * (double)i, "A") == CUPEL_OK);
  for (i = 0; i < 10; i++) CHECK(cupel_items_push(items, 100, 0.5 - 0.01 * (double)i, "B") == CUPEL_OK);
  CHECK_OK(cupel_slicer_new_quota(g, qi, 1, &inner));
  CHECK_OK(cupel_slicer_new_quota(inner, qo, 1, &outer));
  cupel_slicer_free(inner);
  CHECK_OK(slice_into(outer, items, 1000, 1000, out, 20, &n, NULL));
  CHECK_INDICES(out, n, 0, 1, 10, 11, 12, 13, 14);
  cupel_items_free(items);
  cupel_slicer_free(g);
  cupel_slicer_free(outer);
}

int main(void) {
  test_quota_basic();
  test_quota_rounding();
  test_quota_over_quota();
  return check_summary("test_quota");
}
