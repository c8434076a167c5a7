/* GreedySlice, KnapsackSlice and QuotaSlice through cupel_slice: the worked
 * examples of the spec documents, the output-buffer protocol, NULL for each
 * pointer, construction errors and the memory limit. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static cupel_slicer *knapsack(int64_t bucket) {
  cupel_slicer *s = NULL;
  if (cupel_slicer_new_knapsack(bucket, &s) != CUPEL_OK) abort();
  return s;
}

/* spec 000 / conformance greedy-density: density order, not score order */
static void test_greedy_density(void) {
  const int64_t t[] = {400, 100, 100, 200};
  const double s[] = {0.9, 0.7, 0.5, 0.1};
  cupel_items *items = make_items(4, t, s, NULL);
  cupel_slicer *g = greedy();
  size_t out[4], n = 99;
  CHECK_OK(slice_into(g, items, 300, 300, out, 4, &n, NULL));
  CHECK_INDICES(out, n, 1, 2);
  cupel_items_free(items);
  cupel_slicer_free(g);
}

/* greedy-exact-fit: a, b, c fill 300 exactly; d is skipped */
static void test_greedy_exact_fit(void) {
  const int64_t t[] = {100, 100, 100, 100};
  const double s[] = {0.9, 0.8, 0.7, 0.6};
  cupel_items *items = make_items(4, t, s, NULL);
  cupel_slicer *g = greedy();
  size_t out[4], n = 99;
  CHECK_OK(slice_into(g, items, 300, 300, out, 4, &n, NULL));
  CHECK_INDICES(out, n, 0, 1, 2);
  cupel_items_free(items);
  cupel_slicer_free(g);
}

/* greedy-zero-tokens: zero-token items first, in sorted order, scores aside */
static void test_greedy_zero_tokens(void) {
  const int64_t t[] = {0, 0, 100, 200};
  const double s[] = {0.1, 0.05, 0.8, 0.9};
  cupel_items *items = make_items(4, t, s, NULL);
  cupel_slicer *g = greedy();
  size_t out[4], n = 99;
  CHECK_OK(slice_into(g, items, 150, 150, out, 4, &n, NULL));
  CHECK_INDICES(out, n, 0, 1, 2);
  /* target 0: nothing at all, not even zero-token items */
  CHECK_OK(slice_into(g, items, 150, 0, out, 4, &n, NULL));
  CHECK_NONE(n);
  cupel_items_free(items);
  cupel_slicer_free(g);
}

