/* libcupel demo: assembles the context for one question of a coding
 * assistant from a retrieval result (examples/data/rag_candidates.csv):
 * the whole pipeline (score, deduplicate, fit the budget, place) with its
 * report of every decision, then every slicer on its own for comparison,
 * keep-together groups (no tool call is ever separated from its output),
 * budget simulation and streaming; then a 72-turn agent conversation run
 * afresh each turn and through a session, priced under a prefix cache.
 *
 *   cc -std=c99 -Iinclude examples/demo.c -Ltarget/release -lcupel \
 *      -Wl,-rpath,"$PWD/target/release" -o target/demo
 *   ./target/demo [CANDIDATES.csv [SESSION_DIR [COSTS_OUT.csv [CONVERSATION_DIR]]]]
 *
 * Defaults: examples/data/rag_candidates.csv, examples/data/session, no
 * per-turn CSV, examples/data/conversation. COSTS_OUT.csv gets section 6's
 * per-turn figures (examples/session_chart.py draws them).
 */
#include "cupel.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 4096

typedef struct {
  char kind[32];
  int64_t tokens;
  double score;
  int64_t timestamp; /* UTC ms; meaningful when has_timestamp */
  int has_timestamp;
  int pinned;
  uint64_t group; /* keep-together group: a tool call and its output */
  char title[96];
} row;

static row rows[MAX_ROWS];
static size_t n_rows;

/* Stops the demo with the library's message if a call fails. */
static void must(cupel_status st, const char *what) {
  if (st != CUPEL_OK) {
    fprintf(stderr, "%s failed: %s: %s\n", what, cupel_status_str(st), cupel_last_error());
    exit(1);
  }
}

/* The next comma-separated field of *s (empty fields included), or NULL. */
static char *field(char **s) {
  char *start = *s, *comma;
  if (!start) return NULL;
  comma = strchr(start, ',');
  if (comma) {
    *comma = '\0';
    *s = comma + 1;
  } else {
    start[strcspn(start, "\r\n")] = '\0';
    *s = NULL;
  }
  return start;
}

/* Columns: kind,tokens,score,timestamp,pinned,group,title (title last). */
static void load(const char *path) {
  char line[512];
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(1);
  }
  if (!fgets(line, sizeof line, f)) exit(1); /* header */
  while (n_rows < MAX_ROWS && fgets(line, sizeof line, f)) {
    row *r = &rows[n_rows];
    char *rest = line;
    char *kind = field(&rest), *tokens = field(&rest), *score = field(&rest), *ts = field(&rest),
         *pinned = field(&rest), *group = field(&rest), *title = rest;
    if (!kind || !tokens || !score || !ts || !pinned || !group || !title) continue;
    title[strcspn(title, "\r\n")] = '\0';
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    r->tokens = strtoll(tokens, NULL, 10);
    r->score = strtod(score, NULL);
    r->has_timestamp = *ts != '\0';
    r->timestamp = r->has_timestamp ? strtoll(ts, NULL, 10) : 0;
    r->pinned = *pinned == '1';
    r->group = strtoull(group, NULL, 10);
    snprintf(r->title, sizeof r->title, "%s", title);
    n_rows++;
  }
  fclose(f);
}

/* How many tool call/output pairs `idx` holds whole, and how many split
 * (one member without the other). */
static void count_pairs(const size_t *idx, size_t n, size_t *whole, size_t *split) {
  static unsigned char seen[MAX_ROWS];
  size_t i;
  memset(seen, 0, sizeof seen);
  for (i = 0; i < n; i++)
    if (rows[idx[i]].group) seen[rows[idx[i]].group % MAX_ROWS]++;
  *whole = *split = 0;
  for (i = 0; i < MAX_ROWS; i++) {
    if (seen[i] == 2) ++*whole;
    if (seen[i] == 1) ++*split;
  }
}

static const char *reason_name(int32_t reason) {
  switch (reason) {
  case CUPEL_REASON_SCORED: return "scored";
  case CUPEL_REASON_PINNED: return "pinned";
  case CUPEL_REASON_ZERO_TOKEN: return "zero tokens";
  case CUPEL_REASON_BUDGET_EXCEEDED: return "over budget";
  case CUPEL_REASON_DEDUPLICATED: return "duplicate";
  case CUPEL_REASON_NEGATIVE_TOKENS: return "negative tokens";
  case CUPEL_REASON_PINNED_OVERRIDE: return "displaced by pinned";
  case CUPEL_REASON_COUNT_CAP_EXCEEDED: return "count cap";
  default: return "other";
  }
}

/* The whole pipeline: the host's relevance blended with recency and kind,
 * deduplicated, fitted by GreedySlice, placed chronologically; then the
 * report: the final context in placed order and why the rest was left out. */
