/* Items: push, push_many, kinds, every bad argument. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_items(void) {
  cupel_items *items = NULL;
  const int64_t tokens[3] = {10, 20, 30};
  const double scores[3] = {0.1, 0.2, 0.3};
  const char *kinds[3] = {"Document", NULL, "MEMORY"};
  const char bad_utf8[] = {'a', (char)0xff, 'b', 0};
  double bad_scores[3] = {0.1, 0.2, 0.3};
  int64_t bad_tokens[3] = {1, 2, 3};
  const char *bad_kinds[3] = {"a", "b", "c"};

  CHECK_STATUS(cupel_items_new(NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out is NULL");
  CHECK_OK(cupel_items_new(&items));
  CHECK(cupel_items_len(items) == 0);
  CHECK(cupel_items_len(NULL) == 0);

  /* push: every argument */
  CHECK_STATUS(cupel_items_push(NULL, 1, 0.5, "x"), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("items is NULL");
  CHECK_OK(cupel_items_push(items, 5, 0.5, NULL)); /* default kind */
  CHECK_OK(cupel_items_push(items, 0, 0.0, "tool"));
  CHECK_STATUS(cupel_items_push(items, 1, NAN, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("score is NaN;"); /* the parameter, not push_many's array */
  CHECK_STATUS(cupel_items_push(items, 1, INFINITY, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_push(items, 1, -INFINITY, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_push(items, 1, 0.5, ""), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("kind \"\" is empty or only whitespace");
  CHECK_STATUS(cupel_items_push(items, 1, 0.5, " \t"), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_push(items, 1, 0.5, bad_utf8), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("not valid UTF-8");
  CHECK(cupel_items_len(items) == 2);

  /* push_many: all or nothing, message names the first bad index */
  CHECK_OK(cupel_items_push_many(items, 3, tokens, scores, kinds));
  CHECK(cupel_items_len(items) == 5);
  CHECK_OK(cupel_items_push_many(items, 0, NULL, NULL, NULL));
  CHECK_OK(cupel_items_push_many(items, 3, tokens, scores, NULL));
  CHECK(cupel_items_len(items) == 8);
  CHECK_STATUS(cupel_items_push_many(NULL, 3, tokens, scores, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_items_push_many(items, 3, NULL, scores, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("tokens is NULL");
  CHECK_STATUS(cupel_items_push_many(items, 3, tokens, NULL, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("scores is NULL");
  bad_scores[2] = NAN;
  CHECK_STATUS(cupel_items_push_many(items, 3, tokens, bad_scores, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("scores[2] is NaN");
  bad_kinds[2] = "   ";
  CHECK_STATUS(cupel_items_push_many(items, 3, tokens, scores, bad_kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("kinds[2]");
  bad_kinds[2] = bad_utf8;
  CHECK_STATUS(cupel_items_push_many(items, 3, tokens, scores, bad_kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("kinds[2] is not valid UTF-8");
  CHECK(cupel_items_len(items) == 8); /* nothing of the failed batches added */
  CHECK_STATUS(cupel_items_push_many(items, SIZE_MAX, tokens, scores, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK(cupel_items_len(items) == 8);

  /* Negative token counts are accepted: such items are never selected. */
  bad_tokens[1] = -7;
  CHECK_OK(cupel_items_push_many(items, 3, bad_tokens, scores, NULL));
  CHECK_OK(cupel_items_push(items, -1, 0.5, NULL));
  CHECK(cupel_items_len(items) == 12);

  cupel_items_clear(items);
  CHECK(cupel_items_len(items) == 0);
  cupel_items_clear(NULL);
  cupel_items_free(items);
  cupel_items_free(NULL);
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

/* The packed forms: strings back to back, each NUL-terminated. */
static void test_packed(void) {
  cupel_items *items = NULL;
  const int64_t t[] = {10, 20, 30};
  const double s[] = {0.1, 0.2, 0.3};
  static const char kinds[] = "Memory\0\0ToolOutput"; /* "" = the default kind */
  static const char contents[] = "a\0\0same";         /* "" = unchanged */
  cupel_slicer *g = greedy();
  cupel_scorer *freq = NULL;
  cupel_budget *b = make_budget(1000, 1000);
  cupel_pipeline *p = NULL;
  cupel_report *r = NULL;
  size_t out[3], n = 0;
  CHECK_OK(cupel_items_new(&items));
  CHECK_STATUS(cupel_items_push_many_packed(items, 3, t, s, kinds, sizeof kinds - 2),
               CUPEL_ERROR_INVALID_ARGUMENT); /* the last string lacks its NUL */
  CHECK_MSG("kinds holds 2 NUL-terminated strings");
  CHECK_STATUS(cupel_items_push_many_packed(items, 2, t, s, kinds, sizeof kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("bytes follow the 2 strings count asks for");
  CHECK(cupel_items_len(items) == 0);
  CHECK_OK(cupel_items_push_many_packed(items, 3, t, s, kinds, sizeof kinds));
  CHECK_OK(cupel_items_push_many_packed(items, 0, NULL, NULL, NULL, 0));
  CHECK(cupel_items_len(items) == 3);
  CHECK_STATUS(cupel_items_set_contents_packed(items, 1, 3, contents, sizeof contents), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("past the end");
  CHECK_STATUS(cupel_items_set_contents_packed(items, 0, 3, "\xff\0\0x", 5), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("contents[0] is not valid UTF-8");
  CHECK_OK(cupel_items_set_contents_packed(items, 0, 3, contents, sizeof contents));
  /* Kinds and contents took effect: the pipeline deduplicates nothing
   * (contents a, -, same are distinct) and the kind scorer tells the
   * default kind (Message) from Memory and ToolOutput. */
  CHECK_OK(cupel_scorer_new_kind(NULL, 0, &freq));
  CHECK_OK(cupel_pipeline_new(freq, g, NULL, &p));
  CHECK_OK(cupel_report_new(&r));
  CHECK_OK(cupel_pipeline_run(p, items, b, out, 3, &n, r));
  CHECK(n == 3);
  {
    double scores[3];
    size_t len = 0;
    CHECK_OK(cupel_scorer_score(freq, items, scores, 3, &len));
    CHECK(len == 3 && scores[0] != scores[1] && scores[1] != scores[2]);
  }
  cupel_report_free(r);
  cupel_pipeline_free(p);
  cupel_scorer_free(freq);
  cupel_budget_free(b);
  cupel_slicer_free(g);
  cupel_items_free(items);
}


/* Bytes `p[0 .. len)` equal the C string `want`. */
static int same_text(const char *p, size_t len, const char *want) {
  return p && len == strlen(want) && memcmp(p, want, len) == 0;
}

/* Every attribute read back as set, absent ones as absent; bad arguments
 * named and nothing written on error. */
static void test_readback(void) {
  cupel_items *items = NULL;
  const char *s = NULL, *k = NULL, *v = NULL;
  size_t len = 99, klen = 0, vlen = 0, count = 99;
  int64_t t = -5, ts = -5;
  double d = -5.0;
  bool present = true, pinned = true;
  uint64_t group = 99;

  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push(items, 120, 0.75, "ToolOutput"));
  CHECK_OK(cupel_items_push(items, -3, 0.0, NULL));
  CHECK_OK(cupel_items_push(items, 7, 1.5, "toolOUTPUT")); /* same kind, other spelling */

  CHECK_OK(cupel_items_tokens(items, 0, &t));
  CHECK(t == 120);
  CHECK_OK(cupel_items_tokens(items, 1, &t));
  CHECK(t == -3);
  CHECK_OK(cupel_items_score(items, 0, &d));
  CHECK(d == 0.75);
  CHECK_OK(cupel_items_score(items, 2, &d));
  CHECK(d == 1.5);
  CHECK_OK(cupel_items_kind(items, 0, &s, &len));
  CHECK(same_text(s, len, "ToolOutput"));
  CHECK_OK(cupel_items_kind(items, 1, &s, &len));
  CHECK(same_text(s, len, "Message"));
  CHECK_OK(cupel_items_kind(items, 2, &s, &len)); /* the list's first spelling */
  CHECK(same_text(s, len, "ToolOutput"));

  /* Absent attributes. */
  CHECK_OK(cupel_items_content(items, 0, &s, &len));
  CHECK(s == NULL && len == 0);
  CHECK_OK(cupel_items_source(items, 0, &s, &len));
  CHECK(same_text(s, len, "Chat"));
  CHECK_OK(cupel_items_timestamp(items, 0, &present, &ts));
  CHECK(!present && ts == 0);
  present = true;
  CHECK_OK(cupel_items_priority(items, 0, &present, &t));
  CHECK(!present && t == 0);
  present = true;
  CHECK_OK(cupel_items_relevance_hint(items, 0, &present, &d));
  CHECK(!present && d == 0.0);
  CHECK_OK(cupel_items_pinned(items, 0, &pinned));
  CHECK(!pinned);
  CHECK_OK(cupel_items_group(items, 0, &group));
  CHECK(group == 0);
  CHECK_OK(cupel_items_tag_count(items, 0, &count));
  CHECK(count == 0);
  count = 99;
  CHECK_OK(cupel_items_metadata_count(items, 0, &count));
  CHECK(count == 0);

  /* Set attributes. */
  CHECK_OK(cupel_items_set_content(items, 1, "h\xc3\xa9llo"));
  CHECK_OK(cupel_items_set_source(items, 1, "Tool"));
  CHECK_OK(cupel_items_set_timestamp(items, 1, -86400000));
  CHECK_OK(cupel_items_set_priority(items, 1, 42));
  CHECK_OK(cupel_items_set_relevance_hint(items, 1, 0.25));
  CHECK_OK(cupel_items_set_pinned(items, 1, true));
  CHECK_OK(cupel_items_set_group(items, 1, UINT64_MAX));
  CHECK_OK(cupel_items_add_tag(items, 1, "urgent"));
  CHECK_OK(cupel_items_add_tag(items, 1, "urgent"));
  CHECK_OK(cupel_items_add_tag(items, 1, "auth"));
  CHECK_OK(cupel_items_set_metadata(items, 1, "trust", "0.9"));
  CHECK_OK(cupel_items_set_metadata(items, 1, "lang", "en"));
  CHECK_OK(cupel_items_set_metadata(items, 1, "trust", "0.8")); /* replaces, keeps its place */

  CHECK_OK(cupel_items_content(items, 1, &s, &len));
  CHECK(same_text(s, len, "h\xc3\xa9llo"));
  CHECK_OK(cupel_items_source(items, 1, &s, &len));
  CHECK(same_text(s, len, "Tool"));
  CHECK_OK(cupel_items_timestamp(items, 1, &present, &ts));
  CHECK(present && ts == -86400000);
  CHECK_OK(cupel_items_priority(items, 1, &present, &t));
  CHECK(present && t == 42);
  CHECK_OK(cupel_items_relevance_hint(items, 1, &present, &d));
  CHECK(present && d == 0.25);
  CHECK_OK(cupel_items_pinned(items, 1, &pinned));
  CHECK(pinned);
  CHECK_OK(cupel_items_group(items, 1, &group));
  CHECK(group == UINT64_MAX);
  CHECK_OK(cupel_items_tag_count(items, 1, &count));
  CHECK(count == 3);
  CHECK_OK(cupel_items_tag(items, 1, 0, &s, &len));
  CHECK(same_text(s, len, "urgent"));
  CHECK_OK(cupel_items_tag(items, 1, 2, &s, &len));
  CHECK(same_text(s, len, "auth"));
  CHECK_OK(cupel_items_metadata_count(items, 1, &count));
  CHECK(count == 2);
  CHECK_OK(cupel_items_metadata_entry(items, 1, 0, &k, &klen, &v, &vlen));
  CHECK(same_text(k, klen, "trust") && same_text(v, vlen, "0.8"));
  CHECK_OK(cupel_items_metadata_entry(items, 1, 1, &k, &klen, &v, &vlen));
  CHECK(same_text(k, klen, "lang") && same_text(v, vlen, "en"));
  /* Item 2 is still without them: the columns grew with absent values. */
  CHECK_OK(cupel_items_content(items, 2, &s, &len));
  CHECK(s == NULL && len == 0);
  CHECK_OK(cupel_items_pinned(items, 2, &pinned));
  CHECK(!pinned);

  /* Errors name the argument and write nothing. */
  t = 11;
  CHECK_STATUS(cupel_items_tokens(items, 3, &t), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index 3 is out of range");
  CHECK(t == 11);
  CHECK_STATUS(cupel_items_kind(items, SIZE_MAX, &s, &len), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index");
  CHECK_STATUS(cupel_items_tokens(NULL, 0, &t), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("items");
  CHECK_STATUS(cupel_items_tokens(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_tokens");
  CHECK_STATUS(cupel_items_score(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_score");
  CHECK_STATUS(cupel_items_content(items, 0, &s, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_len");
  CHECK_STATUS(cupel_items_timestamp(items, 0, NULL, &ts), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_present");
  CHECK_STATUS(cupel_items_priority(items, 0, &present, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_priority");
  CHECK_STATUS(cupel_items_relevance_hint(items, 0, &present, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_hint");
  CHECK_STATUS(cupel_items_pinned(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_pinned");
  CHECK_STATUS(cupel_items_group(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_group");
  CHECK_STATUS(cupel_items_source(items, 0, NULL, &len), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_source");
  CHECK_STATUS(cupel_items_tag_count(items, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_count");
  s = "untouched";
  len = 9;
  CHECK_STATUS(cupel_items_tag(items, 1, 3, &s, &len), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("tag_index 3 is out of range: item 1 has 3 tags");
  CHECK(len == 9 && strcmp(s, "untouched") == 0);
  CHECK_STATUS(cupel_items_metadata_entry(items, 1, 2, &k, &klen, &v, &vlen), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("entry_index 2 is out of range: item 1 has 2 metadata entries");
  CHECK_STATUS(cupel_items_metadata_entry(items, 1, 0, &k, &klen, NULL, &vlen), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_value");
  CHECK_STATUS(cupel_items_metadata_count(items, 9, &count), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("index 9");

  /* A blank source is refused as a source. */
  CHECK_STATUS(cupel_items_set_source(items, 0, " \t"), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("a source needs a visible name");

  /* Truncate: the items past `len` go with their attributes and the kinds
   * only they used; a `len` past the end changes nothing. */
  CHECK_STATUS(cupel_items_truncate(items, 4), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("len 4 is more than the 3 items the list holds");
  CHECK(cupel_items_len(items) == 3);
  CHECK_STATUS(cupel_items_truncate(NULL, 0), CUPEL_ERROR_NULL_POINTER);
  CHECK_OK(cupel_items_truncate(items, 3));
  CHECK(cupel_items_len(items) == 3);
  CHECK_OK(cupel_items_truncate(items, 1));
  CHECK(cupel_items_len(items) == 1);
  CHECK_OK(cupel_items_push(items, 9, 0.5, "MESSAGE")); /* item 1 was the first "Message" */
  CHECK_OK(cupel_items_kind(items, 1, &s, &len));
  CHECK(same_text(s, len, "MESSAGE"));
  CHECK_OK(cupel_items_content(items, 1, &s, &len));
  CHECK(s == NULL && len == 0);
  CHECK_OK(cupel_items_pinned(items, 1, &pinned));
  CHECK(!pinned);
  CHECK_OK(cupel_items_tag_count(items, 1, &count));
  CHECK(count == 0);
  CHECK_OK(cupel_items_tokens(items, 0, &t)); /* the item kept is intact */
  CHECK(t == 120);
  CHECK_OK(cupel_items_kind(items, 0, &s, &len));
  CHECK(same_text(s, len, "ToolOutput"));

  /* After clear, nothing is left to read. */
  cupel_items_clear(items);
  CHECK_STATUS(cupel_items_tokens(items, 0, &t), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("the list holds 0 items");
  cupel_items_free(items);

  /* Reason names: the JSON report's, for every reason; "Unknown" otherwise. */
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_SCORED), "Scored") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_PINNED), "Pinned") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_ZERO_TOKEN), "ZeroToken") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_BUDGET_EXCEEDED), "BudgetExceeded") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_DEDUPLICATED), "Deduplicated") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_NEGATIVE_TOKENS), "NegativeTokens") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_PINNED_OVERRIDE), "PinnedOverride") == 0);
  CHECK(strcmp(cupel_reason_str(CUPEL_REASON_COUNT_CAP_EXCEEDED), "CountCapExceeded") == 0);
  CHECK(strcmp(cupel_reason_str(-1), "Unknown") == 0);
  CHECK(strcmp(cupel_reason_str(5), "Unknown") == 0);
}

int main(void) {
  test_items();
  test_readback();
  test_kinds_in_mixed_case();
  test_packed();
  return check_summary("test_items");
}