/* The Sort stage runs first: equal densities tie on sorted position. */
static void test_greedy_ties_follow_sort_stage(void) {
  const int64_t t[] = {100, 200, 50};
  const double s[] = {0.5, 1.0, 0.25}; /* all density 0.005 */
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *g = greedy();
  size_t out[3], n = 99;
  CHECK_OK(slice_into(g, items, 1000, 1000, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 1, 0, 2);
  cupel_items_free(items);
  cupel_slicer_free(g);
}

/* knapsack-basic: knapsack takes "big" where greedy would take "small-a" */
static void test_knapsack_basic(void) {
  const int64_t t[] = {250, 150, 150};
  const double s[] = {0.7, 0.5, 0.45};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *k = knapsack(100), *g = greedy();
  size_t out[3], n = 99;
  CHECK_OK(slice_into(k, items, 300, 300, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 0);
  CHECK_OK(slice_into(g, items, 300, 300, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 1, 2); /* greedy: small-a then small-b fill 300 */
  cupel_items_free(items);
  cupel_slicer_free(k);
  cupel_slicer_free(g);
}

/* knapsack-zero-tokens: zero-token items first, then the DP selection */
static void test_knapsack_zero_tokens(void) {
  const int64_t t[] = {0, 200, 300};
  const double s[] = {0.1, 0.6, 0.9};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *k = knapsack(100);
  size_t out[3], n = 99;
  CHECK_OK(slice_into(k, items, 200, 200, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 0, 1);
  /* capacity floor(99/100) = 0: only the zero-token item */
  CHECK_OK(slice_into(k, items, 99, 99, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 0);
  cupel_items_free(items);
  cupel_slicer_free(k);
}

/* knapsack reconstruction order: candidates in reverse sorted order */
static void test_knapsack_output_order(void) {
  const int64_t t[] = {10, 10, 10};
  const double s[] = {0.7, 0.9, 0.8};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *k = knapsack(1);
  size_t out[3], n = 99;
  CHECK_OK(slice_into(k, items, 100, 100, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 0, 2, 1); /* sorted 1,2,0 reversed */
  cupel_items_free(items);
  cupel_slicer_free(k);
}

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

/* Kinds in mixed case are one kind, for items and for quotas. */
static void test_kinds_in_mixed_case(void) {
  const int64_t t[] = {50, 50, 50, 50};
  const double s[] = {0.9, 0.8, 0.7, 0.6};
  const char *k[] = {"tool", "TOOL", "Tool", "doc"};
  cupel_quota q[1] = {{"tOoL", 0.0, 10.0}}; /* tool capped at 10 % of 1000 */
  cupel_quota dup[2] = {{"Memory", 0.0, 10.0}, {"MEMORY", 0.0, 20.0}};
  cupel_items *items = make_items(4, t, s, k);
  cupel_slicer *g = greedy(), *quota = NULL;
  size_t out[4], n = 0;
  CHECK_OK(cupel_slicer_new_quota(g, q, 1, &quota));
  CHECK_OK(slice_into(quota, items, 1000, 1000, out, 4, &n, NULL));
  /* tool: min(floor(1000 * 150 / 200), cap 100) = 100 tokens: two of its
   * three items, as one partition; doc: 250 tokens */
  CHECK_INDICES(out, n, 0, 1, 3);
  cupel_slicer_free(quota);
  CHECK_STATUS(cupel_slicer_new_quota(g, dup, 2, &quota), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("MEMORY");
  cupel_items_free(items);
  cupel_slicer_free(g);
}

static void test_output_buffer_protocol(void) {
  const int64_t t[] = {10, 10, 10};
  const double s[] = {0.3, 0.2, 0.1};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *g = greedy();
  cupel_budget *b = make_budget(100, 100);
  size_t out[3] = {777, 777, 777}, n = 0;
  cupel_report *r = NULL;
  CHECK_OK(cupel_report_new(&r));

  /* size query: NULL buffer with capacity 0 */
  CHECK_STATUS(cupel_slice(g, items, b, 0, NULL, 0, &n, NULL), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3);
  CHECK_MSG("capacity 0 is too small, 3 entries are needed");
  n = 0;
  CHECK_STATUS(cupel_slice(g, items, b, 0, out, 2, &n, r), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3);
  CHECK(out[0] == 777 && out[1] == 777); /* nothing else written */
  CHECK(cupel_report_selected_tokens(r) == 0); /* failed call: empty report */
  CHECK_OK(cupel_slice(g, items, b, 0, out, 3, &n, r));
  CHECK_INDICES(out, n, 0, 1, 2);
  CHECK(cupel_report_selected_tokens(r) == 30);
  CHECK(cupel_report_effective_max_tokens(r) == 100);

  /* NULL buffer with capacity > 0 */
  CHECK_STATUS(cupel_slice(g, items, b, 0, NULL, 3, &n, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_indices is NULL");

  /* an empty selection needs no buffer */
  cupel_budget_free(b);
  b = make_budget(5, 5);
  CHECK_OK(cupel_slice(g, items, b, 0, NULL, 0, &n, NULL));
  CHECK_NONE(n);
  cupel_budget_free(b);
  cupel_report_free(r);
  cupel_items_free(items);
  cupel_slicer_free(g);
}

static void test_slice_null_arguments(void) {
  const int64_t t[] = {10};
  const double s[] = {0.5};
  cupel_items *items = make_items(1, t, s, NULL);
  cupel_slicer *g = greedy();
  cupel_budget *b = make_budget(100, 100);
  size_t out[1], n = 42;
  CHECK_STATUS(cupel_slice(NULL, items, b, 0, out, 1, &n, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("slicer is NULL");
  CHECK_STATUS(cupel_slice(g, NULL, b, 0, out, 1, &n, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("items is NULL");
  CHECK_STATUS(cupel_slice(g, items, NULL, 0, out, 1, &n, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("budget is NULL");
  CHECK_STATUS(cupel_slice(g, items, b, 0, NULL, 1, &n, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_slice(g, items, b, 0, out, 1, NULL, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_len is NULL");
  CHECK(n == 42);
  CHECK_STATUS(cupel_slice(g, items, b, -1, out, 1, &n, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("pinned_tokens is -1");
  CHECK(n == 42);
  /* pinned tokens shrink the budget: 100 - 95 = 5 < 10 */
  CHECK_OK(cupel_slice(g, items, b, 95, out, 1, &n, NULL));
  CHECK_NONE(n);
  CHECK_OK(cupel_slice(g, items, b, 90, out, 1, &n, NULL));
  CHECK_INDICES(out, n, 0);
  cupel_budget_free(b);
  cupel_items_free(items);
  cupel_slicer_free(g);
}

static void test_slicer_construction_errors(void) {
  cupel_slicer *g = greedy(), *s = NULL, *k = knapsack(100);
  cupel_quota ok[1] = {{"Message", 10.0, 50.0}};
  cupel_quota q[3];
  CHECK_STATUS(cupel_slicer_new_greedy(NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_slicer_new_knapsack(100, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_slicer_new_knapsack(0, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("bucket_size is 0");
  CHECK_STATUS(cupel_slicer_new_knapsack(-5, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("bucket_size is -5");
  CHECK_STATUS(cupel_slicer_new_quota(NULL, ok, 1, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("inner is NULL");
  CHECK_STATUS(cupel_slicer_new_quota(g, NULL, 1, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("quotas is NULL");
  CHECK_STATUS(cupel_slicer_new_quota(g, ok, 1, NULL), CUPEL_ERROR_NULL_POINTER);
  q[0].kind = NULL; q[0].require_percent = 0; q[0].cap_percent = 10;
  CHECK_STATUS(cupel_slicer_new_quota(g, q, 1, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("quotas[0].kind is NULL");
  q[0].kind = "Message"; q[0].require_percent = 60; q[0].cap_percent = 40;
  CHECK_STATUS(cupel_slicer_new_quota(g, q, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("require_percent 60 > cap_percent 40 for kind \"Message\"");
  q[0].require_percent = NAN; q[0].cap_percent = 40;
  CHECK_STATUS(cupel_slicer_new_quota(g, q, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("quotas[0].require_percent is NaN");
  q[0].require_percent = 0; q[0].cap_percent = 100.0000001;
  CHECK_STATUS(cupel_slicer_new_quota(g, q, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  q[0].require_percent = -1e-300; q[0].cap_percent = 10;
  CHECK_STATUS(cupel_slicer_new_quota(g, q, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  q[0].require_percent = 60; q[0].cap_percent = 100;
  q[1].kind = "Document"; q[1].require_percent = 41; q[1].cap_percent = 100;
  CHECK_STATUS(cupel_slicer_new_quota(g, q, 2, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("sum to 101");
  /* 34.6 + 32.2 + 33.2 is over 100 only by rounding: accepted */
  q[0].require_percent = 34.6; q[1].require_percent = 32.2;
  q[2].kind = "Memory"; q[2].require_percent = 33.2; q[2].cap_percent = 100;
  CHECK_OK(cupel_slicer_new_quota(g, q, 3, &s));
  cupel_slicer_free(s);
  s = NULL;
  /* quota over knapsack is fine; no quotas at all is fine */
  CHECK_OK(cupel_slicer_new_quota(k, NULL, 0, &s));
  cupel_slicer_free(s);
  cupel_slicer_free(g);
  cupel_slicer_free(k);
  cupel_slicer_free(NULL);
}

static void test_memory_limit(void) {
  const int64_t t[] = {1, 2, 3};
  const double s[] = {0.5, 0.4, 0.3};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *k = knapsack(1), *quota = NULL;
  size_t out[3], n = 0;
  CHECK(cupel_slicer_memory_limit(k) == CUPEL_DEFAULT_MEMORY_LIMIT);
  CHECK(cupel_slicer_memory_limit(NULL) == 0);
  CHECK_STATUS(cupel_slicer_set_memory_limit(NULL, 1), CUPEL_ERROR_NULL_POINTER);
  /* 3 rows x 1e12 cells at bucket 1: far over 1 GiB */
  CHECK_STATUS(slice_into(k, items, 1000000000000LL, 1000000000000LL, out, 3, &n, NULL),
               CUPEL_ERROR_CAPACITY);
  CHECK_MSG("over the memory limit of 1073741824 bytes");
  CHECK_OK(slice_into(k, items, 6, 6, out, 3, &n, NULL));
  CHECK(n == 3);
  CHECK_OK(cupel_slicer_set_memory_limit(k, 16));
  CHECK_STATUS(slice_into(k, items, 6, 6, out, 3, &n, NULL), CUPEL_ERROR_CAPACITY);
  /* a decorator takes the inner's limit, and passes its own down */
  CHECK_OK(cupel_slicer_new_quota(k, NULL, 0, &quota));
  CHECK(cupel_slicer_memory_limit(quota) == 16);
  CHECK_STATUS(slice_into(quota, items, 6, 6, out, 3, &n, NULL), CUPEL_ERROR_CAPACITY);
  CHECK_OK(cupel_slicer_set_memory_limit(quota, 1 << 20));
  CHECK_OK(slice_into(quota, items, 6, 6, out, 3, &n, NULL));
  CHECK(n == 3);
  cupel_slicer_free(quota);
  cupel_slicer_free(k);
  cupel_items_free(items);
}

static void test_edge_inputs(void) {
  cupel_items *items = NULL;
  cupel_slicer *g = greedy(), *k = knapsack(100);
  size_t out[3], n = 5;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(slice_into(g, items, 100, 100, NULL, 0, &n, NULL)); /* empty list */
  CHECK_NONE(n);
  CHECK_OK(cupel_items_push(items, INT64_MAX, 1e300, "huge"));
  CHECK_OK(cupel_items_push(items, 0, -0.0, NULL));
  CHECK_OK(cupel_items_push(items, 1, -5.0, NULL));
  CHECK_OK(slice_into(g, items, INT64_MAX, INT64_MAX, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 1, 0); /* zero-token first; the huge item fits; 1 token no longer does */
  CHECK_OK(slice_into(k, items, INT64_MAX, INT64_MAX, out, 3, &n, NULL));
  /* ceil(INT64_MAX / 100) buckets > floor(INT64_MAX / 100): the huge item
   * cannot fit; the negative score has value 0 and is never chosen */
  CHECK_INDICES(out, n, 1);
  cupel_items_free(items);
  cupel_slicer_free(g);
  cupel_slicer_free(k);
}

int main(void) {
  test_greedy_density();
  test_greedy_exact_fit();
  test_greedy_zero_tokens();
  test_greedy_ties_follow_sort_stage();
  test_knapsack_basic();
  test_knapsack_zero_tokens();
  test_knapsack_output_order();
  test_quota_basic();
  test_quota_rounding();
  test_quota_over_quota();
  test_kinds_in_mixed_case();
  test_output_buffer_protocol();
  test_slice_null_arguments();
  test_slicer_construction_errors();
  test_memory_limit();
  test_edge_inputs();
  return check_summary("test_slicing");
}
