/* CountQuotaSlice and CountConstrainedKnapsackSlice: scenarios, scarcity, construction errors. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* count-quota-baseline: tool-a, tool-b committed; greedy adds tool-c */
static void test_count_quota_scenarios(void) {
  const int64_t t[] = {100, 100, 100, 100};
  const double s[] = {0.9, 0.7, 0.5, 0.4};
  const char *k[] = {"tool", "tool", "tool", "tool"};
  cupel_count_quota base[1] = {{"tool", 2, 4}}, cap1[1] = {{"tool", 0, 1}}, both[1] = {{"tool", 2, 2}};
  cupel_items *items = make_items(3, t, s, k);
  cupel_report *r = NULL;
  cupel_slicer *cq = count_quota(base, 1, CUPEL_SCARCITY_DEGRADE);
  size_t out[4], n = 0, x = 0;
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(slice_into(cq, items, 1000, 1000, out, 4, &n, r));
  CHECK_INDICES(out, n, 0, 1, 2);
  CHECK(cupel_report_shortfall_count(r) == 0 && cupel_report_cap_excluded_count(r) == 0);
  cupel_slicer_free(cq);

  /* count-quota-cap-exclusion: cap 1, two excluded */
  cq = count_quota(cap1, 1, CUPEL_SCARCITY_DEGRADE);
  CHECK_OK(slice_into(cq, items, 1000, 1000, out, 4, &n, r));
  CHECK_INDICES(out, n, 0);
  CHECK(cupel_report_cap_excluded_count(r) == 2);
  CHECK_OK(cupel_report_cap_excluded(r, 0, &x));
  CHECK(x == 1);
  CHECK_OK(cupel_report_cap_excluded(r, 1, &x));
  CHECK(x == 2);
  CHECK_STATUS(cupel_report_cap_excluded(r, 2, &x), CUPEL_ERROR_INVALID_ARGUMENT);
  cupel_slicer_free(cq);
  cupel_items_free(items);

  /* count-quota-require-and-cap: require 2 cap 2 of four tool items */
  items = make_items(4, t, s, k);
  cq = count_quota(both, 1, CUPEL_SCARCITY_DEGRADE);
  CHECK_OK(slice_into(cq, items, 1000, 1000, out, 4, &n, r));
  CHECK_INDICES(out, n, 0, 1);
  CHECK(cupel_report_cap_excluded_count(r) == 2);
  CHECK(cupel_report_selected_tokens(r) == 200);
  cupel_slicer_free(cq);
  cupel_items_free(items);
  cupel_report_free(r);
}

/* count-quota-scarcity-degrade and scarcity ERROR */
static void test_scarcity(void) {
  const int64_t t[] = {100};
  const double s[] = {0.9};
  const char *k[] = {"tool"};
  cupel_count_quota e[2] = {{"TOOL", 3, 5}, {"Memory", 1, 2}};
  cupel_items *items = make_items(1, t, s, k);
  cupel_report *r = NULL;
  cupel_slicer *cq = count_quota(e, 2, CUPEL_SCARCITY_DEGRADE), *strict = count_quota(e, 1, CUPEL_SCARCITY_ERROR);
  cupel_slicer *absent = count_quota(e + 1, 1, CUPEL_SCARCITY_ERROR);
  size_t out[1] = {777}, n = 55;
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(slice_into(cq, items, 1000, 1000, out, 1, &n, r));
  CHECK_INDICES(out, n, 0);
  CHECK(cupel_report_shortfall_count(r) == 2);
  check_shortfall(r, 0, "TOOL", 3, 1); /* reported as the entry spells it */
  check_shortfall(r, 1, "Memory", 1, 0);

  out[0] = 777;
  n = 55;
  CHECK_STATUS(slice_into(strict, items, 1000, 1000, out, 1, &n, r), CUPEL_ERROR_SCARCITY);
  CHECK_MSG("kind \"TOOL\": 1 items available, require_count is 3");
  CHECK(out[0] == 777 && n == 55); /* nothing written */
  CHECK(cupel_report_shortfall_count(r) == 0); /* report left empty */
  CHECK_STATUS(slice_into(absent, items, 1000, 1000, out, 1, &n, r), CUPEL_ERROR_SCARCITY);
  CHECK_MSG("\"Memory\": 0 items available");
  cupel_slicer_free(cq);
  cupel_slicer_free(strict);
  cupel_slicer_free(absent);
  cupel_items_free(items);
  cupel_report_free(r);
}

