/* Every scorer through cupel_scorer_score: worked values, construction
 * errors with messages naming the argument, NULL for each pointer, the
 * output-buffer protocol. */
#include "check.h"
#include <math.h>
#include <stdint.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define HOUR 3600000LL
#define REF 1735732800000LL /* 2025-01-01T12:00:00Z */

/* Scores every item of `items` with `s` into `out` (capacity 8). */
static size_t score(const cupel_scorer *s, const cupel_items *items, double *out) {
  size_t n = 0;
  CHECK_OK(cupel_scorer_score(s, items, out, 8, &n));
  return n;
}

#define CLOSE(a, b) CHECK(fabs((a) - (b)) < 1e-9)

static cupel_items *three(void) {
  const int64_t t[] = {10, 20, 30};
  const double s[] = {0.1, 0.7, 0.4};
  const char *k[] = {"Message", "SystemPrompt", "custom"};
  cupel_items *items = make_items(3, t, s, k);
  CHECK_OK(cupel_items_set_timestamp(items, 0, REF - 2 * HOUR));
  CHECK_OK(cupel_items_set_timestamp(items, 2, REF - 48 * HOUR));
  CHECK_OK(cupel_items_set_priority(items, 1, 5));
  CHECK_OK(cupel_items_set_priority(items, 2, 9));
  CHECK_OK(cupel_items_add_tag(items, 0, "auth"));
  CHECK_OK(cupel_items_add_tag(items, 1, "AUTH"));
  CHECK_OK(cupel_items_add_tag(items, 1, "db"));
  CHECK_OK(cupel_items_set_relevance_hint(items, 0, 1.7));
  CHECK_OK(cupel_items_set_relevance_hint(items, 1, NAN));
  CHECK_OK(cupel_items_set_relevance_hint(items, 2, 0.25));
  CHECK_OK(cupel_items_set_metadata(items, 0, "cupel:trust", "0.85"));
  CHECK_OK(cupel_items_set_metadata(items, 1, "cupel:trust", "high"));
  CHECK_OK(cupel_items_set_metadata(items, 2, "cupel:priority", "high"));
  return items;
}