static void run_pipeline(const cupel_items *items, const cupel_budget *budget, size_t *out) {
  cupel_scorer *given = NULL, *recency = NULL, *kind = NULL, *blend = NULL;
  cupel_slicer *greedy = NULL;
  cupel_placer *chrono = NULL;
  cupel_pipeline *pipeline = NULL;
  cupel_report *report = NULL;
  const cupel_scorer *parts[3];
  double weights[3] = {0.6, 0.25, 0.15};
  size_t n = 0, i, by_reason[20] = {0};
  int64_t tokens = 0;

  must(cupel_scorer_new_given(&given), "given scorer");
  must(cupel_scorer_new_recency(&recency), "recency scorer");
  must(cupel_scorer_new_kind(NULL, 0, &kind), "kind scorer");
  parts[0] = given, parts[1] = recency, parts[2] = kind;
  must(cupel_scorer_new_composite(parts, weights, 3, &blend), "composite scorer");
  must(cupel_slicer_new_greedy(&greedy), "greedy");
  must(cupel_placer_new_chronological(&chrono), "placer");
  must(cupel_pipeline_new(blend, greedy, chrono, &pipeline), "cupel_pipeline_new");
  must(cupel_report_new(&report), "cupel_report_new");
  must(cupel_pipeline_run(pipeline, items, budget, out, n_rows, &n, report), "cupel_pipeline_run");
  /* The selection in one line: every binding's demo prints the same. */
  printf("placed:");
  for (i = 0; i < n; i++) printf(" %zu", out[i]);
  printf("\n");

  printf("(the item numbers above, in the order they go into the prompt)\n\n");
  printf("1. THE CONTEXT THE PIPELINE CHOSE\n"
         "Each candidate's score blends three things: 0.6 x the retriever's relevance\n"
         "score + 0.25 x how recent it is + 0.15 x how useful its kind usually is.\n"
         "Byte-identical copies are dropped (the best-scored copy stays), the pinned\n"
         "system prompt goes in first, GreedySlice fills the goal with the best score\n"
         "per token, and the result is placed oldest first (documents have no\n"
         "timestamp, so they come last). A tool call and its output share a group (g..)\n"
         "and are kept or dropped together.\n\n");
  printf("%zu items in prompt order: item number, kind, tokens, blended score, why it\n"
         "is in, group, title\n", n);
  for (i = 0; i < n; i++) {
    cupel_decision d;
    must(cupel_report_included(report, i, &d), "included");
    tokens += d.item_tokens;
    printf("  %4zu  %-12s %5lld  %.3f  %-7s ", d.item_index, rows[d.item_index].kind,
           (long long)d.item_tokens, d.score, reason_name(d.reason));
    if (d.group)
      printf("g%-3llu ", (unsigned long long)d.group);
    else
      printf("     ");
    printf("%s\n", rows[d.item_index].title);
  }
  {
    size_t whole, split;
    count_pairs(out, n, &whole, &split);
    printf("  = %lld tokens of the 4096-token goal; tool call/output pairs: %zu whole, %zu split\n\n",
           (long long)tokens, whole, split);
  }

  n = cupel_report_excluded_count(report);
  printf("2. WHAT WAS LEFT OUT, AND WHY\n"
         "%zu candidates did not make it. The 10 with the highest blended score, with\n"
         "the reason the report gives for each:\n", n);
  for (i = 0; i < n; i++) {
    cupel_decision d;
    must(cupel_report_excluded(report, i, &d), "excluded");
    if (d.reason >= 0 && d.reason < 20) by_reason[d.reason]++;
    if (i >= 10) continue;
    printf("  %4zu  %-12s %5lld  %.3f  %s", d.item_index, rows[d.item_index].kind,
           (long long)d.item_tokens, d.score, reason_name(d.reason));
    if (d.reason == CUPEL_REASON_BUDGET_EXCEEDED && d.group)
      printf(" (its group g%llu needs %lld, %lld left)", (unsigned long long)d.group,
             (long long)d.group_tokens, (long long)d.available_tokens);
    else if (d.reason == CUPEL_REASON_BUDGET_EXCEEDED)
      printf(" (needs %lld, %lld left)", (long long)d.item_tokens, (long long)d.available_tokens);
    if (d.reason == CUPEL_REASON_DEDUPLICATED) printf(" of #%zu", d.related_index);
    printf("  %s\n", rows[d.item_index].title);
  }
  printf("  all %zu, by reason:", n);
  for (i = 0; i < 20; i++)
    if (by_reason[i]) printf(" %s %zu;", reason_name((int32_t)i), by_reason[i]);
  printf(" (%lld candidates, %lld tokens considered)\n\n",
         (long long)cupel_report_total_candidates(report),
         (long long)cupel_report_total_tokens_considered(report));

  cupel_report_free(report);
  cupel_pipeline_free(pipeline);
  cupel_placer_free(chrono);
  cupel_slicer_free(greedy);
  cupel_scorer_free(blend);
  cupel_scorer_free(kind);
  cupel_scorer_free(recency);
  cupel_scorer_free(given);
}


/* ---- 0. From text: bundled files in, no token numbers given --------------- */

#define MAX_FILES 64

/* Reads a whole file into a new buffer (NUL-terminated); its length in *len. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    perror(path);
    exit(1);
  }
  buf[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* Items that shrink instead of vanish: the session again on a tighter goal,
 * every tool output with a placeholder to stand in for it and every document
 * truncatable, so that what would be dropped whole is kept in part. */
static void run_shrinking(cupel_items *items, const cupel_tokenizer *tok, cupel_pipeline *pipeline, size_t n,
                          char files[][64], char kinds[][32], const char *const *texts, const size_t *lens) {
  cupel_budget *budget = NULL;
  cupel_report *report = NULL;
  size_t i, placed[MAX_FILES], count = 0;
  double plain_score = 0, shrunk_score = 0;
  int64_t added_total = 0;

  must(cupel_budget_new(4096, 800, &budget), "budget");
  must(cupel_report_new(&report), "report");
  /* Before: the same items as they are, on a goal of 800 tokens. */
  must(cupel_pipeline_run(pipeline, items, budget, placed, MAX_FILES, &count, report), "run");
  for (i = 0; i < cupel_report_included_count(report); i++) {
    cupel_decision d;
    must(cupel_report_included(report, i, &d), "included");
    plain_score += d.score;
  }
  for (i = 0; i < n; i++) {
    if (strcmp(kinds[i], "ToolOutput") == 0) {
      char note[96];
      int64_t own = 0, t = 0;
      must(cupel_items_tokens(items, i, &own), "tokens");
      snprintf(note, sizeof note, "[%s cleared: %lld tokens]", files[i], (long long)own);
      must(cupel_tokenizer_count(tok, note, strlen(note), &t), "count");
      must(cupel_items_add_variant(items, i, t, 0.2, note), "cupel_items_add_variant");
    } else if (strcmp(kinds[i], "Document") == 0) {
      must(cupel_items_set_truncatable(items, i, CUPEL_KEEP_HEAD, 60), "cupel_items_set_truncatable");
    }
  }
  must(cupel_pipeline_set_tokenizer(pipeline, tok), "cupel_pipeline_set_tokenizer");
  must(cupel_pipeline_run(pipeline, items, budget, placed, MAX_FILES, &count, report), "run");

  printf("\n0b. ITEMS THAT SHRINK\n"
         "The same session on a goal of 800 tokens. Each tool output has a placeholder\n"
         "variant (\"[... cleared: N tokens]\", a fifth of its score) and each document\n"
         "may be cut (its beginning kept, at least 60 tokens): an item that does not fit\n"
         "whole is kept in part instead of dropped.\n\n");
  printf("In the prompt, in order: file, kind, tokens added (of its own), why\n");
  for (i = 0; i < cupel_report_included_count(report); i++) {
    cupel_decision d;
    size_t variant = 0, head = 0, tail = 0;
    int64_t added = 0;
    must(cupel_report_included(report, i, &d), "included");
    must(cupel_report_included_variant(report, i, &variant, &added), "cupel_report_included_variant");
    must(cupel_report_included_cut(report, i, &head, &tail), "cupel_report_included_cut");
    shrunk_score += d.score;
    added_total += added;
    printf("  %-26s %-12s %5lld of %5lld  %s", files[d.item_index], kinds[d.item_index], (long long)added,
           (long long)d.item_tokens, cupel_reason_str(d.reason));
    if (d.reason == CUPEL_REASON_VARIANT) {
      const char *text = NULL;
      size_t len = 0;
      int64_t t = 0;
      double value = 0;
      must(cupel_items_variant(items, d.item_index, variant, &t, &value, &text, &len), "cupel_items_variant");
      printf(": sent as \"%.*s\"", (int)len, text);
    }
    if (d.reason == CUPEL_REASON_TRUNCATED) {
      size_t from = head > 24 ? head - 24 : 0, k;
      printf(": its first %zu of %zu bytes, ending \"...", head, lens[d.item_index]);
      for (k = from; k < head; k++) putchar(texts[d.item_index][k] == '\n' ? ' ' : texts[d.item_index][k]);
      printf("\"");
    }
    printf("\n");
  }
  printf("  = %lld tokens (%lld of them selected, the rest pinned)\n", (long long)added_total,
         (long long)cupel_report_selected_tokens(report));
  printf("Left out:\n");
  for (i = 0; i < cupel_report_excluded_count(report); i++) {
    cupel_decision d;
    must(cupel_report_excluded(report, i, &d), "excluded");
    printf("  %-26s %-12s %5lld  %s\n", files[d.item_index], kinds[d.item_index], (long long)d.item_tokens,
           cupel_reason_str(d.reason));
  }
  printf("Score kept: %.2f with variants and cuts, %.2f without (the same goal).\n", shrunk_score, plain_score);
  must(cupel_pipeline_set_tokenizer(pipeline, NULL), "cupel_pipeline_set_tokenizer");
  cupel_report_free(report);
  cupel_budget_free(budget);
}

