/* cupel_pipeline_*, cupel_placer_*, the item attributes and the extended
 * report through the C ABI: the whole run on a small conversation, each
 * reason with its data, the JSON report, overflow strategies, and every
 * bad input (NULLs, out-of-range indices, invalid UTF-8, too-small
 * buffers), each leaving the handles as they were. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define DAY 86400000LL

static cupel_decision included(const cupel_report *r, size_t i) {
  cupel_decision d;
  memset(&d, 0, sizeof d);
  CHECK_OK(cupel_report_included(r, i, &d));
  return d;
}

static cupel_decision excluded(const cupel_report *r, size_t i) {
  cupel_decision d;
  memset(&d, 0, sizeof d);
  CHECK_OK(cupel_report_excluded(r, i, &d));
  return d;
}

/* items: 0 system prompt (pinned), 1-3 turns, 4 a duplicate of 1,
 * 5 negative tokens, 6 too big to fit. */
static cupel_items *conversation(void) {
  const int64_t t[] = {50, 100, 100, 100, 100, -3, 5000};
  const double s[] = {0.0, 0.9, 0.5, 0.7, 0.2, 0.9, 0.99};
  const char *k[] = {"SystemPrompt", "Message", "Message", "ToolOutput", "Message", NULL, "Document"};
  const char *content[] = {"You are helpful.", "hello", "how are you", "ls output", "hello",
                           "broken", "a huge file"};
  const int64_t ts[] = {0, 1 * DAY, 2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY, 6 * DAY};
  cupel_items *items = make_items(7, t, s, k);
  CHECK_OK(cupel_items_set_contents(items, 0, 7, content));
  CHECK_OK(cupel_items_set_timestamps(items, 1, 6, ts + 1));
  CHECK_OK(cupel_items_set_pinned(items, 0, true));
  return items;
}

