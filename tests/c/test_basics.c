/* Status codes, version, items and budget through the C ABI. */
#include "check.h"
#include <math.h>
#include <stdint.h>

static void test_version_and_status(void) {
  char want[64];
  CHECK(cupel_abi_version() == CUPEL_ABI_VERSION);
  CHECK(CUPEL_ABI_VERSION == 1);
  snprintf(want, sizeof want, "%d.%d.%d", CUPEL_VERSION_MAJOR,
           CUPEL_VERSION_MINOR, CUPEL_VERSION_PATCH);
  CHECK(strcmp(cupel_version(), want) == 0);
  CHECK(strcmp(cupel_version(), CUPEL_VERSION_STRING) == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_OK), "CUPEL_OK") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_NULL_POINTER), "CUPEL_ERROR_NULL_POINTER") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_INVALID_ARGUMENT), "CUPEL_ERROR_INVALID_ARGUMENT") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_BUFFER_TOO_SMALL), "CUPEL_ERROR_BUFFER_TOO_SMALL") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_SCARCITY), "CUPEL_ERROR_SCARCITY") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_UNSUPPORTED), "CUPEL_ERROR_UNSUPPORTED") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_CAPACITY), "CUPEL_ERROR_CAPACITY") == 0);
  CHECK(strcmp(cupel_status_str(CUPEL_ERROR_INTERNAL), "CUPEL_ERROR_INTERNAL") == 0);
  CHECK(strcmp(cupel_status_str(99), "CUPEL_UNKNOWN_STATUS") == 0);
  CHECK(strcmp(cupel_status_str(-1), "CUPEL_UNKNOWN_STATUS") == 0);
  CHECK(CUPEL_OK == 0 && CUPEL_ERROR_INTERNAL == 7);
}

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
  CHECK_STATUS(cupel_items_push(items, -1, 0.5, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("tokens is -1");
  CHECK_STATUS(cupel_items_push(items, 1, NAN, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("scores is NaN");
  CHECK_STATUS(cupel_items_push(items, 1, INFINITY, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_push(items, 1, -INFINITY, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_items_push(items, 1, 0.5, ""), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("empty or only whitespace");
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
  bad_tokens[1] = -7;
  CHECK_STATUS(cupel_items_push_many(items, 3, bad_tokens, scores, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("tokens[1] is -7");
  bad_kinds[2] = "   ";
  CHECK_STATUS(cupel_items_push_many(items, 3, tokens, scores, bad_kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("kinds[2]");
  bad_kinds[2] = bad_utf8;
  CHECK_STATUS(cupel_items_push_many(items, 3, tokens, scores, bad_kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("kinds[2] is not valid UTF-8");
  CHECK(cupel_items_len(items) == 8); /* nothing of the failed batches added */
  CHECK_STATUS(cupel_items_push_many(items, SIZE_MAX, tokens, scores, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK(cupel_items_len(items) == 8);

  cupel_items_clear(items);
  CHECK(cupel_items_len(items) == 0);
  cupel_items_clear(NULL);
  cupel_items_free(items);
  cupel_items_free(NULL);
}

static void test_budget(void) {
  cupel_budget *b = NULL;
  int64_t max = -1, target = -1;
  CHECK_STATUS(cupel_budget_new(100, 50, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_budget_new(-1, 0, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("max_tokens is -1");
  CHECK_STATUS(cupel_budget_new(10, -1, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_budget_new(10, 11, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("target_tokens 11 > max_tokens 10");
  CHECK(b == NULL); /* out not written on failure */

  CHECK_OK(cupel_budget_new(1000, 800, &b));
  CHECK_OK(cupel_budget_effective(b, 0, &max, &target));
  CHECK(max == 1000 && target == 800);

  CHECK_STATUS(cupel_budget_set_output_reserve(NULL, 1), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_budget_set_output_reserve(b, -1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_budget_set_output_reserve(b, 1001), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("output_reserve 1001 > max_tokens 1000");
  CHECK_OK(cupel_budget_set_output_reserve(b, 100));

  CHECK_STATUS(cupel_budget_reserve(NULL, "Memory", 1), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_budget_reserve(b, NULL, 1), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("kind is NULL");
  CHECK_STATUS(cupel_budget_reserve(b, "", 1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_budget_reserve(b, "Memory", -1), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_OK(cupel_budget_reserve(b, "Memory", 50));
  CHECK_OK(cupel_budget_reserve(b, "MEMORY", 60)); /* replaces: same kind */
  CHECK_OK(cupel_budget_reserve(b, "tool", 40));

  CHECK_STATUS(cupel_budget_set_safety_margin(NULL, 1.0), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_budget_set_safety_margin(b, NAN), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_budget_set_safety_margin(b, 100.0000001), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_budget_set_safety_margin(b, -0.5), CUPEL_ERROR_INVALID_ARGUMENT);

  /* max = 1000-100-150-100 = 650, target = 800-150-100 = 550 */
  CHECK_OK(cupel_budget_effective(b, 150, &max, &target));
  CHECK(max == 650 && target == 550);
  CHECK_OK(cupel_budget_set_safety_margin(b, 10.0));
  CHECK_OK(cupel_budget_effective(b, 150, &max, &target));
  CHECK(max == 585 && target == 495);

  max = target = 12345;
  CHECK_STATUS(cupel_budget_effective(NULL, 0, &max, &target), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_budget_effective(b, 0, NULL, &target), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_max_tokens is NULL");
  CHECK_STATUS(cupel_budget_effective(b, 0, &max, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_budget_effective(b, -1, &max, &target), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("pinned_tokens is -1");
  CHECK(max == 12345 && target == 12345); /* untouched on failure */
  cupel_budget_free(b);

  /* nothing overflows */
  CHECK_OK(cupel_budget_new(INT64_MAX, INT64_MAX, &b));
  CHECK_OK(cupel_budget_reserve(b, "a", INT64_MAX));
  CHECK_OK(cupel_budget_reserve(b, "b", INT64_MAX));
  CHECK_OK(cupel_budget_effective(b, INT64_MAX, &max, &target));
  CHECK(max == 0 && target == 0);
  cupel_budget_free(b);
  cupel_budget_free(NULL);
}

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

static void test_last_error_is_per_call(void) {
  cupel_budget *b = NULL;
  CHECK_STATUS(cupel_budget_new(1, 2, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("target_tokens 2 > max_tokens 1");
  CHECK_STATUS(cupel_budget_new(3, 4, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("target_tokens 4 > max_tokens 3");
}

/* A panic inside the library comes back as a status: the C caller goes on. */
static void test_panic_is_contained(void) {
  cupel_items *items = NULL;
  CHECK_STATUS(cupel_debug_panic(), CUPEL_ERROR_INTERNAL);
  CHECK_MSG("deliberate panic from cupel_debug_panic");
  CHECK_STATUS(cupel_debug_panic(), CUPEL_ERROR_INTERNAL);
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push(items, 1, 0.5, NULL));
  CHECK(cupel_items_len(items) == 1);
  cupel_items_free(items);
}

int main(void) {
  test_version_and_status();
  test_items();
  test_budget();
  test_report_getters_on_null();
  test_last_error_is_per_call();
  test_panic_is_contained();
  return check_summary("test_basics");
}