/* The trace of section 0c: one line per stage. */
typedef struct {
  char lines[8][96];
  int n, excluded;
} stage_table;

static void on_trace(void *user, const cupel_trace_event *e) {
  stage_table *t = user;
  if (e->kind == CUPEL_TRACE_EVENT_STAGE && t->n < 8)
    snprintf(t->lines[t->n++], sizeof t->lines[0], "  %-22s %3zu in %3zu out %2zu excluded", e->name,
             e->item_count_in, e->item_count_out, e->exclusion_count);
  if (e->kind == CUPEL_TRACE_EVENT_EXCLUSION) t->excluded++;
}

/* Section 0c: the same items under a policy file, read by the library
 * (examples/policy.json; examples/policy_select.py loads the same file in
 * Python and must print the same selection line). */
static void run_policy_file(const cupel_items *items, size_t n, char files[][64]) {
  const char *policy_path = "examples/policy.json", *budget_path = "examples/budget.json";
  size_t policy_len = 0, budget_len = 0, placed[MAX_FILES], count = 0, i, kinds = 0, k;
  char *policy = read_file(policy_path, &policy_len), *budget_doc = read_file(budget_path, &budget_len);
  cupel_pipeline *pipeline = NULL, *presets[2] = {NULL, NULL};
  cupel_budget *budget = NULL;
  cupel_report *report = NULL;
  double utilization = 0, coverage = 0;
  stage_table trace;
  const cupel_pipeline *variants[3];
  const char *labels[3] = {"policy", "Chat", "AgentLoop"};
  char *json = NULL;
  size_t json_len = 0;

  must(cupel_pipeline_from_json(policy, policy_len, &pipeline), "cupel_pipeline_from_json");
  must(cupel_budget_from_json(budget_doc, budget_len, &budget), "cupel_budget_from_json");
  must(cupel_report_new(&report), "cupel_report_new");
  memset(&trace, 0, sizeof trace);
  must(cupel_pipeline_set_trace(pipeline, CUPEL_TRACE_EXCLUSIONS, on_trace, &trace), "cupel_pipeline_set_trace");
  must(cupel_pipeline_run(pipeline, items, budget, placed, MAX_FILES, &count, report), "run");
  must(cupel_report_budget_utilization(report, &utilization), "utilization");
  must(cupel_report_kind_diversity(report, items, &kinds), "diversity");
  must(cupel_report_timestamp_coverage(report, items, &coverage), "coverage");

  printf("\n0c. THE SAME SESSION UNDER A POLICY FILE\n"
         "The pipeline of %s (read by cupel_pipeline_from_json: the host's\n"
         "relevance 3, recency 2, kind weights of its own 1; GreedySlice; chronological;\n"
         "o200k_base) and the budget of %s\n"
         "(4096 tokens, 1024 kept for the answer, a 700-token goal).\n",
         policy_path, budget_path);
  printf("Selected (prompt order):");
  for (i = 0; i < count; i++) printf(" %s", files[placed[i]]);
  printf("\nBudget utilization %.3f of max_tokens, %zu kinds, %.0f %% of the items timestamped.\n", utilization,
         kinds, coverage * 100);
  printf("The trace (CUPEL_TRACE_EXCLUSIONS; a binding turns these into OpenTelemetry spans):\n");
  for (i = 0; i < (size_t)trace.n; i++) printf("%s\n", trace.lines[i]);
  printf("  and %d cupel.exclusion events, then cupel.pipeline.\n", trace.excluded);

  /* Policy sensitivity: the file against two presets, item by item. */
  must(cupel_pipeline_preset("Chat", &presets[0]), "preset Chat");
  must(cupel_pipeline_preset("AgentLoop", &presets[1]), "preset AgentLoop");
  must(cupel_pipeline_set_trace(pipeline, CUPEL_TRACE_STAGES, NULL, NULL), "trace off");
  variants[0] = pipeline, variants[1] = presets[0], variants[2] = presets[1];
  if (cupel_policy_sensitivity(variants, labels, 3, items, budget, NULL, 0, &json_len) != CUPEL_ERROR_BUFFER_TOO_SMALL)
    must(CUPEL_ERROR_INTERNAL, "sensitivity length");
  json = malloc(json_len + 1);
  must(cupel_policy_sensitivity(variants, labels, 3, items, budget, json, json_len + 1, &json_len), "sensitivity");
  printf("Against the presets Chat and AgentLoop (cupel_policy_sensitivity): the items\n"
         "one of them takes and another leaves out, in push order:\n  %-26s %-9s %-9s %s\n", "file", "policy",
         "Chat", "AgentLoop");
  {
    /* The diffs are {"content":..,"index":N,"statuses":[...]} in push order;
     * a demo reads the indices and statuses with strstr (a host would use
     * its JSON library). */
    const char *d = strstr(json, "\"diffs\":");
    size_t shown = 0;
    while (d && (d = strstr(d, "\"index\":")) != NULL) {
      size_t index = (size_t)strtoull(d + 8, NULL, 10);
      const char *st = d;
      printf("  %-26s", index < n ? files[index] : "?");
      for (k = 0; k < 3; k++) {
        st = strstr(st, "\"status\":\"");
        if (!st) break;
        st += 10;
        printf(" %-9.8s", strncmp(st, "Included", 8) == 0 ? "in" : "out");
      }
      printf("\n");
      d = st ? st : d + 8;
      shown++;
    }
    if (!shown) printf("  (none: all three select the same)\n");
  }
  free(json);
  cupel_pipeline_free(presets[0]);
  cupel_pipeline_free(presets[1]);
  cupel_report_free(report);
  cupel_budget_free(budget);
  cupel_pipeline_free(pipeline);
  free(policy);
  free(budget_doc);
}

