/* Keep-together groups through the C ABI (README "Groups"): a tool call
 * and its result are never split by cupel_slice, cupel_pipeline_run or the
 * stream; the rules for pinned, negative-token, zero-token and duplicate
 * members; placement; the report's group fields and JSON; bad input. */
#include "check.h"
#include <stdint.h>

static cupel_decision decision(const cupel_report *r, bool inc, size_t i) {
  cupel_decision d;
  memset(&d, 0, sizeof d);
  if (inc) {
    CHECK_OK(cupel_report_included(r, i, &d));
  } else {
    CHECK_OK(cupel_report_excluded(r, i, &d));
  }
  return d;
}

/* 0 call (10 tokens, 0.9) + 1 result (200, 0.1) in group 7; 2 a message
 * (60, 0.5). Greedy alone would take the call without its result. */
static cupel_items *pair_and_message(void) {
  const int64_t t[] = {10, 200, 60};
  const double s[] = {0.9, 0.1, 0.5};
  const char *k[] = {"ToolCall", "ToolOutput", "Message"};
  const uint64_t g[] = {7, 7, 0};
  cupel_items *items = make_items(3, t, s, k);
  CHECK_OK(cupel_items_set_groups(items, 0, 3, g));
  return items;
}

static void test_bad_input(void) {
  cupel_items *items = pair_and_message();
  const uint64_t g[] = {1, 2};
  CHECK_STATUS(cupel_items_set_group(NULL, 0, 1), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_items_set_group(items, 3, 1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index 3 is out of range");
  CHECK_STATUS(cupel_items_set_groups(items, 2, 2, g), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("first 2 + count 2 is past the end");
  CHECK_STATUS(cupel_items_set_groups(items, 0, 2, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_items_set_groups(items, 0, 0, NULL)); /* nothing to set */
  cupel_items_free(items);
}

static void test_slice_keeps_the_pair(void) {
  cupel_items *items = pair_and_message();
  cupel_slicer *g = greedy(), *k = knapsack(1);
  cupel_report *r = NULL;
  size_t out[3], n = 0;
  cupel_decision d;
  CHECK_OK(cupel_report_new(&r));
  /* budget 100: the pair (210) does not fit; the message does */
  CHECK_OK(slice_into(g, items, 100, 100, out, 3, &n, r));
  CHECK_INDICES(out, n, 2);
  CHECK(cupel_report_excluded_count(r) == 2);
  d = decision(r, false, 0); /* by score: the call (0.9) first */
  CHECK(d.item_index == 0 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED);
  CHECK(d.group == 7 && d.group_tokens == 210 && d.item_tokens == 10);
  CHECK(d.available_tokens == 40);
  d = decision(r, false, 1);
  CHECK(d.item_index == 1 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED);
  CHECK(d.group == 7 && d.group_tokens == 210 && d.item_tokens == 200);
  d = decision(r, true, 0);
  CHECK(d.group == 0 && d.group_tokens == 60);
  /* budget 270: both; the pair's density 1.0/210 is below the message's,
   * so the message comes first, then call and result together */
  CHECK_OK(slice_into(g, items, 270, 270, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 2, 0, 1);
  /* knapsack: value 9000 + 1000 for the pair (210) vs 5000 (60) */
  CHECK_OK(slice_into(k, items, 215, 215, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 0, 1);
  CHECK_OK(slice_into(k, items, 209, 209, out, 3, &n, NULL));
  CHECK_INDICES(out, n, 2);
  cupel_report_free(r);
  cupel_slicer_free(g);
  cupel_slicer_free(k);
  cupel_items_free(items);
}

static void test_negative_and_zero_token_members(void) {
  const int64_t t[] = {0, 0, 30, -5, 40};
  const double s[] = {0.1, 0.2, 0.9, 0.9, 0.5};
  const uint64_t g[] = {3, 3, 4, 4, 0};
  cupel_items *items = make_items(5, t, s, NULL);
  cupel_slicer *gr = greedy();
  cupel_report *r = NULL;
  size_t out[5], n = 0, i, negative = 0;
  CHECK_OK(cupel_items_set_groups(items, 0, 5, g));
  CHECK_OK(cupel_report_new(&r));
  /* group 3 costs nothing: always in; group 4 has a negative member: never */
  CHECK_OK(slice_into(gr, items, 0, 0, out, 5, &n, r));
  CHECK_NONE(n); /* target 0 selects nothing at all */
  CHECK_OK(slice_into(gr, items, 1000, 1000, out, 5, &n, r));
  CHECK_INDICES(out, n, 0, 1, 4);
  for (i = 0; i < cupel_report_excluded_count(r); i++) {
    cupel_decision d = decision(r, false, i);
    CHECK(d.item_index == 2 || d.item_index == 3);
    CHECK(d.reason == CUPEL_REASON_NEGATIVE_TOKENS && d.group == 4 && d.group_tokens == 25);
    negative++;
  }
  CHECK(negative == 2);
  cupel_report_free(r);
  cupel_slicer_free(gr);
  cupel_items_free(items);
}

/* A pipeline with the chronological placer over a conversation whose
 * pairs interleave in time with other turns. */
static void test_pipeline(void) {
  /* 0 system (pinned), 1 call A, 2 msg, 3 result A, 4 call B (pinned),
   * 5 result B, 6 dup of 2 in group 9 with 7, 7 tool output */
  const int64_t t[] = {20, 10, 30, 40, 10, 50, 30, 25};
  const double s[] = {0.0, 0.9, 0.6, 0.2, 0.1, 0.1, 0.5, 0.4};
  const char *k[] = {"SystemPrompt", "ToolCall", "Message", "ToolOutput",
                     "ToolCall", "ToolOutput", "Message", "ToolOutput"};
  const char *content[] = {"sys", "call A", "hi", "result A", "call B", "result B", "hi", "out"};
  const int64_t ts[] = {0, 100, 150, 300, 200, 400, 250, 260};
  const uint64_t g[] = {0, 1, 0, 1, 2, 2, 9, 9};
  cupel_items *items = make_items(8, t, s, k);
  cupel_slicer *gr = greedy();
  cupel_placer *chrono = NULL;
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  cupel_budget *b = make_budget(1000, 1000);
  size_t out[8], n = 0, i, len = 0;
  char json[8192];
  CHECK_OK(cupel_items_set_contents(items, 0, 8, content));
  CHECK_OK(cupel_items_set_timestamps(items, 0, 8, ts));
  CHECK_OK(cupel_items_set_groups(items, 0, 8, g));
  CHECK_OK(cupel_items_set_pinned(items, 0, true));
  CHECK_OK(cupel_items_set_pinned(items, 4, true)); /* pins group 2 */
  CHECK_OK(cupel_placer_new_chronological(&chrono));
  CHECK_OK(cupel_pipeline_new(NULL, gr, chrono, &p));
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, r));
  /* everything fits; item 6 duplicates 2 but is grouped: both stay.
   * Placed by time, each group where its first member's time puts it:
   * 0 (0), [1 3] (100), 2 (150), [4 5] (200), [6 7] (250) */
  CHECK_INDICES(out, n, 0, 1, 3, 2, 4, 5, 6, 7);
  for (i = 0; i < cupel_report_included_count(r); i++) {
    cupel_decision d = decision(r, true, i);
    if (d.item_index == 4 || d.item_index == 5 || d.item_index == 0) {
      CHECK(d.reason == CUPEL_REASON_PINNED && d.score == 1.0);
    } else {
      CHECK(d.reason == CUPEL_REASON_SCORED);
    }
  }
  CHECK_OK(cupel_report_json(r, items, json, sizeof json, &len));
  CHECK(strstr(json, "\"group\":2") != NULL);
  CHECK(strstr(json, "\"group\":9") != NULL);
  cupel_budget_free(b);

  /* target 100: pinned 80 (0, group 2) leave 20: group 1 (50) and group 9
   * (55) do not fit; the message (30) does not either */
  b = make_budget(1000, 100);
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, r));
  CHECK_INDICES(out, n, 0, 4, 5);
  CHECK(cupel_report_excluded_count(r) == 5);
  for (i = 0; i < cupel_report_excluded_count(r); i++) {
    cupel_decision d = decision(r, false, i);
    if (d.group == 1) CHECK(d.group_tokens == 50);
    if (d.group == 9) CHECK(d.group_tokens == 55);
  }
  CHECK_OK(cupel_report_json(r, items, json, sizeof json, &len));
  CHECK(strstr(json, "\"group_tokens\":55") != NULL);
  cupel_budget_free(b);

  /* Truncate: a pinned group over the target stays; others go whole */
  b = make_budget(1000, 70);
  CHECK_OK(cupel_pipeline_set_overflow(p, CUPEL_OVERFLOW_TRUNCATE));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, r));
  CHECK_INDICES(out, n, 0, 4, 5);
  cupel_budget_free(b);

  /* a group whose pinned tokens exceed max - output_reserve is refused */
  b = make_budget(60, 60);
  CHECK_STATUS(cupel_pipeline_run(p, items, b, out, 8, &n, r), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("pinned items need 80 tokens");
  cupel_budget_free(b);

  cupel_report_free(r);
  cupel_pipeline_free(p);
  cupel_placer_free(chrono);
  cupel_slicer_free(gr);
  cupel_items_free(items);
}

/* A count cap counts a group once, as its first member's kind; the
 * report says so for every member. */
static void test_count_cap(void) {
  const int64_t t[] = {10, 20, 10, 20};
  const double s[] = {0.9, 0.5, 0.8, 0.4};
  const char *k[] = {"ToolCall", "ToolOutput", "ToolCall", "ToolOutput"};
  const uint64_t g[] = {1, 1, 2, 2};
  cupel_count_quota cap = {"ToolCall", 0, 1};
  cupel_items *items = make_items(4, t, s, k);
  cupel_slicer *c = count_quota(&cap, 1, CUPEL_SCARCITY_DEGRADE);
  cupel_report *r = NULL;
  size_t out[4], n = 0, len = 0, i;
  char json[4096];
  const char *p;
  int capped = 0;
  CHECK_OK(cupel_items_set_groups(items, 0, 4, g));
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(slice_into(c, items, 1000, 1000, out, 4, &n, r));
  CHECK_INDICES(out, n, 0, 1);
  CHECK(cupel_report_excluded_count(r) == 2);
  for (i = 0; i < 2; i++) {
    cupel_decision d = decision(r, false, i);
    CHECK(d.reason == CUPEL_REASON_COUNT_CAP_EXCEEDED && d.group == 2 && d.group_tokens == 30);
  }
  CHECK_OK(cupel_report_json(r, items, json, sizeof json, &len));
  for (p = json; (p = strstr(p, "\"kind\":\"ToolCall\",\"reason\":\"CountCapExceeded\"")) != NULL; p++)
    capped++;
  CHECK(capped == 2);
  CHECK(strstr(json, "\"kind\":\"ToolOutput\",\"reason\":\"CountCapExceeded\"") == NULL);
  cupel_report_free(r);
  cupel_slicer_free(c);
  cupel_items_free(items);
}

static void test_stream(void) {
  cupel_stream *st = NULL;
  bool full = false;
  size_t out[8], n = 0;
  /* batch of 2 candidates: [pair 0-1 (60, 1.0), 2 (50, 0.9)] then 3 */
  CHECK_OK(cupel_stream_new(100, 2, &st));
  CHECK_OK(cupel_stream_push_grouped(st, 30, 0.5, 5, &full));
  CHECK_OK(cupel_stream_push_grouped(st, 30, 0.5, 5, &full));
  CHECK_OK(cupel_stream_push_grouped(st, 50, 0.9, 0, &full));
  CHECK(!full);
  CHECK_OK(cupel_stream_push_grouped(st, 40, 0.3, 0, &full));
  /* the pair (score 1.0) goes first: 40 left; 50 does not fit; then 40 */
  CHECK_STATUS(cupel_stream_push_grouped(st, 1, 0.1, 5, &full), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("group is 5, which ended before item 4");
  CHECK_OK(cupel_stream_finish(st, out, 8, &n));
  CHECK_INDICES(out, n, 0, 1, 3);
  cupel_stream_free(st);
}

int main(void) {
  test_bad_input();
  test_slice_keeps_the_pair();
  test_negative_and_zero_token_members();
  test_pipeline();
  test_count_cap();
  test_stream();
  return check_summary("test_groups");
}
