/* KnapsackSlice through cupel_slice: worked examples, output order, the memory limit. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

int main(void) {
  test_knapsack_basic();
  test_knapsack_zero_tokens();
  test_knapsack_output_order();
  test_memory_limit();
  return check_summary("test_knapsack");
}