/* The session of examples/data/session: each file one item, its tokens
 * counted by the library (o200k_base), then the pipeline. */
static void run_from_text(const char *dir) {
  char path[512], line[512];
  char kinds[MAX_FILES][32], files[MAX_FILES][64];
  const char *texts[MAX_FILES], *kind_ptrs[MAX_FILES];
  size_t lens[MAX_FILES], n = 0, i, placed[MAX_FILES], count = 0;
  double scores[MAX_FILES];
  uint64_t groups[MAX_FILES];
  int64_t minutes[MAX_FILES], total = 0, kept = 0;
  int pinned[MAX_FILES];
  FILE *m;
  cupel_tokenizer *tok = NULL;
  cupel_items *items = NULL;
  cupel_scorer *recency = NULL, *kind = NULL, *given = NULL, *blend = NULL;
  cupel_slicer *greedy = NULL;
  cupel_placer *chrono = NULL;
  cupel_pipeline *pipeline = NULL;
  cupel_budget *budget = NULL;
  cupel_report *report = NULL;
  const cupel_scorer *parts[3];
  const double weights[3] = {0.5, 0.3, 0.2};

  snprintf(path, sizeof path, "%s/manifest.csv", dir);
  m = fopen(path, "r");
  if (!m) {
    perror(path);
    exit(1);
  }
  while (n < MAX_FILES && fgets(line, sizeof line, m)) {
    char *rest = line, *k, *file, *score, *minute, *pin, *group;
    if (line[0] == '#' || strncmp(line, "kind,", 5) == 0) continue;
    k = field(&rest), file = field(&rest), score = field(&rest), minute = field(&rest), pin = field(&rest),
    group = field(&rest);
    if (!k || !file || !score || !minute || !pin || !group) continue;
    snprintf(kinds[n], sizeof kinds[n], "%s", k);
    snprintf(files[n], sizeof files[n], "%s", file);
    scores[n] = strtod(score, NULL);
    minutes[n] = *minute ? strtoll(minute, NULL, 10) : -1;
    pinned[n] = *pin == '1';
    groups[n] = strtoull(group, NULL, 10);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    texts[n] = read_file(path, &lens[n]);
    kind_ptrs[n] = kinds[n];
    n++;
  }
  fclose(m);

  /* Text in: the library counts every file's tokens itself. */
  must(cupel_tokenizer_new("o200k_base", &tok), "cupel_tokenizer_new");
  must(cupel_items_new(&items), "cupel_items_new");
  must(cupel_items_push_texts(items, tok, n, texts, lens, scores, kind_ptrs), "cupel_items_push_texts");
  for (i = 0; i < n; i++) {
    if (minutes[i] >= 0) must(cupel_items_set_timestamp(items, i, minutes[i] * 60000), "timestamp");
    if (pinned[i]) must(cupel_items_set_pinned(items, i, true), "pinned");
  }
  must(cupel_items_set_groups(items, 0, n, groups), "groups");
  for (i = 0; i < n; i++) {
    int64_t t;
    must(cupel_items_tokens(items, i, &t), "tokens");
    total += t;
  }

  must(cupel_scorer_new_given(&given), "given");
  must(cupel_scorer_new_recency(&recency), "recency");
  must(cupel_scorer_new_kind(NULL, 0, &kind), "kind");
  parts[0] = given, parts[1] = recency, parts[2] = kind;
  must(cupel_scorer_new_composite(parts, weights, 3, &blend), "composite");
  must(cupel_slicer_new_greedy(&greedy), "greedy");
  must(cupel_placer_new_chronological(&chrono), "placer");
  must(cupel_pipeline_new(blend, greedy, chrono, &pipeline), "pipeline");
  must(cupel_budget_new(4096, 2000, &budget), "budget");
  must(cupel_budget_set_output_reserve(budget, 1024), "output reserve");
  must(cupel_report_new(&report), "report");
  must(cupel_pipeline_run(pipeline, items, budget, placed, MAX_FILES, &count, report), "run");

  printf("0. FROM TEXT\n"
         "%zu text files of a debugging session (examples/data/session): the system\n"
         "prompt, the conversation, three tool calls with their outputs, documents and\n"
         "memories. No token numbers are given: the library counted them with the\n"
         "o200k_base vocabulary (GPT-4o): %lld tokens in all. The goal is 2000 tokens.\n\n",
         n, (long long)total);
  printf("In the prompt, in order: file, kind, tokens, why\n");
  for (i = 0; i < cupel_report_included_count(report); i++) {
    cupel_decision d;
    must(cupel_report_included(report, i, &d), "included");
    kept += d.item_tokens;
    printf("  %-26s %-12s %5lld  %s\n", files[d.item_index], kinds[d.item_index], (long long)d.item_tokens,
           cupel_reason_str(d.reason));
  }
  printf("  = %lld tokens\nLeft out:\n", (long long)kept);
  for (i = 0; i < cupel_report_excluded_count(report); i++) {
    cupel_decision d;
    must(cupel_report_excluded(report, i, &d), "excluded");
    printf("  %-26s %-12s %5lld  %s", files[d.item_index], kinds[d.item_index], (long long)d.item_tokens,
           cupel_reason_str(d.reason));
    if (d.reason == CUPEL_REASON_DEDUPLICATED) printf(" (a copy of %s)", files[d.related_index]);
    if (d.reason == CUPEL_REASON_BUDGET_EXCEEDED && d.group)
      printf(" (the call and its output need %lld tokens, %lld left)", (long long)d.group_tokens,
             (long long)d.available_tokens);
    printf("\n");
  }
  run_policy_file(items, n, files);
  run_shrinking(items, tok, pipeline, n, files, kinds, texts, lens);

  /* The long log would not fit: its last 300 tokens, cut exactly. */
  for (i = 0; i < n; i++) {
    if (strcmp(files[i], "tool-02-output.txt") == 0) {
      size_t head = 0, tail = 0;
      int64_t t = 0;
      must(cupel_tokenizer_truncate(tok, texts[i], lens[i], 300, CUPEL_KEEP_TAIL, &head, &tail, &t), "truncate");
      printf("\ntool-02-output.txt cut to its last 300 tokens keeps %zu of %zu bytes (%lld tokens),\n"
             "from: %.60s...\n\n",
             lens[i] - tail, lens[i], (long long)t, texts[i] + tail);
    }
  }

  for (i = 0; i < n; i++) free((void *)texts[i]);
  cupel_report_free(report);
  cupel_budget_free(budget);
  cupel_pipeline_free(pipeline);
  cupel_placer_free(chrono);
  cupel_slicer_free(greedy);
  cupel_scorer_free(blend);
  cupel_scorer_free(kind);
  cupel_scorer_free(given);
  cupel_scorer_free(recency);
  cupel_items_free(items);
  cupel_tokenizer_free(tok);
}

