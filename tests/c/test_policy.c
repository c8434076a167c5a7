/* Policies as data, presets, sensitivity, analytics and tracing through the
 * C ABI (abi-policy.md, docs/policies.md): the buffer protocol of every
 * writer, errors with their JSON paths, the preset list, the events a
 * trace callback receives and what they carry. tests/policy.rs checks the
 * rules in depth through the Rust API. */
#include "check.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static cupel_pipeline *from(const char *json) {
  cupel_pipeline *p = NULL;
  cupel_status st = cupel_pipeline_from_json(json, strlen(json), &p);
  if (st != CUPEL_OK) {
    fprintf(stderr, "from_json(%s): %s\n", json, cupel_last_error());
    exit(1);
  }
  return p;
}

/* The fixture of the contract: 3 items, tokens 100/200/50, timestamps. */
static cupel_items *fixture(void) {
  const int64_t tokens[] = {100, 200, 50};
  const double scores[] = {0.9, 0.5, 0.1};
  const char *kinds[] = {"Message", "Document", "ToolOutput"};
  const char *contents[] = {"alpha", "beta", "gamma"};
  cupel_items *items = NULL;
  size_t i;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push_many(items, 3, tokens, scores, kinds));
  for (i = 0; i < 3; i++) {
    CHECK_OK(cupel_items_set_content(items, i, contents[i]));
    CHECK_OK(cupel_items_set_timestamp(items, i, 1000 * (int64_t)(i + 1)));
  }
  return items;
}

