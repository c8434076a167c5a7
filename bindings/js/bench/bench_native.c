/* The pipeline of bench.mjs, natively: reads items_<N>.txt (tokens score
 * kind timestamp pinned content per line), runs Composite(Recency, Kind) +
 * deduplication + Greedy + Chronological (overflow Proceed, max 200000,
 * target 128000) and prints the median milliseconds of 25 runs. */
#include "cupel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void must(cupel_status st, const char *what) {
  if (st != CUPEL_OK) {
    fprintf(stderr, "%s: %s\n", what, cupel_last_error());
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
  char line[256];
  size_t n = 0, cap = 1024, i, len = 0;
  FILE *f = fopen(argv[1], "r");
  cupel_items *items;
  cupel_scorer *parts[2], *scorer;
  cupel_slicer *greedy;
  cupel_placer *chrono;
  cupel_pipeline *p;
  cupel_budget *b;
  double w[2] = {1, 1}, t[25];
  size_t *out;
  if (argc < 2 || !f) return 2;
  must(cupel_items_new(&items), "items");
  while (fgets(line, sizeof line, f)) {
    long long tokens, ts;
    double score;
    int pinned;
    char kind[32], content[64];
    if (sscanf(line, "%lld %lf %31s %lld %d %63[^\n]", &tokens, &score, kind, &ts, &pinned, content) != 6) return 3;
    must(cupel_items_push(items, tokens, score, kind), "push");
    must(cupel_items_set_content(items, n, content), "content");
    must(cupel_items_set_timestamp(items, n, ts), "timestamp");
    if (pinned) must(cupel_items_set_pinned(items, n, true), "pinned");
    n++;
  }
  fclose(f);
  (void)cap;
  must(cupel_scorer_new_recency(&parts[0]), "recency");
  must(cupel_scorer_new_kind(NULL, 0, &parts[1]), "kind");
  must(cupel_scorer_new_composite((const cupel_scorer *const *)parts, w, 2, &scorer), "composite");
  /* argv[2] "knapsack": Knapsack(100) + U-shaped instead. */
  if (argc > 2 && strcmp(argv[2], "knapsack") == 0) {
    must(cupel_slicer_new_knapsack(100, &greedy), "knapsack");
    must(cupel_placer_new_u_shaped(&chrono), "placer");
  } else {
    must(cupel_slicer_new_greedy(&greedy), "greedy");
    must(cupel_placer_new_chronological(&chrono), "placer");
  }
  must(cupel_pipeline_new(scorer, greedy, chrono, &p), "pipeline");
  must(cupel_pipeline_set_overflow(p, CUPEL_OVERFLOW_PROCEED), "overflow");
  must(cupel_budget_new(200000, 128000, &b), "budget");
  out = malloc(sizeof *out * n);
  for (i = 0; i < 25; i++) {
    double start = now_ms();
    must(cupel_pipeline_run(p, items, b, out, n, &len, NULL), "run");
    t[i] = now_ms() - start;
  }
  qsort(t, 25, sizeof t[0], cmp);
  printf("N=%zu %s_native_ms=%.3f placed=%zu\n", n, argc > 2 ? argv[2] : "pipeline", t[12], len);
  return 0;
}
