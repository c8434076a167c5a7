/* The binding contract (tests/contract/contract.txt) run through the C ABI:
 * every row whose `where` names c. Usage: contract [contract.txt] (default:
 * $CUPEL_CONTRACT).
 * Prints "contract c: N passed, M failed" and exits non-zero on a failure. */
#include "cupel.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char id[64], op[64], arg[64], value[96], expect[64], where[64];
} row_t;

typedef struct {
  cupel_items *items;
  cupel_budget *budget;
  cupel_slicer *greedy;
  cupel_scorer *recency, *priority, *kind;
  cupel_placer *chronological;
  cupel_pipeline *pipeline;
  cupel_stream *stream;
  cupel_tokenizer *tokenizer;
} fixture_t;

static const char *SENTENCE = "Hello, world! This is libcupel counting tokens.";

/* What a call did: its status and, for calls that return something, the
 * result as text (e.g. "[2]", "50", "BudgetExceeded"). */
typedef struct {
  cupel_status status;
  char result[256];
  char message[1024];
  int check_failed; /* an ok call whose op-specific check failed */
  char check_what[256];
} outcome_t;

static int fixture_new(fixture_t *f) {
  const int64_t tokens[] = {100, 200, 50};
  const double scores[] = {0.9, 0.5, 0.1};
  const char *kinds[] = {"Message", "Document", "ToolOutput"};
  const char *contents[] = {"alpha", "beta", "gamma"};
  size_t i;
  memset(f, 0, sizeof *f);
  if (cupel_items_new(&f->items) || cupel_items_push_many(f->items, 3, tokens, scores, kinds)) return 0;
  for (i = 0; i < 3; i++) {
    if (cupel_items_set_content(f->items, i, contents[i]) ||
        cupel_items_set_timestamp(f->items, i, 1000 * (int64_t)(i + 1)))
      return 0;
  }
  if (cupel_budget_new(300, 250, &f->budget) || cupel_slicer_new_greedy(&f->greedy) ||
      cupel_scorer_new_recency(&f->recency) || cupel_scorer_new_priority(&f->priority) ||
      cupel_scorer_new_kind(NULL, 0, &f->kind) || cupel_placer_new_chronological(&f->chronological) ||
      cupel_pipeline_new(f->recency, f->greedy, f->chronological, &f->pipeline) ||
      cupel_stream_new(100, 0, &f->stream) || cupel_tokenizer_new("o200k_base", &f->tokenizer))
    return 0;
  return 1;
}

static void fixture_free(fixture_t *f) {
  cupel_tokenizer_free(f->tokenizer);
  cupel_stream_free(f->stream);
  cupel_pipeline_free(f->pipeline);
  cupel_placer_free(f->chronological);
  cupel_scorer_free(f->kind);
  cupel_scorer_free(f->priority);
  cupel_scorer_free(f->recency);
  cupel_slicer_free(f->greedy);
  cupel_budget_free(f->budget);
  cupel_items_free(f->items);
}

/* ---- values ------------------------------------------------------------------ */

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* The row's value when `arg` is the argument being replaced. */
static int replaces(const row_t *r, const char *arg) { return is(r->arg, arg); }

static int64_t i64_of(const row_t *r, const char *arg, int64_t dflt) {
  if (!replaces(r, arg)) return dflt;
  if (is(r->value, "end")) return 3;
  if (is(r->value, "head")) return CUPEL_KEEP_HEAD;
  if (is(r->value, "tail")) return CUPEL_KEEP_TAIL;
  if (is(r->value, "both_ends")) return CUPEL_KEEP_BOTH_ENDS;
  return strtoll(r->value, NULL, 10);
}

static uint64_t u64_of(const row_t *r, const char *arg, uint64_t dflt) {
  if (!replaces(r, arg)) return dflt;
  return strtoull(r->value, NULL, 10);
}

static size_t index_of(const row_t *r, const char *arg, size_t dflt) {
  if (!replaces(r, arg)) return dflt;
  if (is(r->value, "end")) return 3;
  return (size_t)strtoull(r->value, NULL, 10);
}

static double f64_of(const row_t *r, const char *arg, double dflt) {
  if (!replaces(r, arg)) return dflt;
  return strtod(r->value, NULL); /* "nan", "inf", "-inf" included */
}

static int bool_of(const row_t *r, const char *arg, int dflt) {
  if (!replaces(r, arg)) return dflt;
  return is(r->value, "true");
}

/* A string argument: NULL for `null`, FF FE for `bad-utf8`, else the quoted
 * text with \xHH escapes decoded into `buf`. */
static const char *str_of(const row_t *r, const char *arg, const char *dflt, char *buf, size_t cap) {
  const char *v = r->value;
  size_t n = 0;
  if (!replaces(r, arg)) return dflt;
  if (is(v, "null")) return NULL;
  if (is(v, "bad-utf8")) return "\xff\xfe";
  if (*v != '"') {
    fprintf(stderr, "row %s: %s is not a string value\n", r->id, v);
    exit(2);
  }
  for (v++; *v && *v != '"' && n + 1 < cap; v++) {
    if (v[0] == '\\' && v[1] == 'x' && isxdigit((unsigned char)v[2]) && isxdigit((unsigned char)v[3])) {
      char hex[3] = {v[2], v[3], 0};
      buf[n++] = (char)strtol(hex, NULL, 16);
      v += 3;
    } else {
      buf[n++] = *v;
    }
  }
  buf[n] = 0;
  return buf;
}