static void test_run_and_report(void) {
  cupel_items *items = conversation();
  cupel_scorer *given = NULL;
  cupel_slicer *greedy_s = greedy();
  cupel_placer *chrono = NULL;
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  cupel_budget *b = make_budget(1000, 300);
  size_t out[8], n = 0, i, len = 0;
  char *json;
  cupel_decision d;

  CHECK_OK(cupel_scorer_new_given(&given));
  CHECK_OK(cupel_placer_new_chronological(&chrono));
  CHECK_OK(cupel_pipeline_new(given, greedy_s, chrono, &p));
  cupel_scorer_free(given); /* the pipeline keeps copies */
  cupel_slicer_free(greedy_s);
  cupel_placer_free(chrono);
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, r));
  /* pinned 50 leaves 250: turns 1 (0.9) and 3 (0.7) fit; 2 (0.5) does not;
   * chronological: 1, 3, then the timestamp-less system prompt */
  CHECK_INDICES(out, n, 1, 3, 0);
  CHECK(cupel_report_included_count(r) == 3);
  CHECK(cupel_report_excluded_count(r) == 4);
  CHECK(cupel_report_total_candidates(r) == 7);
  CHECK(cupel_report_total_tokens_considered(r) == 50 + 400 - 3 + 5000);
  d = included(r, 2);
  CHECK(d.item_index == 0 && d.reason == CUPEL_REASON_PINNED && d.score == 1.0);
  d = included(r, 0);
  CHECK(d.item_index == 1 && d.reason == CUPEL_REASON_SCORED && d.related_index == SIZE_MAX);
  /* excluded by score: 6 (0.99, too big), 2 (0.5), 4 (0.2, duplicate), 5 (negative) */
  d = excluded(r, 0);
  CHECK(d.item_index == 6 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED && d.item_tokens == 5000);
  CHECK(d.available_tokens == 50); /* effective target 250 minus 200 selected */
  d = excluded(r, 1);
  CHECK(d.item_index == 2 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED && d.available_tokens == 50);
  d = excluded(r, 2);
  CHECK(d.item_index == 4 && d.reason == CUPEL_REASON_DEDUPLICATED && d.related_index == 1);
  CHECK(d.available_tokens == 0);
  d = excluded(r, 3);
  CHECK(d.item_index == 5 && d.reason == CUPEL_REASON_NEGATIVE_TOKENS && d.item_tokens == -3);
  CHECK(d.score == 0.0);
  CHECK_STATUS(cupel_report_excluded(r, 4, &d), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("i 4 is out of range");
  CHECK_STATUS(cupel_report_included(r, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK(cupel_report_included_count(NULL) == 0 && cupel_report_total_candidates(NULL) == 0);

  /* JSON: ask for the length, then write; a NUL follows when it fits */
  CHECK_STATUS(cupel_report_json(r, items, NULL, 0, &len), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(len > 100);
  json = malloc(len + 1);
  memset(json, 'x', len + 1);
  CHECK_STATUS(cupel_report_json(r, items, json, len - 1, &i), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(i == len && json[0] == 'x');
  CHECK_OK(cupel_report_json(r, items, json, len + 1, &i));
  CHECK(i == len && json[len] == '\0' && strlen(json) == len);
  CHECK(strstr(json, "\"reason\":\"Deduplicated\"") != NULL);
  CHECK(strstr(json, "\"deduplicated_against\":\"hello\"") != NULL);
  CHECK(strstr(json, "\"reason\":\"NegativeTokens\",\"tokens\":-3") != NULL);
  CHECK(strstr(json, "\"available_tokens\":50") != NULL);
  CHECK(strstr(json, "\"timestamp\":\"1970-01-02T00:00:00Z\"") != NULL);
  CHECK(strstr(json, "\"total_candidates\":7") != NULL);
  CHECK(strstr(json, "\"stage\":\"Classify\"") != NULL);
  /* exactly len bytes also fits (without the NUL) */
  memset(json, 'x', len + 1);
  CHECK_OK(cupel_report_json(r, items, json, len, &i));
  CHECK(json[len] == 'x');
  free(json);
  {
    cupel_items *small = NULL;
    CHECK_OK(cupel_items_new(&small));
    CHECK_STATUS(cupel_report_json(r, small, NULL, 0, &len), CUPEL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG("pass the list the report was made from");
    cupel_items_free(small);
  }

  /* deduplication off: the duplicate competes (and does not fit) */
  CHECK_OK(cupel_pipeline_set_deduplication(p, false));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, r));
  CHECK_INDICES(out, n, 1, 3, 0);
  CHECK(excluded(r, 2).reason == CUPEL_REASON_BUDGET_EXCEEDED);

  /* a failing run leaves the report empty */
  CHECK_STATUS(cupel_pipeline_run(p, items, b, out, 1, &n, r), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3);
  CHECK(cupel_report_included_count(r) == 0 && cupel_report_excluded_count(r) == 0);
  /* NULL report and NULL placer are fine */
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, NULL));
  cupel_pipeline_free(p);
  {
    cupel_slicer *g = greedy();
    CHECK_OK(cupel_pipeline_new(NULL, g, NULL, &p)); /* pushed scores, slicer order */
    cupel_slicer_free(g);
    CHECK_OK(cupel_pipeline_run(p, items, b, out, 8, &n, NULL));
    CHECK(n == 3 && out[0] == 0); /* pinned first */
    cupel_pipeline_free(p);
  }
  cupel_report_free(r);
  cupel_budget_free(b);
  cupel_items_free(items);
}

static void test_overflow_and_pinned(void) {
  const int64_t t[] = {80, 120, 0};
  const double s[] = {0.5, 0.9, 0.1};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *g = greedy();
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  cupel_budget *b = make_budget(1000, 150);
  size_t out[4], n = 0;
  cupel_decision d;

  CHECK_OK(cupel_items_set_pinned(items, 1, true));
  CHECK_OK(cupel_pipeline_new(NULL, g, NULL, &p));
  CHECK_OK(cupel_report_new(&r));
  /* pinned 120 leaves 30: the 80-token item is displaced by the pinned one */
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 4, &n, r));
  CHECK_INDICES(out, n, 1, 2);
  d = excluded(r, 0);
  CHECK(d.item_index == 0 && d.reason == CUPEL_REASON_PINNED_OVERRIDE && d.related_index == 1);
  CHECK(included(r, 1).reason == CUPEL_REASON_ZERO_TOKEN);

  /* An item exactly the size the pinned tokens left (30), beaten to it by a
     denser one: it fits that target, so BudgetExceeded, not PinnedOverride. */
  {
    const int64_t t2[] = {120, 10, 30};
    const double s2[] = {0.9, 0.9, 0.5};
    cupel_items *exact = make_items(3, t2, s2, NULL);
    CHECK_OK(cupel_items_set_pinned(exact, 0, true));
    CHECK_OK(cupel_pipeline_run(p, exact, b, out, 4, &n, r));
    CHECK_INDICES(out, n, 0, 1);
    d = excluded(r, 0);
    CHECK(d.item_index == 2 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED);
    CHECK(d.item_tokens == 30 && d.available_tokens == 20);
    cupel_items_free(exact);
  }

  /* pinned items over max - output_reserve: the Classify error */
  CHECK_OK(cupel_budget_set_output_reserve(b, 900));
  CHECK_STATUS(cupel_pipeline_run(p, items, b, out, 4, &n, r), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("the pinned items need 120 tokens, but only 100 are available");
  CHECK_OK(cupel_budget_set_output_reserve(b, 0));

  /* pinned alone over the target: Throw fails, Truncate and Proceed keep them */
  cupel_budget_free(b);
  b = make_budget(1000, 100);
  CHECK_STATUS(cupel_pipeline_run(p, items, b, out, 4, &n, r), CUPEL_ERROR_OVERFLOW);
  CHECK_MSG("over target_tokens 100");
  CHECK(cupel_report_included_count(r) == 0);
  CHECK_OK(cupel_pipeline_set_overflow(p, CUPEL_OVERFLOW_TRUNCATE));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 4, &n, r));
  CHECK_INDICES(out, n, 1); /* the effective target is 0: Greedy takes nothing */
  CHECK(cupel_report_tokens_over_budget(r) == 0); /* Truncate: no OverflowEvent */
  CHECK_OK(cupel_pipeline_set_overflow(p, CUPEL_OVERFLOW_PROCEED));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 4, &n, r));
  CHECK(n >= 1);
  /* the pinned 120 alone (Greedy gets a target of 0): 20 over the target 100 */
  CHECK(cupel_report_tokens_over_budget(r) == 20);
  CHECK(cupel_report_tokens_over_budget(NULL) == 0);
  /* within the target under Proceed: none */
  cupel_budget_free(b);
  b = make_budget(1000, 500);
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 4, &n, r));
  CHECK(cupel_report_tokens_over_budget(r) == 0);
  CHECK_STATUS(cupel_pipeline_set_overflow(p, 3), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("strategy is 3");
  CHECK_STATUS(cupel_pipeline_set_overflow(NULL, 0), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_set_deduplication(NULL, true), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_new(NULL, NULL, NULL, &p), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("slicer is NULL");
  CHECK_STATUS(cupel_pipeline_run(NULL, items, b, out, 4, &n, r), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_run(p, NULL, b, out, 4, &n, r), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_run(p, items, NULL, out, 4, &n, r), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_run(p, items, b, NULL, 4, &n, r), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_run(p, items, b, out, 4, NULL, r), CUPEL_ERROR_NULL_POINTER);
  cupel_pipeline_free(p);
  cupel_pipeline_free(NULL);
  cupel_report_free(r);
  cupel_budget_free(b);
  cupel_slicer_free(g);
  cupel_items_free(items);
}

/* Truncate when a CountQuota's committed items exceed the budget: in placed
   order, what still fits is kept; the rest is PinnedOverride when it would
   fit but for the pinned items, BudgetExceeded otherwise. */
static void test_truncate_reasons(void) {
  const int64_t t[] = {50, 20, 90, 60};
  const double s[] = {0.1, 0.9, 0.8, 0.7};
  const char *const k[] = {"SystemPrompt", "tool", "tool", "tool"};
  cupel_items *items = make_items(4, t, s, k);
  cupel_count_quota all_three[1] = {{"tool", 3, 3}};
  cupel_slicer *g = greedy(), *cq = NULL;
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  cupel_budget *b = make_budget(1000, 100);
  size_t out[4], n = 0;
  cupel_decision d;

  CHECK_OK(cupel_items_set_pinned(items, 0, true));
  CHECK_OK(cupel_slicer_new_count_quota(g, all_three, 1, CUPEL_SCARCITY_DEGRADE, &cq));
  CHECK_OK(cupel_pipeline_new(NULL, cq, NULL, &p));
  CHECK_OK(cupel_pipeline_set_overflow(p, CUPEL_OVERFLOW_TRUNCATE));
  CHECK_OK(cupel_report_new(&r));
  /* pinned 50, then the committed 20 (kept: 70), 90 (160 > 100), 60 */
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 4, &n, r));
  CHECK_INDICES(out, n, 0, 1);
  CHECK(cupel_report_excluded_count(r) == 2);
  d = excluded(r, 0); /* 20 unpinned + 90 > 100: over with or without the pinned item */
  CHECK(d.item_index == 2 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED && d.available_tokens == 30);
  d = excluded(r, 1); /* 20 unpinned + 60 <= 100: displaced by the pinned item */
  CHECK(d.item_index == 3 && d.reason == CUPEL_REASON_PINNED_OVERRIDE && d.related_index == 0);
  cupel_report_free(r);
  cupel_pipeline_free(p);
  cupel_budget_free(b);
  cupel_slicer_free(cq);
  cupel_slicer_free(g);
  cupel_items_free(items);
}

