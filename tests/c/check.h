/* Tiny test helpers shared by the C suites. Each suite is one program whose
 * exit status is 0 when every check passed. */
#ifndef CUPEL_TEST_CHECK_H
#define CUPEL_TEST_CHECK_H

#include "cupel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_passed = 0, g_failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      g_passed++;                                                              \
    } else {                                                                   \
      g_failed++;                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_STATUS(call, expected)                                           \
  do {                                                                         \
    cupel_status got_ = (call);                                                \
    if (got_ == (expected)) {                                                  \
      g_passed++;                                                              \
    } else {                                                                   \
      const char *msg_ = cupel_last_error();                                   \
      g_failed++;                                                              \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", \
              __FILE__, __LINE__, #call, cupel_status_str(got_),               \
              cupel_status_str(expected), msg_ ? msg_ : "(none)");             \
    }                                                                          \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, CUPEL_OK)

/* The last error message contains `needle`. */
#define CHECK_MSG(needle)                                                      \
  do {                                                                         \
    const char *msg_ = cupel_last_error();                                     \
    if (msg_ && strstr(msg_, needle)) {                                        \
      g_passed++;                                                              \
    } else {                                                                   \
      g_failed++;                                                              \
      fprintf(stderr, "%s:%d: last error \"%s\" lacks \"%s\"\n", __FILE__,     \
              __LINE__, msg_ ? msg_ : "(null)", needle);                       \
    }                                                                          \
  } while (0)

/* Compares a selection with the expected indices, in order. */
#define CHECK_INDICES(got, got_len, ...)                                       \
  do {                                                                         \
    const size_t want_[] = {__VA_ARGS__};                                      \
    check_indices_(__FILE__, __LINE__, got, got_len, want_,                    \
                   sizeof want_ / sizeof want_[0]);                            \
  } while (0)

static void check_indices_(const char *file, int line, const size_t *got,
                           size_t got_len, const size_t *want,
                           size_t want_len) {
  size_t i;
  int same = got_len == want_len;
  for (i = 0; same && i < got_len; i++) same = got[i] == want[i];
  if (same) {
    g_passed++;
    return;
  }
  g_failed++;
  fprintf(stderr, "%s:%d: indices differ\n  got: ", file, line);
  for (i = 0; i < got_len; i++) fprintf(stderr, "%zu ", got[i]);
  fprintf(stderr, "\n  want:");
  for (i = 0; i < want_len; i++) fprintf(stderr, " %zu", want[i]);
  fprintf(stderr, "\n");
}

/* An empty selection. */
#define CHECK_NONE(got_len) CHECK((got_len) == 0)

static int check_summary(const char *suite) {
  printf("%s: %d passed, %d failed\n", suite, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

/* Builds an item list from parallel arrays (kinds may be NULL). */
static cupel_items *make_items(size_t n, const int64_t *tokens,
                               const double *scores, const char *const *kinds) {
  cupel_items *items = NULL;
  if (cupel_items_new(&items) != CUPEL_OK) abort();
  if (cupel_items_push_many(items, n, tokens, scores, kinds) != CUPEL_OK) {
    fprintf(stderr, "push_many failed: %s\n", cupel_last_error());
    abort();
  }
  return items;
}

static cupel_budget *make_budget(int64_t max_tokens, int64_t target_tokens) {
  cupel_budget *b = NULL;
  if (cupel_budget_new(max_tokens, target_tokens, &b) != CUPEL_OK) abort();
  return b;
}

static cupel_slicer *greedy(void) {
  cupel_slicer *s = NULL;
  if (cupel_slicer_new_greedy(&s) != CUPEL_OK) abort();
  return s;
}

/* Slices with a fresh buffer of `cap` entries; returns the status. */
static cupel_status slice_into(const cupel_slicer *s, const cupel_items *items,
                               int64_t max_tokens, int64_t target_tokens,
                               size_t *out, size_t cap, size_t *out_len,
                               cupel_report *report) {
  cupel_budget *b = make_budget(max_tokens, target_tokens);
  cupel_status st = cupel_slice(s, items, b, 0, out, cap, out_len, report);
  cupel_budget_free(b);
  return st;
}
/* A KnapsackSlice of `bucket` tokens per bucket. */
static cupel_slicer *knapsack(int64_t bucket) {
  cupel_slicer *s = NULL;
  if (cupel_slicer_new_knapsack(bucket, &s) != CUPEL_OK) abort();
  return s;
}

/* A CountQuotaSlice over GreedySlice. */
static cupel_slicer *count_quota(const cupel_count_quota *e, size_t n, int scarcity) {
  cupel_slicer *g = greedy(), *s = NULL;
  if (cupel_slicer_new_count_quota(g, e, n, scarcity, &s) != CUPEL_OK) {
    fprintf(stderr, "count quota: %s\n", cupel_last_error());
    abort();
  }
  cupel_slicer_free(g);
  return s;
}

/* Shortfall `i` of `r` is `kind` with `req` required and `sat` satisfied. */
static void check_shortfall(cupel_report *r, size_t i, const char *kind, uint32_t req, uint32_t sat) {
  const char *k = NULL;
  uint32_t got_req = 0, got_sat = 0;
  CHECK_OK(cupel_report_shortfall(r, i, &k, &got_req, &got_sat));
  CHECK(k != NULL && strcmp(k, kind) == 0);
  CHECK(got_req == req && got_sat == sat);
}

#endif