static void test_round_trip_and_buffers(void) {
  const char *doc =
      "{\"scorers\":[{\"type\":\"recency\",\"weight\":2},{\"type\":\"kind\",\"weight\":1}],"
      "\"slicerType\":\"knapsack\",\"knapsackBucketSize\":10,\"placerType\":\"uShaped\","
      "\"quotas\":[{\"kind\":\"Document\",\"maxPercent\":50}],\"tokenizer\":\"cl100k_base\"}";
  cupel_pipeline *p = from(doc), *q = NULL;
  char small[8], *text, *again;
  size_t len = 0, len2 = 0;
  /* Ask for the length, then a buffer one byte short of the NUL, then room. */
  CHECK_STATUS(cupel_pipeline_to_json(p, NULL, 0, &len), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(len > 100);
  memset(small, 'x', sizeof small);
  CHECK_STATUS(cupel_pipeline_to_json(p, small, sizeof small, &len2), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(len2 == len && small[0] == 'x');
  text = malloc(len + 1);
  again = malloc(len + 1);
  CHECK_OK(cupel_pipeline_to_json(p, text, len + 1, &len2));
  CHECK(len2 == len && text[len] == 0);
  CHECK(strstr(text, "\"knapsackBucketSize\": 10") != NULL);
  CHECK(strstr(text, "\"tokenizer\": \"cl100k_base\"") != NULL);
  CHECK_OK(cupel_pipeline_from_json(text, len, &q));
  CHECK_OK(cupel_pipeline_to_json(q, again, len + 1, &len2));
  CHECK(len2 == len && memcmp(text, again, len) == 0);
  CHECK(strcmp(cupel_pipeline_tokenizer_name(q), "cl100k_base") == 0);
  CHECK(cupel_pipeline_tokenizer_name(NULL) == NULL);
  free(text);
  free(again);
  cupel_pipeline_free(q);
  cupel_pipeline_free(p);
  p = from("{\"scorers\":[{\"type\":\"given\",\"weight\":1}]}");
  CHECK(cupel_pipeline_tokenizer_name(p) == NULL);
  cupel_pipeline_free(p);
}

static void test_errors(void) {
  cupel_pipeline *p = NULL;
  cupel_budget *b = NULL;
  const char *weight = "{\"scorers\":[{\"type\":\"recency\",\"weight\":1},{\"type\":\"kind\",\"weight\":-0.5}]}";
  const char *bucket = "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"knapsackBucketSize\":5}";
  const char *quota =
      "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"quotas\":[{\"kind\":\"Message\",\"minPercent\":80,"
      "\"maxPercent\":20}]}";
  CHECK_STATUS(cupel_pipeline_from_json(weight, strlen(weight), &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("json $.scorers[1].weight: must be positive and finite (got -0.5)");
  CHECK_STATUS(cupel_pipeline_from_json(bucket, strlen(bucket), &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("json $.knapsackBucketSize: only valid when slicerType is \"knapsack\"");
  CHECK_STATUS(cupel_pipeline_from_json(quota, strlen(quota), &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("json $.quotas[0]: minPercent 80 exceeds maxPercent 20");
  CHECK_STATUS(cupel_pipeline_from_json("{\"scorers\": [", 13, &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("malformed JSON at line 1 column 13");
  CHECK_STATUS(cupel_pipeline_from_json("\xff", 1, &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("invalid UTF-8 at byte 0");
  CHECK_STATUS(cupel_pipeline_from_json("null", 4, &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_pipeline_from_json("", 0, &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("json is empty");
  CHECK_STATUS(cupel_pipeline_from_json(NULL, 0, &p), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_from_json("{}", 2, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK(p == NULL);
  CHECK_STATUS(cupel_budget_from_json("{\"maxTokens\":100,\"targetTokens\":250}", 36, &b),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("json $.targetTokens: 250 exceeds maxTokens 100");
  CHECK(b == NULL);
  CHECK_STATUS(cupel_pipeline_to_json(NULL, NULL, 0, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_pipeline_preset("Nope", &p), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("Chat, CodeReview, Rag, DocumentQa, ToolUse, LongRunning, Debugging, AgentLoop");
  CHECK_STATUS(cupel_pipeline_set_trace(NULL, 0, NULL, NULL), CUPEL_ERROR_NULL_POINTER);
}

static void test_budget_json(void) {
  const char *doc = "{\"maxTokens\":1000,\"targetTokens\":800,\"outputReserve\":100,"
                    "\"reservedSlots\":{\"SystemPrompt\":50},\"estimationSafetyMarginPercent\":10}";
  cupel_budget *b = NULL;
  int64_t max = 0, target = 0;
  char text[512];
  size_t len = 0;
  CHECK_OK(cupel_budget_from_json(doc, strlen(doc), &b));
  /* max 1000 - reserve 100 - slot 50 = 850, target 800 - 50 = 750; x0.9. */
  CHECK_OK(cupel_budget_effective(b, 0, &max, &target));
  CHECK(max == 765 && target == 675);
  CHECK_OK(cupel_budget_to_json(b, text, sizeof text, &len));
  CHECK(strstr(text, "\"systemprompt\": 50") != NULL);
  cupel_budget_free(b);
}

static void test_presets(void) {
  size_t i, n = cupel_preset_count();
  CHECK(n == 8);
  CHECK(cupel_preset_name(n) == NULL);
  for (i = 0; i < n; i++) {
    cupel_pipeline *p = NULL;
    char text[4096], want[64];
    size_t len = 0;
    const char *name = cupel_preset_name(i);
    CHECK(name != NULL);
    CHECK_OK(cupel_pipeline_preset(name, &p));
    CHECK_OK(cupel_pipeline_to_json(p, text, sizeof text, &len));
    snprintf(want, sizeof want, "\"name\": \"%s\"", name);
    CHECK(strstr(text, want) != NULL);
    cupel_pipeline_free(p);
  }
}

static void test_sensitivity(void) {
  cupel_items *items = fixture();
  cupel_budget *budget = NULL;
  cupel_pipeline *a = from("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}]}");
  cupel_pipeline *b = from("{\"scorers\":[{\"type\":\"kind\",\"weight\":1,\"kindWeights\":{\"Message\":1}}]}");
  const cupel_pipeline *ps[2] = {a, b};
  const char *labels[2] = {"recent", "messages"};
  size_t len = 0, len2 = 0;
  char *text;
  CHECK_OK(cupel_budget_new(300, 250, &budget));
  /* The length asked for fits the second call: the text is deterministic. */
  CHECK_STATUS(cupel_policy_sensitivity(ps, labels, 2, items, budget, NULL, 0, &len), CUPEL_ERROR_BUFFER_TOO_SMALL);
  text = malloc(len + 1);
  CHECK_OK(cupel_policy_sensitivity(ps, labels, 2, items, budget, text, len + 1, &len2));
  CHECK(len2 == len);
  CHECK(strstr(text, "\"diffs\":[{\"content\":\"alpha\",\"index\":0,\"statuses\":[{\"label\":\"recent\",\"status\":"
                     "\"Excluded\"},{\"label\":\"messages\",\"status\":\"Included\"}]}") != NULL);
  CHECK(strstr(text, "\"index\":1") != NULL);
  CHECK(strstr(text, "\"index\":2") == NULL);
  free(text);
  CHECK_STATUS(cupel_policy_sensitivity(ps, labels, 1, items, budget, NULL, 0, &len), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("count is 1");
  ps[1] = NULL;
  CHECK_STATUS(cupel_policy_sensitivity(ps, labels, 2, items, budget, NULL, 0, &len), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("pipelines[1]");
  cupel_pipeline_free(a);
  cupel_pipeline_free(b);
  cupel_budget_free(budget);
  cupel_items_free(items);
}

static void test_analytics(void) {
  cupel_items *items = fixture(), *other = NULL;
  cupel_budget *budget = NULL;
  cupel_pipeline *p = from("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}]}");
  cupel_report *r = NULL;
  size_t out[3], n = 0, kinds = 0;
  double u = -1, cov = -1;
  CHECK_OK(cupel_budget_new(300, 250, &budget));
  CHECK_OK(cupel_report_new(&r));
  /* An empty report: all zero. */
  CHECK_OK(cupel_report_budget_utilization(r, &u));
  CHECK(u == 0);
  CHECK_OK(cupel_pipeline_run(p, items, budget, out, 3, &n, r));
  CHECK_OK(cupel_report_budget_utilization(r, &u));
  CHECK(fabs(u - 250.0 / 300.0) < 1e-12);
  CHECK_OK(cupel_report_kind_diversity(r, items, &kinds));
  CHECK(kinds == 2);
  CHECK_OK(cupel_report_timestamp_coverage(r, items, &cov));
  CHECK(cov == 1.0);
  CHECK_OK(cupel_items_new(&other));
  CHECK_STATUS(cupel_report_kind_diversity(r, other, &kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("pass the list the report was made from");
  CHECK_STATUS(cupel_report_timestamp_coverage(r, NULL, &cov), CUPEL_ERROR_NULL_POINTER);
  cupel_items_free(other);
  cupel_report_free(r);
  cupel_pipeline_free(p);
  cupel_budget_free(budget);
  cupel_items_free(items);
}

/* What the trace callback saw. */
typedef struct {
  int count, stages, exclusions, included, pipelines, in_order, fields_ok;
  const char *verbosity; /* what every event must carry */
  char last_name[64], exclusion[128];
  uint64_t pipeline_start, pipeline_nanos, stage_nanos;
} seen_t;

static const char *STAGE_NAMES[5] = {"classify", "score", "deduplicate", "slice", "place"};

static void on_event(void *user, const cupel_trace_event *e) {
  seen_t *s = user;
  s->count++;
  if (strcmp(e->verbosity, s->verbosity) != 0) s->fields_ok = 0;
  /* Only an exclusion has a reason; only an item event an item kind. */
  if (e->kind != CUPEL_TRACE_EVENT_EXCLUSION && (e->reason != -1 || e->reason_name != NULL)) s->fields_ok = 0;
  if ((e->kind == CUPEL_TRACE_EVENT_STAGE || e->kind == CUPEL_TRACE_EVENT_PIPELINE) && e->item_kind_len != 0)
    s->fields_ok = 0;
  if (e->kind == CUPEL_TRACE_EVENT_STAGE) {
    char want[64];
    snprintf(want, sizeof want, "cupel.stage.%s", STAGE_NAMES[s->stages % 5]);
    if (strcmp(e->stage, STAGE_NAMES[s->stages % 5]) != 0 || strcmp(e->name, want) != 0) s->fields_ok = 0;
  }
  if (e->kind == CUPEL_TRACE_EVENT_INCLUDED && (strcmp(e->name, "cupel.item.included") != 0 || e->item_kind_len == 0))
    s->fields_ok = 0;
  snprintf(s->last_name, sizeof s->last_name, "%s", e->name);
  switch (e->kind) {
  case CUPEL_TRACE_EVENT_STAGE:
    s->stages++;
    s->stage_nanos += e->duration_nanos;
    if (s->pipelines) s->in_order = 0;
    break;
  case CUPEL_TRACE_EVENT_EXCLUSION:
    s->exclusions++;
    snprintf(s->exclusion, sizeof s->exclusion, "%s %s %s %.*s %lld", e->name, e->stage, e->reason_name,
             (int)e->item_kind_len, e->item_kind, (long long)e->tokens);
    break;
  case CUPEL_TRACE_EVENT_INCLUDED:
    s->included++;
    break;
  case CUPEL_TRACE_EVENT_PIPELINE:
    s->pipelines++;
    s->pipeline_start = e->start_unix_nanos;
    s->pipeline_nanos = e->duration_nanos;
    if (e->max_tokens != 300 || e->item_count_in != 3 || e->item_count_out != 2 || e->stage != NULL)
      s->in_order = 0;
    break;
  }
}

static void test_trace(void) {
  cupel_items *items = fixture();
  cupel_budget *budget = NULL;
  cupel_pipeline *p = from("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}]}");
  size_t out[3], n = 0;
  int level;
  CHECK_OK(cupel_budget_new(300, 250, &budget));
  for (level = CUPEL_TRACE_STAGES; level <= CUPEL_TRACE_FULL; level++) {
    seen_t s;
    const char *tiers[3] = {"StageOnly", "StageAndExclusions", "Full"};
    memset(&s, 0, sizeof s);
    s.in_order = 1;
    s.fields_ok = 1;
    s.verbosity = tiers[level];
    CHECK_OK(cupel_pipeline_set_trace(p, level, on_event, &s));
    CHECK_OK(cupel_pipeline_run(p, items, budget, out, 3, &n, NULL));
    CHECK(s.count == 6 + (level >= 1) + 2 * (level >= 2));
    CHECK(s.stages == 5 && s.pipelines == 1 && s.in_order);
    CHECK(s.fields_ok);
    CHECK(strcmp(s.last_name, "cupel.pipeline") == 0);
    CHECK(s.exclusions == (level >= 1));
    CHECK(s.included == 2 * (level >= 2));
    if (level >= 1) CHECK(strcmp(s.exclusion, "cupel.exclusion slice BudgetExceeded Message 100") == 0);
    CHECK(s.pipeline_start > 1700000000ull * 1000000000ull);
    CHECK(s.pipeline_nanos == s.stage_nanos);
  }
  /* Unknown level: refused, the trace as it was; NULL turns it off. */
  CHECK_STATUS(cupel_pipeline_set_trace(p, 3, on_event, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("level is 3");
  CHECK_OK(cupel_pipeline_set_trace(p, 0, NULL, NULL));
  CHECK_OK(cupel_pipeline_run(p, items, budget, out, 3, &n, NULL));
  cupel_pipeline_free(p);
  cupel_budget_free(budget);
  cupel_items_free(items);
}

int main(void) {
  test_round_trip_and_buffers();
  test_errors();
  test_budget_json();
  test_presets();
  test_sensitivity();
  test_analytics();
  test_trace();
  printf("test_policy: %d passed, %d failed\n", g_passed, g_failed);
  return g_failed ? 1 : 0;
}