/* A handle argument: NULL for `null`, else the fixture's. */
#define HANDLE(r, arg, h) (replaces(r, arg) && is((r)->value, "null") ? NULL : (h))

/* ---- ops ---------------------------------------------------------------------- */

static void write_indices(outcome_t *o, const size_t *ix, size_t n) {
  size_t i, at = 0;
  at += (size_t)snprintf(o->result + at, sizeof o->result - at, "[");
  for (i = 0; i < n && at < sizeof o->result; i++)
    at += (size_t)snprintf(o->result + at, sizeof o->result - at, i ? ", %zu" : "%zu", ix[i]);
  if (at < sizeof o->result) snprintf(o->result + at, sizeof o->result - at, "]");
}

static void fail_check(outcome_t *o, const char *what) {
  o->check_failed = 1;
  snprintf(o->check_what, sizeof o->check_what, "%s", what);
}

/* items.get: reads item `index` back and compares it with the fixture. */
static cupel_status get_item(const cupel_items *items, size_t index, outcome_t *o) {
  static const int64_t tokens[] = {100, 200, 50};
  static const double scores[] = {0.9, 0.5, 0.1};
  static const char *kinds[] = {"Message", "Document", "ToolOutput"};
  static const char *contents[] = {"alpha", "beta", "gamma"};
  int64_t t = 0, ts = 0;
  double s = 0;
  const char *kind = NULL, *content = NULL;
  size_t kind_len = 0, content_len = 0;
  bool has_ts = false;
  cupel_status st;
  if ((st = cupel_items_tokens(items, index, &t)) != CUPEL_OK) return st;
  if ((st = cupel_items_score(items, index, &s)) != CUPEL_OK) return st;
  if ((st = cupel_items_kind(items, index, &kind, &kind_len)) != CUPEL_OK) return st;
  if ((st = cupel_items_content(items, index, &content, &content_len)) != CUPEL_OK) return st;
  if ((st = cupel_items_timestamp(items, index, &has_ts, &ts)) != CUPEL_OK) return st;
  if (index < 3) {
    if (t != tokens[index]) fail_check(o, "tokens");
    if (s != scores[index]) fail_check(o, "score");
    if (kind_len != strlen(kinds[index]) || memcmp(kind, kinds[index], kind_len)) fail_check(o, "kind");
    if (!content || content_len != strlen(contents[index]) || memcmp(content, contents[index], content_len))
      fail_check(o, "content");
    if (!has_ts || ts != 1000 * (int64_t)(index + 1)) fail_check(o, "timestamp");
  }
  return CUPEL_OK;
}


/* ---- policies (issue 29) ------------------------------------------------------ */

static const char *POLICY =
    "{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"slicerType\":\"greedy\",\"placerType\":\"chronological\"}";
static const char *BUDGET = "{\"maxTokens\":300,\"targetTokens\":250}";

/* A JSON argument: the named JSON values of the table, or a string value. */
static const char *json_of(const row_t *r, const char *arg, const char *dflt, char *buf, size_t cap) {
  static const char *named[][2] = {
      {"policy-null", "null"},
      {"policy-malformed", "{\"scorers\":"},
      {"policy-bad-weight", "{\"scorers\":[{\"type\":\"recency\",\"weight\":-1}]}"},
      {"policy-bad-type", "{\"scorers\":[{\"type\":\"nope\",\"weight\":1}]}"},
      {"budget-bad", "{\"maxTokens\":100,\"targetTokens\":250}"},
      {"budget-missing", "{\"targetTokens\":1}"},
  };
  size_t k;
  if (!replaces(r, arg)) return dflt;
  for (k = 0; k < sizeof named / sizeof *named; k++)
    if (is(r->value, named[k][0])) return named[k][1];
  return str_of(r, arg, dflt, buf, cap);
}

/* A trace callback that counts events (user_data: a size_t). */
static void count_event(void *user_data, const cupel_trace_event *event) {
  (void)event;
  (*(size_t *)user_data)++;
}