static void test_values(void) {
  cupel_items *items = three();
  cupel_scorer *s = NULL;
  double out[8];

  CHECK_OK(cupel_scorer_new_given(&s));
  CHECK(score(s, items, out) == 3);
  CLOSE(out[0], 0.1); CLOSE(out[1], 0.7); CLOSE(out[2], 0.4);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_recency(&s)); /* two timestamped: newer 1, older 0 */
  score(s, items, out);
  CLOSE(out[0], 1.0); CLOSE(out[1], 0.0); CLOSE(out[2], 0.0);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_priority(&s));
  score(s, items, out);
  CLOSE(out[0], 0.0); CLOSE(out[1], 0.0); CLOSE(out[2], 1.0);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_kind(NULL, 0, &s)); /* defaults */
  score(s, items, out);
  CLOSE(out[0], 0.2); CLOSE(out[1], 1.0); CLOSE(out[2], 0.0);
  cupel_scorer_free(s);
  {
    cupel_kind_weight w[] = {{"CUSTOM", 2.5}};
    CHECK_OK(cupel_scorer_new_kind(w, 1, &s));
    score(s, items, out);
    CLOSE(out[0], 0.0); CLOSE(out[2], 2.5); /* case-insensitive, not clamped */
    cupel_scorer_free(s);
  }
  {
    cupel_tag_weight w[] = {{"auth", 3.0}, {"db", 1.0}};
    CHECK_OK(cupel_scorer_new_tag(w, 2, &s));
    score(s, items, out);
    CLOSE(out[0], 0.75); CLOSE(out[1], 0.25); CLOSE(out[2], 0.0); /* tags case-sensitive */
    cupel_scorer_free(s);
  }
  CHECK_OK(cupel_scorer_new_frequency(&s)); /* 0 and 1 share "auth" (folded) */
  score(s, items, out);
  CLOSE(out[0], 0.5); CLOSE(out[1], 0.5); CLOSE(out[2], 0.0);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_reflexive(&s));
  score(s, items, out);
  CLOSE(out[0], 1.0); CLOSE(out[1], 0.0); CLOSE(out[2], 0.25);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_metadata_trust(0.5, &s));
  score(s, items, out);
  CLOSE(out[0], 0.85); CLOSE(out[1], 0.5); CLOSE(out[2], 0.5);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_metadata_key("cupel:priority", "high", 1.5, &s));
  score(s, items, out);
  CLOSE(out[0], 1.0); CLOSE(out[2], 1.5);
  cupel_scorer_free(s);

  CHECK_OK(cupel_scorer_new_decay(CUPEL_DECAY_EXPONENTIAL, 2 * 3600.0, NULL, 0, REF, 0.3, &s));
  score(s, items, out);
  CLOSE(out[0], 0.5); CLOSE(out[1], 0.3); CLOSE(out[2], pow(2.0, -24.0));
  cupel_scorer_free(s);
  CHECK_OK(cupel_scorer_new_decay(CUPEL_DECAY_WINDOW, 2 * 3600.0, NULL, 0, REF, 0.3, &s));
  score(s, items, out);
  CLOSE(out[0], 0.0); /* age == max_age: the window is half-open */
  cupel_scorer_free(s);
  {
    cupel_decay_window w[] = {{3600.0, 0.9}, {86400.0, 0.5}, {259200.0, 0.1}};
    CHECK_OK(cupel_scorer_new_decay(CUPEL_DECAY_STEP, 0.0, w, 3, REF, 0.3, &s));
    score(s, items, out);
    CLOSE(out[0], 0.5); CLOSE(out[2], 0.1);
    cupel_scorer_free(s);
  }
  /* composite of copies: children freed before use */
  {
    cupel_scorer *a = NULL, *b = NULL, *scaled = NULL;
    const cupel_scorer *kids[2];
    double w[] = {3.0, 1.0};
    CHECK_OK(cupel_scorer_new_recency(&a));
    CHECK_OK(cupel_scorer_new_priority(&b));
    kids[0] = a; kids[1] = b;
    CHECK_OK(cupel_scorer_new_composite(kids, w, 2, &s));
    CHECK_OK(cupel_scorer_new_scaled(b, &scaled));
    cupel_scorer_free(a);
    cupel_scorer_free(b);
    score(s, items, out);
    CLOSE(out[0], 0.75); CLOSE(out[1], 0.0); CLOSE(out[2], 0.25);
    score(scaled, items, out);
    CLOSE(out[0], 0.0); CLOSE(out[2], 1.0);
    cupel_scorer_free(s);
    cupel_scorer_free(scaled);
  }
  cupel_items_free(items);
}

