/* StreamSlice through cupel_stream_*. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

  /* A finish that fails for its buffer changes nothing: the stream takes
   * more items afterwards, and they count. */
  CHECK_OK(cupel_stream_new(250, 3, &st));
  CHECK_OK(cupel_stream_push(st, 100, 0.1, &full));
  CHECK_OK(cupel_stream_push(st, 100, 0.9, &full));
  CHECK_OK(cupel_stream_push(st, 100, 0.5, &full)); /* takes 1, 2; 50 left */
  CHECK_OK(cupel_stream_push(st, 50, 0.2, &full));
  n = 0;
  CHECK_STATUS(cupel_stream_finish(st, out, 1, &n), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3);
  CHECK_OK(cupel_stream_push(st, 40, 0.95, &full)); /* still open */
  CHECK_OK(cupel_stream_finish(st, out, 8, &n));
  CHECK_INDICES(out, n, 1, 2, 4); /* the partial batch: 40 fits, then 50 does not */
  cupel_stream_free(st);
}

int main(void) {
  test_stream();
  return check_summary("test_stream");
}
