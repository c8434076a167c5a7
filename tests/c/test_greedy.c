/* GreedySlice through cupel_slice: the worked examples of its spec. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

int main(void) {
  test_greedy_density();
  test_greedy_exact_fit();
  test_greedy_zero_tokens();
  test_greedy_ties_follow_sort_stage();
  return check_summary("test_greedy");
}