static cupel_status call(const row_t *r, fixture_t *f, outcome_t *o) {
  char b1[96], b2[96], b3[96];
  const char *op = r->op;
  size_t out[16], n = 0;
  if (is(op, "items.push")) {
    return cupel_items_push(HANDLE(r, "items", f->items), i64_of(r, "tokens", 10), f64_of(r, "score", 0.5),
                            str_of(r, "kind", "Message", b1, sizeof b1));
  }
  if (is(op, "items.push_many")) {
    int64_t tokens[12];
    double scores[12];
    const char *kinds[12];
    int i;
    for (i = 0; i < 12; i++) {
      tokens[i] = 7;
      scores[i] = 0.5;
      kinds[i] = "Message";
    }
    tokens[11] = i64_of(r, "tokens", 7);
    scores[11] = f64_of(r, "score", 0.5);
    kinds[11] = str_of(r, "kind", "Message", b1, sizeof b1);
    return cupel_items_push_many(HANDLE(r, "items", f->items), 12, tokens, scores, kinds);
  }
  if (is(op, "items.set_content"))
    return cupel_items_set_content(f->items, index_of(r, "index", 0), str_of(r, "content", "hello", b1, sizeof b1));
  if (is(op, "items.set_timestamp"))
    return cupel_items_set_timestamp(f->items, index_of(r, "index", 0), i64_of(r, "unix_millis", 5));
  if (is(op, "items.set_priority"))
    return cupel_items_set_priority(f->items, index_of(r, "index", 0), i64_of(r, "priority", 1));
  if (is(op, "items.set_pinned"))
    return cupel_items_set_pinned(f->items, index_of(r, "index", 0), bool_of(r, "pinned", 1));
  if (is(op, "items.set_group"))
    return cupel_items_set_group(f->items, index_of(r, "index", 0), u64_of(r, "group", 7));
  if (is(op, "items.add_tag"))
    return cupel_items_add_tag(f->items, index_of(r, "index", 0), str_of(r, "tag", "t", b1, sizeof b1));
  if (is(op, "items.set_metadata"))
    return cupel_items_set_metadata(f->items, index_of(r, "index", 0), str_of(r, "key", "k", b1, sizeof b1),
                                    str_of(r, "value", "v", b2, sizeof b2));
  if (is(op, "items.get")) return get_item(HANDLE(r, "items", f->items), index_of(r, "index", 1), o);
  if (is(op, "budget.new")) {
    cupel_budget *b = NULL;
    cupel_status st = cupel_budget_new(i64_of(r, "max_tokens", 1000), i64_of(r, "target_tokens", 800), &b);
    cupel_budget_free(b);
    return st;
  }
  if (is(op, "budget.set_output_reserve"))
    return cupel_budget_set_output_reserve(HANDLE(r, "budget", f->budget), i64_of(r, "output_reserve", 10));
  if (is(op, "budget.set_safety_margin"))
    return cupel_budget_set_safety_margin(HANDLE(r, "budget", f->budget), f64_of(r, "percent", 5));
  if (is(op, "budget.reserve"))
    return cupel_budget_reserve(HANDLE(r, "budget", f->budget), str_of(r, "kind", "Message", b1, sizeof b1),
                                i64_of(r, "tokens", 10));
  if (is(op, "slicer.knapsack")) {
    cupel_slicer *s = NULL;
    cupel_status st = cupel_slicer_new_knapsack(i64_of(r, "bucket_size", 100), &s);
    cupel_slicer_free(s);
    return st;
  }
  if (is(op, "slicer.quota")) {
    cupel_slicer *s = NULL;
    cupel_quota q;
    cupel_status st;
    q.kind = str_of(r, "kind", "Message", b1, sizeof b1);
    q.require_percent = f64_of(r, "require_percent", 10);
    q.cap_percent = f64_of(r, "cap_percent", 50);
    st = cupel_slicer_new_quota(HANDLE(r, "inner", f->greedy), &q, 1, &s);
    cupel_slicer_free(s);
    return st;
  }
  if (is(op, "slicer.count_quota")) {
    cupel_slicer *s = NULL;
    cupel_count_quota q;
    cupel_status st;
    q.kind = str_of(r, "kind", "Message", b1, sizeof b1);
    q.require_count = (uint32_t)i64_of(r, "require_count", 1);
    q.cap_count = (uint32_t)i64_of(r, "cap_count", 2);
    st = cupel_slicer_new_count_quota(HANDLE(r, "inner", f->greedy), &q, 1, CUPEL_SCARCITY_DEGRADE, &s);
    cupel_slicer_free(s);
    return st;
  }
  if (is(op, "scorer.kind")) {
    cupel_scorer *s = NULL;
    cupel_kind_weight w;
    cupel_status st;
    w.kind = str_of(r, "kind", "Message", b1, sizeof b1);
    w.weight = f64_of(r, "weight", 1);
    st = cupel_scorer_new_kind(&w, 1, &s);
    cupel_scorer_free(s);
    return st;
  }
  if (is(op, "scorer.composite")) {
    cupel_scorer *s = NULL;
    const cupel_scorer *kids[3];
    double w[3] = {1, 1, 1};
    cupel_status st;
    kids[0] = f->recency;
    kids[1] = f->priority;
    kids[2] = HANDLE(r, "children", f->kind);
    w[2] = f64_of(r, "weights", 1);
    st = cupel_scorer_new_composite(kids, w, 3, &s);
    cupel_scorer_free(s);
    return st;
  }
  if (is(op, "scorer.scaled")) {
    cupel_scorer *s = NULL;
    cupel_status st = cupel_scorer_new_scaled(HANDLE(r, "inner", f->recency), &s);
    cupel_scorer_free(s);
    return st;
  }
  if (is(op, "scorer.metadata_key")) {
    cupel_scorer *s = NULL;
    cupel_status st = cupel_scorer_new_metadata_key(str_of(r, "key", "k", b1, sizeof b1),
                                                    str_of(r, "value", "v", b2, sizeof b2),
                                                    f64_of(r, "boost", 2), &s);
    cupel_scorer_free(s);
    return st;
  }
  if (is(op, "placer.place")) {
    size_t ix[3] = {0, 1, 2};
    double sc[3] = {0.5, 0.5, 0.5};
    cupel_status st;
    ix[2] = index_of(r, "indices", 2);
    sc[2] = f64_of(r, "scores", 0.5);
    st = cupel_placer_place(HANDLE(r, "placer", f->chronological), HANDLE(r, "items", f->items), ix, sc, 3, out,
                            16, &n);
    if (st == CUPEL_OK) write_indices(o, out, n);
    return st;
  }
  if (is(op, "pipeline.new")) {
    cupel_pipeline *p = NULL;
    cupel_status st = cupel_pipeline_new(HANDLE(r, "scorer", f->recency), HANDLE(r, "slicer", f->greedy),
                                         HANDLE(r, "placer", f->chronological), &p);
    cupel_pipeline_free(p);
    return st;
  }
  if (is(op, "pipeline.run")) {
    cupel_status st = cupel_pipeline_run(HANDLE(r, "pipeline", f->pipeline), HANDLE(r, "items", f->items),
                                         HANDLE(r, "budget", f->budget), out, 16, &n, NULL);
    if (st == CUPEL_OK) write_indices(o, out, n);
    return st;
  }
  if (is(op, "slice")) {
    cupel_status st = cupel_slice(HANDLE(r, "slicer", f->greedy), HANDLE(r, "items", f->items),
                                  HANDLE(r, "budget", f->budget), i64_of(r, "pinned_tokens", 0), out, 16, &n, NULL);
    if (st == CUPEL_OK) write_indices(o, out, n);
    return st;
  }
  if (is(op, "marginal_items")) {
    cupel_status st =
        cupel_marginal_items(HANDLE(r, "slicer", f->greedy), HANDLE(r, "items", f->items),
                             HANDLE(r, "budget", f->budget), i64_of(r, "pinned_tokens", 0),
                             i64_of(r, "slack_tokens", 150), out, 16, &n);
    if (st == CUPEL_OK) write_indices(o, out, n);
    return st;
  }
  if (is(op, "find_min_budget")) {
    int64_t tokens = 0;
    cupel_status st = cupel_find_min_budget(HANDLE(r, "slicer", f->greedy), HANDLE(r, "items", f->items),
                                            i64_of(r, "pinned_tokens", 0), index_of(r, "target_index", 2),
                                            i64_of(r, "search_ceiling", 1000), &tokens);
    if (st == CUPEL_OK) {
      if (tokens < 0)
        snprintf(o->result, sizeof o->result, "none");
      else
        snprintf(o->result, sizeof o->result, "%lld", (long long)tokens);
    }
    return st;
  }
  if (is(op, "stream.push")) {
    bool full = false;
    return cupel_stream_push(HANDLE(r, "stream", f->stream), i64_of(r, "tokens", 10), f64_of(r, "score", 0.5),
                             &full);
  }
  if (is(op, "tokenizer.new")) {
    cupel_tokenizer *t = NULL;
    cupel_status st = cupel_tokenizer_new(str_of(r, "name", "o200k_base", b1, sizeof b1), &t);
    cupel_tokenizer_free(t);
    return st;
  }
  if (is(op, "tokenizer.count")) {
    int64_t n = -1;
    const char *text = str_of(r, "text", SENTENCE, b1, sizeof b1);
    cupel_status st = cupel_tokenizer_count(HANDLE(r, "tokenizer", f->tokenizer), text,
                                            text ? strlen(text) : (replaces(r, "text") ? 5 : 0), &n);
    if (st == CUPEL_OK) snprintf(o->result, sizeof o->result, "%lld", (long long)n);
    return st;
  }
  if (is(op, "tokenizer.count_many")) {
    const char *texts[2];
    size_t lens[2];
    int64_t counts[2] = {-1, -1};
    cupel_status st;
    texts[0] = SENTENCE;
    texts[1] = str_of(r, "texts", "hello world", b1, sizeof b1);
    lens[0] = strlen(SENTENCE);
    lens[1] = texts[1] ? strlen(texts[1]) : 5; /* NULL with a length */
    st = cupel_tokenizer_count_many(HANDLE(r, "tokenizer", f->tokenizer), 2, texts, lens, counts);
    if (st == CUPEL_OK) snprintf(o->result, sizeof o->result, "[%lld,%lld]", (long long)counts[0], (long long)counts[1]);
    return st;
  }
  if (is(op, "tokenizer.truncate")) {
    size_t head = 0, tail = 0;
    int64_t n = 0;
    const char *text = str_of(r, "text", SENTENCE, b1, sizeof b1);
    cupel_status st = cupel_tokenizer_truncate(HANDLE(r, "tokenizer", f->tokenizer), text, text ? strlen(text) : 0,
                                               i64_of(r, "max_tokens", 4), (int)i64_of(r, "keep", CUPEL_KEEP_HEAD),
                                               &head, &tail, &n);
    if (st == CUPEL_OK) snprintf(o->result, sizeof o->result, "[%zu,%zu,%lld]", head, tail, (long long)n);
    return st;
  }
  if (is(op, "items.push_text")) {
    const char *text = str_of(r, "text", "hello world", b1, sizeof b1);
    cupel_status st = cupel_items_push_text(HANDLE(r, "items", f->items), HANDLE(r, "tokenizer", f->tokenizer), text,
                                            text ? strlen(text) : 0, f64_of(r, "score", 0.5),
                                            str_of(r, "kind", "Message", b2, sizeof b2));
    if (st == CUPEL_OK) {
      int64_t t = -1;
      const char *c = NULL;
      size_t len = 0;
      if (cupel_items_len(f->items) != 4 || cupel_items_tokens(f->items, 3, &t) || t != 2 ||
          cupel_items_content(f->items, 3, &c, &len) || len != 11 || memcmp(c, "hello world", 11))
        fail_check(o, "the pushed item");
    }
    return st;
  }
  if (is(op, "items.add_variant")) {
    size_t index = (size_t)i64_of(r, "index", 0);
    int64_t tokens = i64_of(r, "tokens", 5);
    double value = f64_of(r, "value", 0.5);
    const char *content = str_of(r, "content", "[cleared]", b1, sizeof b1);
    cupel_status st = cupel_items_add_variant(HANDLE(r, "items", f->items), index, tokens, value, content);
    if (st == CUPEL_OK) {
      size_t count = 0, len = 0;
      int64_t t = -1;
      double v = -1;
      const char *c = NULL;
      if (cupel_items_variant_count(f->items, index, &count) || count != 1 ||
          cupel_items_variant(f->items, index, 1, &t, &v, &c, &len) || t != tokens || v != value ||
          (content ? (len != strlen(content) || memcmp(c, content, len)) : (c != NULL || len != 0)))
        fail_check(o, "the variant read back");
    }
    return st;
  }
  if (is(op, "items.set_truncatable")) {
    size_t index = (size_t)i64_of(r, "index", 1);
    int keep = (int)i64_of(r, "keep", CUPEL_KEEP_HEAD);
    int64_t min = i64_of(r, "min_tokens", 1);
    cupel_status st = cupel_items_set_truncatable(HANDLE(r, "items", f->items), index, keep, min);
    if (st == CUPEL_OK) {
      bool is_t = false;
      int k = -1;
      int64_t m = -1;
      if (cupel_items_truncatable(f->items, index, &is_t, &k, &m) || !is_t || k != keep || m != min)
        fail_check(o, "the truncation read back");
    }
    return st;
  }
  if (is(op, "pipeline.set_tokenizer")) {
    return cupel_pipeline_set_tokenizer(HANDLE(r, "pipeline", f->pipeline), HANDLE(r, "tokenizer", f->tokenizer));
  }
  if (is(op, "pipeline.run_cut")) {
    cupel_report *report = NULL;
    cupel_status st;
    if (cupel_items_set_truncatable(f->items, 1, CUPEL_KEEP_HEAD, 1) ||
        cupel_pipeline_set_tokenizer(f->pipeline, HANDLE(r, "tokenizer", f->tokenizer)) || cupel_report_new(&report)) {
      fprintf(stderr, "row %s: the run_cut setup failed\n", r->id);
      exit(2);
    }
    st = cupel_pipeline_run(f->pipeline, f->items, f->budget, out, 16, &n, report);
    if (st == CUPEL_OK) snprintf(o->result, sizeof o->result, "%zu", cupel_report_included_count(report));
    cupel_report_free(report);
    return st;
  }
  if (is(op, "items.set_key")) {
    size_t index = index_of(r, "index", 0);
    uint64_t key = u64_of(r, "key", 7);
    cupel_status st = cupel_items_set_key(HANDLE(r, "items", f->items), index, key);
    if (st == CUPEL_OK) {
      uint64_t got = 1;
      if (cupel_items_key(f->items, index, &got) || got != key) fail_check(o, "the key read back");
    }
    return st;
  }
  if (is(op, "items.set_volatile")) {
    size_t index = index_of(r, "index", 0);
    int v = bool_of(r, "is_volatile", 1);
    cupel_status st = cupel_items_set_volatile(HANDLE(r, "items", f->items), index, v != 0);
    if (st == CUPEL_OK) {
      bool got = !v;
      if (cupel_items_volatile(f->items, index, &got) || got != (v != 0)) fail_check(o, "the flag read back");
    }
    return st;
  }
  if (is(op, "session.new")) {
    cupel_session *s = NULL;
    cupel_status st = cupel_session_new(HANDLE(r, "pipeline", f->pipeline), &s);
    cupel_session_free(s);
    return st;
  }
  if (is(op, "session.set_slack")) {
    cupel_session *s = NULL;
    double fraction = f64_of(r, "fraction", 0.3), got = -1;
    cupel_status st;
    if (cupel_session_new(f->pipeline, &s)) exit(2);
    st = cupel_session_set_slack(HANDLE(r, "session", s), fraction);
    if (st == CUPEL_OK && (cupel_session_slack(s, &got) || got != fraction)) fail_check(o, "the slack read back");
    if (st != CUPEL_OK && (cupel_session_slack(s, &got) || got != 0.2)) fail_check(o, "the slack unchanged");
    cupel_session_free(s);
    return st;
  }
  if (is(op, "session.run") || is(op, "session.run_keyed")) {
    cupel_session *s = NULL;
    cupel_status st;
    if (cupel_session_new(f->pipeline, &s)) exit(2);
    if (replaces(r, "pipeline") && is(r->value, "closed")) {
      cupel_pipeline_free(f->pipeline);
      f->pipeline = NULL;
    }
    if (is(op, "session.run_keyed") &&
        (cupel_items_set_key(f->items, 0, 1) || cupel_items_set_key(f->items, 1, 2) ||
         cupel_items_set_key(f->items, 2, u64_of(r, "key", 3))))
      exit(2);
    st = cupel_session_run(HANDLE(r, "session", s), HANDLE(r, "items", f->items), HANDLE(r, "budget", f->budget), out,
                           16, &n, NULL);
    if (st == CUPEL_OK) snprintf(o->result, sizeof o->result, "%zu", n);
    cupel_session_free(s);
    return st;
  }
  if (is(op, "session.run_twice")) {
    cupel_session *s = NULL;
    cupel_session_action action = CUPEL_SESSION_FIRST;
    cupel_breakpoint bp[4];
    size_t items = 0, nb = 0;
    int64_t tokens = 0;
    cupel_status st;
    if (cupel_session_new(f->pipeline, &s)) exit(2);
    st = cupel_session_run(s, f->items, f->budget, out, 16, &n, NULL);
    if (st == CUPEL_OK) {
      if (cupel_items_set_key(f->items, 0, 5) || cupel_items_set_key(f->items, 1, 5)) exit(2);
      if (cupel_session_run(s, f->items, f->budget, out, 16, &n, NULL) != CUPEL_ERROR_INVALID_ARGUMENT)
        fail_check(o, "the run with duplicate keys failed");
      if (cupel_items_set_key(f->items, 0, 0) || cupel_items_set_key(f->items, 1, 0)) exit(2);
      st = cupel_session_run(s, f->items, f->budget, out, 16, &n, NULL);
    }
    if (st == CUPEL_OK) {
      if (cupel_session_stable_prefix(s, &items, &tokens) || cupel_session_last_action(s, &action) ||
          cupel_session_breakpoints(s, bp, 4, &nb))
        exit(2);
      snprintf(o->result, sizeof o->result, "[%zu,%lld]", items, (long long)tokens);
      if (action != CUPEL_SESSION_APPEND || nb == 0 || bp[nb - 1].items != items || bp[nb - 1].tokens != tokens)
        fail_check(o, "the action and breakpoints");
    }
    cupel_session_free(s);
    return st;
  }
  if (is(op, "pipeline.from_json")) {
    const char *json = json_of(r, "json", POLICY, b1, sizeof b1);
    cupel_pipeline *p = NULL;
    cupel_status st = cupel_pipeline_from_json(json, json ? strlen(json) : 0, &p);
    if (st == CUPEL_OK) {
      if (cupel_pipeline_run(p, f->items, f->budget, out, 16, &n, NULL)) exit(2);
      snprintf(o->result, sizeof o->result, "%zu", n);
    }
    cupel_pipeline_free(p);
    return st;
  }
  if (is(op, "pipeline.to_json")) {
    char text[4096], again[4096];
    size_t len = 0, len2 = 0;
    cupel_pipeline *p = NULL;
    cupel_status st = cupel_pipeline_to_json(HANDLE(r, "pipeline", f->pipeline), text, sizeof text, &len);
    if (st == CUPEL_OK) {
      if (cupel_pipeline_from_json(text, len, &p) || cupel_pipeline_to_json(p, again, sizeof again, &len2)) exit(2);
      if (len != len2 || memcmp(text, again, len)) fail_check(o, "the text written again");
    }
    cupel_pipeline_free(p);
    return st;
  }
  if (is(op, "budget.from_json")) {
    const char *json = json_of(r, "json", BUDGET, b1, sizeof b1);
    cupel_budget *b = NULL;
    cupel_status st = cupel_budget_from_json(json, json ? strlen(json) : 0, &b);
    if (st == CUPEL_OK) {
      if (cupel_pipeline_run(f->pipeline, f->items, b, out, 16, &n, NULL)) exit(2);
      snprintf(o->result, sizeof o->result, "%zu", n);
    }
    cupel_budget_free(b);
    return st;
  }
  if (is(op, "budget.to_json")) {
    char text[1024], again[1024];
    size_t len = 0, len2 = 0;
    cupel_budget *b = NULL;
    cupel_status st = cupel_budget_to_json(HANDLE(r, "budget", f->budget), text, sizeof text, &len);
    if (st == CUPEL_OK) {
      if (cupel_budget_from_json(text, len, &b) || cupel_budget_to_json(b, again, sizeof again, &len2)) exit(2);
      if (len != len2 || memcmp(text, again, len)) fail_check(o, "the text written again");
    }
    cupel_budget_free(b);
    return st;
  }
  if (is(op, "pipeline.preset")) {
    cupel_pipeline *p = NULL;
    cupel_status st = cupel_pipeline_preset(str_of(r, "name", "Chat", b1, sizeof b1), &p);
    if (st == CUPEL_OK) {
      if (cupel_pipeline_run(p, f->items, f->budget, out, 16, &n, NULL)) exit(2);
      snprintf(o->result, sizeof o->result, "%zu", n);
    }
    cupel_pipeline_free(p);
    return st;
  }
  if (is(op, "policy_sensitivity")) {
    cupel_scorer *kind = NULL;
    cupel_pipeline *kindpipe = NULL;
    const cupel_pipeline *pipelines[2];
    const char *labels[2] = {"a", "b"};
    static char text[16384];
    size_t len = 0, count = (size_t)i64_of(r, "count", 2);
    const cupel_kind_weight message = {"Message", 1.0};
    cupel_status st;
    if (cupel_scorer_new_kind(&message, 1, &kind) ||
        cupel_pipeline_new(kind, f->greedy, f->chronological, &kindpipe))
      exit(2);
    pipelines[0] = f->pipeline;
    pipelines[1] = kindpipe;
    st = cupel_policy_sensitivity(pipelines, labels, count, HANDLE(r, "items", f->items),
                                  HANDLE(r, "budget", f->budget), text, sizeof text, &len);
    if (st == CUPEL_OK) {
      /* Count the diffs: one "statuses" key per diff. */
      size_t diffs = 0;
      const char *p;
      for (p = strstr(text, "\"statuses\""); p; p = strstr(p + 1, "\"statuses\"")) diffs++;
      snprintf(o->result, sizeof o->result, "%zu", diffs);
    }
    cupel_pipeline_free(kindpipe);
    cupel_scorer_free(kind);
    return st;
  }
  if (is(op, "report.analytics")) {
    cupel_report *report = NULL;
    size_t diversity = 0;
    double coverage = -1, utilization = -1;
    cupel_status st;
    if (cupel_report_new(&report) || cupel_pipeline_run(f->pipeline, f->items, f->budget, out, 16, &n, report))
      exit(2);
    st = cupel_report_kind_diversity(report, HANDLE(r, "items", f->items), &diversity);
    if (st == CUPEL_OK) st = cupel_report_timestamp_coverage(report, f->items, &coverage);
    if (st == CUPEL_OK) st = cupel_report_budget_utilization(report, &utilization);
    if (st == CUPEL_OK) {
      snprintf(o->result, sizeof o->result, "[%zu,%g]", diversity, coverage);
      if (fabs(utilization - 250.0 / 300.0) > 1e-9) fail_check(o, "the budget utilization");
    }
    cupel_report_free(report);
    return st;
  }
  if (is(op, "pipeline.set_trace")) {
    size_t events = 0;
    int level = CUPEL_TRACE_STAGES;
    cupel_status st;
    if (replaces(r, "level")) {
      if (is(r->value, "exclusions"))
        level = CUPEL_TRACE_EXCLUSIONS;
      else if (is(r->value, "full"))
        level = CUPEL_TRACE_FULL;
      else if (!is(r->value, "stages"))
        level = (int)strtol(r->value, NULL, 10);
    }
    st = cupel_pipeline_set_trace(HANDLE(r, "pipeline", f->pipeline), level,
                                  replaces(r, "callback") ? NULL : count_event, &events);
    if (st == CUPEL_OK) {
      if (cupel_pipeline_run(f->pipeline, f->items, f->budget, out, 16, &n, NULL)) exit(2);
      snprintf(o->result, sizeof o->result, "%zu", events);
    }
    return st;
  }
  if (is(op, "reason.name")) {
    snprintf(o->result, sizeof o->result, "%s", cupel_reason_str((int)i64_of(r, "code", 0)));
    return CUPEL_OK;
  }
  (void)b3;
  fprintf(stderr, "row %s: unknown op %s\n", r->id, op);
  exit(2);
}

