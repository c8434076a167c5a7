/* CountQuotaSlice, CountConstrainedKnapsackSlice, reports at any nesting
 * depth, StreamSlice and budget simulation through the C ABI. */
#include "check.h"
#include <math.h>
#include <stdint.h>

static cupel_slicer *count_quota(const cupel_count_quota *e, size_t n, int scarcity) {
  cupel_slicer *g = greedy(), *s = NULL;
  if (cupel_slicer_new_count_quota(g, e, n, scarcity, &s) != CUPEL_OK) {
    fprintf(stderr, "count quota: %s\n", cupel_last_error());
    abort();
  }
  cupel_slicer_free(g);
  return s;
}

static void check_shortfall(cupel_report *r, size_t i, const char *kind, uint32_t req, uint32_t sat) {
  const char *k = NULL;
  uint32_t got_req = 0, got_sat = 0;
  CHECK_OK(cupel_report_shortfall(r, i, &k, &got_req, &got_sat));
  CHECK(k != NULL && strcmp(k, kind) == 0);
  CHECK(got_req == req && got_sat == sat);
}

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

static void test_stream(void) {
  cupel_stream *st = NULL;
  bool full = true;
  size_t out[8] = {0}, n = 0;
  CHECK_STATUS(cupel_stream_new(100, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_stream_new(250, 3, &st));
  CHECK_STATUS(cupel_stream_push(NULL, 1, 0.5, &full), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_stream_push(st, 1, 0.5, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_stream_push(st, -1, 0.5, &full), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_stream_push(st, 1, NAN, &full), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_OK(cupel_stream_push(st, 100, 0.1, &full));
  CHECK(!full);
  CHECK_OK(cupel_stream_push(st, 100, 0.9, &full));
  CHECK_OK(cupel_stream_push(st, 100, 0.5, &full)); /* batch: takes 1, 2; 0 does not fit */
  CHECK(!full);
  CHECK_OK(cupel_stream_push(st, 50, 0.2, &full)); /* partial batch */
  CHECK_STATUS(cupel_stream_finish(st, out, 2, &n), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3);
  CHECK_STATUS(cupel_stream_finish(st, NULL, 3, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_stream_finish(st, out, 8, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_stream_finish(NULL, out, 8, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_stream_finish(st, out, 8, &n));
  CHECK_INDICES(out, n, 1, 2, 3);
  CHECK_STATUS(cupel_stream_push(st, 1, 0.5, &full), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("finished");
  cupel_stream_free(st);
  cupel_stream_free(NULL);

  /* the stream turns full once a batch spends the budget */
  CHECK_OK(cupel_stream_new(200, 2, &st));
  CHECK_OK(cupel_stream_push(st, 100, 0.5, &full));
  CHECK(!full);
  CHECK_OK(cupel_stream_push(st, 100, 0.4, &full));
  CHECK(full);
  CHECK_OK(cupel_stream_push(st, 0, 0.9, &full)); /* counted, never taken */
  CHECK(full);
  CHECK_OK(cupel_stream_finish(st, out, 8, &n));
  CHECK_INDICES(out, n, 0, 1);
  cupel_stream_free(st);
}

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
  CHECK_MSG("QuotaSlice");
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
  test_count_quota_scenarios();
  test_scarcity();
  test_count_constrained_knapsack();
  test_count_construction_errors();
  test_nested_reports();
  test_stream();
  test_marginal_items();
  test_find_min_budget();
  return check_summary("test_counts");
}
