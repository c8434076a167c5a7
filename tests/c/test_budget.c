/* The budget: construction, reserve, margin, slots, COMPUTE-EFFECTIVE-BUDGET. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

int main(void) {
  test_budget();
  return check_summary("test_budget");
}