/* CountConstrainedKnapsackSlice scenarios of the conformance vectors */
static void test_count_constrained_knapsack(void) {
  const int64_t t[] = {100, 100, 50, 150, 200};
  const double s[] = {0.9, 0.7, 0.8, 0.6, 0.4};
  const char *k[] = {"tool", "tool", "msg", "msg", "msg"};
  const int64_t t4[] = {100, 100, 100, 100};
  const double s4[] = {0.9, 0.8, 0.7, 0.6};
  const char *k4[] = {"tool", "tool", "tool", "tool"};
  cupel_count_quota both[1] = {{"tool", 2, 2}}, capped[1] = {{"tool", 1, 2}}, scarce[1] = {{"tool", 3, 5}};
  cupel_items *items = make_items(5, t, s, k);
  cupel_report *r = NULL;
  cupel_slicer *cck = NULL;
  size_t out[5], n = 0, x = 0;
  CHECK_OK(cupel_report_new(&r));
  /* require-and-cap, bucket 1: tools committed, the knapsack takes all msgs,
   * re-ordered by score: msg-s (0.8), msg-m (0.6), msg-l (0.4) */
  CHECK_OK(cupel_slicer_new_count_constrained_knapsack(1, both, 1, CUPEL_SCARCITY_DEGRADE, &cck));
  CHECK_OK(slice_into(cck, items, 1000, 1000, out, 5, &n, r));
  CHECK_INDICES(out, n, 0, 1, 2, 3, 4);
  cupel_slicer_free(cck);
  cupel_items_free(items);

  /* cap-exclusion: tool-a committed; b kept; c and d excluded by cap 2 */
  items = make_items(4, t4, s4, k4);
  CHECK_OK(cupel_slicer_new_count_constrained_knapsack(100, capped, 1, CUPEL_SCARCITY_DEGRADE, &cck));
  CHECK_OK(slice_into(cck, items, 600, 600, out, 5, &n, r));
  CHECK_INDICES(out, n, 0, 1);
  CHECK(cupel_report_cap_excluded_count(r) == 2);
  CHECK_OK(cupel_report_cap_excluded(r, 0, &x));
  CHECK(x == 2);
  cupel_slicer_free(cck);

  /* scarcity-degrade */
  CHECK_OK(cupel_slicer_new_count_constrained_knapsack(100, scarce, 1, CUPEL_SCARCITY_DEGRADE, &cck));
  CHECK_OK(slice_into(cck, items, 500, 500, out, 5, &n, r));
  CHECK(n == 4 && cupel_report_shortfall_count(r) == 0); /* 4 tools exist */
  cupel_slicer_free(cck);
  cupel_items_free(items);
  items = make_items(1, t4, s4, k4);
  CHECK_OK(cupel_slicer_new_count_constrained_knapsack(100, scarce, 1, CUPEL_SCARCITY_DEGRADE, &cck));
  CHECK_OK(slice_into(cck, items, 500, 500, out, 5, &n, r));
  CHECK_INDICES(out, n, 0);
  CHECK(cupel_report_shortfall_count(r) == 1);
  check_shortfall(r, 0, "tool", 3, 1);
  cupel_slicer_free(cck);
  cupel_items_free(items);
  cupel_report_free(r);
}

static void test_count_construction_errors(void) {
  cupel_slicer *g = greedy(), *k = NULL, *s = NULL;
  cupel_count_quota e[2];
  CHECK_OK(cupel_slicer_new_knapsack(100, &k));
  CHECK_STATUS(cupel_slicer_new_count_quota(k, NULL, 0, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_UNSUPPORTED);
  CHECK_MSG("cupel_slicer_new_count_constrained_knapsack");
  CHECK_STATUS(cupel_slicer_new_count_quota(NULL, NULL, 0, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_slicer_new_count_quota(g, NULL, 1, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("entries is NULL");
  CHECK_STATUS(cupel_slicer_new_count_quota(g, NULL, 0, CUPEL_SCARCITY_DEGRADE, NULL), CUPEL_ERROR_NULL_POINTER);
  e[0].kind = NULL; e[0].require_count = 0; e[0].cap_count = 1;
  CHECK_STATUS(cupel_slicer_new_count_quota(g, e, 1, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("entries[0].kind is NULL");
  e[0].kind = "tool"; e[0].require_count = 3; e[0].cap_count = 2;
  CHECK_STATUS(cupel_slicer_new_count_quota(g, e, 1, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("require_count 3 > cap_count 2 for kind \"tool\"");
  e[0].require_count = 1; e[0].cap_count = 0;
  CHECK_STATUS(cupel_slicer_new_count_quota(g, e, 1, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("cap_count 0 with require_count 1");
  e[0].require_count = 0; e[0].cap_count = 1;
  e[1].kind = "TOOL"; e[1].require_count = 0; e[1].cap_count = 1;
  CHECK_STATUS(cupel_slicer_new_count_quota(g, e, 2, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("entries[1].kind \"TOOL\"");
  CHECK_STATUS(cupel_slicer_new_count_quota(g, e, 1, 7, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("scarcity is 7");
  CHECK_STATUS(cupel_slicer_new_count_constrained_knapsack(0, e, 1, CUPEL_SCARCITY_DEGRADE, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("bucket_size is 0");
  CHECK_STATUS(cupel_slicer_new_count_constrained_knapsack(1, e, 2, CUPEL_SCARCITY_ERROR, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_slicer_new_count_constrained_knapsack(1, e, 1, CUPEL_SCARCITY_ERROR, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK(s == NULL);
  cupel_slicer_free(g);
  cupel_slicer_free(k);
}

int main(void) {
  test_count_quota_scenarios();
  test_scarcity();
  test_count_constrained_knapsack();
  test_count_construction_errors();
  return check_summary("test_count_slicers");
}
