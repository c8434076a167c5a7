/* Items that shrink instead of vanish (abi-text.md): variants, truncatable
 * items, the pipeline's tokenizer and what the report says was chosen,
 * through the C ABI, with every bad argument. Scenario S is the one every
 * binding's tests assert. */
#include "check.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static char DOC[16384];
static size_t DOC_LEN;

static void make_doc(void) {
  int i;
  DOC_LEN = 0;
  for (i = 0; i < 200; i++)
    DOC_LEN += (size_t)snprintf(DOC + DOC_LEN, sizeof DOC - DOC_LEN,
                                "Line %d: the quick brown fox jumps over the lazy dog.\n", i);
}

/* Scenario S: a question, a 9,000-token tool output with a placeholder, a
 * long document that may be cut. */
static cupel_items *scenario(const cupel_tokenizer *tok) {
  cupel_items *items = NULL;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push(items, 40, 0.9, "Message"));
  CHECK_OK(cupel_items_set_content(items, 0, "What failed in the last build?"));
  CHECK_OK(cupel_items_push(items, 9000, 0.8, "ToolOutput"));
  CHECK_OK(cupel_items_set_content(items, 1, "(the build log)"));
  CHECK_OK(cupel_items_add_variant(items, 1, 12, 0.1, "[output cleared: 9,000 tokens]"));
  CHECK_OK(cupel_items_push_text(items, tok, DOC, DOC_LEN, 0.6, "Document"));
  CHECK_OK(cupel_items_set_truncatable(items, 2, CUPEL_KEEP_HEAD, 50));
  return items;
}

