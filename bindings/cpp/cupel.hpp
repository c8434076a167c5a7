// cupel.hpp — header-only C++17 wrapper over libcupel's C ABI (include/cupel.h).
//
// RAII, move-only handle types; every failing call throws cupel::Error, which
// carries the status and the library's message. Thread rules are those of the
// C API: const objects may be shared across threads, a Report per thread.
#ifndef CUPEL_HPP
#define CUPEL_HPP

#include "cupel.h"

#include <cstdint>
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
  cupel_report *get() const noexcept { return h_.get(); }

 private:
  using Handle = detail::Handle<cupel_report, cupel_report_free>;
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