/* ---- checks ------------------------------------------------------------------- */

static int names_language(const char *where) {
  char buf[64], *tok;
  if (is(where, "all")) return 1;
  if (is(where, "dyn") || is(where, "handles")) return 0;
  snprintf(buf, sizeof buf, "%s", where);
  for (tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
    if (is(tok, "c")) return 1;
  return 0;
}

/* Whether `msg` holds `word` with no letter, digit or '_' on either side. */
static int has_word(const char *msg, const char *word) {
  size_t n = strlen(word);
  const char *p;
  for (p = strstr(msg, word); p; p = strstr(p + 1, word)) {
    int before = p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    int after = isalnum((unsigned char)p[n]) || p[n] == '_';
    if (!before && !after) return 1;
  }
  return 0;
}

/* The element position an error message must give, or NULL. */
static const char *position_of(const row_t *r) {
  if (is(r->value, "end")) return "3";
  if (is(r->op, "items.push_many")) return "11";
  if (is(r->op, "tokenizer.count_many") && is(r->arg, "texts")) return "1";
  if ((is(r->op, "scorer.composite") && (is(r->arg, "children") || is(r->arg, "weights"))) ||
      (is(r->op, "placer.place") && (is(r->arg, "indices") || is(r->arg, "scores"))))
    return "2";
  if (r->value[0] == '-' && isdigit((unsigned char)r->value[1]) &&
      (strstr(r->arg, "index") || is(r->arg, "indices")))
    return r->value;
  return NULL;
}

static int run_row(const row_t *r, char *why, size_t why_cap) {
  fixture_t f;
  outcome_t o;
  cupel_status want;
  const char *pos, *sentinels[] = {"18446744073709551615", "9223372036854775808", "9223372036854775807",
                                   "4294967295"};
  size_t k;
  int ok = 1;
  memset(&o, 0, sizeof o);
  if (!fixture_new(&f)) {
    snprintf(why, why_cap, "fixture: %s", cupel_last_error());
    fixture_free(&f);
    return 0;
  }
  o.status = call(r, &f, &o);
  if (o.status != CUPEL_OK && cupel_last_error()) snprintf(o.message, sizeof o.message, "%s", cupel_last_error());

  if (strncmp(r->expect, "ok", 2) == 0) {
    if (o.status != CUPEL_OK) {
      snprintf(why, why_cap, "expected ok, got %s: %s", cupel_status_str(o.status), o.message);
      ok = 0;
    } else if (o.check_failed) {
      snprintf(why, why_cap, "ok, but %s read back wrong", o.check_what);
      ok = 0;
    } else if (r->expect[2] == '=' && !is(o.result, r->expect + 3)) {
      snprintf(why, why_cap, "expected %s, got %s", r->expect + 3, o.result);
      ok = 0;
    }
  } else {
    if (is(r->expect, "null"))
      want = CUPEL_ERROR_NULL_POINTER;
    else if (is(r->expect, "value") || is(r->expect, "range"))
      want = CUPEL_ERROR_INVALID_ARGUMENT;
    else {
      snprintf(why, why_cap, "expect %s does not apply to C", r->expect);
      fixture_free(&f);
      return 0;
    }
    pos = position_of(r);
    if (o.status != want) {
      snprintf(why, why_cap, "expected %s, got %s (%s)", cupel_status_str(want), cupel_status_str(o.status),
               o.message);
      ok = 0;
    } else if (!strstr(o.message, r->arg) &&
               !(is(r->arg, "score") && strstr(o.message, "scores")) /* push_many: scores[11] */) {
      snprintf(why, why_cap, "message \"%s\" does not name %s", o.message, r->arg);
      ok = 0;
    } else if (pos && !has_word(o.message, pos)) {
      snprintf(why, why_cap, "message \"%s\" does not give position %s", o.message, pos);
      ok = 0;
    } else if (cupel_items_len(f.items) != 3) {
      snprintf(why, why_cap, "the items changed: %zu items", cupel_items_len(f.items));
      ok = 0;
    }
    for (k = 0; ok && k < sizeof sentinels / sizeof *sentinels; k++) {
      if (strstr(o.message, sentinels[k]) && !strstr(r->value, sentinels[k])) {
        snprintf(why, why_cap, "message \"%s\" shows the sentinel %s", o.message, sentinels[k]);
        ok = 0;
      }
    }
  }
  fixture_free(&f);
  return ok;
}

int main(int argc, char **argv) {
  FILE *in;
  char line[512];
  int passed = 0, failed = 0, lineno = 0;
  const char *path = argc > 1 ? argv[1] : getenv("CUPEL_CONTRACT");
  if (!path) {
    fprintf(stderr, "usage: %s tests/contract/contract.txt (or set CUPEL_CONTRACT)\n", argv[0]);
    return 2;
  }
  in = fopen(path, "r");
  if (!in) {
    perror(path);
    return 2;
  }
  while (fgets(line, sizeof line, in)) {
    row_t r;
    char why[1400];
    lineno++;
    if (line[0] == '#' || line[0] == '@' || strspn(line, " \t\r\n") == strlen(line)) continue;
    if (sscanf(line, "%63s %63s %63s %95s %63s %63s", r.id, r.op, r.arg, r.value, r.expect, r.where) != 6) {
      fprintf(stderr, "contract.txt:%d: not a row of six fields\n", lineno);
      return 2;
    }
    if (!names_language(r.where)) continue;
    why[0] = 0;
    if (run_row(&r, why, sizeof why)) {
      passed++;
    } else {
      failed++;
      fprintf(stderr, "FAILED %s: %s\n", r.id, why);
    }
  }
  fclose(in);
  printf("contract c: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
