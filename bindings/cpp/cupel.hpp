// cupel.hpp — header-only C++17 wrapper over libcupel's C ABI (include/cupel.h).
//
// RAII, move-only handle types; every failing call throws cupel::Error, which
// carries the status and the library's message. Thread rules are those of the
// C API: const objects may be shared across threads, a Report per thread.
#ifndef CUPEL_HPP
#define CUPEL_HPP

#include "cupel.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cupel {

/// A failed libcupel call: the status and the library's message.
class Error : public std::runtime_error {
 public:
  Error(cupel_status status, const std::string &message)
      : std::runtime_error(std::string(cupel_status_str(status)) + ": " + message), status_(status) {}
  cupel_status status() const noexcept { return status_; }

 private:
  cupel_status status_;
};

namespace detail {
inline void check(cupel_status st) {
  if (st != CUPEL_OK) {
    const char *msg = cupel_last_error();
    throw Error(st, msg ? msg : "");
  }
}

/// Owns one C handle and frees it with `Free`; move-only.
template <class T, void (*Free)(T *)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T *p) : p_(p) {}
  Handle(Handle &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Handle &operator=(Handle &&o) noexcept {
    if (this != &o) {
      Free(p_);
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() { Free(p_); }
  T *get() const noexcept { return p_; }

 private:
  T *p_ = nullptr;
};

/// Calls a `cupel_*_new` style function `f(&p)` and returns the new handle.
template <class T, class F>
T *create(F &&f) {
  T *p = nullptr;
  check(f(&p));
  return p;
}
}  // namespace detail

/// The scored candidates. An item's index is its push order.
class Items {
 public:
  Items() : h_(detail::create<cupel_items>(cupel_items_new)) {}
  /// Adds one item; an empty `kind` means the default kind "Message".
  void push(int64_t tokens, double score, const std::string &kind = "") {
    detail::check(cupel_items_push(h_.get(), tokens, score, kind.empty() ? nullptr : kind.c_str()));
  }
  /// Adds `count` items from parallel arrays, all or nothing (`kinds` may be null).
  void push_many(size_t count, const int64_t *tokens, const double *scores, const char *const *kinds = nullptr) {
    detail::check(cupel_items_push_many(h_.get(), count, tokens, scores, kinds));
  }
  /// Adds items from vectors of equal length, all or nothing.
  void push_many(const std::vector<int64_t> &tokens, const std::vector<double> &scores,
                 const std::vector<std::string> &kinds = {}) {
    if (tokens.size() != scores.size() || (!kinds.empty() && kinds.size() != tokens.size()))
      throw Error(CUPEL_ERROR_INVALID_ARGUMENT, "push_many: tokens, scores and kinds differ in length");
    std::vector<const char *> k;
    for (const auto &s : kinds) k.push_back(s.c_str());
    push_many(tokens.size(), tokens.data(), scores.data(), kinds.empty() ? nullptr : k.data());
  }
  // ---- item attributes (the ContextItem fields the pipeline's stages read)
  void set_content(size_t index, const std::string &content) {
    detail::check(cupel_items_set_content(h_.get(), index, content.c_str()));
  }
  void set_timestamp(size_t index, int64_t unix_millis) {
    detail::check(cupel_items_set_timestamp(h_.get(), index, unix_millis));
  }
  void set_priority(size_t index, int64_t priority) { detail::check(cupel_items_set_priority(h_.get(), index, priority)); }
  void set_pinned(size_t index, bool pinned) { detail::check(cupel_items_set_pinned(h_.get(), index, pinned)); }
  void set_relevance_hint(size_t index, double hint) {
    detail::check(cupel_items_set_relevance_hint(h_.get(), index, hint));
  }
  void set_source(size_t index, const std::string &source) {
    detail::check(cupel_items_set_source(h_.get(), index, source.c_str()));
  }
  void add_tag(size_t index, const std::string &tag) { detail::check(cupel_items_add_tag(h_.get(), index, tag.c_str())); }
  void set_metadata(size_t index, const std::string &key, const std::string &value) {
    detail::check(cupel_items_set_metadata(h_.get(), index, key.c_str(), value.c_str()));
  }
  /// Bulk forms: items `first .. first + values.size()`, one native call each.
  void set_contents(size_t first, const std::vector<std::string> &contents) {
    std::vector<const char *> p;
    for (const auto &c : contents) p.push_back(c.c_str());
    detail::check(cupel_items_set_contents(h_.get(), first, p.size(), p.data()));
  }
  void set_timestamps(size_t first, const std::vector<int64_t> &unix_millis) {
    detail::check(cupel_items_set_timestamps(h_.get(), first, unix_millis.size(), unix_millis.data()));
  }
  void set_priorities(size_t first, const std::vector<int64_t> &priorities) {
    detail::check(cupel_items_set_priorities(h_.get(), first, priorities.size(), priorities.data()));
  }
  void set_pinned_many(size_t first, const std::vector<bool> &pinned) {
    std::unique_ptr<bool[]> p(new bool[pinned.size() + 1]);
    for (size_t i = 0; i < pinned.size(); i++) p[i] = pinned[i];
    detail::check(cupel_items_set_pinned_many(h_.get(), first, pinned.size(), p.get()));
  }
  void set_relevance_hints(size_t first, const std::vector<double> &hints) {
    detail::check(cupel_items_set_relevance_hints(h_.get(), first, hints.size(), hints.data()));
  }
  /// Puts item `index` in keep-together group `group` (0: none): items that
  /// share a non-zero group are selected all together or not at all and
  /// placed next to each other in push order (README "Groups").
  void set_group(size_t index, uint64_t group) { detail::check(cupel_items_set_group(h_.get(), index, group)); }
  /// Sets the groups of items `first .. first + groups.size()`, all or nothing.
  void set_groups(size_t first, const std::vector<uint64_t> &groups) {
    detail::check(cupel_items_set_groups(h_.get(), first, groups.size(), groups.data()));
  }
  size_t size() const noexcept { return cupel_items_len(h_.get()); }
  void clear() noexcept { cupel_items_clear(h_.get()); }
  const cupel_items *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_items, cupel_items_free>;
  Handle h_;
};

/// A token budget.
class Budget {
 public:
  Budget(int64_t max_tokens, int64_t target_tokens)
      : h_(detail::create<cupel_budget>(
            [&](cupel_budget **p) { return cupel_budget_new(max_tokens, target_tokens, p); })) {}
  void set_output_reserve(int64_t tokens) { detail::check(cupel_budget_set_output_reserve(h_.get(), tokens)); }
  void set_safety_margin(double percent) { detail::check(cupel_budget_set_safety_margin(h_.get(), percent)); }
  void reserve(const std::string &kind, int64_t tokens) {
    detail::check(cupel_budget_reserve(h_.get(), kind.c_str(), tokens));
  }
  /// (effective max, effective target) with `pinned_tokens` committed.
  std::pair<int64_t, int64_t> effective(int64_t pinned_tokens = 0) const {
    int64_t max = 0, target = 0;
    detail::check(cupel_budget_effective(h_.get(), pinned_tokens, &max, &target));
    return {max, target};
  }
  const cupel_budget *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_budget, cupel_budget_free>;
  Handle h_;
};

struct Quota {
  std::string kind;
  double require_percent;
  double cap_percent;
};

struct CountQuota {
  std::string kind;
  uint32_t require_count;
  uint32_t cap_count;
};

enum class Scarcity { Degrade = CUPEL_SCARCITY_DEGRADE, Error = CUPEL_SCARCITY_ERROR };

/// A configured slicer. Decorators copy what they need of their inner slicer.
class Slicer {
 public:
  static Slicer greedy() { return make([](cupel_slicer **p) { return cupel_slicer_new_greedy(p); }); }
  static Slicer knapsack(int64_t bucket_size = CUPEL_DEFAULT_BUCKET_SIZE) {
    return make([&](cupel_slicer **p) { return cupel_slicer_new_knapsack(bucket_size, p); });
  }
  static Slicer quota(const Slicer &inner, const std::vector<Quota> &quotas) {
    std::vector<cupel_quota> q;
    for (const auto &x : quotas) q.push_back({x.kind.c_str(), x.require_percent, x.cap_percent});
    return make([&](cupel_slicer **p) { return cupel_slicer_new_quota(inner.get(), q.data(), q.size(), p); });
  }
  static Slicer count_quota(const Slicer &inner, const std::vector<CountQuota> &entries,
                            Scarcity scarcity = Scarcity::Degrade) {
    auto e = entries_of(entries);
    return make([&](cupel_slicer **p) {
      return cupel_slicer_new_count_quota(inner.get(), e.data(), e.size(), static_cast<int>(scarcity), p);
    });
  }
  static Slicer count_constrained_knapsack(int64_t bucket_size, const std::vector<CountQuota> &entries,
                                           Scarcity scarcity = Scarcity::Degrade) {
    auto e = entries_of(entries);
    return make([&](cupel_slicer **p) {
      return cupel_slicer_new_count_constrained_knapsack(bucket_size, e.data(), e.size(),
                                                         static_cast<int>(scarcity), p);
    });
  }
  void set_memory_limit(size_t bytes) { detail::check(cupel_slicer_set_memory_limit(h_.get(), bytes)); }
  size_t memory_limit() const noexcept { return cupel_slicer_memory_limit(h_.get()); }
  const cupel_slicer *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_slicer, cupel_slicer_free>;
  explicit Slicer(cupel_slicer *p) : h_(p) {}
  template <class F>
  static Slicer make(F &&f) {
    return Slicer(detail::create<cupel_slicer>(std::forward<F>(f)));
  }
  static std::vector<cupel_count_quota> entries_of(const std::vector<CountQuota> &entries) {
    std::vector<cupel_count_quota> e;
    for (const auto &x : entries) e.push_back({x.kind.c_str(), x.require_count, x.cap_count});
    return e;
  }
  Handle h_;
};

struct Shortfall {
  std::string kind;
  uint32_t required;
  uint32_t satisfied;
};

/// Why an item was included or excluded (`cupel_reason`).
enum class Reason : int32_t {
  Scored = CUPEL_REASON_SCORED,
  Pinned = CUPEL_REASON_PINNED,
  ZeroToken = CUPEL_REASON_ZERO_TOKEN,
  BudgetExceeded = CUPEL_REASON_BUDGET_EXCEEDED,
  ScoredTooLow = CUPEL_REASON_SCORED_TOO_LOW,
  Deduplicated = CUPEL_REASON_DEDUPLICATED,
  QuotaCapExceeded = CUPEL_REASON_QUOTA_CAP_EXCEEDED,
  QuotaRequireDisplaced = CUPEL_REASON_QUOTA_REQUIRE_DISPLACED,
  NegativeTokens = CUPEL_REASON_NEGATIVE_TOKENS,
  PinnedOverride = CUPEL_REASON_PINNED_OVERRIDE,
  Filtered = CUPEL_REASON_FILTERED,
  CountCapExceeded = CUPEL_REASON_COUNT_CAP_EXCEEDED,
};

/// The specification's name of a reason ("BudgetExceeded", ...).
inline const char *to_string(Reason r) noexcept {
  switch (r) {
    case Reason::Scored: return "Scored";
    case Reason::Pinned: return "Pinned";
    case Reason::ZeroToken: return "ZeroToken";
    case Reason::BudgetExceeded: return "BudgetExceeded";
    case Reason::ScoredTooLow: return "ScoredTooLow";
    case Reason::Deduplicated: return "Deduplicated";
    case Reason::QuotaCapExceeded: return "QuotaCapExceeded";
    case Reason::QuotaRequireDisplaced: return "QuotaRequireDisplaced";
    case Reason::NegativeTokens: return "NegativeTokens";
    case Reason::PinnedOverride: return "PinnedOverride";
    case Reason::Filtered: return "Filtered";
    case Reason::CountCapExceeded: return "CountCapExceeded";
  }
  return "?";
}

/// One item's fate in a report.
struct Decision {
  size_t index;           ///< push-order index
  double score;
  Reason reason;
  int64_t item_tokens;
  int64_t available_tokens;       ///< BudgetExceeded: the tokens left
  std::optional<size_t> related;  ///< Deduplicated: kept item; PinnedOverride: the pinned one
  uint64_t group;                 ///< keep-together group, 0 when none
  int64_t group_tokens;           ///< the tokens the decision was made on
};

/// Diagnostics of one slice call; use one per thread.
class Report {
 public:
  Report() : h_(detail::create<cupel_report>(cupel_report_new)) {}
  int64_t effective_max_tokens() const noexcept { return cupel_report_effective_max_tokens(h_.get()); }
  int64_t effective_target_tokens() const noexcept { return cupel_report_effective_target_tokens(h_.get()); }
  int64_t selected_tokens() const noexcept { return cupel_report_selected_tokens(h_.get()); }
  std::vector<Shortfall> shortfalls() const {
    std::vector<Shortfall> out;
    for (size_t i = 0; i < cupel_report_shortfall_count(h_.get()); i++) {
      const char *kind = nullptr;
      uint32_t req = 0, sat = 0;
      detail::check(cupel_report_shortfall(h_.get(), i, &kind, &req, &sat));
      out.push_back({kind, req, sat});
    }
    return out;
  }
  std::vector<size_t> cap_excluded() const {
    std::vector<size_t> out(cupel_report_cap_excluded_count(h_.get()));
    for (size_t i = 0; i < out.size(); i++) detail::check(cupel_report_cap_excluded(h_.get(), i, &out[i]));
    return out;
  }
  /// Included items in placed order.
  std::vector<Decision> included() const { return list(true); }
  /// Excluded items, score descending.
  std::vector<Decision> excluded() const { return list(false); }
  int64_t total_candidates() const noexcept { return cupel_report_total_candidates(h_.get()); }
  int64_t total_tokens_considered() const noexcept { return cupel_report_total_tokens_considered(h_.get()); }
  /// Tokens the placed items exceed the target by under Overflow::Proceed
  /// (the spec's OverflowEvent); 0 otherwise.
  int64_t tokens_over_budget() const noexcept { return cupel_report_tokens_over_budget(h_.get()); }
  /// The specification's SelectionReport JSON (`items`: the list the run saw).
  std::string json(const Items &items) const {
    size_t n = 0;
    cupel_status st = cupel_report_json(h_.get(), items.get(), nullptr, 0, &n);
    if (st != CUPEL_ERROR_BUFFER_TOO_SMALL) detail::check(st);
    std::string out(n + 1, '\0');
    detail::check(cupel_report_json(h_.get(), items.get(), out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }
  cupel_report *get() const noexcept { return h_.get(); }

 private:
  std::vector<Decision> list(bool included) const {
    size_t n = included ? cupel_report_included_count(h_.get()) : cupel_report_excluded_count(h_.get());
    std::vector<Decision> out;
    out.reserve(n);
    for (size_t i = 0; i < n; i++) {
      cupel_decision d;
      detail::check(included ? cupel_report_included(h_.get(), i, &d) : cupel_report_excluded(h_.get(), i, &d));
      std::optional<size_t> related;
      if (d.related_index != SIZE_MAX) related = d.related_index;
      out.push_back({d.item_index, d.score, static_cast<Reason>(d.reason), d.item_tokens, d.available_tokens,
                     related, d.group, d.group_tokens});
    }
    return out;
  }
  using Handle = detail::Handle<cupel_report, cupel_report_free>;
  Handle h_;
};

enum class DecayCurve { Exponential = CUPEL_DECAY_EXPONENTIAL, Step = CUPEL_DECAY_STEP, Window = CUPEL_DECAY_WINDOW };

/// A scorer (the Score stage). Composites copy their children.
class Scorer {
 public:
  static Scorer given() { return make(cupel_scorer_new_given); }
  static Scorer recency() { return make(cupel_scorer_new_recency); }
  static Scorer priority() { return make(cupel_scorer_new_priority); }
  static Scorer frequency() { return make(cupel_scorer_new_frequency); }
  static Scorer reflexive() { return make(cupel_scorer_new_reflexive); }
  /// Kind weights; empty: the specification's defaults.
  static Scorer kind(const std::vector<std::pair<std::string, double>> &weights = {}) {
    std::vector<cupel_kind_weight> w;
    for (const auto &x : weights) w.push_back({x.first.c_str(), x.second});
    return make([&](cupel_scorer **p) { return cupel_scorer_new_kind(w.empty() ? nullptr : w.data(), w.size(), p); });
  }
  static Scorer tag(const std::vector<std::pair<std::string, double>> &weights) {
    std::vector<cupel_tag_weight> w;
    for (const auto &x : weights) w.push_back({x.first.c_str(), x.second});
    return make([&](cupel_scorer **p) { return cupel_scorer_new_tag(w.empty() ? nullptr : w.data(), w.size(), p); });
  }
  static Scorer composite(const std::vector<std::pair<const Scorer *, double>> &parts) {
    std::vector<const cupel_scorer *> kids;
    std::vector<double> w;
    for (const auto &x : parts) {
      kids.push_back(x.first->get());
      w.push_back(x.second);
    }
    return make([&](cupel_scorer **p) { return cupel_scorer_new_composite(kids.data(), w.data(), kids.size(), p); });
  }
  static Scorer scaled(const Scorer &inner) {
    return make([&](cupel_scorer **p) { return cupel_scorer_new_scaled(inner.get(), p); });
  }
  static Scorer metadata_trust(double default_score = 0.5) {
    return make([&](cupel_scorer **p) { return cupel_scorer_new_metadata_trust(default_score, p); });
  }
  static Scorer metadata_key(const std::string &key, const std::string &value, double boost) {
    return make([&](cupel_scorer **p) { return cupel_scorer_new_metadata_key(key.c_str(), value.c_str(), boost, p); });
  }
  /// `windows`: (max age in seconds, score), youngest first (step curve).
  static Scorer decay(DecayCurve curve, double duration_secs, const std::vector<std::pair<double, double>> &windows,
                      int64_t reference_unix_millis, double null_timestamp_score = 0.5) {
    std::vector<cupel_decay_window> w;
    for (const auto &x : windows) w.push_back({x.first, x.second});
    return make([&](cupel_scorer **p) {
      return cupel_scorer_new_decay(static_cast<int>(curve), duration_secs, w.empty() ? nullptr : w.data(), w.size(),
                                    reference_unix_millis, null_timestamp_score, p);
    });
  }
  /// The score of every item, by index.
  std::vector<double> score(const Items &items) const {
    std::vector<double> out(items.size());
    size_t n = 0;
    detail::check(cupel_scorer_score(h_.get(), items.get(), out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }
  const cupel_scorer *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_scorer, cupel_scorer_free>;
  explicit Scorer(cupel_scorer *p) : h_(p) {}
  template <class F>
  static Scorer make(F &&f) {
    return Scorer(detail::create<cupel_scorer>(std::forward<F>(f)));
  }
  Handle h_;
};

/// A placer (the Place stage's order).
class Placer {
 public:
  static Placer chronological() { return Placer(detail::create<cupel_placer>(cupel_placer_new_chronological)); }
  static Placer u_shaped() { return Placer(detail::create<cupel_placer>(cupel_placer_new_u_shaped)); }
  /// The Place stage on its own: the item indices `indices`, with their
  /// `scores` (one each), in placed order.
  std::vector<size_t> place(const Items &items, const std::vector<size_t> &indices,
                            const std::vector<double> &scores) const {
    if (indices.size() != scores.size())
      throw Error(CUPEL_ERROR_INVALID_ARGUMENT, "place: " + std::to_string(indices.size()) + " indices and " +
                                                    std::to_string(scores.size()) + " scores; one score per index");
    std::vector<size_t> out(indices.size());
    size_t n = 0;
    detail::check(cupel_placer_place(h_.get(), items.get(), indices.data(), scores.data(), indices.size(),
                                     out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }
  const cupel_placer *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_placer, cupel_placer_free>;
  explicit Placer(cupel_placer *p) : h_(p) {}
  Handle h_;
};

enum class Overflow { Throw = CUPEL_OVERFLOW_THROW, Truncate = CUPEL_OVERFLOW_TRUNCATE, Proceed = CUPEL_OVERFLOW_PROCEED };

/// The whole pipeline; keeps copies of its scorer, slicer and placer.
class Pipeline {
 public:
  /// `scorer` null: the pushed scores; `placer` null: the slicer's order.
  Pipeline(const Scorer *scorer, const Slicer &slicer, const Placer *placer)
      : h_(detail::create<cupel_pipeline>([&](cupel_pipeline **p) {
          return cupel_pipeline_new(scorer ? scorer->get() : nullptr, slicer.get(), placer ? placer->get() : nullptr,
                                    p);
        })) {}
  void set_deduplication(bool enabled) { detail::check(cupel_pipeline_set_deduplication(h_.get(), enabled)); }
  void set_overflow(Overflow o) { detail::check(cupel_pipeline_set_overflow(h_.get(), static_cast<int>(o))); }
  /// All six stages: the placed item indices (and every decision in `report`).
  std::vector<size_t> run(const Items &items, const Budget &budget, Report *report = nullptr) const {
    std::vector<size_t> out(items.size());
    size_t n = 0;
    detail::check(cupel_pipeline_run(h_.get(), items.get(), budget.get(), out.data(), out.size(), &n,
                                     report ? report->get() : nullptr));
    out.resize(n);
    return out;
  }
  const cupel_pipeline *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_pipeline, cupel_pipeline_free>;
  Handle h_;
};

/// Sort + Slice: the chosen item indices in the slicer's output order.
inline std::vector<size_t> slice(const Slicer &slicer, const Items &items, const Budget &budget,
                                 int64_t pinned_tokens = 0, Report *report = nullptr) {
  std::vector<size_t> out(items.size());
  size_t n = 0;
  detail::check(cupel_slice(slicer.get(), items.get(), budget.get(), pinned_tokens, out.data(), out.size(), &n,
                            report ? report->get() : nullptr));
  out.resize(n);
  return out;
}

/// Items chosen at `budget` but not with `slack_tokens` fewer. Arguments
/// in the order of cupel_marginal_items (pinned before slack).
inline std::vector<size_t> marginal_items(const Slicer &slicer, const Items &items, const Budget &budget,
                                          int64_t pinned_tokens, int64_t slack_tokens) {
  std::vector<size_t> out(items.size());
  size_t n = 0;
  detail::check(cupel_marginal_items(slicer.get(), items.get(), budget.get(), pinned_tokens, slack_tokens,
                                     out.data(), out.size(), &n));
  out.resize(n);
  return out;
}

/// The smallest budget at which item `index` is chosen, or nullopt.
/// Arguments in the order of cupel_find_min_budget.
inline std::optional<int64_t> find_min_budget(const Slicer &slicer, const Items &items, int64_t pinned_tokens,
                                              size_t index, int64_t search_ceiling) {
  int64_t b = -1;
  detail::check(cupel_find_min_budget(slicer.get(), items.get(), pinned_tokens, index, search_ceiling, &b));
  if (b < 0) return std::nullopt;
  return b;
}

/// StreamSlice: push items as they arrive, then finish.
class Stream {
 public:
  explicit Stream(int64_t target_tokens, size_t batch_size = 0)
      : h_(detail::create<cupel_stream>(
            [&](cupel_stream **p) { return cupel_stream_new(target_tokens, batch_size, p); })) {}
  /// Offers the next item; returns true once the budget is spent.
  bool push(int64_t tokens, double score) {
    bool full = false;
    detail::check(cupel_stream_push(h_.get(), tokens, score, &full));
    ++pushed_;
    return full;
  }
  /// Offers the next item as a member of keep-together group `group` (0:
  /// none); a group's members come one after another and are taken all or
  /// none. Throws (the stream unchanged) for a group that already ended.
  bool push_grouped(int64_t tokens, double score, uint64_t group) {
    bool full = false;
    detail::check(cupel_stream_push_grouped(h_.get(), tokens, score, group, &full));
    ++pushed_;
    return full;
  }
  /// The taken item indices, in the order they were taken.
  std::vector<size_t> finish() {
    std::vector<size_t> out(pushed_);
    size_t n = 0;
    detail::check(cupel_stream_finish(h_.get(), out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }

 private:
  using Handle = detail::Handle<cupel_stream, cupel_stream_free>;
  Handle h_;
  size_t pushed_ = 0;
};

}  // namespace cupel

#endif