/* ---- 6. A conversation, turn by turn: sessions ---------------------------- */

#define MAX_CONV 2048

/* One item of examples/data/conversation/turns.csv (see generate.py there). */
typedef struct {
  int turn; /* the turn that adds it; 0: there from the start */
  char kind[16];
  int64_t tokens;
  uint64_t key, group;
  int is_volatile, pinned;
  int64_t placeholder; /* tokens of its "[output cleared]" variant; 0: none */
  char content[96];
} conv_row;

static conv_row conv[MAX_CONV];

/* What went into one prompt, in order: each item's key and the option sent
 * (0: the item itself, 1: its placeholder), with the tokens it adds. */
typedef struct {
  uint64_t key;
  size_t variant;
  int64_t tokens;
} sent_item;

/* Reads the report of a run: the prompt as sent, its tokens, and the summed
 * scores of its non-pinned items (the relevance it keeps). */
static size_t sent_of(const cupel_report *report, const size_t *row_of, sent_item *out, int64_t *tokens,
                      double *relevance) {
  size_t i, n = cupel_report_included_count(report);
  *tokens = 0;
  *relevance = 0;
  for (i = 0; i < n; i++) {
    cupel_decision d;
    must(cupel_report_included(report, i, &d), "included");
    must(cupel_report_included_variant(report, i, &out[i].variant, &out[i].tokens), "included variant");
    out[i].key = conv[row_of[d.item_index]].key;
    *tokens += out[i].tokens;
    if (!conv[row_of[d.item_index]].pinned) *relevance += d.score;
  }
  return n;
}

/* The tokens a prefix cache holds: the leading items (and variants) this
 * prompt shares with the previous one. */
static int64_t common_prefix(const sent_item *prev, size_t n_prev, const sent_item *now, size_t n_now) {
  size_t i;
  int64_t tokens = 0;
  for (i = 0; i < n_prev && i < n_now; i++) {
    if (prev[i].key != now[i].key || prev[i].variant != now[i].variant) break;
    tokens += now[i].tokens;
  }
  return tokens;
}

static double turn_cost(int64_t sent, int64_t cached) { return 1.25 * (double)(sent - cached) + 0.1 * (double)cached; }

/* A host's agent loop: each turn hands over the whole history plus that
 * turn's retrieved documents, once to a fresh pipeline run and once to a
 * session, and prices both prompts under a prefix cache. */
