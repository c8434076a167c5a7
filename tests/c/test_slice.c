/* cupel_slice itself: the output-buffer protocol, NULL for each pointer, construction errors of every slicer, edge inputs. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

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
  test_output_buffer_protocol();
  test_slice_null_arguments();
  test_slicer_construction_errors();
  test_edge_inputs();
  return check_summary("test_slice");
}
