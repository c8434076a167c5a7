/* The C side of the benchmarks: reads `tokens score kind timestamp pinned
 * content` lines, then times (median of 25) pushing the items with the bulk
 * calls and running Composite(Recency, Kind) + deduplication + Greedy +
 * Chronological (max 200000, target 128000, Proceed) together: the binding
 * benchmark's reference (bindings/bench/run.sh). Options:
 *   --run-only   time the run alone, the items pushed once (bindings/js/bench)
 *   --knapsack   Knapsack(100) + U-shaped instead of Greedy + Chronological */
#include "cupel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void must(cupel_status st) {
  if (st != CUPEL_OK) {
    fprintf(stderr, "%s\n", cupel_last_error());
    exit(1);
  }
}
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  size_t n = 0, cap = 1 << 20, i, len = 0;
  int64_t *tokens = malloc(cap * 8), *ts = malloc(cap * 8);
  double *scores = malloc(cap * 8), t[25], w[2] = {1, 1};
  char **kinds = malloc(cap * sizeof(char *)), **contents = malloc(cap * sizeof(char *));
  bool *pinned = malloc(cap);
  char kind[32], content[64];
  int run_only = 0, knapsack = 0, a;
  cupel_items *pushed = NULL;
  long long tok, stamp;
  int pin;
  FILE *f = fopen(argv[argc - 1], "r");
  for (a = 1; a < argc - 1; a++) {
    run_only |= strcmp(argv[a], "--run-only") == 0;
    knapsack |= strcmp(argv[a], "--knapsack") == 0;
  }
  cupel_scorer *parts[2], *scorer;
  cupel_slicer *greedy;
  cupel_placer *chrono;
  cupel_pipeline *p;
  cupel_budget *b;
  size_t *out = malloc(cap * sizeof(size_t));
  if (!f) return 2;
  while (fscanf(f, "%lld %lf %31s %lld %d %63[^\n]", &tok, &scores[n], kind, &stamp, &pin, content) == 6) {
    tokens[n] = tok;
    ts[n] = stamp;
    pinned[n] = pin;
    kinds[n] = strdup(kind);
    contents[n] = strdup(content);
    n++;
  }
  must(cupel_scorer_new_recency(&parts[0]));
  must(cupel_scorer_new_kind(NULL, 0, &parts[1]));
  must(cupel_scorer_new_composite((const cupel_scorer *const *)parts, w, 2, &scorer));
  if (knapsack) {
    must(cupel_slicer_new_knapsack(100, &greedy));
    must(cupel_placer_new_u_shaped(&chrono));
  } else {
    must(cupel_slicer_new_greedy(&greedy));
    must(cupel_placer_new_chronological(&chrono));
  }
  must(cupel_pipeline_new(scorer, greedy, chrono, &p));
  must(cupel_pipeline_set_overflow(p, CUPEL_OVERFLOW_PROCEED));
  must(cupel_budget_new(200000, 128000, &b));
  for (i = 0; i < 26; i++) {
    double start = now_ms();
    cupel_items *items = pushed;
    if (!items) {
      must(cupel_items_new(&items));
      must(cupel_items_push_many(items, n, tokens, scores, (const char *const *)kinds));
      must(cupel_items_set_contents(items, 0, n, (const char *const *)contents));
      must(cupel_items_set_timestamps(items, 0, n, ts));
      must(cupel_items_set_pinned_many(items, 0, n, pinned));
    }
    must(cupel_pipeline_run(p, items, b, out, n, &len, NULL));
    if (run_only) {
      pushed = items; /* the first round pushes them, untimed */
      if (i == 0) continue;
    } else {
      cupel_items_free(items);
    }
    t[i - run_only] = now_ms() - start;
  }
  qsort(t, 25, sizeof t[0], cmp);
  if (run_only)
    printf("N=%zu %s_native_ms=%.3f placed=%zu\n", n, knapsack ? "knapsack" : "pipeline", t[12], len);
  else
    printf("C: %.3f ms (placed %zu)\n", t[12], len);
  cupel_items_free(pushed);
  return 0;
}