static void run_conversation(const char *dir, const char *csv_out) {
  enum { BUDGET = 16000 };
  static const char *actions[] = {"first", "append", "compact"};
  static const char *marks[] = {"pinned", "compaction", "stable", "end"}; /* cupel_breakpoint.mark */
  static size_t row_of[MAX_CONV], out[MAX_CONV];
  static sent_item prev_f[MAX_CONV], now_f[MAX_CONV], now_s[MAX_CONV];
  char path[512], line[512];
  FILE *f, *csv = NULL;
  size_t n_conv = 0, n_prev_f = 0, i;
  int turns = 0, t, compactions = 0, relevance_turns = 0;
  int64_t pinned_tokens = 0, history_tokens = 0;
  int64_t sent_s_all = 0, cached_s_all = 0, sent_f_all = 0, cached_f_all = 0;
  double cost_s = 0, cost_f = 0, relevance_sum = 0;
  cupel_kind_weight kw[6] = {{"SystemPrompt", 1.0}, {"Memory", 0.8}, {"ToolOutput", 0.6},
                             {"Document", 0.4},     {"Message", 0.2}, {"ToolCall", 0.6}};
  const double weights[2] = {2.0, 1.0};
  const cupel_scorer *parts[2];
  cupel_scorer *recency = NULL, *kind = NULL, *blend = NULL;
  cupel_slicer *greedy = NULL;
  cupel_placer *chrono = NULL;
  cupel_pipeline *pipeline = NULL;
  cupel_session *session = NULL;
  cupel_budget *budget = NULL;
  cupel_report *rep_f = NULL, *rep_s = NULL;
  cupel_breakpoint bps[4];
  size_t n_bps = 0;

  snprintf(path, sizeof path, "%s/turns.csv", dir);
  f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(1);
  }
  if (!fgets(line, sizeof line, f)) exit(1); /* header */
  while (n_conv < MAX_CONV && fgets(line, sizeof line, f)) {
    conv_row *r = &conv[n_conv];
    char *rest = line, *turn = field(&rest), *k = field(&rest), *tokens = field(&rest), *key = field(&rest),
         *group = field(&rest), *vol = field(&rest), *pin = field(&rest), *ph = field(&rest), *content = rest;
    if (!turn || !k || !tokens || !key || !group || !vol || !pin || !ph || !content) continue;
    content[strcspn(content, "\r\n")] = '\0';
    r->turn = atoi(turn);
    snprintf(r->kind, sizeof r->kind, "%s", k);
    r->tokens = strtoll(tokens, NULL, 10);
    r->key = strtoull(key, NULL, 10);
    r->group = strtoull(group, NULL, 10);
    r->is_volatile = *vol == '1';
    r->pinned = *pin == '1';
    r->placeholder = strtoll(ph, NULL, 10);
    snprintf(r->content, sizeof r->content, "%s", content);
    if (r->turn > turns) turns = r->turn;
    if (r->pinned) pinned_tokens += r->tokens;
    else if (!r->is_volatile) history_tokens += r->tokens;
    n_conv++;
  }
  fclose(f);

  /* 2 x recency + 1 x kind (a tool call weighs as its result), GreedySlice,
   * oldest first: the pipeline of benches/session.rs. */
  must(cupel_scorer_new_recency(&recency), "recency");
  must(cupel_scorer_new_kind(kw, 6, &kind), "kind");
  parts[0] = recency, parts[1] = kind;
  must(cupel_scorer_new_composite(parts, weights, 2, &blend), "composite");
  must(cupel_slicer_new_greedy(&greedy), "greedy");
  must(cupel_placer_new_chronological(&chrono), "placer");
  must(cupel_pipeline_new(blend, greedy, chrono, &pipeline), "pipeline");
  must(cupel_session_new(pipeline, &session), "cupel_session_new");
  must(cupel_budget_new(BUDGET, BUDGET, &budget), "budget");
  must(cupel_report_new(&rep_f), "report");
  must(cupel_report_new(&rep_s), "report");
  if (csv_out) {
    csv = fopen(csv_out, "w");
    if (!csv) {
      perror(csv_out);
      exit(1);
    }
    fprintf(csv, "turn,action,session_sent,session_cached,fresh_sent,fresh_cached,session_cost,fresh_cost,"
                 "session_cost_total,fresh_cost_total,session_relevance,fresh_relevance\n");
  }

  printf("\n6. A CONVERSATION, TURN BY TURN (sessions)\n"
         "%d turns of a coding agent, from %s/turns.csv:\n"
         "a pinned system prompt and tool definitions (%lld tokens), then each turn a\n"
         "user message, 0-3 tool calls each grouped with its result (every result may\n"
         "be replaced by a 12-token placeholder variant), the reply, and 2-3 retrieved\n"
         "documents marked volatile (that turn's only). Every item has a key. Each turn\n"
         "the whole history goes in (%lld tokens by the last turn) for a %d-token\n"
         "budget; the pipeline is 2 x recency + 1 x kind, GreedySlice, oldest first.\n"
         "Run afresh every turn, it evicts and reorders near the front, and the\n"
         "provider's prefix cache is lost; a session (cupel_session_run: the same\n"
         "pipeline and budget) keeps last turn's prompt and appends to it, compacting\n"
         "with room to spare when it is full. Prices: 1.25 a token not cached (a cache\n"
         "write), 0.1 a cached token. The session's cached part is its stable prefix\n"
         "(cupel_session_stable_prefix); the fresh run's, the prefix its prompt shares\n"
         "with the previous turn's (same items, same variants).\n\n",
         turns, dir, (long long)pinned_tokens, (long long)(pinned_tokens + history_tokens), BUDGET);
  printf("      session                  fresh pipeline     cost so far (k)\n"
         "turn  action    sent  cached    sent  cached    session   fresh\n");

  for (t = 1; t <= turns; t++) {
    cupel_items *items = NULL;
    size_t n = 0, n_f, n_s, stable_items = 0;
    static uint64_t groups[MAX_CONV];
    int64_t sent_f, sent_s, cached_f, cached_s = 0;
    double rel_f, rel_s;
    cupel_session_action action;

    /* The list a host hands over: the history to this turn, then the turn's
     * retrieved documents. */
    must(cupel_items_new(&items), "cupel_items_new");
    for (i = 0; i < n_conv; i++) {
      const conv_row *r = &conv[i];
      if (r->turn > t || (r->is_volatile && r->turn != t)) continue;
      must(cupel_items_push(items, r->tokens, 0.5, r->kind), "cupel_items_push");
      must(cupel_items_set_content(items, n, r->content), "content");
      must(cupel_items_set_timestamp(items, n, (int64_t)i * 1000), "timestamp");
      must(cupel_items_set_key(items, n, r->key), "cupel_items_set_key");
      if (r->is_volatile) must(cupel_items_set_volatile(items, n, true), "cupel_items_set_volatile");
      if (r->pinned) must(cupel_items_set_pinned(items, n, true), "pinned");
      if (r->placeholder) {
        char note[64];
        snprintf(note, sizeof note, "[output cleared: %lld tokens]", (long long)r->tokens);
        must(cupel_items_add_variant(items, n, r->placeholder, 0.1, note), "cupel_items_add_variant");
      }
      groups[n] = r->group;
      row_of[n++] = i;
    }
    must(cupel_items_set_groups(items, 0, n, groups), "groups");

    must(cupel_pipeline_run(pipeline, items, budget, out, MAX_CONV, &n_f, rep_f), "cupel_pipeline_run");
    must(cupel_session_run(session, items, budget, out, MAX_CONV, &n_s, rep_s), "cupel_session_run");
    must(cupel_session_last_action(session, &action), "cupel_session_last_action");
    must(cupel_session_stable_prefix(session, &stable_items, &cached_s), "cupel_session_stable_prefix");
    n_f = sent_of(rep_f, row_of, now_f, &sent_f, &rel_f);
    n_s = sent_of(rep_s, row_of, now_s, &sent_s, &rel_s);
    cached_f = common_prefix(prev_f, n_prev_f, now_f, n_f);
    memcpy(prev_f, now_f, n_f * sizeof *now_f);
    n_prev_f = n_f;

    cost_s += turn_cost(sent_s, cached_s);
    cost_f += turn_cost(sent_f, cached_f);
    sent_s_all += sent_s, cached_s_all += cached_s;
    sent_f_all += sent_f, cached_f_all += cached_f;
    if (action == CUPEL_SESSION_COMPACT) compactions++;
    if (rel_f > 0) relevance_sum += rel_s / rel_f, relevance_turns++;
    printf("%4d  %-7s %6lld  %6lld  %6lld  %6lld   %8.1f  %6.1f\n", t, actions[action], (long long)sent_s,
           (long long)cached_s, (long long)sent_f, (long long)cached_f, cost_s / 1000, cost_f / 1000);
    if (csv)
      fprintf(csv, "%d,%s,%lld,%lld,%lld,%lld,%.1f,%.1f,%.1f,%.1f,%.4f,%.4f\n", t, actions[action],
              (long long)sent_s, (long long)cached_s, (long long)sent_f, (long long)cached_f,
              turn_cost(sent_s, cached_s), turn_cost(sent_f, cached_f), cost_s, cost_f, rel_s, rel_f);
    cupel_items_free(items);
  }

  printf("Over %d turns: cost, session / fresh = %.2f (%.1fk against %.1fk)\n"
         "  cached-prefix ratio (cached tokens / tokens sent): session %.2f, fresh %.2f\n"
         "  relevance kept (non-pinned scores, session / fresh, turn average): %.2f\n"
         "  compactions: %d of %d turns\n",
         turns, cost_s / cost_f, cost_s / 1000, cost_f / 1000, (double)cached_s_all / (double)sent_s_all,
         (double)cached_f_all / (double)sent_f_all, relevance_turns ? relevance_sum / relevance_turns : 1.0,
         compactions, turns);
  must(cupel_session_breakpoints(session, bps, 4, &n_bps), "cupel_session_breakpoints");
  printf("Cache breakpoints for the last prompt (cupel_session_breakpoints), after\n"
         "items/tokens:");
  for (i = 0; i < n_bps; i++)
    printf("%s %zu/%lld %s", i ? ";" : "", bps[i].items, (long long)bps[i].tokens,
           bps[i].mark >= 0 && bps[i].mark < 4 ? marks[bps[i].mark] : "?");
  printf("\n");
  if (csv) {
    fclose(csv);
    printf("(per-turn figures written to %s)\n", csv_out);
  }

  cupel_report_free(rep_s);
  cupel_report_free(rep_f);
  cupel_budget_free(budget);
  cupel_session_free(session);
  cupel_pipeline_free(pipeline);
  cupel_placer_free(chrono);
  cupel_slicer_free(greedy);
  cupel_scorer_free(blend);
  cupel_scorer_free(kind);
  cupel_scorer_free(recency);
}