static void test_attributes_bad_input(void) {
  const int64_t t[] = {10, 20};
  const double s[] = {0.5, 0.4};
  cupel_items *items = make_items(2, t, s, NULL);
  const char *contents[] = {"a", "\xc3\x28"};
  const char *empty[] = {"x", ""};
  const int64_t ts[] = {1, 2, 3};
  const bool pins[] = {true, false};
  const double hints[] = {0.5, NAN};

  CHECK_STATUS(cupel_items_set_content(items, 2, "x"), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index 2 is out of range: the list holds 2 items");
  CHECK_STATUS(cupel_items_set_content(items, 0, ""), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("empty");
  CHECK_STATUS(cupel_items_set_content(items, 0, "\xff\xfe"), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("content is not valid UTF-8");
  CHECK_STATUS(cupel_items_set_content(NULL, 0, "x"), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_items_set_content(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_items_set_timestamp(items, SIZE_MAX, 0), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_set_priority(items, 2, 1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_set_pinned(items, 2, true), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_set_relevance_hint(items, 2, 0.5), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_set_source(items, 0, "  "), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("source");
  CHECK_OK(cupel_items_set_source(items, 0, "Rag"));
  CHECK_STATUS(cupel_items_add_tag(items, 0, "\xff"), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_add_tag(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_items_set_metadata(items, 0, NULL, "v"), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_items_set_metadata(items, 0, "k", NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_items_set_metadata(items, 0, "k", "v1"));
  CHECK_OK(cupel_items_set_metadata(items, 0, "k", "v2")); /* replaces */
  CHECK_OK(cupel_items_set_relevance_hint(items, 0, NAN)); /* stored; Reflexive gives 0 */

  /* bulk forms: all or nothing */
  CHECK_STATUS(cupel_items_set_contents(items, 0, 2, contents), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("contents[1] is not valid UTF-8");
  CHECK_STATUS(cupel_items_set_contents(items, 0, 2, empty), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("contents[1] is empty");
  CHECK_STATUS(cupel_items_set_contents(items, 1, 2, empty), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("first 1 + count 2 is past the end");
  CHECK_STATUS(cupel_items_set_contents(items, 0, 2, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_items_set_contents(items, 0, 0, NULL));
  CHECK_STATUS(cupel_items_set_timestamps(items, 0, 3, ts), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_set_timestamps(items, SIZE_MAX, 2, ts), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_OK(cupel_items_set_timestamps(items, 0, 2, ts));
  CHECK_OK(cupel_items_set_priorities(items, 0, 2, ts));
  CHECK_OK(cupel_items_set_pinned_many(items, 0, 2, pins));
  CHECK_OK(cupel_items_set_relevance_hints(items, 0, 2, hints));
  CHECK_STATUS(cupel_items_set_pinned_many(items, 1, 2, pins), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK(cupel_items_len(items) == 2);
  /* clearing drops attributes: a re-pushed item is unpinned, content-less */
  cupel_items_clear(items);
  CHECK_OK(cupel_items_push(items, 5, 0.5, NULL));
  {
    cupel_slicer *g = greedy();
    cupel_pipeline *p = NULL;
    cupel_budget *b = make_budget(100, 100);
    cupel_report *r = NULL;
    size_t out[2], n = 0, len = 0;
    char buf[4096]; /* the JSON carries wall-clock durations: its length varies */
    CHECK_OK(cupel_pipeline_new(NULL, g, NULL, &p));
    CHECK_OK(cupel_report_new(&r));
    CHECK_OK(cupel_pipeline_run(p, items, b, out, 2, &n, r));
    CHECK(included(r, 0).reason == CUPEL_REASON_SCORED);
    CHECK_OK(cupel_report_json(r, items, buf, sizeof buf, &len));
    CHECK(strstr(buf, "\"content\"") == NULL); /* never set: not written */
    CHECK(strstr(buf, "\"source\":\"Chat\"") != NULL);
    cupel_report_free(r);
    cupel_budget_free(b);
    cupel_pipeline_free(p);
    cupel_slicer_free(g);
  }
  cupel_items_free(items);
}

static void test_placers(void) {
  const int64_t t[] = {1, 1, 1, 1, 1};
  const double s[] = {0, 0, 0, 0, 0};
  cupel_items *items = make_items(5, t, s, NULL);
  cupel_placer *u = NULL, *c = NULL;
  size_t idx[] = {0, 1, 2, 3, 4}, out[5], n = 0;
  double scores[] = {0.9, 0.8, 0.7, 0.6, 0.5};
  CHECK_OK(cupel_placer_new_u_shaped(&u));
  CHECK_OK(cupel_placer_new_chronological(&c));
  CHECK_OK(cupel_placer_place(u, items, idx, scores, 5, out, 5, &n));
  CHECK_INDICES(out, n, 0, 2, 4, 3, 1);
  CHECK_OK(cupel_items_set_timestamp(items, 3, 10));
  CHECK_OK(cupel_items_set_timestamp(items, 1, 20));
  CHECK_OK(cupel_placer_place(c, items, idx, scores, 5, out, 5, &n));
  CHECK_INDICES(out, n, 3, 1, 0, 2, 4);
  CHECK_OK(cupel_placer_place(c, items, idx, scores, 2, out, 5, &n)); /* a subset */
  CHECK_INDICES(out, n, 1, 0);
  idx[2] = 9;
  CHECK_STATUS(cupel_placer_place(c, items, idx, scores, 5, out, 5, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("indices[2] is 9");
  idx[2] = 2;
  scores[1] = NAN;
  CHECK_STATUS(cupel_placer_place(u, items, idx, scores, 5, out, 5, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("scores[1] is NaN");
  scores[1] = 0.8;
  CHECK_STATUS(cupel_placer_place(u, items, idx, scores, 5, out, 4, &n), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 5);
  CHECK_STATUS(cupel_placer_place(NULL, items, idx, scores, 5, out, 5, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_placer_place(u, items, NULL, scores, 5, out, 5, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_placer_new_u_shaped(NULL), CUPEL_ERROR_NULL_POINTER);
  cupel_placer_free(u);
  cupel_placer_free(c);
  cupel_placer_free(NULL);
  cupel_items_free(items);
}

/* cupel_slice reports too: negative-token items excluded, never selected. */
static void test_slice_report(void) {
  const int64_t t[] = {-5, 10, 500};
  const double s[] = {0.9, 0.5, 0.8};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_slicer *g = greedy();
  cupel_report *r = NULL;
  size_t out[3], n = 0;
  cupel_decision d;
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(slice_into(g, items, 100, 100, out, 3, &n, r));
  CHECK_INDICES(out, n, 1);
  CHECK(cupel_report_included_count(r) == 1 && cupel_report_excluded_count(r) == 2);
  d = excluded(r, 0);
  CHECK(d.item_index == 0 && d.reason == CUPEL_REASON_NEGATIVE_TOKENS && d.score == 0.9);
  d = excluded(r, 1);
  CHECK(d.item_index == 2 && d.reason == CUPEL_REASON_BUDGET_EXCEEDED && d.available_tokens == 90);
  cupel_report_free(r);
  cupel_slicer_free(g);
  cupel_items_free(items);
}

/* A count slicer's cap exclusions are reported with their reason and kind. */
static void test_count_cap_reason(void) {
  const int64_t t[] = {10, 10, 10};
  const double s[] = {0.9, 0.8, 0.7};
  const char *k[] = {"tool", "tool", "tool"};
  cupel_items *items = make_items(3, t, s, k);
  cupel_count_quota e[] = {{"tool", 0, 1}};
  cupel_slicer *cq = count_quota(e, 1, CUPEL_SCARCITY_DEGRADE);
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  cupel_budget *b = make_budget(100, 100);
  size_t out[3], n = 0, len = 0;
  char buf[4096];
  CHECK_OK(cupel_pipeline_new(NULL, cq, NULL, &p));
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 3, &n, r));
  CHECK_INDICES(out, n, 0);
  CHECK(cupel_report_excluded_count(r) == 2);
  CHECK(excluded(r, 0).reason == CUPEL_REASON_COUNT_CAP_EXCEEDED && excluded(r, 0).item_index == 1);
  CHECK(excluded(r, 1).reason == CUPEL_REASON_COUNT_CAP_EXCEEDED);
  CHECK_OK(cupel_report_json(r, items, buf, sizeof buf, &len));
  CHECK(strstr(buf, "\"kind\":\"tool\",\"reason\":\"CountCapExceeded\"") != NULL);
  cupel_report_free(r);
  cupel_budget_free(b);
  cupel_pipeline_free(p);
  cupel_slicer_free(cq);
  cupel_items_free(items);
}

int main(void) {
  test_run_and_report();
  test_overflow_and_pinned();
  test_truncate_reasons();
  test_attributes_bad_input();
  test_placers();
  test_slice_report();
  test_count_cap_reason();
  return check_summary("test_pipeline");
}
