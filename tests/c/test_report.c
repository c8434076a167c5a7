/* cupel_report: getters on NULL, shortfalls and cap exclusions at any nesting depth. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_report_getters_on_null(void) {
  const char *kind = NULL;
  uint32_t req = 0, sat = 0;
  size_t idx = 0;
  cupel_report *r = NULL;
  CHECK(cupel_report_effective_max_tokens(NULL) == 0);
  CHECK(cupel_report_effective_target_tokens(NULL) == 0);
  CHECK(cupel_report_selected_tokens(NULL) == 0);
  CHECK(cupel_report_shortfall_count(NULL) == 0);
  CHECK(cupel_report_cap_excluded_count(NULL) == 0);
  CHECK_STATUS(cupel_report_new(NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_report_new(&r));
  CHECK_STATUS(cupel_report_shortfall(NULL, 0, &kind, &req, &sat), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_report_shortfall(r, 0, NULL, &req, &sat), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_report_shortfall(r, 0, &kind, NULL, &sat), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_report_shortfall(r, 0, &kind, &req, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_report_shortfall(r, 0, &kind, &req, &sat), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("i 0 is out of range");
  CHECK_STATUS(cupel_report_cap_excluded(NULL, 0, &idx), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_report_cap_excluded(r, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_report_cap_excluded(r, 0, &idx), CUPEL_ERROR_INVALID_ARGUMENT);
  cupel_report_free(r);
  cupel_report_free(NULL);
}

/* A QuotaSlice over a CountQuotaSlice reports the inner shortfalls and cap
 * exclusions; the inner slicer runs once per kind partition. */
static void test_nested_reports(void) {
  const int64_t t[] = {100, 100, 100, 100};
  const double s[] = {0.9, 0.8, 0.7, 0.6};
  const char *k[] = {"tool", "doc", "tool", "tool"};
  cupel_count_quota e[1] = {{"Tool", 2, 2}};
  cupel_items *items = make_items(4, t, s, k);
  cupel_slicer *cq = count_quota(e, 1, CUPEL_SCARCITY_DEGRADE), *quota = NULL, *outer = NULL;
  cupel_report *r = NULL;
  size_t out[4], n = 0, x = 0;
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(cupel_slicer_new_quota(cq, NULL, 0, &quota));
  CHECK_OK(slice_into(quota, items, 1000, 1000, out, 4, &n, r));
  /* tool partition: 0 and 2 committed, 3 cap-excluded; doc partition: the
   * Tool entry finds no item there (shortfall 2/0), doc item 1 is kept */
  CHECK_INDICES(out, n, 0, 2, 1);
  CHECK(cupel_report_cap_excluded_count(r) == 1);
  CHECK_OK(cupel_report_cap_excluded(r, 0, &x));
  CHECK(x == 3);
  CHECK(cupel_report_shortfall_count(r) == 1);
  check_shortfall(r, 0, "Tool", 2, 0);
  /* one level deeper: count quota over quota over count quota */
  CHECK_OK(cupel_slicer_new_count_quota(quota, NULL, 0, CUPEL_SCARCITY_DEGRADE, &outer));
  CHECK_OK(slice_into(outer, items, 1000, 1000, out, 4, &n, r));
  CHECK_INDICES(out, n, 0, 2, 1);
  CHECK(cupel_report_cap_excluded_count(r) == 1 && cupel_report_shortfall_count(r) == 1);
  cupel_slicer_free(outer);
  cupel_slicer_free(quota);
  cupel_slicer_free(cq);
  cupel_items_free(items);
  cupel_report_free(r);
}

int main(void) {
  test_report_getters_on_null();
  test_nested_reports();
  return check_summary("test_report");
}