static void print_row(const char *name, const size_t *idx, size_t n, int64_t tokens) {
  double score = 0;
  size_t i, kinds[6] = {0}, whole, split;
  const char *names[6] = {"SystemPrompt", "Message", "Document", "ToolCall", "ToolOutput", "Memory"};
  for (i = 0; i < n; i++) {
    size_t k;
    score += rows[idx[i]].score;
    for (k = 0; k < 6; k++)
      if (strcmp(rows[idx[i]].kind, names[k]) == 0) kinds[k]++;
  }
  count_pairs(idx, n, &whole, &split);
  printf("%-32s %6zu %7lld %9.2f   %3zu %3zu %3zu %4zu %4zu %3zu   %5zu %5zu\n", name, n,
         (long long)tokens, score, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5],
         whole, split);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/data/rag_candidates.csv";
  const char *session = argc > 2 ? argv[2] : "examples/data/session";
  const char *costs_csv = argc > 3 && *argv[3] ? argv[3] : NULL;
  const char *conversation = argc > 4 ? argv[4] : "examples/data/conversation";
  cupel_items *items = NULL;
  cupel_budget *budget = NULL;
  cupel_report *report = NULL;
  cupel_slicer *greedy = NULL, *knapsack = NULL, *quota = NULL, *count = NULL, *cck = NULL;
  cupel_quota quotas[4] = {{"SystemPrompt", 5.0, 10.0},
                           {"Document", 0.0, 60.0},
                           {"ToolCall", 0.0, 25.0},
                           {"Memory", 2.0, 10.0}};
  /* A group counts as its first member's kind: a tool call with its output
   * is a ToolCall for the quotas and counts below. */
  cupel_count_quota counts[2] = {{"ToolCall", 2, 4}, {"Memory", 2, 3}};
  struct {
    const char *name;
    cupel_slicer **slicer;
  } runs[5];
  size_t *out, n, i, k, best_unselected = (size_t)-1;
  uint64_t *groups;
  int64_t eff_max, eff_target, min_budget;

  load(path);
  out = malloc(sizeof *out * (n_rows ? n_rows : 1));
  must(cupel_items_new(&items), "cupel_items_new");
  groups = malloc(sizeof *groups * (n_rows ? n_rows : 1));
  for (i = 0; i < n_rows; i++) {
    groups[i] = rows[i].group;
    must(cupel_items_push(items, rows[i].tokens, rows[i].score, rows[i].kind), "cupel_items_push");
    must(cupel_items_set_content(items, i, rows[i].title), "cupel_items_set_content");
    if (rows[i].has_timestamp)
      must(cupel_items_set_timestamp(items, i, rows[i].timestamp), "cupel_items_set_timestamp");
    must(cupel_items_set_pinned(items, i, rows[i].pinned), "cupel_items_set_pinned");
  }
  /* Each tool call and its output: one group (the whole column in one call). */
  must(cupel_items_set_groups(items, 0, n_rows, groups), "cupel_items_set_groups");

  /* An 8k context window: 1k kept for the answer, 4k the goal for context. */
  must(cupel_budget_new(8192, 4096, &budget), "cupel_budget_new");
  must(cupel_budget_set_output_reserve(budget, 1024), "cupel_budget_set_output_reserve");
  must(cupel_budget_effective(budget, 0, &eff_max, &eff_target), "cupel_budget_effective");

  must(cupel_slicer_new_greedy(&greedy), "greedy");
  must(cupel_slicer_new_knapsack(1, &knapsack), "knapsack");
  must(cupel_slicer_new_quota(greedy, quotas, 4, &quota), "quota");
  must(cupel_slicer_new_count_quota(greedy, counts, 2, CUPEL_SCARCITY_DEGRADE, &count), "count quota");
  must(cupel_slicer_new_count_constrained_knapsack(1, counts, 2, CUPEL_SCARCITY_DEGRADE, &cck), "cck");
  must(cupel_report_new(&report), "cupel_report_new");

  printf("libcupel %s: what goes into a language model's context window, and why.\n\n", cupel_version());
  run_from_text(session);
  {
    int64_t total = 0;
    for (i = 0; i < n_rows; i++) total += rows[i].tokens;
    printf("The sections below work on a larger retrieval result: %zu candidates given\n"
           "with their token counts (%s), %lld tokens in all, for the\n"
           "same kind of question. They must fit an 8192-token window that keeps 1024\n"
           "tokens for the answer (effective max %lld), and the goal is %lld tokens of\n"
           "context.\n\n",
           n_rows, path, (long long)total, (long long)eff_max, (long long)eff_target);
  }
  run_pipeline(items, budget, out);
  printf("3. THE SAME CANDIDATES THROUGH EACH SLICER ALONE\n"
         "The slicer is the stage that decides what fits. To compare the slicers and\n"
         "nothing else, each one below gets the retriever's own scores (not the blend\n"
         "of section 1), no deduplication and nothing pinned, and the same 4096-token\n"
         "goal. Scores in this section are the retriever's.\n");
  printf("QuotaSlice keeps each kind within a share of the goal (minimum-maximum):");
  for (i = 0; i < 4; i++)
    printf(" %s %g-%g%%", quotas[i].kind, quotas[i].require_percent, quotas[i].cap_percent);
  printf("\nThe count slicers keep each kind within a number of items (minimum-maximum):");
  for (i = 0; i < 2; i++)
    printf(" %s %u-%u", counts[i].kind, counts[i].require_count, counts[i].cap_count);
  printf("\n(a tool call and its output are one group, counted as a ToolCall;\n"
         "\"(1)\" means bucket size 1: the exact best total score that fits)\n");
  printf("Columns: items chosen, their tokens, their summed score, items chosen per kind\n"
         "(SystemPrompt, Message, Document, ToolCall, ToolOutput, Memory), then tool\n"
         "call/output pairs chosen whole and split.\n\n");
  printf("%-32s %6s %7s %9s   %3s %3s %3s %4s %4s %3s   %5s %5s\n", "slicer", "chosen", "tokens",
         "score", "sys", "msg", "doc", "call", "out", "mem", "whole", "split");
  runs[0].name = "GreedySlice";
  runs[0].slicer = &greedy;
  runs[1].name = "KnapsackSlice (bucket 1, exact)";
  runs[1].slicer = &knapsack;
  runs[2].name = "QuotaSlice over Greedy";
  runs[2].slicer = &quota;
  runs[3].name = "CountQuotaSlice over Greedy";
  runs[3].slicer = &count;
  runs[4].name = "CountConstrainedKnapsack (1)";
  runs[4].slicer = &cck;
  for (k = 0; k < 5; k++) {
    must(cupel_slice(*runs[k].slicer, items, budget, 0, out, n_rows, &n, report), runs[k].name);
    print_row(runs[k].name, out, n, cupel_report_selected_tokens(report));
    if (cupel_report_cap_excluded_count(report) > 0)
      printf("%-32s   (%zu items dropped by count caps)\n", "",
             cupel_report_cap_excluded_count(report));
  }

  /* The same slicers with the groups taken away: calls and outputs are
   * then separate candidates, and pairs get split. */
  {
    uint64_t *none = calloc(n_rows ? n_rows : 1, sizeof *none);
    must(cupel_items_set_groups(items, 0, n_rows, none), "cupel_items_set_groups");
    printf("\nWhy groups matter: the same slicers with the pairs NOT grouped. They then\n"
           "split pairs (the last column), and a model provider rejects a conversation\n"
           "with a tool call but not its output:\n");
    for (k = 0; k < 5; k++) {
      must(cupel_slice(*runs[k].slicer, items, budget, 0, out, n_rows, &n, report), runs[k].name);
      print_row(runs[k].name, out, n, cupel_report_selected_tokens(report));
    }
    must(cupel_items_set_groups(items, 0, n_rows, groups), "cupel_items_set_groups");
    free(none);
  }

  /* Budget simulation: what would 512 more tokens add? */
  {
    cupel_budget *bigger = NULL;
    must(cupel_budget_new(8192, 4096 + 512, &bigger), "cupel_budget_new");
    must(cupel_budget_set_output_reserve(bigger, 1024), "output reserve");
    must(cupel_marginal_items(greedy, items, bigger, 0, 512, out, n_rows, &n), "marginal");
    printf("\n4. BUDGET QUESTIONS (GreedySlice, the retriever's scores)\n"
           "What would 512 more tokens buy? A goal of 4608 instead of 4096 adds %zu items:", n);
    for (i = 0; i < n; i++) printf(" %zu", out[i]);
    printf("\n");
    cupel_budget_free(bigger);
  }

  /* Budget simulation: the best-scored item GreedySlice left out, and the
   * smallest budget at which it would be chosen. */
  must(cupel_slice(greedy, items, budget, 0, out, n_rows, &n, NULL), "greedy");
  for (i = 0; i < n_rows; i++) {
    int chosen = 0;
    for (k = 0; k < n; k++) chosen |= out[k] == i;
    if (!chosen && (best_unselected == (size_t)-1 || rows[i].score > rows[best_unselected].score))
      best_unselected = i;
  }
  if (best_unselected != (size_t)-1) {
    must(cupel_find_min_budget(greedy, items, 0, best_unselected, 100000, &min_budget), "find min");
    printf("How big a budget would the best-scored candidate left out need? Item %zu\n"
           "(%s: %lld tokens, score %.2f) is chosen once the goal is %lld tokens:\n"
           "it is large, and GreedySlice spends the budget on items with a better score\n"
           "per token first.\n",
           best_unselected, rows[best_unselected].title, (long long)rows[best_unselected].tokens,
           rows[best_unselected].score, (long long)min_budget);
  }

  /* StreamSlice: the same candidates arriving one by one, each tool
   * output right after its call (a stream's group arrives in one run). */
  {
    cupel_stream *stream = NULL;
    bool full = false;
    size_t pushed = 0, whole, split;
    size_t *arrival = malloc(sizeof *arrival * (n_rows ? n_rows : 1)); /* push order -> row */
    int64_t used = 0;
    must(cupel_stream_new(4096, 32, &stream), "cupel_stream_new");
    for (i = 0; i < n_rows && !full; i++) {
      if (rows[i].group && strcmp(rows[i].kind, "ToolOutput") == 0) continue; /* came with its call */
      for (k = i; k < n_rows && !full; k++) {
        if (k != i && (rows[i].group == 0 || rows[k].group != rows[i].group)) continue;
        must(cupel_stream_push_grouped(stream, rows[k].tokens, rows[k].score, rows[k].group, &full),
             "push");
        arrival[pushed++] = k;
        if (rows[i].group == 0) break;
      }
    }
    must(cupel_stream_finish(stream, out, n_rows, &n), "finish");
    for (i = 0; i < n; i++) {
      out[i] = arrival[out[i]];
      used += rows[out[i]].tokens;
    }
    count_pairs(out, n, &whole, &split);
    printf("\n5. ITEMS ARRIVING ONE AT A TIME (StreamSlice)\n"
           "When candidates arrive one by one (a search that streams results), StreamSlice\n"
           "decides them 32 at a time and says when the 4096-token goal is spent, so the\n"
           "producer can stop early. It took %zu of %zu arrivals, %lld tokens%s;\n"
           "tool call/output pairs: %zu whole, %zu split\n",
           n, pushed, (long long)used, full ? "; then the budget was spent" : "", whole, split);
    cupel_stream_free(stream);
    free(arrival);
  }

  run_conversation(conversation, costs_csv);

  cupel_report_free(report);
  cupel_slicer_free(greedy);
  cupel_slicer_free(knapsack);
  cupel_slicer_free(quota);
  cupel_slicer_free(count);
  cupel_slicer_free(cck);
  cupel_budget_free(budget);
  cupel_items_free(items);
  free(out);
  free(groups);
  return 0;
}
