/* Version, status names, the last error and the live-handle count through the C ABI. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_version_and_status(void) {
  char want[64];
  CHECK(cupel_abi_version() == CUPEL_ABI_VERSION);
  CHECK(CUPEL_ABI_VERSION == 2);
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

static void test_last_error_is_per_call(void) {
  cupel_budget *b = NULL;
  CHECK_STATUS(cupel_budget_new(1, 2, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("target_tokens 2 > max_tokens 1");
  CHECK_STATUS(cupel_budget_new(3, 4, &b), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("target_tokens 4 > max_tokens 3");
}

/* cupel_live_handles counts every handle created and not yet freed. */
static void test_live_handles(void) {
  size_t before = cupel_live_handles();
  cupel_items *items = NULL;
  cupel_budget *budget = NULL;
  cupel_slicer *slicer = NULL;
  cupel_report *report = NULL;
  cupel_stream *stream = NULL;
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_budget_new(10, 10, &budget));
  CHECK_OK(cupel_slicer_new_greedy(&slicer));
  CHECK_OK(cupel_report_new(&report));
  CHECK_OK(cupel_stream_new(10, 0, &stream));
  CHECK(cupel_live_handles() == before + 5);
  /* a failed constructor hands out nothing */
  CHECK_STATUS(cupel_budget_new(-1, 0, &budget), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK(cupel_live_handles() == before + 5);
  cupel_items_free(items);
  cupel_budget_free(budget);
  cupel_slicer_free(slicer);
  CHECK(cupel_live_handles() == before + 2);
  cupel_report_free(report);
  cupel_stream_free(stream);
  cupel_stream_free(NULL);
  CHECK(cupel_live_handles() == before);
}

int main(void) {
  test_version_and_status();
  test_last_error_is_per_call();
  test_live_handles();
  return check_summary("test_boundary");
}