static void check_run(cupel_slicer *slicer, const cupel_tokenizer *tok, const size_t *order) {
  cupel_items *items = scenario(tok);
  cupel_budget *budget = NULL;
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  size_t out[4], n = 0, k;
  const int32_t reasons[3] = {CUPEL_REASON_SCORED, CUPEL_REASON_VARIANT, CUPEL_REASON_TRUNCATED};
  const size_t variants[3] = {0, 1, 0};
  const int64_t added[3] = {40, 12, 948};
  const size_t heads[3] = {30, 15, 3647}, tails[3] = {30, 15, 10890};
  const double scores[3] = {0.9, 0.8 * 0.1, 0.6 * 948.0 / 2800.0};

  CHECK_OK(cupel_budget_new(1000, 1000, &budget));
  CHECK_OK(cupel_pipeline_new(NULL, slicer, NULL, &p));
  CHECK_OK(cupel_report_new(&r));
  /* No tokenizer: the run fails naming the truncatable item. */
  CHECK_STATUS(cupel_pipeline_run(p, items, budget, out, 4, &n, r), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("item 2 is truncatable");
  CHECK_MSG("cupel_pipeline_set_tokenizer");
  CHECK(cupel_report_included_count(r) == 0);
  CHECK_OK(cupel_pipeline_set_tokenizer(p, tok));
  CHECK_OK(cupel_pipeline_run(p, items, budget, out, 4, &n, r));
  CHECK(n == 3);
  CHECK(cupel_report_selected_tokens(r) == 1000);
  CHECK(cupel_report_excluded_count(r) == 0);
  for (k = 0; k < 3 && k < n; k++) {
    cupel_decision d;
    size_t i = order[k], v = 99, head = 99, tail = 99;
    int64_t t = -1;
    CHECK(out[k] == i);
    CHECK_OK(cupel_report_included(r, k, &d));
    CHECK_OK(cupel_report_included_variant(r, k, &v, &t));
    CHECK_OK(cupel_report_included_cut(r, k, &head, &tail));
    CHECK(d.item_index == i && d.reason == reasons[i]);
    CHECK(fabs(d.score - scores[i]) < 1e-12);
    CHECK(v == variants[i] && t == added[i]);
    CHECK(head == heads[i] && tail == tails[i]);
  }
  /* The JSON names the option, the tokens added and the cut. */
  {
    char json[65536];
    size_t len = 0;
    CHECK_OK(cupel_report_json(r, items, json, sizeof json, &len));
    CHECK(strstr(json, "\"reason\":\"Variant\"") != NULL);
    CHECK(strstr(json, "\"tokens_added\":12") != NULL);
    CHECK(strstr(json, "\"cut\":{\"head_end\":3647,\"tail_start\":10890}") != NULL);
    /* Only the two shrunk entries say so: the one included as pushed does not. */
    {
      const char *at = json;
      int n_added = 0;
      while ((at = strstr(at, "\"tokens_added\"")) != NULL) n_added++, at++;
      CHECK(n_added == 2);
    }
  }
  /* The report's accessors refuse an index past the end. */
  {
    size_t v = 7, head = 7, tail = 7;
    int64_t t = 7;
    CHECK_STATUS(cupel_report_included_variant(r, 3, &v, &t), CUPEL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG("i 3 is out of range");
    CHECK_STATUS(cupel_report_included_cut(r, 3, &head, &tail), CUPEL_ERROR_INVALID_ARGUMENT);
    CHECK(v == 7 && t == 7 && head == 7 && tail == 7);
    CHECK_STATUS(cupel_report_included_variant(r, 0, NULL, &t), CUPEL_ERROR_NULL_POINTER);
    CHECK_MSG("out_variant");
    CHECK_STATUS(cupel_report_included_cut(NULL, 0, &head, &tail), CUPEL_ERROR_NULL_POINTER);
  }
  /* The tokenizer removed: the run fails again. */
  CHECK_OK(cupel_pipeline_set_tokenizer(p, NULL));
  CHECK_STATUS(cupel_pipeline_run(p, items, budget, out, 4, &n, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  cupel_report_free(r);
  cupel_pipeline_free(p);
  cupel_budget_free(budget);
  cupel_items_free(items);
}

static void test_scenario(void) {
  cupel_tokenizer *tok = NULL;
  cupel_slicer *greedy = NULL, *knapsack = NULL;
  const size_t greedy_order[3] = {0, 1, 2}, knapsack_order[3] = {1, 0, 2};
  CHECK_OK(cupel_tokenizer_new("o200k_base", &tok));
  CHECK_OK(cupel_slicer_new_greedy(&greedy));
  CHECK_OK(cupel_slicer_new_knapsack(1, &knapsack));
  check_run(greedy, tok, greedy_order);
  check_run(knapsack, tok, knapsack_order);
  cupel_slicer_free(greedy);
  cupel_slicer_free(knapsack);
  cupel_tokenizer_free(tok);
}

/* cupel_slice honours variants too, and its report says which. */
static void test_slice(void) {
  cupel_items *items = NULL;
  cupel_budget *budget = NULL;
  cupel_slicer *greedy = NULL;
  cupel_report *r = NULL;
  size_t out[4], n = 0, v = 9;
  int64_t t = -1;
  cupel_decision d;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push(items, 400, 0.9, NULL));
  CHECK_OK(cupel_items_add_variant(items, 0, 50, 0.5, NULL));
  CHECK_OK(cupel_items_push(items, 60, 0.3, NULL));
  CHECK_OK(cupel_budget_new(100, 100, &budget));
  CHECK_OK(cupel_slicer_new_greedy(&greedy));
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(cupel_slice(greedy, items, budget, 0, out, 4, &n, r));
  /* 0.45 / 50 beats 0.3 / 60: the variant first; then item 1 no longer fits. */
  CHECK_INDICES(out, n, 0);
  CHECK(cupel_report_selected_tokens(r) == 50);
  CHECK_OK(cupel_report_included(r, 0, &d));
  CHECK_OK(cupel_report_included_variant(r, 0, &v, &t));
  CHECK(d.reason == CUPEL_REASON_VARIANT && v == 1 && t == 50 && d.item_tokens == 400);
  CHECK(fabs(d.score - 0.45) < 1e-12);
  cupel_report_free(r);
  cupel_slicer_free(greedy);
  cupel_budget_free(budget);
  cupel_items_free(items);
}

static void test_bad_arguments(void) {
  cupel_items *items = NULL;
  size_t count = 9, len = 9;
  int64_t t = -1, m = -1;
  double value = -1;
  const char *c = "x";
  bool is = true;
  int keep = -1;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push(items, 100, 0.5, NULL));
  CHECK_STATUS(cupel_items_add_variant(items, 0, 10, 0.0, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("value is 0 for a variant of item 0; it must be in (0, 1]");
  CHECK_STATUS(cupel_items_add_variant(items, 0, 10, 1.5, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("value is 1.5");
  CHECK_STATUS(cupel_items_add_variant(items, 0, 10, NAN, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("value is NaN");
  CHECK_STATUS(cupel_items_add_variant(items, 0, -1, 0.5, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("tokens is -1 for a variant of item 0");
  CHECK_STATUS(cupel_items_add_variant(items, 1, 10, 0.5, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index 1 is out of range");
  CHECK_STATUS(cupel_items_add_variant(items, 0, 10, 0.5, ""), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("content of a variant of item 0 is empty");
  CHECK_STATUS(cupel_items_add_variant(items, 0, 10, 0.5, "\xff"), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("content");
  CHECK_STATUS(cupel_items_add_variant(NULL, 0, 10, 0.5, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("items");
  /* Nothing changed. */
  CHECK_OK(cupel_items_variant_count(items, 0, &count));
  CHECK(count == 0);
  /* 255 variants, not 256; numbered from 1. */
  {
    int k;
    for (k = 0; k < 255; k++) CHECK_OK(cupel_items_add_variant(items, 0, k, 1.0, k == 3 ? "four" : NULL));
  }
  CHECK_STATUS(cupel_items_add_variant(items, 0, 1, 1.0, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("255 variants already");
  CHECK_OK(cupel_items_variant_count(items, 0, &count));
  CHECK(count == 255);
  CHECK_OK(cupel_items_variant(items, 0, 4, &t, &value, &c, &len));
  CHECK(t == 3 && value == 1.0 && len == 4 && memcmp(c, "four", 4) == 0);
  CHECK_OK(cupel_items_variant(items, 0, 1, &t, &value, &c, &len));
  CHECK(t == 0 && c == NULL && len == 0);
  CHECK_OK(cupel_items_variant(items, 0, 2, &t, &value, NULL, NULL));
  CHECK(t == 1);
  CHECK_STATUS(cupel_items_variant(items, 0, 0, &t, &value, &c, &len), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("variant 0 is out of range: item 0 has 255 variants, numbered from 1");
  CHECK_STATUS(cupel_items_variant(items, 0, 256, &t, &value, &c, &len), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_variant(items, 0, 1, NULL, &value, &c, &len), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_tokens");

  /* Truncatable. */
  CHECK_STATUS(cupel_items_set_truncatable(items, 0, 3, 1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("keep is 3");
  CHECK_STATUS(cupel_items_set_truncatable(items, 0, CUPEL_KEEP_TAIL, -1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("min_tokens is -1 for item 0");
  CHECK_STATUS(cupel_items_set_truncatable(items, 5, CUPEL_KEEP_TAIL, 1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index 5 is out of range");
  CHECK_OK(cupel_items_truncatable(items, 0, &is, &keep, &m));
  CHECK(!is && keep == 0 && m == 0);
  CHECK_OK(cupel_items_set_truncatable(items, 0, CUPEL_KEEP_BOTH_ENDS, 7));
  CHECK_OK(cupel_items_truncatable(items, 0, &is, &keep, &m));
  CHECK(is && keep == CUPEL_KEEP_BOTH_ENDS && m == 7);
  CHECK_OK(cupel_items_clear_truncatable(items, 0));
  CHECK_OK(cupel_items_truncatable(items, 0, &is, &keep, &m));
  CHECK(!is);
  CHECK_STATUS(cupel_items_truncatable(items, 0, NULL, &keep, &m), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_truncatable");
  CHECK_STATUS(cupel_pipeline_set_tokenizer(NULL, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("pipeline");

  /* A truncatable item without content fails the run, naming it. */
  {
    cupel_tokenizer *tok = NULL;
    cupel_slicer *greedy = NULL;
    cupel_pipeline *p = NULL;
    cupel_budget *budget = NULL;
    size_t out[2], n = 0;
    CHECK_OK(cupel_items_set_truncatable(items, 0, CUPEL_KEEP_HEAD, 1));
    CHECK_OK(cupel_tokenizer_new("o200k_base", &tok));
    CHECK_OK(cupel_slicer_new_greedy(&greedy));
    CHECK_OK(cupel_pipeline_new(NULL, greedy, NULL, &p));
    CHECK_OK(cupel_pipeline_set_tokenizer(p, tok));
    cupel_tokenizer_free(tok); /* the pipeline keeps its own */
    CHECK_OK(cupel_budget_new(50, 50, &budget));
    CHECK_STATUS(cupel_pipeline_run(p, items, budget, out, 2, &n, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG("item 0 is truncatable but has no content");
    CHECK_OK(cupel_items_set_content(items, 0, "a text to cut down to a few tokens, as the budget says"));
    CHECK_OK(cupel_pipeline_run(p, items, budget, out, 2, &n, NULL));
    CHECK_INDICES(out, n, 0);
    cupel_budget_free(budget);
    cupel_pipeline_free(p);
    cupel_slicer_free(greedy);
  }
  cupel_items_free(items);
}

int main(void) {
  make_doc();
  test_scenario();
  test_slice();
  test_bad_arguments();
  printf("test_shrink: %d passed, %d failed\n", g_passed, g_failed);
  return g_failed != 0;
}