static void test_errors(void) {
  cupel_scorer *s = NULL, *ok_scorer = NULL;
  cupel_items *items = three();
  double out[8];
  size_t n = 99;
  const cupel_scorer *kids[1];
  double w1[] = {1.0};
  cupel_kind_weight kw[] = {{"Message", 1.0}, {"message", 2.0}};
  cupel_tag_weight tw[] = {{"a", -1.0}};
  cupel_decay_window bad_windows[] = {{0.0, 0.5}};

  CHECK_STATUS(cupel_scorer_new_given(NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_scorer_new_kind(kw, 2, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("\"message\" is configured twice");
  kw[1].kind = "Doc";
  kw[1].weight = INFINITY;
  CHECK_STATUS(cupel_scorer_new_kind(kw, 2, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("weights[1].weight");
  kw[1].kind = NULL;
  CHECK_STATUS(cupel_scorer_new_kind(kw, 2, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("weights[1].kind is NULL");
  CHECK_STATUS(cupel_scorer_new_tag(tw, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("-1");
  CHECK_STATUS(cupel_scorer_new_composite(NULL, NULL, 0, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("at least one child");
  CHECK_OK(cupel_scorer_new_recency(&ok_scorer));
  kids[0] = ok_scorer;
  w1[0] = 0.0;
  CHECK_STATUS(cupel_scorer_new_composite(kids, w1, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("weights[0] is 0");
  w1[0] = NAN;
  CHECK_STATUS(cupel_scorer_new_composite(kids, w1, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  kids[0] = NULL;
  w1[0] = 1.0;
  CHECK_STATUS(cupel_scorer_new_composite(kids, w1, 1, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("children[0]");
  CHECK_STATUS(cupel_scorer_new_scaled(NULL, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_scorer_new_metadata_trust(1.5, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("default_score is 1.5");
  CHECK_STATUS(cupel_scorer_new_metadata_trust(NAN, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_scorer_new_metadata_key("k", "v", 0.0, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("boost is 0");
  CHECK_STATUS(cupel_scorer_new_metadata_key("k", "v", -1.0, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(cupel_scorer_new_metadata_key(NULL, "v", 1.0, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("key is NULL");
  CHECK_STATUS(cupel_scorer_new_metadata_key("", "v", 1.0, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("key is empty");
  {
    cupel_tag_weight empty_tag[] = {{"", 1.0}};
    CHECK_STATUS(cupel_scorer_new_tag(empty_tag, 1, &s), CUPEL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG("weights[0].tag is empty");
  }
  CHECK_STATUS(cupel_scorer_new_metadata_key("k", "\xff", 1.0, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("value is not valid UTF-8");
  CHECK_STATUS(cupel_scorer_new_decay(7, 1.0, NULL, 0, REF, 0.5, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("curve is 7");
  CHECK_STATUS(cupel_scorer_new_decay(CUPEL_DECAY_EXPONENTIAL, 0.0, NULL, 0, REF, 0.5, &s),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("half_life");
  CHECK_STATUS(cupel_scorer_new_decay(CUPEL_DECAY_WINDOW, -5.0, NULL, 0, REF, 0.5, &s),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("max_age");
  CHECK_STATUS(cupel_scorer_new_decay(CUPEL_DECAY_STEP, 0.0, NULL, 0, REF, 0.5, &s), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("windows is empty");
  CHECK_STATUS(cupel_scorer_new_decay(CUPEL_DECAY_STEP, 0.0, NULL, 2, REF, 0.5, &s), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_scorer_new_decay(CUPEL_DECAY_STEP, 0.0, bad_windows, 1, REF, 0.5, &s),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("windows[0].max_age");
  CHECK_STATUS(cupel_scorer_new_decay(CUPEL_DECAY_EXPONENTIAL, 1.0, NULL, 0, REF, 2.0, &s),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("null_timestamp_score is 2");
  CHECK(s == NULL); /* no failed constructor wrote *out */

  /* score: NULLs and the buffer protocol */
  CHECK_STATUS(cupel_scorer_score(NULL, items, out, 8, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_scorer_score(ok_scorer, NULL, out, 8, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_scorer_score(ok_scorer, items, NULL, 8, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_STATUS(cupel_scorer_score(ok_scorer, items, out, 8, NULL), CUPEL_ERROR_NULL_POINTER);
  out[0] = -7.0;
  CHECK_STATUS(cupel_scorer_score(ok_scorer, items, out, 2, &n), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3 && out[0] == -7.0); /* the needed length, nothing else written */
  CHECK_STATUS(cupel_scorer_score(ok_scorer, items, NULL, 0, &n), CUPEL_ERROR_BUFFER_TOO_SMALL);
  CHECK(n == 3); /* a NULL buffer of capacity 0 asks for the length */
  cupel_scorer_free(ok_scorer);
  cupel_scorer_free(NULL);
  cupel_items_free(items);
}

/* Timestamps at the int64 extremes: ages do not overflow. */
static void test_extreme_timestamps(void) {
  const int64_t t[] = {1, 1, 1};
  const double s[] = {0.5, 0.5, 0.5};
  cupel_items *items = make_items(3, t, s, NULL);
  cupel_scorer *d = NULL, *r = NULL;
  double out[8];
  CHECK_OK(cupel_items_set_timestamp(items, 0, INT64_MIN));
  CHECK_OK(cupel_items_set_timestamp(items, 1, INT64_MAX));
  CHECK_OK(cupel_scorer_new_decay(CUPEL_DECAY_EXPONENTIAL, 3600.0, NULL, 0, INT64_MAX, 0.5, &d));
  score(d, items, out);
  CLOSE(out[0], 0.0); /* the oldest possible item */
  CLOSE(out[1], 1.0); /* age 0 */
  CLOSE(out[2], 0.5); /* no timestamp */
  CHECK_OK(cupel_scorer_new_recency(&r));
  score(r, items, out);
  CLOSE(out[0], 0.0); CLOSE(out[1], 1.0);
  cupel_scorer_free(d);
  cupel_scorer_free(r);
  cupel_items_free(items);
}

int main(void) {
  test_values();
  test_errors();
  test_extreme_timestamps();
  return check_summary("test_scorers");
}
