// cupel.hpp — header-only C++17 wrapper over libcupel's C ABI (include/cupel.h).
//
// RAII, move-only handle types. A failed call throws, and changes nothing:
//
//   caller mistake                      thrown class (all carry status())
//   a null handle pointer, a value       cupel::InvalidArgument  (std::invalid_argument)
//     outside its domain
//   an index out of range                cupel::OutOfRange       (std::out_of_range)
//   a moved-from ("closed") handle       cupel::ClosedHandle     (std::logic_error)
//   any other failed call                cupel::Error            (std::runtime_error)
//
// `catch (const cupel::Exception &e)` catches all four; an exception a trace
// callback throws (Pipeline::set_trace) comes out of the call that ran the
// pipeline unchanged. The quickest way in is the one-call path,
// `cupel::select(messages, max_tokens[, policy])`. Thread rules are
// those of the C API: const objects may be shared across threads, a Report
// per thread; a Tokenizer is immutable, any number of threads may count with
// one at once.
//
// Texts (Tokenizer, Items::push_text) are UTF-8 bytes in a std::string_view;
// every offset this header returns for them is a byte offset into them (so
// are the cuts of a report's included items, Decision::head_end and
// Decision::tail_start, into the item's content).
#ifndef CUPEL_HPP
#define CUPEL_HPP

#include "cupel.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cupel {

/// The base of every exception this header throws for a failed call: the
/// `cupel_status` and the message. It is not itself a `std::exception`; each
/// concrete class below also derives from the standard class that fits.
class Exception {
 public:
  virtual ~Exception() = default;
  /// The C status of the failure (CUPEL_ERROR_NULL_POINTER for a null or
  /// moved-from handle, which holds no C handle).
  cupel_status status() const noexcept { return status_; }
  /// `"<STATUS NAME>: <message>"`, e.g. `"CUPEL_ERROR_INVALID_ARGUMENT:
  /// target_tokens 20 > max_tokens 10"`.
  virtual const char *what() const noexcept = 0;
  /// The message alone (what() without the status name), naming the
  /// argument and, for an element of an array, its index.
  const char *message() const noexcept { return what() + prefix_; }

 protected:
  /// Records `status`; `what()` must start with its name and ": ".
  explicit Exception(cupel_status status) noexcept
      : status_(status), prefix_(std::char_traits<char>::length(cupel_status_str(status)) + 2) {}
  Exception(const Exception &) = default;
  Exception &operator=(const Exception &) = default;
  /// `"<STATUS NAME>: <message>"`, the text every subclass's what() holds.
  static std::string text(cupel_status status, const std::string &message) {
    return std::string(cupel_status_str(status)) + ": " + message;
  }

 private:
  cupel_status status_;
  std::size_t prefix_;
};

/// A failed call that is not a caller's argument mistake (scarcity, an
/// unsupported slicer, the memory limit, overflow, an internal error).
class Error : public std::runtime_error, public Exception {
 public:
  /// An error of `status` with the library's `message`.
  Error(cupel_status status, const std::string &message)
      : std::runtime_error(text(status, message)), Exception(status) {}
  /// `"<STATUS NAME>: <message>"`.
  const char *what() const noexcept override { return std::runtime_error::what(); }
};

/// A null handle pointer (status CUPEL_ERROR_NULL_POINTER) or a value
/// outside its domain (CUPEL_ERROR_INVALID_ARGUMENT): NaN scores, empty or
/// non-UTF-8 kinds, negative budgets, ...
class InvalidArgument : public std::invalid_argument, public Exception {
 public:
  /// An error of `status` with `message` (which names the argument).
  InvalidArgument(cupel_status status, const std::string &message)
      : std::invalid_argument(text(status, message)), Exception(status) {}
  /// `"<STATUS NAME>: <message>"`.
  const char *what() const noexcept override { return std::invalid_argument::what(); }
};

/// An item index (or a range of them) past the end of the list; the status
/// is CUPEL_ERROR_INVALID_ARGUMENT, as the C library reports it.
class OutOfRange : public std::out_of_range, public Exception {
 public:
  /// An error of `status` with `message` (which names the index).
  OutOfRange(cupel_status status, const std::string &message)
      : std::out_of_range(text(status, message)), Exception(status) {}
  /// `"<STATUS NAME>: <message>"`.
  const char *what() const noexcept override { return std::out_of_range::what(); }
};

/// A moved-from handle used as a receiver or an argument: it holds no C
/// handle any more, so it is refused before anything reaches the library.
class ClosedHandle : public std::logic_error, public Exception {
 public:
  /// An error with `message` (which names the argument); the status is
  /// CUPEL_ERROR_NULL_POINTER.
  explicit ClosedHandle(const std::string &message)
      : std::logic_error(text(CUPEL_ERROR_NULL_POINTER, message)), Exception(CUPEL_ERROR_NULL_POINTER) {}
  /// `"CUPEL_ERROR_NULL_POINTER: <message>"`.
  const char *what() const noexcept override { return std::logic_error::what(); }
};

/// A handle argument of type `T` (Items, Budget, Slicer, Scorer, Pipeline, Tokenizer): binds a
/// `const T &` or a `const T *`. A null pointer throws InvalidArgument and
/// a moved-from handle ClosedHandle, both naming the argument. Bind it only
/// for the duration of a call (it does not own the handle).
template <class T>
class Ref {
 public:
  /// Refers to `handle`.
  Ref(const T &handle) noexcept : p_(&handle) {}  // NOLINT: implicit by design
  /// Refers to `*handle`; null is refused by the call it is passed to.
  Ref(const T *handle) noexcept : p_(handle) {}  // NOLINT: implicit by design
  /// The handle referred to, or null.
  const T *get() const noexcept { return p_; }

 private:
  const T *p_;
};

namespace detail {
/// Throws the exception class of a failed status with the library's message;
/// `out_of_range` marks an INVALID_ARGUMENT that is an index past the end.
[[noreturn]] inline void raise(cupel_status st, bool out_of_range = false) {
  const char *msg = cupel_last_error();
  std::string m = msg ? msg : "";
  if (st == CUPEL_ERROR_INVALID_ARGUMENT && out_of_range) throw OutOfRange(st, m);
  if (st == CUPEL_ERROR_NULL_POINTER || st == CUPEL_ERROR_INVALID_ARGUMENT) throw InvalidArgument(st, m);
  throw Error(st, m);
}

/// Throws for any status but CUPEL_OK.
inline void check(cupel_status st) {
  if (st != CUPEL_OK) raise(st);
}

/// An index past the end: OutOfRange, worded as the C library words it.
inline void check_index(std::size_t index, std::size_t len, const char *arg) {
  if (index >= len)
    throw OutOfRange(CUPEL_ERROR_INVALID_ARGUMENT, std::string(arg) + " " + std::to_string(index) +
                                                       " is out of range: the list holds " + std::to_string(len) +
                                                       " items");
}

/// Items `first .. first + count` past the end: OutOfRange.
inline void check_span(std::size_t first, std::size_t count, std::size_t len) {
  if (first > len || count > len - first)
    throw OutOfRange(CUPEL_ERROR_INVALID_ARGUMENT, "first " + std::to_string(first) + " with " +
                                                       std::to_string(count) +
                                                       " values is out of range: the list holds " +
                                                       std::to_string(len) + " items");
}

/// `s` as a C string; a NUL byte inside it (which C would silently cut the
/// string at) is an InvalidArgument naming `arg`.
inline const char *c_str(const std::string &s, const std::string &arg) {
  std::size_t nul = s.find('\0');
  if (nul != std::string::npos)
    throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT,
                          arg + " holds a NUL byte at offset " + std::to_string(nul) + "; C strings cannot");
  return s.c_str();
}

/// The null-handle error for argument `arg`.
[[noreturn]] inline void null_handle(const std::string &arg) {
  throw InvalidArgument(CUPEL_ERROR_NULL_POINTER, arg + " is null");
}

/// The moved-from-handle error for argument `arg`.
[[noreturn]] inline void closed_handle(const std::string &arg) {
  throw ClosedHandle(arg + " is a moved-from (closed) handle");
}

/// The C handle behind `r`; throws for a null pointer or a moved-from handle.
template <class T>
auto raw(Ref<T> r, const std::string &arg) -> decltype(r.get()->get()) {
  if (!r.get()) null_handle(arg);
  auto *p = r.get()->get();
  if (!p) closed_handle(arg);
  return p;
}

/// The C handle behind an optional `h` (null: none); throws for a moved-from handle.
template <class T>
auto raw_or_null(const T *h, const std::string &arg) -> decltype(h->get()) {
  if (!h) return nullptr;
  auto *p = h->get();
  if (!p) closed_handle(arg);
  return p;
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
  /// The C handle; null once moved from.
  T *get() const noexcept { return p_; }
  /// The C handle; a moved-from one throws ClosedHandle naming `arg`.
  T *use(const char *arg) const {
    if (!p_) closed_handle(arg);
    return p_;
  }

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

/// `n` bytes at `p` as a string (empty for null).
inline std::string text(const char *p, std::size_t n) { return p ? std::string(p, n) : std::string(); }

/// The text a `cupel_*_to_json` style writer `write(buf, capacity, &len)`
/// gives: asks for the length first, then writes it.
template <class F>
std::string read_text(F &&write) {
  std::size_t n = 0;
  cupel_status st = write(nullptr, 0, &n);
  if (st != CUPEL_OK && st != CUPEL_ERROR_BUFFER_TOO_SMALL) raise(st);
  std::string out(n + 1, '\0');
  check(write(out.data(), out.size(), &n));
  out.resize(n);
  return out;
}

/// Runs `f` and returns what it returns; a cupel exception it throws (but
/// ClosedHandle) is thrown again, of the same class and status, with its
/// message passed through `fix` (which renames the argument it names).
template <class F, class Fix>
auto renaming(F &&f, Fix &&fix) -> decltype(f()) {
  try {
    return f();
  } catch (const OutOfRange &e) {
    throw OutOfRange(e.status(), fix(std::string(e.message())));
  } catch (const InvalidArgument &e) {
    throw InvalidArgument(e.status(), fix(std::string(e.message())));
  } catch (const Error &e) {
    throw Error(e.status(), fix(std::string(e.message())));
  }
}

/// `msg` with its leading word `from` (followed by a space, ':' or '[')
/// replaced by `to`; otherwise `msg` unchanged.
inline std::string rename_head(const std::string &msg, std::string_view from, std::string_view to) {
  if (msg.compare(0, from.size(), from) != 0 || msg.size() == from.size()) return msg;
  char next = msg[from.size()];
  if (next != ' ' && next != ':' && next != '[') return msg;
  return std::string(to) + msg.substr(from.size());
}

/// `msg` with a leading `array[i]` (a C bulk call's argument) replaced by
/// `to[i]` followed by `field`: "texts[3] is empty" -> "messages[3].text is empty".
inline std::string rename_element(const std::string &msg, std::string_view array, std::string_view to,
                                  std::string_view field) {
  if (msg.compare(0, array.size(), array) != 0 || msg.size() <= array.size() || msg[array.size()] != '[')
    return msg;
  std::size_t close = msg.find(']', array.size());
  if (close == std::string::npos) return msg;
  return std::string(to) + msg.substr(array.size(), close + 1 - array.size()) + std::string(field) +
         msg.substr(close + 1);
}

/// The string value of the top-level key `key` of `json`, a JSON object
/// this library wrote (cupel_pipeline_to_json), taken as written (the
/// values read with it hold no escapes); std::nullopt when the key is
/// absent or its value is not a string. A scan of the strings and the
/// nesting only, not a JSON reader: the text is the library's own.
inline std::optional<std::string> top_level_string(std::string_view json, std::string_view key) {
  // The end of the string whose opening quote is at `open` (its closing quote).
  auto string_end = [&](std::size_t open) {
    std::size_t i = open + 1;
    while (i < json.size() && json[i] != '"') i += json[i] == '\\' ? 2 : 1;
    return i < json.size() ? i : json.size();
  };
  auto skip_blank = [&](std::size_t i) {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t')) i++;
    return i;
  };
  int depth = 0;
  for (std::size_t i = 0; i < json.size(); i++) {
    char c = json[i];
    if (c == '"') {
      std::size_t end = string_end(i);
      bool is_key = depth == 1 && json.substr(i + 1, end - i - 1) == key;
      i = end;
      if (!is_key) continue;
      std::size_t at = skip_blank(end + 1);
      if (at >= json.size() || json[at] != ':') continue;  // a value that reads like the key
      at = skip_blank(at + 1);
      if (at >= json.size() || json[at] != '"') return std::nullopt;
      std::size_t value_end = string_end(at);
      return std::string(json.substr(at + 1, value_end - at - 1));
    }
    if (c == '{' || c == '[') depth++;
    if (c == '}' || c == ']') depth--;
  }
  return std::nullopt;
}
}  // namespace detail

// ---- the library --------------------------------------------------------------

/// The library's version, "MAJOR.MINOR.PATCH" (`cupel_version`): a static
/// string, equal to `CUPEL_VERSION_STRING` of the header the library was
/// built with. Compare the two to catch a program built against another
/// header than the library it loads.
inline std::string_view version() noexcept { return cupel_version(); }

/// The library's ABI version (`cupel_abi_version`), equal to
/// `CUPEL_ABI_VERSION` of a header it is compatible with (docs/abi.md: it
/// changes exactly when the ABI changes incompatibly).
inline uint32_t abi_version() noexcept { return cupel_abi_version(); }

/// The number of C handles of every kind (items, budgets, slicers, scorers,
/// placers, pipelines, reports, streams, tokenizers, sessions) created and not yet
/// freed in the whole process (`cupel_live_handles`): for leak checks. A
/// handle object counts once while it owns its C handle; a moved-from one
/// owns none.
inline std::size_t live_handles() noexcept { return cupel_live_handles(); }

// ---- text in: tokenizers ------------------------------------------------------

/// What Tokenizer::truncate keeps of a text (`cupel_keep`), and what a
/// pipeline keeps of a truncatable item (Items::set_truncatable).
enum class Keep {
  Head = CUPEL_KEEP_HEAD,          ///< the beginning of the text
  Tail = CUPEL_KEEP_TAIL,          ///< the end of the text
  BothEnds = CUPEL_KEEP_BOTH_ENDS  ///< the beginning and the end; the middle goes
};

/// What Tokenizer::truncate kept of a text: `text` is the input's bytes
/// `[0, head_end)` followed by its bytes `[tail_start, size())`, with no
/// marker between them. Offsets are byte offsets into the input and always
/// fall on UTF-8 character boundaries.
struct Truncation {
  std::string text;            ///< the kept text: the head, then the tail
  std::size_t head_end = 0;    ///< the head is the input's bytes [0, head_end)
  std::size_t tail_start = 0;  ///< the tail is the input's bytes [tail_start, size())
  int64_t tokens = 0;          ///< the head's count plus the tail's (each counted alone); at most max_tokens
};

/// A list of UTF-8 texts for the bulk calls (Tokenizer::count_many,
/// Items::push_texts): binds a `std::vector` of `std::string` or
/// `std::string_view`, or a braced list of strings. It does not copy the
/// texts: bind it only for the duration of a call, as the calls do.
class Texts {
 public:
  /// The texts of `texts`, in order.
  Texts(const std::vector<std::string> &texts) { add(texts); }  // NOLINT: implicit by design
  /// The texts of `texts`, in order.
  Texts(const std::vector<std::string_view> &texts) { add(texts); }  // NOLINT: implicit by design
  /// The texts of a braced list, in order: `{"one", "two"}`.
  Texts(std::initializer_list<std::string_view> texts) { add(texts); }  // NOLINT: implicit by design
  /// How many texts there are.
  std::size_t size() const noexcept { return lens_.size(); }
  /// The start of each text (null for an empty one without storage), as the C calls take them.
  const char *const *data() const noexcept { return ptrs_.empty() ? nullptr : ptrs_.data(); }
  /// The byte length of each text, as the C calls take them.
  const std::size_t *lens() const noexcept { return lens_.empty() ? nullptr : lens_.data(); }

 private:
  template <class C>
  void add(const C &texts) {
    ptrs_.reserve(texts.size());
    lens_.reserve(texts.size());
    for (const auto &t : texts) {
      ptrs_.push_back(t.data());
      lens_.push_back(t.size());
    }
  }
  std::vector<const char *> ptrs_;
  std::vector<std::size_t> lens_;
};

/// Exact token counting and token-exact truncation with a byte-level BPE
/// vocabulary: the built-in "o200k_base" (GPT-4o, GPT-4.1, o-series, GPT-5)
/// and "cl100k_base" (GPT-4, GPT-3.5, text-embedding-3), or any tiktoken
/// vocabulary file. Counts equal tiktoken's `encode_ordinary` (special
/// tokens such as `<|endoftext|>` count as ordinary text). Immutable: a
/// const Tokenizer may be shared by any number of threads. Move-only; a
/// moved-from one throws ClosedHandle.
class Tokenizer {
 public:
  /// The built-in encoding `name`, "o200k_base" or "cl100k_base". An
  /// unknown name throws InvalidArgument listing the known ones; a null
  /// `name` InvalidArgument (CUPEL_ERROR_NULL_POINTER); a library built
  /// without its vocabularies Error (CUPEL_ERROR_UNSUPPORTED).
  explicit Tokenizer(const char *name) : h_(make(name)) {}
  /// The built-in encoding `name`, from a `std::string` or
  /// `std::string_view` (as the `const char *` form; a NUL byte inside
  /// `name` throws InvalidArgument).
  explicit Tokenizer(std::string_view name) : h_(make(std::string(name))) {}
  /// A tokenizer from a tiktoken vocabulary file's bytes `ranks` (lines of
  /// `base64(token) rank`, as Llama 3 and the OpenAI encodings ship them)
  /// and its pre-tokenization regular expression `pattern` (none:
  /// o200k_base's). The library keeps its own copy of the bytes. A
  /// malformed line throws InvalidArgument naming the line; so do a
  /// duplicate token or rank, a missing single-byte token and a pattern
  /// that does not compile (naming the problem).
  static Tokenizer from_tiktoken(std::string_view ranks, const std::optional<std::string> &pattern = std::nullopt) {
    const char *pat = pattern ? detail::c_str(*pattern, "pattern") : nullptr;
    const auto *bytes = reinterpret_cast<const uint8_t *>(ranks.data());
    return Tokenizer(Adopt{}, detail::create<cupel_tokenizer>([&](cupel_tokenizer **p) {
                       return cupel_tokenizer_from_tiktoken(bytes, ranks.size(), pat, p);
                     }));
  }
  /// A null pattern is refused at compile time: leave the pattern out instead.
  static Tokenizer from_tiktoken(std::string_view ranks, std::nullptr_t) = delete;

  /// The number of tokens of `text` (UTF-8; invalid UTF-8 throws
  /// InvalidArgument naming `text` and the offset of the first bad byte).
  int64_t count(std::string_view text) const {
    const cupel_tokenizer *p = use();
    int64_t n = 0;
    detail::check(cupel_tokenizer_count(p, text.data(), text.size(), &n));
    return n;
  }
  /// The counts of `texts`, in order, all or nothing: a text that is not
  /// UTF-8 throws InvalidArgument naming `texts[i]` and its offset. Large
  /// batches are counted on two threads.
  std::vector<int64_t> count_many(const Texts &texts) const {
    const cupel_tokenizer *p = use();
    std::vector<int64_t> out(texts.size());
    detail::check(cupel_tokenizer_count_many(p, texts.size(), texts.data(), texts.lens(), out.data()));
    return out;
  }
  /// Cuts `text` to at most `max_tokens` tokens, keeping its head, its tail
  /// or both ends (`keep`), at token boundaries that are character
  /// boundaries; returns the kept text, its byte ranges and its count
  /// (cupel_tokenizer_truncate has the exact rules). A text that fits is
  /// kept whole (`head_end == tail_start == text.size()`); `max_tokens` 0
  /// keeps nothing. No marker goes between head and tail: a caller that
  /// writes one reserves its tokens first, and a count of the joined text
  /// may differ by a token at the seam. A negative `max_tokens` or invalid
  /// UTF-8 throws InvalidArgument.
  Truncation truncate(std::string_view text, int64_t max_tokens, Keep keep = Keep::Head) const {
    const cupel_tokenizer *p = use();
    Truncation t;
    detail::check(cupel_tokenizer_truncate(p, text.data(), text.size(), max_tokens, static_cast<int>(keep),
                                           &t.head_end, &t.tail_start, &t.tokens));
    t.text.reserve(t.head_end + (text.size() - t.tail_start));
    t.text.append(text.substr(0, t.head_end));
    t.text.append(text.substr(t.tail_start));
    return t;
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_tokenizer *get() const noexcept { return h_.get(); }

 private:
  struct Adopt {};  // the private constructor's tag, so that Tokenizer(nullptr) means a null name
  Tokenizer(Adopt, cupel_tokenizer *p) : h_(p) {}
  static cupel_tokenizer *make(const char *name) {
    if (!name) detail::null_handle("name");
    return detail::create<cupel_tokenizer>([&](cupel_tokenizer **p) { return cupel_tokenizer_new(name, p); });
  }
  static cupel_tokenizer *make(const std::string &name) { return make(detail::c_str(name, "name")); }
  const cupel_tokenizer *use() const { return h_.use("tokenizer"); }
  detail::Handle<cupel_tokenizer, cupel_tokenizer_free> h_;
};

/// A variant of an item (Items::add_variant): a smaller stand-in, such as a
/// summary, a digest or a placeholder like "[tool output cleared]", that
/// selection may take instead of the item. An item's variants are numbered
/// 1, 2, ... in the order added (variant 0 is the item as pushed), and
/// selection takes at most one option of an item.
struct Variant {
  int64_t tokens = 0;                  ///< what it adds to the context (>= 0; may exceed the item's)
  double value = 1;                    ///< the share of the item's score it keeps, in (0, 1]
  std::optional<std::string> content = std::nullopt;  ///< its text (non-empty UTF-8), or none
};
/// Whether two variants are the same: tokens, value and content.
inline bool operator==(const Variant &a, const Variant &b) {
  return a.tokens == b.tokens && a.value == b.value && a.content == b.content;
}
/// Whether two variants differ.
inline bool operator!=(const Variant &a, const Variant &b) { return !(a == b); }

/// How a pipeline may cut a truncatable item (Items::set_truncatable): what
/// of its content it keeps, and the fewest tokens worth including.
struct Truncatable {
  Keep keep = Keep::Head;  ///< the head, the tail or both ends of the content
  int64_t min_tokens = 0;  ///< a cut keeping fewer tokens is not included (>= 0)
};
/// Whether two truncation settings are the same.
inline bool operator==(const Truncatable &a, const Truncatable &b) {
  return a.keep == b.keep && a.min_tokens == b.min_tokens;
}
/// Whether two truncation settings differ.
inline bool operator!=(const Truncatable &a, const Truncatable &b) { return !(a == b); }

/// One item read back from an Items list (Items::at): every attribute, with
/// std::nullopt for one that was never set.
struct Item {
  int64_t tokens = 0;                        ///< token count, as pushed
  double score = 0;                          ///< score, as pushed
  std::string kind;                          ///< kind as the list first spelled it ("Message" by default)
  std::optional<std::string> content;        ///< content, if set
  std::optional<int64_t> timestamp;          ///< UTC milliseconds since the Unix epoch, if set
  std::optional<int64_t> priority;           ///< priority, if set
  bool pinned = false;                       ///< whether the item is pinned
  std::optional<double> relevance_hint;      ///< relevance hint, if set
  std::string source;                        ///< source ("Chat" unless set)
  uint64_t group = 0;                        ///< keep-together group (0: none)
  std::vector<std::string> tags;             ///< tags in the order added (repeats kept)
  std::vector<std::pair<std::string, std::string>> metadata;  ///< (key, value), keys in first-set order
  std::vector<Variant> variants;             ///< variants 1, 2, ... in the order added (variants[v - 1] is v)
  std::optional<Truncatable> truncatable;    ///< how it may be cut, if truncatable
  uint64_t key = 0;                          ///< identity key for sessions (0: none)
  bool is_volatile = false;                  ///< marked volatile (Items::set_volatile)
};

/// The scored candidates. An item's index is its push order, from 0.
class Items {
 public:
  /// An empty list.
  Items() : h_(detail::create<cupel_items>(cupel_items_new)) {}
  /// Adds one item of the default kind "Message".
  void push(int64_t tokens, double score) { detail::check(cupel_items_push(use(), tokens, score, nullptr)); }
  /// Adds one item of `kind`, which must be a visible UTF-8 name: an empty
  /// or blank kind throws InvalidArgument (use push(tokens, score) for the
  /// default kind).
  void push(int64_t tokens, double score, const std::string &kind) {
    cupel_items *p = use();
    detail::check(cupel_items_push(p, tokens, score, detail::c_str(kind, "kind")));
  }
  /// A null kind is refused at compile time: leave the kind out instead.
  void push(int64_t tokens, double score, std::nullptr_t) = delete;
  /// Adds `count` items from parallel C arrays, all or nothing (`kinds` may
  /// be null: every item gets "Message"; so does an item whose kind is null).
  void push_many(std::size_t count, const int64_t *tokens, const double *scores,
                 const char *const *kinds = nullptr) {
    detail::check(cupel_items_push_many(use(), count, tokens, scores, kinds));
  }
  /// Adds items from vectors of equal length, all or nothing. `kinds` empty:
  /// every item gets the default kind "Message"; otherwise one visible kind
  /// per item (errors name `tokens[i]`, `scores[i]` or `kinds[i]`).
  void push_many(const std::vector<int64_t> &tokens, const std::vector<double> &scores,
                 const std::vector<std::string> &kinds = {}) {
    cupel_items *p = use();
    if (tokens.size() != scores.size() || (!kinds.empty() && kinds.size() != tokens.size()))
      throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT,
                            "push_many: " + std::to_string(tokens.size()) + " tokens, " +
                                std::to_string(scores.size()) + " scores and " + std::to_string(kinds.size()) +
                                " kinds; give one each per item (or no kinds)");
    std::vector<const char *> k;
    k.reserve(kinds.size());
    for (std::size_t i = 0; i < kinds.size(); i++)
      k.push_back(detail::c_str(kinds[i], "kinds[" + std::to_string(i) + "]"));
    detail::check(cupel_items_push_many(p, tokens.size(), tokens.data(), scores.data(),
                                        kinds.empty() ? nullptr : k.data()));
  }

  /// Adds one item of the default kind "Message" made from `text`: its
  /// tokens are `tokenizer`'s count of the text, its content the text.
  /// An empty text or one that is not UTF-8 throws InvalidArgument naming
  /// `text`; a null `tokenizer` InvalidArgument, a moved-from one
  /// ClosedHandle. On error the list is unchanged.
  void push_text(Ref<Tokenizer> tokenizer, std::string_view text, double score) {
    cupel_items *p = use();
    const cupel_tokenizer *t = detail::raw(tokenizer, "tokenizer");
    detail::check(cupel_items_push_text(p, t, text.data(), text.size(), score, nullptr));
  }
  /// Adds one item of `kind` (a visible UTF-8 name) made from `text`, as
  /// push_text(tokenizer, text, score) does.
  void push_text(Ref<Tokenizer> tokenizer, std::string_view text, double score, const std::string &kind) {
    cupel_items *p = use();
    const cupel_tokenizer *t = detail::raw(tokenizer, "tokenizer");
    const char *k = detail::c_str(kind, "kind");
    detail::check(cupel_items_push_text(p, t, text.data(), text.size(), score, k));
  }
  /// A null kind is refused at compile time: leave the kind out instead.
  void push_text(Ref<Tokenizer> tokenizer, std::string_view text, double score, std::nullptr_t) = delete;
  /// Adds one item per text, all or nothing: item i has content `texts[i]`,
  /// tokens its count with `tokenizer`, score `scores[i]` and kind
  /// `kinds[i]` (`kinds` empty: every item gets "Message"). The texts are
  /// counted on up to two threads. Errors name the first bad element,
  /// `texts[i]`, `scores[i]` or `kinds[i]`.
  void push_texts(Ref<Tokenizer> tokenizer, const Texts &texts, const std::vector<double> &scores,
                  const std::vector<std::string> &kinds = {}) {
    cupel_items *p = use();
    const cupel_tokenizer *t = detail::raw(tokenizer, "tokenizer");
    if (texts.size() != scores.size() || (!kinds.empty() && kinds.size() != texts.size()))
      throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT,
                            "push_texts: " + std::to_string(texts.size()) + " texts, " +
                                std::to_string(scores.size()) + " scores and " + std::to_string(kinds.size()) +
                                " kinds; give one each per item (or no kinds)");
    std::vector<const char *> k;
    k.reserve(kinds.size());
    for (std::size_t i = 0; i < kinds.size(); i++)
      k.push_back(detail::c_str(kinds[i], "kinds[" + std::to_string(i) + "]"));
    detail::check(cupel_items_push_texts(p, t, texts.size(), texts.data(), texts.lens(), scores.data(),
                                         kinds.empty() ? nullptr : k.data()));
  }

  // ---- item attributes (the ContextItem fields the pipeline's stages read)

  /// Sets item `index`'s content (non-empty UTF-8; deduplication compares it).
  void set_content(std::size_t index, const std::string &content) {
    cupel_items *p = at_index(index);
    detail::check(cupel_items_set_content(p, index, detail::c_str(content, "content")));
  }
  /// Sets item `index`'s timestamp, UTC milliseconds since the Unix epoch.
  void set_timestamp(std::size_t index, int64_t unix_millis) {
    detail::check(cupel_items_set_timestamp(at_index(index), index, unix_millis));
  }
  /// Sets item `index`'s priority (higher is more important).
  void set_priority(std::size_t index, int64_t priority) {
    detail::check(cupel_items_set_priority(at_index(index), index, priority));
  }
  /// Pins (or unpins) item `index`: a pipeline includes it unscored, first.
  void set_pinned(std::size_t index, bool pinned) {
    detail::check(cupel_items_set_pinned(at_index(index), index, pinned));
  }
  /// Sets item `index`'s future-relevance hint (read by the Reflexive scorer).
  void set_relevance_hint(std::size_t index, double hint) {
    detail::check(cupel_items_set_relevance_hint(at_index(index), index, hint));
  }
  /// Sets item `index`'s source ("Chat" when never set; a visible name).
  void set_source(std::size_t index, const std::string &source) {
    cupel_items *p = at_index(index);
    detail::check(cupel_items_set_source(p, index, detail::c_str(source, "source")));
  }
  /// Adds a tag to item `index` (tags accumulate, repeats included).
  void add_tag(std::size_t index, const std::string &tag) {
    cupel_items *p = at_index(index);
    detail::check(cupel_items_add_tag(p, index, detail::c_str(tag, "tag")));
  }
  /// Sets metadata `key` of item `index` to `value` (replacing an earlier value).
  void set_metadata(std::size_t index, const std::string &key, const std::string &value) {
    cupel_items *p = at_index(index);
    const char *k = detail::c_str(key, "key");
    detail::check(cupel_items_set_metadata(p, index, k, detail::c_str(value, "value")));
  }
  /// Puts item `index` in keep-together group `group` (0: none): items that
  /// share a non-zero group are selected all together or not at all and
  /// placed next to each other in push order (README "Groups").
  void set_group(std::size_t index, uint64_t group) {
    detail::check(cupel_items_set_group(at_index(index), index, group));
  }

  // ---- identity for sessions (README "Sessions")

  /// Gives item `index` an identity key for sessions: any non-zero number
  /// that names the same message, tool call or document from one turn's
  /// list to the next (0, the default, is no key). A keyed item is the
  /// same item as last turn when its key, tokens and content are the same;
  /// a keyless one when its kind, tokens and content are. Keys must be
  /// unique in a list for Session::run (it throws InvalidArgument naming
  /// both indices); Pipeline::run ignores them. An index past the end
  /// throws OutOfRange.
  void set_key(std::size_t index, uint64_t key) {
    detail::check(cupel_items_set_key(at_index(index), index, key));
  }
  /// Item `index`'s identity key (0: none); OutOfRange past the end.
  uint64_t key(std::size_t index) const {
    const cupel_items *p = at_index(index);
    uint64_t k = 0;
    detail::check(cupel_items_key(p, index, &k));
    return k;
  }
  /// Marks item `index` volatile (or not): expected to change every turn
  /// (the open file in an editor, this turn's retrieved documents). A
  /// Session places every volatile item after every other item, so that
  /// its changes never break the cached prefix. A group is volatile when
  /// any member is; an item with neither key nor content is treated as
  /// volatile. Pipeline::run ignores it. OutOfRange past the end.
  void set_volatile(std::size_t index, bool is_volatile) {
    detail::check(cupel_items_set_volatile(at_index(index), index, is_volatile));
  }
  /// Whether item `index` was marked volatile (set_volatile); OutOfRange
  /// past the end.
  bool is_volatile(std::size_t index) const {
    const cupel_items *p = at_index(index);
    bool v = false;
    detail::check(cupel_items_volatile(p, index, &v));
    return v;
  }

  // ---- items that shrink: variants and truncation (README "Items that shrink")

  /// Adds a variant without content to item `index` (see Variant): it adds
  /// `tokens` (>= 0) to the context and keeps `value` (in (0, 1]) of the
  /// item's score; the next number, 1, 2, ... An item has at most 255
  /// variants. A variant of an item pushed with 0 tokens, or of a pinned
  /// item, is never chosen; a variant of a grouped item gives its group an
  /// option per variant number (every member at its variant v when it has
  /// one, else as pushed). A bad `tokens` or `value` (NaN included) throws
  /// InvalidArgument, an index past the end OutOfRange; the item is then
  /// unchanged.
  void add_variant(std::size_t index, int64_t tokens, double value) {
    detail::check(cupel_items_add_variant(at_index(index), index, tokens, value, nullptr));
  }
  /// Adds a variant with text `content` (non-empty UTF-8: the text sent
  /// when selection takes the variant) to item `index`, as
  /// add_variant(index, tokens, value) does. An empty content, one that is
  /// not UTF-8 or holds a NUL byte throws InvalidArgument naming `content`.
  void add_variant(std::size_t index, int64_t tokens, double value, const std::string &content) {
    cupel_items *p = at_index(index);
    detail::check(cupel_items_add_variant(p, index, tokens, value, detail::c_str(content, "content")));
  }
  /// A null content is refused at compile time: leave the content out instead.
  void add_variant(std::size_t index, int64_t tokens, double value, std::nullptr_t) = delete;
  /// Adds `variant` to item `index`: `items.add_variant(1, {12, 0.1,
  /// "[output cleared]"})`, as the forms above do.
  void add_variant(std::size_t index, const Variant &variant) {
    if (variant.content)
      add_variant(index, variant.tokens, variant.value, *variant.content);
    else
      add_variant(index, variant.tokens, variant.value);
  }
  /// Makes item `index` truncatable: a pipeline run with a tokenizer
  /// (Pipeline::set_tokenizer) may include it cut down to fill what the
  /// slicer left, keeping `keep` of its content, if the cut keeps at least
  /// `min_tokens` (>= 0) tokens; its score then scales by the kept share of
  /// its tokens. The item needs content (a run fails naming it otherwise). A
  /// pinned item, a member of a group and an item a count cap excluded are
  /// never cut; cupel::slice does not cut. Setting again replaces. An
  /// unknown `keep` or a negative `min_tokens` throws InvalidArgument, an
  /// index past the end OutOfRange; the item is then unchanged.
  void set_truncatable(std::size_t index, Keep keep, int64_t min_tokens) {
    detail::check(cupel_items_set_truncatable(at_index(index), index, static_cast<int>(keep), min_tokens));
  }
  /// Makes item `index` truncatable with `truncatable`'s keep and min_tokens.
  void set_truncatable(std::size_t index, const Truncatable &truncatable) {
    set_truncatable(index, truncatable.keep, truncatable.min_tokens);
  }
  /// Makes item `index` no longer truncatable (a no-op if it was not).
  void clear_truncatable(std::size_t index) {
    detail::check(cupel_items_clear_truncatable(at_index(index), index));
  }

  // ---- bulk forms: items `first .. first + values.size()`, one native call each, all or nothing

  /// Sets the contents of items `first ..` (errors name `contents[k]`).
  void set_contents(std::size_t first, const std::vector<std::string> &contents) {
    cupel_items *p = at_span(first, contents.size());
    std::vector<const char *> c;
    c.reserve(contents.size());
    for (std::size_t i = 0; i < contents.size(); i++)
      c.push_back(detail::c_str(contents[i], "contents[" + std::to_string(i) + "]"));
    detail::check(cupel_items_set_contents(p, first, c.size(), c.data()));
  }
  /// Sets the timestamps of items `first ..`.
  void set_timestamps(std::size_t first, const std::vector<int64_t> &unix_millis) {
    cupel_items *p = at_span(first, unix_millis.size());
    detail::check(cupel_items_set_timestamps(p, first, unix_millis.size(), unix_millis.data()));
  }
  /// Sets the priorities of items `first ..`.
  void set_priorities(std::size_t first, const std::vector<int64_t> &priorities) {
    cupel_items *p = at_span(first, priorities.size());
    detail::check(cupel_items_set_priorities(p, first, priorities.size(), priorities.data()));
  }
  /// Sets the pinned flags of items `first ..`.
  void set_pinned_many(std::size_t first, const std::vector<bool> &pinned) {
    cupel_items *p = at_span(first, pinned.size());
    std::unique_ptr<bool[]> b(new bool[pinned.size() + 1]);
    for (std::size_t i = 0; i < pinned.size(); i++) b[i] = pinned[i];
    detail::check(cupel_items_set_pinned_many(p, first, pinned.size(), b.get()));
  }
  /// Sets the relevance hints of items `first ..`.
  void set_relevance_hints(std::size_t first, const std::vector<double> &hints) {
    cupel_items *p = at_span(first, hints.size());
    detail::check(cupel_items_set_relevance_hints(p, first, hints.size(), hints.data()));
  }
  /// Sets the keep-together groups of items `first ..` (0: none).
  void set_groups(std::size_t first, const std::vector<uint64_t> &groups) {
    cupel_items *p = at_span(first, groups.size());
    detail::check(cupel_items_set_groups(p, first, groups.size(), groups.data()));
  }
  /// Sets the identity keys of items `first ..` (0: none). Duplicate keys
  /// are refused by Session::run, not here.
  void set_keys(std::size_t first, const std::vector<uint64_t> &keys) {
    cupel_items *p = at_span(first, keys.size());
    detail::check(cupel_items_set_keys(p, first, keys.size(), keys.data()));
  }
  /// Sets the volatile flags of items `first ..`.
  void set_volatile_many(std::size_t first, const std::vector<bool> &is_volatile) {
    cupel_items *p = at_span(first, is_volatile.size());
    std::unique_ptr<bool[]> b(new bool[is_volatile.size() + 1]);
    for (std::size_t i = 0; i < is_volatile.size(); i++) b[i] = is_volatile[i];
    detail::check(cupel_items_set_volatile_many(p, first, is_volatile.size(), b.get()));
  }

  // ---- packed strings: one buffer of NUL-terminated strings back to back

  /// Adds `count` items from C arrays with their kinds packed in one buffer,
  /// all or nothing: `kinds` holds `count` NUL-terminated UTF-8 strings back
  /// to back, the last NUL included (`"Message\0\0Document\0"`: an empty
  /// string gives that item the default kind "Message"); an empty `kinds`
  /// gives every item the default kind. Another number of strings than
  /// `count` throws InvalidArgument naming `kinds`; so do a bad kind
  /// (`kinds[i]`) and a bad token count or score (`tokens[i]`, `scores[i]`).
  void push_many_packed(std::size_t count, const int64_t *tokens, const double *scores, std::string_view kinds = {}) {
    detail::check(cupel_items_push_many_packed(use(), count, tokens, scores, kinds.empty() ? nullptr : kinds.data(),
                                               kinds.size()));
  }
  /// Adds items from vectors of equal length with their kinds packed in one
  /// buffer, as push_many_packed(count, tokens, scores, kinds) does.
  void push_many_packed(const std::vector<int64_t> &tokens, const std::vector<double> &scores,
                        std::string_view kinds = {}) {
    cupel_items *p = use();
    if (tokens.size() != scores.size())
      throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT, "push_many_packed: " + std::to_string(tokens.size()) +
                                                              " tokens and " + std::to_string(scores.size()) +
                                                              " scores; give one each per item");
    detail::check(cupel_items_push_many_packed(p, tokens.size(), tokens.data(), scores.data(),
                                               kinds.empty() ? nullptr : kinds.data(), kinds.size()));
  }
  /// Sets the contents of items `first .. first + count` from one buffer,
  /// all or nothing: `contents` holds `count` NUL-terminated UTF-8 strings
  /// back to back, the last NUL included; an empty string leaves that item's
  /// content as it is. A range past the end throws OutOfRange; another
  /// number of strings than `count`, or a string that is not UTF-8,
  /// InvalidArgument.
  void set_contents_packed(std::size_t first, std::size_t count, std::string_view contents) {
    cupel_items *p = at_span(first, count);
    detail::check(cupel_items_set_contents_packed(p, first, count, contents.empty() ? nullptr : contents.data(),
                                                  contents.size()));
  }

  // ---- reading back

  /// Item `index` with all its attributes; OutOfRange past the end.
  Item at(std::size_t index) const {
    const cupel_items *p = use();
    detail::check_index(index, cupel_items_len(p), "index");
    Item it;
    const char *s = nullptr;
    std::size_t n = 0;
    bool present = false;
    detail::check(cupel_items_tokens(p, index, &it.tokens));
    detail::check(cupel_items_score(p, index, &it.score));
    detail::check(cupel_items_kind(p, index, &s, &n));
    it.kind = detail::text(s, n);
    detail::check(cupel_items_content(p, index, &s, &n));
    if (s) it.content = detail::text(s, n);
    int64_t v = 0;
    detail::check(cupel_items_timestamp(p, index, &present, &v));
    if (present) it.timestamp = v;
    detail::check(cupel_items_priority(p, index, &present, &v));
    if (present) it.priority = v;
    detail::check(cupel_items_pinned(p, index, &it.pinned));
    double hint = 0;
    detail::check(cupel_items_relevance_hint(p, index, &present, &hint));
    if (present) it.relevance_hint = hint;
    detail::check(cupel_items_source(p, index, &s, &n));
    it.source = detail::text(s, n);
    detail::check(cupel_items_group(p, index, &it.group));
    std::size_t count = 0;
    detail::check(cupel_items_tag_count(p, index, &count));
    for (std::size_t k = 0; k < count; k++) {
      detail::check(cupel_items_tag(p, index, k, &s, &n));
      it.tags.push_back(detail::text(s, n));
    }
    detail::check(cupel_items_metadata_count(p, index, &count));
    for (std::size_t k = 0; k < count; k++) {
      const char *vs = nullptr;
      std::size_t vn = 0;
      detail::check(cupel_items_metadata_entry(p, index, k, &s, &n, &vs, &vn));
      it.metadata.emplace_back(detail::text(s, n), detail::text(vs, vn));
    }
    detail::check(cupel_items_variant_count(p, index, &count));
    for (std::size_t v = 1; v <= count; v++) {
      Variant var;
      detail::check(cupel_items_variant(p, index, v, &var.tokens, &var.value, &s, &n));
      if (s) var.content = detail::text(s, n);
      it.variants.push_back(std::move(var));
    }
    bool truncatable = false;
    int keep = 0;
    int64_t min_tokens = 0;
    detail::check(cupel_items_truncatable(p, index, &truncatable, &keep, &min_tokens));
    if (truncatable) it.truncatable = Truncatable{static_cast<Keep>(keep), min_tokens};
    detail::check(cupel_items_key(p, index, &it.key));
    detail::check(cupel_items_volatile(p, index, &it.is_volatile));
    return it;
  }
  /// The number of items.
  std::size_t size() const { return cupel_items_len(use()); }
  /// Removes every item (indices start again from 0).
  void clear() { cupel_items_clear(use()); }
  /// Removes the items from index `len` on, with all their attributes (and
  /// the kinds only they used): the list then holds `len` items. Undoes the
  /// pushes made since the list held `len` items, e.g. when setting their
  /// attributes failed. A `len` above size() throws OutOfRange and changes
  /// nothing.
  void truncate(std::size_t len) {
    cupel_items *p = use();
    std::size_t have = cupel_items_len(p);
    if (len > have)
      throw OutOfRange(CUPEL_ERROR_INVALID_ARGUMENT, "len " + std::to_string(len) +
                                                         " is out of range: the list holds " +
                                                         std::to_string(have) + " items");
    detail::check(cupel_items_truncate(p, len));
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_items *get() const noexcept { return h_.get(); }

 private:
  cupel_items *use() const { return h_.use("items"); }
  cupel_items *at_index(std::size_t index) const {
    cupel_items *p = use();
    detail::check_index(index, cupel_items_len(p), "index");
    return p;
  }
  cupel_items *at_span(std::size_t first, std::size_t count) const {
    cupel_items *p = use();
    detail::check_span(first, count, cupel_items_len(p));
    return p;
  }
  detail::Handle<cupel_items, cupel_items_free> h_;
};

/// A token budget.
class Budget {
 public:
  /// `max_tokens` (the hard ceiling, >= 0) and `target_tokens` (the
  /// slicers' goal, 0 ..= max_tokens).
  Budget(int64_t max_tokens, int64_t target_tokens)
      : h_(detail::create<cupel_budget>(
            [&](cupel_budget **p) { return cupel_budget_new(max_tokens, target_tokens, p); })) {}
  /// Keeps `output_reserve` tokens (0 ..= max_tokens) free for the model's answer.
  void set_output_reserve(int64_t output_reserve) {
    detail::check(cupel_budget_set_output_reserve(use(), output_reserve));
  }
  /// Sets the estimation safety margin, `percent` in [0, 100].
  void set_safety_margin(double percent) { detail::check(cupel_budget_set_safety_margin(use(), percent)); }
  /// Reserves `tokens` (>= 0) for `kind` (a visible name); setting a kind again replaces.
  void reserve(const std::string &kind, int64_t tokens) {
    cupel_budget *p = use();
    detail::check(cupel_budget_reserve(p, detail::c_str(kind, "kind"), tokens));
  }
  /// (effective max, effective target) with `pinned_tokens` committed.
  std::pair<int64_t, int64_t> effective(int64_t pinned_tokens = 0) const {
    int64_t max = 0, target = 0;
    detail::check(cupel_budget_effective(use(), pinned_tokens, &max, &target));
    return {max, target};
  }

  // ---- budgets as data (README "Policies as data")

  /// A budget from a budget document (UTF-8 JSON): `{"maxTokens",
  /// "targetTokens"}` (both required), `"outputReserve"`,
  /// `"reservedSlots": {kind: tokens}`, `"estimationSafetyMarginPercent"`,
  /// validated as the constructor and setters validate. A document that is
  /// empty, `null`, malformed, not UTF-8 or breaks a rule throws
  /// InvalidArgument whose message gives the JSON path and the rule (`json
  /// $.maxTokens: required`).
  static Budget from_json(std::string_view json) {
    const char *text = json.data() ? json.data() : "";  // an empty view may have no storage
    return Budget(Adopt{}, detail::create<cupel_budget>([&](cupel_budget **p) {
                    return cupel_budget_from_json(text, json.size(), p);
                  }));
  }
  /// from_json(std::string_view) of a NUL-terminated text; a null `json`
  /// throws InvalidArgument (CUPEL_ERROR_NULL_POINTER) naming `json`.
  static Budget from_json(const char *json) {
    if (!json) detail::null_handle("json");
    return from_json(std::string_view(json));
  }
  /// The budget as a budget document: every field, keys in alphabetical
  /// order, reserved kinds as compared (lower-cased); from_json of it
  /// gives a budget equal to this one.
  std::string to_json() const {
    const cupel_budget *p = use();
    return detail::read_text([&](char *buf, std::size_t cap, std::size_t *n) {
      return cupel_budget_to_json(p, buf, cap, n);
    });
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_budget *get() const noexcept { return h_.get(); }

 private:
  struct Adopt {};
  Budget(Adopt, cupel_budget *p) : h_(p) {}
  cupel_budget *use() const { return h_.use("budget"); }
  detail::Handle<cupel_budget, cupel_budget_free> h_;
};

/// A QuotaSlice entry: `kind` gets `require_percent` ..= `cap_percent` of the target.
struct Quota {
  std::string kind;        ///< a visible kind name
  double require_percent;  ///< at least this share of the target, in [0, 100]
  double cap_percent;      ///< at most this share of the target, in [require_percent, 100]
};

/// A CountQuotaSlice entry: `require_count` ..= `cap_count` items of `kind`.
struct CountQuota {
  std::string kind;        ///< a visible kind name
  uint32_t require_count;  ///< at least this many items (committed first)
  uint32_t cap_count;      ///< at most this many items
};

/// What a count slicer does when a kind has fewer items than required.
enum class Scarcity { Degrade = CUPEL_SCARCITY_DEGRADE, Error = CUPEL_SCARCITY_ERROR };

/// A configured slicer. Decorators copy what they need of their inner slicer.
class Slicer {
 public:
  /// GreedySlice: value density (score per token) greedy fill.
  static Slicer greedy() { return make([](cupel_slicer **p) { return cupel_slicer_new_greedy(p); }); }
  /// KnapsackSlice with buckets of `bucket_size` (> 0) tokens.
  static Slicer knapsack(int64_t bucket_size = CUPEL_DEFAULT_BUCKET_SIZE) {
    return make([&](cupel_slicer **p) { return cupel_slicer_new_knapsack(bucket_size, p); });
  }
  /// QuotaSlice over a copy of `inner` (errors name `quotas[i]`).
  static Slicer quota(Ref<Slicer> inner, const std::vector<Quota> &quotas) {
    const cupel_slicer *in = detail::raw(inner, "inner");
    std::vector<cupel_quota> q;
    for (std::size_t i = 0; i < quotas.size(); i++)
      q.push_back({detail::c_str(quotas[i].kind, "quotas[" + std::to_string(i) + "].kind"),
                   quotas[i].require_percent, quotas[i].cap_percent});
    return make([&](cupel_slicer **p) { return cupel_slicer_new_quota(in, q.data(), q.size(), p); });
  }
  /// CountQuotaSlice over a copy of `inner` (errors name `entries[i]`).
  static Slicer count_quota(Ref<Slicer> inner, const std::vector<CountQuota> &entries,
                            Scarcity scarcity = Scarcity::Degrade) {
    const cupel_slicer *in = detail::raw(inner, "inner");
    auto e = entries_of(entries);
    return make([&](cupel_slicer **p) {
      return cupel_slicer_new_count_quota(in, e.data(), e.size(), static_cast<int>(scarcity), p);
    });
  }
  /// CountConstrainedKnapsackSlice: the count phases around a KnapsackSlice of `bucket_size`.
  static Slicer count_constrained_knapsack(int64_t bucket_size, const std::vector<CountQuota> &entries,
                                           Scarcity scarcity = Scarcity::Degrade) {
    auto e = entries_of(entries);
    return make([&](cupel_slicer **p) {
      return cupel_slicer_new_count_constrained_knapsack(bucket_size, e.data(), e.size(),
                                                         static_cast<int>(scarcity), p);
    });
  }
  /// Bounds the working memory of one slice call with this slicer, in bytes.
  void set_memory_limit(std::size_t bytes) { detail::check(cupel_slicer_set_memory_limit(use(), bytes)); }
  /// The memory limit in bytes.
  std::size_t memory_limit() const { return cupel_slicer_memory_limit(use()); }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_slicer *get() const noexcept { return h_.get(); }

 private:
  explicit Slicer(cupel_slicer *p) : h_(p) {}
  cupel_slicer *use() const { return h_.use("slicer"); }
  template <class F>
  static Slicer make(F &&f) {
    return Slicer(detail::create<cupel_slicer>(std::forward<F>(f)));
  }
  static std::vector<cupel_count_quota> entries_of(const std::vector<CountQuota> &entries) {
    std::vector<cupel_count_quota> e;
    for (std::size_t i = 0; i < entries.size(); i++)
      e.push_back({detail::c_str(entries[i].kind, "entries[" + std::to_string(i) + "].kind"),
                   entries[i].require_count, entries[i].cap_count});
    return e;
  }
  detail::Handle<cupel_slicer, cupel_slicer_free> h_;
};

/// A count slicer's unmet requirement.
struct Shortfall {
  std::string kind;    ///< the kind short of items
  uint32_t required;   ///< its require_count
  uint32_t satisfied;  ///< how many were found
};

/// Why an item was included or excluded (`cupel_reason`).
enum class Reason : int32_t {
  Scored = CUPEL_REASON_SCORED,
  Pinned = CUPEL_REASON_PINNED,
  ZeroToken = CUPEL_REASON_ZERO_TOKEN,
  Variant = CUPEL_REASON_VARIANT,      ///< included as one of its variants (Decision::variant says which)
  /// Included cut down to fit what the slicer left (Items::set_truncatable):
  /// Decision::head_end and tail_start give the kept bytes (all of the
  /// content when the whole text fit what was left).
  Truncated = CUPEL_REASON_TRUNCATED,
  BudgetExceeded = CUPEL_REASON_BUDGET_EXCEEDED,
  ScoredTooLow = CUPEL_REASON_SCORED_TOO_LOW,
  Deduplicated = CUPEL_REASON_DEDUPLICATED,
  QuotaCapExceeded = CUPEL_REASON_QUOTA_CAP_EXCEEDED,
  QuotaRequireDisplaced = CUPEL_REASON_QUOTA_REQUIRE_DISPLACED,
  NegativeTokens = CUPEL_REASON_NEGATIVE_TOKENS,
  PinnedOverride = CUPEL_REASON_PINNED_OVERRIDE,
  Filtered = CUPEL_REASON_FILTERED,
  CountCapExceeded = CUPEL_REASON_COUNT_CAP_EXCEEDED,
  /// Excluded by a Session: the pipeline alone would take it, but the
  /// session keeps the prompt's cached prefix instead (an item it left out
  /// before stays out until the next compaction; a compaction leaves its
  /// slack free).
  Deferred = CUPEL_REASON_DEFERRED,
};

/// The specification's name of reason code `code` ("Scored",
/// "BudgetExceeded", ...) as the library names it (cupel_reason_str);
/// "Unknown" for a number that is no reason.
inline const char *reason_name(int code) noexcept { return cupel_reason_str(code); }

/// The specification's name of a reason ("BudgetExceeded", ...), from the library.
inline const char *to_string(Reason r) noexcept { return reason_name(static_cast<int>(r)); }

/// One item's fate in a report. The last four fields describe what an
/// included item adds to the context (README "Items that shrink"); they are
/// 0 in an excluded item's decision. Report::text gives the text itself.
struct Decision {
  std::size_t index;              ///< push-order index
  double score;                   ///< the score the decision was made on (a variant's or a cut's own)
  Reason reason;                  ///< why it was included or excluded
  int64_t item_tokens;            ///< the item's tokens, as pushed
  int64_t available_tokens;       ///< BudgetExceeded: the tokens left
  std::optional<std::size_t> related;  ///< Deduplicated: kept item; PinnedOverride: the pinned one
  uint64_t group;                 ///< keep-together group, 0 when none
  int64_t group_tokens;           ///< the tokens the decision was made on
  /// Included: the option chosen, 0 for the item as pushed (also when it was
  /// cut), v for its variant v (Item::variants[v - 1]).
  std::size_t variant = 0;
  /// Included: the tokens it adds to the context (the variant's, the cut's,
  /// or item_tokens); Report::selected_tokens sums them.
  int64_t added_tokens = 0;
  /// Included: the kept ranges of the item's content are its BYTES
  /// [0, head_end) and [tail_start, content size), on UTF-8 character
  /// boundaries; head_end == tail_start == the content's size when it was
  /// not cut, both 0 when it has no content. A variant is sent whole.
  std::size_t head_end = 0;
  /// Included: where the kept tail of the content starts, in bytes (see head_end).
  std::size_t tail_start = 0;
};

/// Diagnostics of one slice or pipeline run; use one per thread.
class Report {
 public:
  /// An empty report.
  Report() : h_(detail::create<cupel_report>(cupel_report_new)) {}
  /// The effective max tokens of the call.
  int64_t effective_max_tokens() const { return cupel_report_effective_max_tokens(use()); }
  /// The effective target tokens of the call.
  int64_t effective_target_tokens() const { return cupel_report_effective_target_tokens(use()); }
  /// The tokens of the selected items.
  int64_t selected_tokens() const { return cupel_report_selected_tokens(use()); }
  /// The count slicers' unmet requirements.
  std::vector<Shortfall> shortfalls() const {
    const cupel_report *p = use();
    std::vector<Shortfall> out;
    for (std::size_t i = 0; i < cupel_report_shortfall_count(p); i++) {
      const char *kind = nullptr;
      uint32_t req = 0, sat = 0;
      detail::check(cupel_report_shortfall(p, i, &kind, &req, &sat));
      out.push_back({kind, req, sat});
    }
    return out;
  }
  /// The items the count slicers dropped over a cap.
  std::vector<std::size_t> cap_excluded() const {
    const cupel_report *p = use();
    std::vector<std::size_t> out(cupel_report_cap_excluded_count(p));
    for (std::size_t i = 0; i < out.size(); i++) detail::check(cupel_report_cap_excluded(p, i, &out[i]));
    return out;
  }
  /// Included items in placed order.
  std::vector<Decision> included() const { return list(true); }
  /// Excluded items, score descending.
  std::vector<Decision> excluded() const { return list(false); }
  /// The number of candidates the call saw.
  int64_t total_candidates() const { return cupel_report_total_candidates(use()); }
  /// The tokens of all candidates the call saw.
  int64_t total_tokens_considered() const { return cupel_report_total_tokens_considered(use()); }
  /// Tokens the placed items exceed the target by under Overflow::Proceed
  /// (the spec's OverflowEvent); 0 otherwise.
  int64_t tokens_over_budget() const { return cupel_report_tokens_over_budget(use()); }
  /// The text the host sends for included entry `i` (placed order, as
  /// included()[i]): the chosen variant's content when the entry's variant is
  /// v > 0, else the item's content with the cut applied, its bytes
  /// [0, head_end) followed by [tail_start, size), with no marker between
  /// them; std::nullopt when that has no content. `items` must be the list
  /// the report was made from, unchanged since: an entry whose item, variant
  /// or cut it does not hold throws InvalidArgument. An `i` past the
  /// included entries throws OutOfRange.
  std::optional<std::string> text(Ref<Items> items, std::size_t i) const {
    const cupel_report *p = use();
    const cupel_items *it = detail::raw(items, "items");
    std::size_t n = cupel_report_included_count(p);
    if (i >= n)
      throw OutOfRange(CUPEL_ERROR_INVALID_ARGUMENT, "i " + std::to_string(i) +
                                                         " is out of range: the report includes " +
                                                         std::to_string(n) + " items");
    return sent(p, it, i);
  }
  /// text(items, i) of every included entry, in placed order (one per
  /// included()[i]).
  std::vector<std::optional<std::string>> texts(Ref<Items> items) const {
    const cupel_report *p = use();
    const cupel_items *it = detail::raw(items, "items");
    std::size_t n = cupel_report_included_count(p);
    std::vector<std::optional<std::string>> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; i++) out.push_back(sent(p, it, i));
    return out;
  }
  // ---- analytics (README "Analytics")

  /// Budget utilization: the tokens the included items add to the context
  /// over the run's `max_tokens`; 0 when that is 0 (the .NET and Rust
  /// peers give NaN there) and for an empty report.
  double budget_utilization() const {
    double u = 0;
    detail::check(cupel_report_budget_utilization(use(), &u));
    return u;
  }
  /// Kind diversity: how many distinct kinds the included items have,
  /// compared as kinds are (ASCII case-insensitively). `items` is the list
  /// the report was made from: one that does not hold an included item
  /// throws InvalidArgument.
  std::size_t kind_diversity(Ref<Items> items) const {
    const cupel_report *p = use();
    const cupel_items *it = detail::raw(items, "items");
    std::size_t n = 0;
    detail::check(cupel_report_kind_diversity(p, it, &n));
    return n;
  }
  /// Timestamp coverage: the share of included items that have a
  /// timestamp, in [0, 1]; 0 when none is included. `items` as for
  /// kind_diversity.
  double timestamp_coverage(Ref<Items> items) const {
    const cupel_report *p = use();
    const cupel_items *it = detail::raw(items, "items");
    double c = 0;
    detail::check(cupel_report_timestamp_coverage(p, it, &c));
    return c;
  }
  /// The three analytics at once (the report JSON's "analytics" object).
  struct Analytics {
    double budget_utilization = 0;     ///< budget_utilization()
    std::size_t kind_diversity = 0;    ///< kind_diversity(items)
    double timestamp_coverage = 0;     ///< timestamp_coverage(items)
  };
  /// budget_utilization(), kind_diversity(items) and timestamp_coverage(items).
  Analytics analytics(Ref<Items> items) const {
    Analytics a;
    a.budget_utilization = budget_utilization();
    a.kind_diversity = kind_diversity(items);
    a.timestamp_coverage = timestamp_coverage(items);
    return a;
  }

  /// The specification's SelectionReport JSON (`items`: the list the run
  /// saw), with libcupel's "analytics" object (and its quota rows).
  std::string json(Ref<Items> items) const {
    const cupel_report *p = use();
    const cupel_items *it = detail::raw(items, "items");
    std::size_t n = 0;
    cupel_status st = cupel_report_json(p, it, nullptr, 0, &n);
    if (st != CUPEL_ERROR_BUFFER_TOO_SMALL) detail::check(st);
    std::string out(n + 1, '\0');
    detail::check(cupel_report_json(p, it, out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  cupel_report *get() const noexcept { return h_.get(); }

 private:
  cupel_report *use() const { return h_.use("report"); }
  std::vector<Decision> list(bool included) const {
    const cupel_report *p = use();
    std::size_t n = included ? cupel_report_included_count(p) : cupel_report_excluded_count(p);
    std::vector<Decision> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; i++) {
      cupel_decision d;
      detail::check(included ? cupel_report_included(p, i, &d) : cupel_report_excluded(p, i, &d));
      std::optional<std::size_t> related;
      if (d.related_index != SIZE_MAX) related = d.related_index;
      Decision x{d.item_index, d.score, static_cast<Reason>(d.reason), d.item_tokens, d.available_tokens,
                 related, d.group, d.group_tokens};
      if (included) {
        detail::check(cupel_report_included_variant(p, i, &x.variant, &x.added_tokens));
        detail::check(cupel_report_included_cut(p, i, &x.head_end, &x.tail_start));
      }
      out.push_back(x);
    }
    return out;
  }
  // The text sent for included entry `i` (< the included count) of `p`, made from `it`.
  static std::optional<std::string> sent(const cupel_report *p, const cupel_items *it, std::size_t i) {
    cupel_decision d;
    std::size_t variant = 0, head_end = 0, tail_start = 0;
    int64_t tokens = 0;
    detail::check(cupel_report_included(p, i, &d));
    detail::check(cupel_report_included_variant(p, i, &variant, &tokens));
    detail::check(cupel_report_included_cut(p, i, &head_end, &tail_start));
    const std::string entry = "included entry " + std::to_string(i) + " (item " + std::to_string(d.item_index) + ")";
    std::size_t len = cupel_items_len(it);
    if (d.item_index >= len)
      throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT, entry + " is not in items, which holds " +
                                                              std::to_string(len) +
                                                              " items: pass the list the report was made from");
    const char *s = nullptr;
    std::size_t n = 0;
    if (variant > 0) {
      std::size_t count = 0;
      detail::check(cupel_items_variant_count(it, d.item_index, &count));
      if (variant > count)
        throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT,
                              entry + " is its variant " + std::to_string(variant) + ", but items holds " +
                                  std::to_string(count) + " variants of it: pass the list the report was made from");
      int64_t t = 0;
      double v = 0;
      detail::check(cupel_items_variant(it, d.item_index, variant, &t, &v, &s, &n));
      if (!s) return std::nullopt;
      return std::string(s, n);
    }
    detail::check(cupel_items_content(it, d.item_index, &s, &n));
    if (!s) {
      if (head_end == 0 && tail_start == 0) return std::nullopt;
    } else if (head_end <= tail_start && tail_start <= n) {
      std::string out;
      out.reserve(head_end + (n - tail_start));
      out.append(s, head_end);
      out.append(s + tail_start, n - tail_start);
      return out;
    }
    throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT, entry + " keeps bytes [0, " + std::to_string(head_end) +
                                                            ") and [" + std::to_string(tail_start) +
                                                            ", end) of a content of " + std::to_string(n) +
                                                            " bytes in items: pass the list the report was made from");
  }
  detail::Handle<cupel_report, cupel_report_free> h_;
};

/// The shapes of the decay scorer's curve.
enum class DecayCurve { Exponential = CUPEL_DECAY_EXPONENTIAL, Step = CUPEL_DECAY_STEP, Window = CUPEL_DECAY_WINDOW };

/// A scorer (the Score stage). Composites copy their children.
class Scorer {
 public:
  /// The score pushed with each item.
  static Scorer given() { return make(cupel_scorer_new_given); }
  /// RecencyScorer: newer timestamps score higher.
  static Scorer recency() { return make(cupel_scorer_new_recency); }
  /// PriorityScorer: higher priorities score higher.
  static Scorer priority() { return make(cupel_scorer_new_priority); }
  /// FrequencyScorer: items sharing tags with many peers score higher.
  static Scorer frequency() { return make(cupel_scorer_new_frequency); }
  /// ReflexiveScorer: the items' relevance hints.
  static Scorer reflexive() { return make(cupel_scorer_new_reflexive); }
  /// KindScorer: (kind, weight) pairs; empty: the specification's defaults
  /// (errors name `weights[i]`).
  static Scorer kind(const std::vector<std::pair<std::string, double>> &weights = {}) {
    std::vector<cupel_kind_weight> w;
    for (std::size_t i = 0; i < weights.size(); i++)
      w.push_back({detail::c_str(weights[i].first, "weights[" + std::to_string(i) + "].kind"), weights[i].second});
    return make([&](cupel_scorer **p) { return cupel_scorer_new_kind(w.empty() ? nullptr : w.data(), w.size(), p); });
  }
  /// TagScorer: (tag, weight) pairs (errors name `weights[i]`).
  static Scorer tag(const std::vector<std::pair<std::string, double>> &weights) {
    std::vector<cupel_tag_weight> w;
    for (std::size_t i = 0; i < weights.size(); i++)
      w.push_back({detail::c_str(weights[i].first, "weights[" + std::to_string(i) + "].tag"), weights[i].second});
    return make([&](cupel_scorer **p) { return cupel_scorer_new_tag(w.empty() ? nullptr : w.data(), w.size(), p); });
  }
  /// CompositeScorer: `children[i]` weighted by `weights[i]` (finite, > 0),
  /// one weight per child. A null or moved-from child throws, naming
  /// `children[i]`; a bad weight names `weights[i]`.
  static Scorer composite(const std::vector<Ref<Scorer>> &children, const std::vector<double> &weights) {
    if (children.size() != weights.size())
      throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT,
                            "composite: " + std::to_string(children.size()) + " children and " +
                                std::to_string(weights.size()) + " weights; give one weight per child");
    std::vector<const cupel_scorer *> kids;
    kids.reserve(children.size());
    for (std::size_t i = 0; i < children.size(); i++)
      kids.push_back(detail::raw(children[i], "children[" + std::to_string(i) + "]"));
    return make(
        [&](cupel_scorer **p) { return cupel_scorer_new_composite(kids.data(), weights.data(), kids.size(), p); });
  }
  /// CompositeScorer from (child, weight) pairs: `composite(children,
  /// weights)`, whose errors name part i's child `children[i]` and its
  /// weight `weights[i]`.
  static Scorer composite(const std::vector<std::pair<const Scorer *, double>> &parts) {
    std::vector<Ref<Scorer>> kids;
    std::vector<double> w;
    for (const auto &x : parts) {
      kids.emplace_back(x.first);
      w.push_back(x.second);
    }
    return composite(kids, w);
  }
  /// ScaledScorer: `inner`'s scores min-max scaled to [0, 1].
  static Scorer scaled(Ref<Scorer> inner) {
    const cupel_scorer *in = detail::raw(inner, "inner");
    return make([&](cupel_scorer **p) { return cupel_scorer_new_scaled(in, p); });
  }
  /// MetadataTrustScorer: the "cupel:trust" metadata value, else `default_score`.
  static Scorer metadata_trust(double default_score = 0.5) {
    return make([&](cupel_scorer **p) { return cupel_scorer_new_metadata_trust(default_score, p); });
  }
  /// MetadataKeyScorer: `boost` (finite, > 0) for items whose metadata `key` is `value`.
  static Scorer metadata_key(const std::string &key, const std::string &value, double boost) {
    const char *k = detail::c_str(key, "key"), *v = detail::c_str(value, "value");
    return make([&](cupel_scorer **p) { return cupel_scorer_new_metadata_key(k, v, boost, p); });
  }
  /// DecayScorer. `windows`: (max age in seconds, score), youngest first
  /// (step curve); `duration_secs` for the exponential and window curves.
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
  std::vector<double> score(Ref<Items> items) const {
    const cupel_scorer *p = use();
    const cupel_items *it = detail::raw(items, "items");
    std::vector<double> out(cupel_items_len(it));
    std::size_t n = 0;
    detail::check(cupel_scorer_score(p, it, out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_scorer *get() const noexcept { return h_.get(); }

 private:
  explicit Scorer(cupel_scorer *p) : h_(p) {}
  cupel_scorer *use() const { return h_.use("scorer"); }
  template <class F>
  static Scorer make(F &&f) {
    return Scorer(detail::create<cupel_scorer>(std::forward<F>(f)));
  }
  detail::Handle<cupel_scorer, cupel_scorer_free> h_;
};

/// A placer (the Place stage's order).
class Placer {
 public:
  /// Oldest first (timestamp order).
  static Placer chronological() { return Placer(detail::create<cupel_placer>(cupel_placer_new_chronological)); }
  /// Best items at both ends, weakest in the middle.
  static Placer u_shaped() { return Placer(detail::create<cupel_placer>(cupel_placer_new_u_shaped)); }
  /// The Place stage on its own: the item indices `indices`, with their
  /// `scores` (one each), in placed order. An index past the end throws
  /// OutOfRange naming `indices[i]`; a NaN score names `scores[i]`.
  std::vector<std::size_t> place(Ref<Items> items, const std::vector<std::size_t> &indices,
                                 const std::vector<double> &scores) const {
    const cupel_placer *p = use();
    const cupel_items *it = detail::raw(items, "items");
    if (indices.size() != scores.size())
      throw InvalidArgument(CUPEL_ERROR_INVALID_ARGUMENT,
                            "place: " + std::to_string(indices.size()) + " indices and " +
                                std::to_string(scores.size()) + " scores; one score per index");
    std::size_t len = cupel_items_len(it);
    for (std::size_t i = 0; i < indices.size(); i++)
      if (indices[i] >= len)
        throw OutOfRange(CUPEL_ERROR_INVALID_ARGUMENT, "indices[" + std::to_string(i) + "] is " +
                                                           std::to_string(indices[i]) +
                                                           ": out of range, the list holds " +
                                                           std::to_string(len) + " items");
    std::vector<std::size_t> out(indices.size());
    std::size_t n = 0;
    detail::check(cupel_placer_place(p, it, indices.data(), scores.data(), indices.size(), out.data(), out.size(),
                                     &n));
    out.resize(n);
    return out;
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_placer *get() const noexcept { return h_.get(); }

 private:
  explicit Placer(cupel_placer *p) : h_(p) {}
  cupel_placer *use() const { return h_.use("placer"); }
  detail::Handle<cupel_placer, cupel_placer_free> h_;
};

// ---- tracing (README "Tracing")

/// How much a pipeline's trace carries (`cupel_trace_level`).
enum class TraceLevel {
  Stages = CUPEL_TRACE_STAGES,          ///< the five stage spans and the pipeline's
  Exclusions = CUPEL_TRACE_EXCLUSIONS,  ///< + one event per excluded item, after its stage's
  Full = CUPEL_TRACE_FULL               ///< + one event per included item, after the place stage's
};

/// What a trace event is about (`cupel_trace_event_kind`).
enum class TraceEventKind {
  Pipeline = CUPEL_TRACE_EVENT_PIPELINE,    ///< the `cupel.pipeline` span: sent last, spanning the run
  Stage = CUPEL_TRACE_EVENT_STAGE,          ///< a `cupel.stage.<stage>` span, child of the pipeline's
  Exclusion = CUPEL_TRACE_EVENT_EXCLUSION,  ///< a `cupel.exclusion` event on its stage's span
  Included = CUPEL_TRACE_EVENT_INCLUDED     ///< a `cupel.item.included` event on the place stage's span
};

/// One event of a traced run (`cupel_trace_event`): what the
/// specification's OpenTelemetry chapter puts on its spans and events, with
/// each one's start and duration, so that a host can build real spans from
/// it after the fact. Never content or metadata. The string_views are
/// static strings of the library (valid for the life of the program);
/// `item_kind` is a copy.
struct TraceEvent {
  TraceEventKind kind = TraceEventKind::Pipeline;
  /// "cupel.pipeline", "cupel.stage.classify" (.score, .deduplicate,
  /// .slice, .place), "cupel.exclusion" or "cupel.item.included".
  std::string_view name;
  std::string_view stage;      ///< the stage, lowercase ("classify", ...); empty for the pipeline
  std::string_view verbosity;  ///< "StageOnly", "StageAndExclusions" or "Full" (`cupel.verbosity`)
  /// Stage: `cupel.stage.item_count_in` / `_out`; pipeline: the items in
  /// and the items included.
  std::size_t item_count_in = 0;
  std::size_t item_count_out = 0;       ///< see item_count_in
  std::size_t exclusion_count = 0;      ///< stage: `cupel.exclusion.count`; pipeline: all exclusions
  std::size_t item = 0;                 ///< exclusion, included: the item's push index
  std::optional<Reason> reason;         ///< exclusion: why; std::nullopt otherwise
  std::string_view reason_name;         ///< exclusion: the reason's name ("BudgetExceeded"); empty otherwise
  std::string item_kind;                ///< exclusion, included: the item's kind; empty otherwise
  int64_t tokens = 0;                   ///< exclusion: the item's tokens; included: the tokens it adds
  double score = 0;                     ///< included: its score
  int64_t max_tokens = 0;               ///< pipeline: `cupel.budget.max_tokens`
  uint64_t start_unix_nanos = 0;        ///< the start, in nanoseconds since the Unix epoch
  uint64_t duration_nanos = 0;          ///< the duration in nanoseconds (0 for events)
};

/// A trace callback (Pipeline::set_trace).
using TraceCallback = std::function<void(const TraceEvent &)>;

namespace detail {
/// A callback set on a pipeline: what the C library's `user_data` points
/// at. Shared by the Pipeline and the Sessions made from it while it was set.
struct TraceState {
  TraceCallback callback;
};

/// One call into the library that may run pipelines (a run, a session run,
/// a sensitivity comparison, select), on this thread: where the trace
/// trampoline puts what a callback throws, so that the call throws it after
/// the library returns instead of unwinding through C. Nested calls (a
/// callback that runs another pipeline) stack.
class RunScope {
 public:
  RunScope() noexcept : outer_(current()) { current() = this; }
  RunScope(const RunScope &) = delete;
  RunScope &operator=(const RunScope &) = delete;
  ~RunScope() { current() = outer_; }
  /// The innermost scope on this thread, or null.
  static RunScope *&current() noexcept {
    static thread_local RunScope *scope = nullptr;
    return scope;
  }
  /// Throws what a callback threw during the call, if anything; else
  /// throws for a failed `status`.
  void finish(cupel_status status) {
    if (error) std::rethrow_exception(error);
    check(status);
  }
  std::exception_ptr error;  ///< the first exception a callback threw
  bool muted = false;        ///< callbacks are not called (a call repeated only to size a buffer)

 private:
  RunScope *outer_;
};

/// Turns a C event into a TraceEvent.
inline TraceEvent trace_event(const cupel_trace_event &e) {
  auto sv = [](const char *s) { return s ? std::string_view(s) : std::string_view(); };
  TraceEvent t;
  t.kind = static_cast<TraceEventKind>(e.kind);
  t.name = sv(e.name);
  t.stage = sv(e.stage);
  t.verbosity = sv(e.verbosity);
  t.item_count_in = e.item_count_in;
  t.item_count_out = e.item_count_out;
  t.exclusion_count = e.exclusion_count;
  t.item = e.item;
  if (e.reason >= 0) t.reason = static_cast<Reason>(e.reason);
  t.reason_name = sv(e.reason_name);
  t.item_kind = text(e.item_kind, e.item_kind_len);
  t.tokens = e.tokens;
  t.score = e.score;
  t.max_tokens = e.max_tokens;
  t.start_unix_nanos = e.start_unix_nanos;
  t.duration_nanos = e.duration_nanos;
  return t;
}

/// The `cupel_trace_fn` of every traced Pipeline: calls the TraceState's
/// callback. Nothing unwinds into the library: an exception is kept in
/// the thread's RunScope (and the run's later events are not delivered),
/// to be thrown when the call returns; without a scope (a run through
/// cupel.h directly, bypassing this header) it is dropped.
inline void trace_trampoline(void *user_data, const cupel_trace_event *event) noexcept {
  RunScope *scope = RunScope::current();
  if (scope && (scope->muted || scope->error)) return;
  try {
    static_cast<TraceState *>(user_data)->callback(trace_event(*event));
  } catch (...) {
    if (scope) scope->error = std::current_exception();
  }
}
}  // namespace detail

/// What a pipeline does when its selection exceeds the target.
enum class Overflow { Throw = CUPEL_OVERFLOW_THROW, Truncate = CUPEL_OVERFLOW_TRUNCATE, Proceed = CUPEL_OVERFLOW_PROCEED };

class Session;
namespace detail {
struct PolicyAccess;
}  // namespace detail

/// The whole pipeline; keeps copies of its scorer, slicer and placer.
class Pipeline {
 public:
  /// `scorer` null: the pushed scores; `placer` null: the slicer's order.
  /// A null `slicer` throws InvalidArgument; a moved-from handle ClosedHandle.
  Pipeline(const Scorer *scorer, Ref<Slicer> slicer, const Placer *placer)
      : h_(make(detail::raw_or_null(scorer, "scorer"), detail::raw(slicer, "slicer"),
                detail::raw_or_null(placer, "placer"))) {}

  // ---- policies as data (README "Policies as data", docs/policies.md)

  /// A pipeline from a policy document (UTF-8 JSON): the .NET Cupel policy
  /// format (`scorers`, `slicerType`, `placerType`, `deduplicationEnabled`,
  /// `overflowStrategy`, `knapsackBucketSize`, `streamBatchSize`, `quotas`,
  /// `name`, `description`) and libcupel's extensions (docs/policies.md).
  /// A document that is empty, `null`, malformed (line and column), not
  /// UTF-8 or breaks a rule throws InvalidArgument whose message gives the
  /// JSON path and the rule (`json $.scorers[1].weight: must be positive
  /// and finite (got -0.5)`); an unknown scorer type lists the known ones.
  static Pipeline from_json(std::string_view json) {
    const char *text = json.data() ? json.data() : "";  // an empty view may have no storage
    return Pipeline(Adopt{}, detail::create<cupel_pipeline>([&](cupel_pipeline **p) {
                      return cupel_pipeline_from_json(text, json.size(), p);
                    }));
  }
  /// from_json(std::string_view) of a NUL-terminated text; a null `json`
  /// throws InvalidArgument (CUPEL_ERROR_NULL_POINTER) naming `json`.
  static Pipeline from_json(const char *json) {
    if (!json) detail::null_handle("json");
    return from_json(std::string_view(json));
  }
  /// The pipeline as a policy document: every setting, keys in alphabetical
  /// order, such that from_json of it selects exactly as this pipeline
  /// does. A pipeline the format cannot hold (a slicer nested otherwise
  /// than count quotas around quotas around greedy, knapsack or stream; a
  /// tokenizer loaded from a vocabulary file) throws Error
  /// (CUPEL_ERROR_UNSUPPORTED) rather than give a lossy document. The trace
  /// is not part of it.
  std::string to_json() const {
    const cupel_pipeline *p = use();
    return detail::read_text([&](char *buf, std::size_t cap, std::size_t *n) {
      return cupel_pipeline_to_json(p, buf, cap, n);
    });
  }
  /// The preset `name`, matched ASCII case-insensitively: the .NET presets
  /// "Chat", "CodeReview", "Rag", "DocumentQa", "ToolUse", "LongRunning",
  /// "Debugging" and libcupel's "AgentLoop" (preset_names() lists them;
  /// docs/policies.md has their scorers, weights, slicer and placer). An
  /// unknown name throws InvalidArgument listing the presets; a null one
  /// InvalidArgument (CUPEL_ERROR_NULL_POINTER) naming `name`.
  static Pipeline preset(const char *name) {
    if (!name) detail::null_handle("name");
    return Pipeline(Adopt{},
                    detail::create<cupel_pipeline>([&](cupel_pipeline **p) { return cupel_pipeline_preset(name, p); }));
  }
  /// preset(const char *) from a `std::string` or `std::string_view` (a NUL
  /// byte inside `name` throws InvalidArgument).
  static Pipeline preset(std::string_view name) { return preset(detail::c_str(std::string(name), "name")); }

  /// Turns deduplication (on by default) on or off.
  void set_deduplication(bool enabled) { detail::check(cupel_pipeline_set_deduplication(use(), enabled)); }
  /// Sets the overflow strategy (Overflow::Throw by default).
  void set_overflow(Overflow o) { detail::check(cupel_pipeline_set_overflow(use(), static_cast<int>(o))); }
  /// Gives the pipeline `tokenizer`, with which it cuts truncatable items
  /// (Items::set_truncatable). The pipeline keeps its own reference: the
  /// Tokenizer may be destroyed after. Without one (the default), a run over
  /// a truncatable item throws InvalidArgument naming the item. A moved-from
  /// tokenizer throws ClosedHandle.
  void set_tokenizer(const Tokenizer &tokenizer) {
    cupel_pipeline *p = use();
    detail::check(cupel_pipeline_set_tokenizer(p, detail::raw(Ref<Tokenizer>(tokenizer), "tokenizer")));
    tokenizer_set_ = true;
  }
  /// Gives the pipeline `*tokenizer`, as set_tokenizer(const Tokenizer &)
  /// does; null removes the pipeline's tokenizer.
  void set_tokenizer(const Tokenizer *tokenizer) {
    cupel_pipeline *p = use();
    detail::check(cupel_pipeline_set_tokenizer(p, detail::raw_or_null(tokenizer, "tokenizer")));
    tokenizer_set_ = tokenizer != nullptr;
  }
  /// Removes the pipeline's tokenizer (a no-op without one).
  void clear_tokenizer() {
    detail::check(cupel_pipeline_set_tokenizer(use(), nullptr));
    tokenizer_set_ = false;
  }

  /// Traces the pipeline's runs: during each successful run (run(), a
  /// Session's run, policy_sensitivity, select), `callback` gets every
  /// event of `level` on the running thread, in order: each stage's span
  /// (classify, score, deduplicate, slice, place) followed by its exclusion
  /// events (TraceLevel::Exclusions), the place span also by the included
  /// items' events (TraceLevel::Full), and the pipeline's span last. A run
  /// that fails sends nothing. The pipeline owns the callback (and what it
  /// captures) until the trace is replaced or cleared or the pipeline is
  /// destroyed; a Session made while it was set keeps calling it (and
  /// keeps it alive). An exception the callback throws does not unwind
  /// through the library: the run's later events are not delivered and the
  /// call that ran the pipeline throws it once the library returns (the
  /// run's effects stand: a Session has taken the turn). The callback must
  /// not use this pipeline, and must be safe to call from every thread that
  /// runs it. An empty `callback` clears the trace.
  void set_trace(TraceLevel level, TraceCallback callback) {
    cupel_pipeline *p = use();
    if (!callback) {
      detail::check(cupel_pipeline_set_trace(p, static_cast<int>(level), nullptr, nullptr));
      trace_.reset();
      return;
    }
    auto state = std::make_shared<detail::TraceState>(detail::TraceState{std::move(callback)});
    detail::check(cupel_pipeline_set_trace(p, static_cast<int>(level), &detail::trace_trampoline, state.get()));
    trace_ = std::move(state);
  }
  /// Turns tracing off (a no-op when it is off) and releases the callback.
  void clear_trace() {
    detail::check(cupel_pipeline_set_trace(use(), CUPEL_TRACE_STAGES, nullptr, nullptr));
    trace_.reset();
  }
  /// Whether a trace callback is set.
  bool traced() const noexcept { return static_cast<bool>(trace_); }

  /// All six stages: the placed item indices (and every decision in `report`).
  std::vector<std::size_t> run(Ref<Items> items, Ref<Budget> budget, Report *report = nullptr) const {
    const cupel_pipeline *p = use();
    const cupel_items *it = detail::raw(items, "items");
    const cupel_budget *b = detail::raw(budget, "budget");
    cupel_report *r = detail::raw_or_null(report, "report");
    std::vector<std::size_t> out(cupel_items_len(it));
    std::size_t n = 0;
    detail::RunScope scope;
    scope.finish(cupel_pipeline_run(p, it, b, out.data(), out.size(), &n, r));
    out.resize(n);
    return out;
  }
  /// The C handle (null once moved from), for calls into cupel.h.
  const cupel_pipeline *get() const noexcept { return h_.get(); }

 private:
  friend class Session;
  friend struct detail::PolicyAccess;
  struct Adopt {};
  Pipeline(Adopt, cupel_pipeline *p) : h_(p) {}
  static cupel_pipeline *make(const cupel_scorer *scorer, const cupel_slicer *slicer, const cupel_placer *placer) {
    return detail::create<cupel_pipeline>(
        [&](cupel_pipeline **p) { return cupel_pipeline_new(scorer, slicer, placer, p); });
  }
  cupel_pipeline *use() const { return h_.use("pipeline"); }
  // Declared first so that it outlives the C pipeline that points at it.
  std::shared_ptr<detail::TraceState> trace_;
  detail::Handle<cupel_pipeline, cupel_pipeline_free> h_;
  // Whether set_tokenizer gave it a tokenizer (select() needs to know when
  // to_json cannot name it).
  bool tokenizer_set_ = false;
};

// ---- sessions: cache-stable selection across turns (README "Sessions")

/// Which rule a session run took (`cupel_session_action`).
enum class SessionAction {
  First = CUPEL_SESSION_FIRST,     ///< the first run, or the first after a reset (also before any run)
  Append = CUPEL_SESSION_APPEND,   ///< the previous output kept in its order, new items added at its end
  Compact = CUPEL_SESSION_COMPACT  ///< a fresh selection with room to spare, keeping what it could of the prefix
};

/// The action's name as the report's JSON writes it: "first", "append" or
/// "compact" ("unknown" for a value that is none of them).
inline const char *to_string(SessionAction a) noexcept {
  switch (a) {
    case SessionAction::First: return "first";
    case SessionAction::Append: return "append";
    case SessionAction::Compact: return "compact";
  }
  return "unknown";
}

/// What a cache breakpoint marks (`cupel_breakpoint.mark`: CUPEL_MARK_PINNED
/// 0, COMPACTION 1, STABLE 2, END 3).
enum class BreakpointMark : int32_t {
  Pinned = 0,      ///< after the leading pinned items (the system prompt, tool definitions)
  Compaction = 1,  ///< after the prefix the last compaction kept
  Stable = 2,      ///< after this run's stable prefix (what the cache already holds)
  End = 3          ///< after the last non-volatile item (what the next turn reuses when it appends)
};

/// The mark's name as the report's JSON writes it: "pinned", "compaction",
/// "stable" or "end" ("unknown" for a value that is none of them).
inline const char *to_string(BreakpointMark m) noexcept {
  switch (m) {
    case BreakpointMark::Pinned: return "pinned";
    case BreakpointMark::Compaction: return "compaction";
    case BreakpointMark::Stable: return "stable";
    case BreakpointMark::End: return "end";
  }
  return "unknown";
}

/// The last run's stable prefix (Session::stable_prefix): its first `items`
/// items, `tokens` tokens in all, are identical (by identity and option) to
/// the leading items of the run before it.
struct StablePrefix {
  std::size_t items = 0;  ///< how many leading items of the output are unchanged
  int64_t tokens = 0;     ///< the tokens they add
};
/// Whether two stable prefixes are the same.
inline bool operator==(const StablePrefix &a, const StablePrefix &b) {
  return a.items == b.items && a.tokens == b.tokens;
}
/// Whether two stable prefixes differ.
inline bool operator!=(const StablePrefix &a, const StablePrefix &b) { return !(a == b); }

/// One cache breakpoint of a session run (Session::breakpoints): after the
/// first `items` items of the output, which add `tokens` tokens.
struct Breakpoint {
  std::size_t items = 0;                     ///< the breakpoint goes after this many items of the output
  int64_t tokens = 0;                        ///< the tokens those items add
  BreakpointMark mark = BreakpointMark::End;  ///< what it marks
};
/// Whether two breakpoints are the same.
inline bool operator==(const Breakpoint &a, const Breakpoint &b) {
  return a.items == b.items && a.tokens == b.tokens && a.mark == b.mark;
}
/// Whether two breakpoints differ.
inline bool operator!=(const Breakpoint &a, const Breakpoint &b) { return !(a == b); }

/// A conversation's context, turn after turn (`cupel_session`): each run
/// selects with the session's own copy of a pipeline and changes the
/// previous turn's prompt only at its end whenever it can, so that a model
/// provider's prefix cache keeps serving it. The first run (and the first
/// after reset()) is the pipeline's selection, volatile items last; later
/// runs append new items after the previous output while everything fits,
/// and otherwise compact once, with room to spare (the slack), keeping the
/// longest prefix of the previous output that costs little score. Items are
/// matched from one turn to the next by Items::set_key (or by kind, tokens
/// and content). One thread at a time per session. Move-only; a moved-from
/// session throws ClosedHandle.
class Session {
 public:
  /// A session over a copy of `pipeline`: the Pipeline may be destroyed
  /// right after, the session keeps working. The slack is 0.2. A null
  /// pointer throws InvalidArgument, a moved-from pipeline ClosedHandle.
  /// The session keeps the pipeline's trace as it was when the session was
  /// made (and keeps its callback alive).
  explicit Session(Ref<Pipeline> pipeline) : h_(make(detail::raw(pipeline, "pipeline"))) {
    trace_ = pipeline.get()->trace_;
  }
  /// The slack: the share of the effective target a compaction leaves free
  /// for the turns after it (0.2 unless set).
  double slack() const {
    double f = 0;
    detail::check(cupel_session_slack(use(), &f));
    return f;
  }
  /// Sets the slack, `fraction` in [0, 1): a compaction's non-pinned,
  /// non-volatile items total at most floor((1 - fraction) x target).
  /// Outside [0, 1) or NaN throws InvalidArgument naming `fraction`, and the
  /// slack stays as it was.
  void set_slack(double fraction) { detail::check(cupel_session_set_slack(use(), fraction)); }
  /// One turn: the item indices of the context in prompt order (and every
  /// decision in `report`, whose JSON then has a top-level "session"
  /// object; an item the pipeline alone would take but the session left
  /// out is Reason::Deferred). The output obeys every rule of the pipeline
  /// (budget, pinned items, groups, variants and truncation, overflow).
  /// Two items with the same non-zero key throw InvalidArgument naming
  /// both indices; otherwise the errors of Pipeline::run. A run that throws
  /// changes nothing: the next run behaves as if it never happened.
  std::vector<std::size_t> run(Ref<Items> items, Ref<Budget> budget, Report *report = nullptr) {
    cupel_session *p = use();
    const cupel_items *it = detail::raw(items, "items");
    const cupel_budget *b = detail::raw(budget, "budget");
    cupel_report *r = detail::raw_or_null(report, "report");
    std::vector<std::size_t> out(cupel_items_len(it));
    std::size_t n = 0;
    detail::RunScope scope;
    scope.finish(cupel_session_run(p, it, b, out.data(), out.size(), &n, r));
    out.resize(n);
    return out;
  }
  /// The last run's stable prefix: how many leading items of its output
  /// (and their tokens) are identical, by identity and option, to the
  /// leading items of the run before it; where a host puts its cache
  /// breakpoint. {0, 0} before any run, after a first run and after the
  /// first run that follows a reset.
  StablePrefix stable_prefix() const {
    StablePrefix sp;
    detail::check(cupel_session_stable_prefix(use(), &sp.items, &sp.tokens));
    return sp;
  }
  /// Which rule the last successful run took (SessionAction::First before
  /// any run and after a reset).
  SessionAction last_action() const {
    cupel_session_action a = CUPEL_SESSION_FIRST;
    detail::check(cupel_session_last_action(use(), &a));
    return static_cast<SessionAction>(a);
  }
  /// The last run's cache breakpoints, ascending and distinct, at most 4
  /// (providers allow four per request): after the leading pinned items,
  /// after the prefix the last compaction kept, after the stable prefix and
  /// after the last non-volatile item; a position at 0 items is left out,
  /// and where two fall together one is given, with the later mark of that
  /// list. Empty before any run.
  std::vector<Breakpoint> breakpoints() const {
    const cupel_session *p = use();
    std::vector<cupel_breakpoint> raw(4);
    std::size_t n = 0;
    cupel_status st = cupel_session_breakpoints(p, raw.data(), raw.size(), &n);
    if (st == CUPEL_ERROR_BUFFER_TOO_SMALL) {
      raw.resize(n);
      st = cupel_session_breakpoints(p, raw.data(), raw.size(), &n);
    }
    detail::check(st);
    std::vector<Breakpoint> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; i++)
      out.push_back({raw[i].items, raw[i].tokens, static_cast<BreakpointMark>(raw[i].mark)});
    return out;
  }
  /// Forgets every run: the next run is a first run (the pipeline's
  /// output, stable prefix {0, 0}). The slack stays.
  void reset() { detail::check(cupel_session_reset(use())); }
  /// The C handle (null once moved from), for calls into cupel.h.
  cupel_session *get() const noexcept { return h_.get(); }

 private:
  static cupel_session *make(const cupel_pipeline *pipeline) {
    return detail::create<cupel_session>([&](cupel_session **p) { return cupel_session_new(pipeline, p); });
  }
  cupel_session *use() const { return h_.use("session"); }
  // The trace callback of the session's copy of the pipeline: declared
  // first so that it outlives the C session that points at it.
  std::shared_ptr<detail::TraceState> trace_;
  detail::Handle<cupel_session, cupel_session_free> h_;
};

/// Sort + Slice: the chosen item indices in the slicer's output order.
inline std::vector<std::size_t> slice(Ref<Slicer> slicer, Ref<Items> items, Ref<Budget> budget,
                                      int64_t pinned_tokens = 0, Report *report = nullptr) {
  const cupel_slicer *s = detail::raw(slicer, "slicer");
  const cupel_items *it = detail::raw(items, "items");
  const cupel_budget *b = detail::raw(budget, "budget");
  cupel_report *r = detail::raw_or_null(report, "report");
  std::vector<std::size_t> out(cupel_items_len(it));
  std::size_t n = 0;
  detail::check(cupel_slice(s, it, b, pinned_tokens, out.data(), out.size(), &n, r));
  out.resize(n);
  return out;
}

/// GetMarginalItems: the items chosen at `budget` but not with
/// `slack_tokens` fewer. Arguments in the order of cupel_marginal_items.
inline std::vector<std::size_t> marginal_items(Ref<Slicer> slicer, Ref<Items> items, Ref<Budget> budget,
                                               int64_t pinned_tokens, int64_t slack_tokens) {
  const cupel_slicer *s = detail::raw(slicer, "slicer");
  const cupel_items *it = detail::raw(items, "items");
  const cupel_budget *b = detail::raw(budget, "budget");
  std::vector<std::size_t> out(cupel_items_len(it));
  std::size_t n = 0;
  detail::check(cupel_marginal_items(s, it, b, pinned_tokens, slack_tokens, out.data(), out.size(), &n));
  out.resize(n);
  return out;
}

/// FindMinBudgetFor: the smallest budget at which item `target_index` is
/// chosen, or std::nullopt when not even `search_ceiling` does. Arguments in
/// the order of cupel_find_min_budget; an index past the end throws OutOfRange.
inline std::optional<int64_t> find_min_budget(Ref<Slicer> slicer, Ref<Items> items, int64_t pinned_tokens,
                                              std::size_t target_index, int64_t search_ceiling) {
  const cupel_slicer *s = detail::raw(slicer, "slicer");
  const cupel_items *it = detail::raw(items, "items");
  detail::check_index(target_index, cupel_items_len(it), "target_index");
  int64_t b = -1;
  detail::check(cupel_find_min_budget(s, it, pinned_tokens, target_index, search_ceiling, &b));
  if (b < 0) return std::nullopt;
  return b;
}

/// StreamSlice: push items as they arrive, then finish.
class Stream {
 public:
  /// Takes items up to `target_tokens`, deciding `batch_size` at a time (0: 32).
  explicit Stream(int64_t target_tokens, std::size_t batch_size = 0)
      : h_(detail::create<cupel_stream>(
            [&](cupel_stream **p) { return cupel_stream_new(target_tokens, batch_size, p); })) {}
  /// Offers the next item (`tokens` >= 0, a finite `score`); returns true
  /// once the budget is spent.
  bool push(int64_t tokens, double score) {
    bool full = false;
    detail::check(cupel_stream_push(use(), tokens, score, &full));
    ++pushed_;
    return full;
  }
  /// Offers the next item as a member of keep-together group `group` (0:
  /// none); a group's members come one after another and are taken all or
  /// none. Throws (the stream unchanged) for a group that already ended.
  bool push_grouped(int64_t tokens, double score, uint64_t group) {
    bool full = false;
    detail::check(cupel_stream_push_grouped(use(), tokens, score, group, &full));
    ++pushed_;
    return full;
  }
  /// Ends the stream: the taken item indices, in the order they were taken.
  std::vector<std::size_t> finish() {
    cupel_stream *p = use();
    std::vector<std::size_t> out(pushed_);
    std::size_t n = 0;
    detail::check(cupel_stream_finish(p, out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }

 private:
  cupel_stream *use() const { return h_.use("stream"); }
  detail::Handle<cupel_stream, cupel_stream_free> h_;
  std::size_t pushed_ = 0;
};

// ---- policies as data: the free forms, and the preset names

/// pipeline.to_json() with the pipeline as an argument (the C ABI's form):
/// a null pointer throws InvalidArgument naming `pipeline`, a moved-from
/// pipeline ClosedHandle.
inline std::string to_json(Ref<Pipeline> pipeline) {
  const cupel_pipeline *p = detail::raw(pipeline, "pipeline");
  return detail::read_text(
      [&](char *buf, std::size_t cap, std::size_t *n) { return cupel_pipeline_to_json(p, buf, cap, n); });
}

/// budget.to_json() with the budget as an argument (the C ABI's form): a
/// null pointer throws InvalidArgument naming `budget`, a moved-from budget
/// ClosedHandle.
inline std::string to_json(Ref<Budget> budget) {
  const cupel_budget *b = detail::raw(budget, "budget");
  return detail::read_text(
      [&](char *buf, std::size_t cap, std::size_t *n) { return cupel_budget_to_json(b, buf, cap, n); });
}

/// pipeline->set_trace(level, callback) with the pipeline as an argument
/// (the C ABI's form): a null pointer throws InvalidArgument naming
/// `pipeline`, a moved-from pipeline ClosedHandle.
inline void set_trace(Pipeline *pipeline, TraceLevel level, TraceCallback callback) {
  if (!pipeline) detail::null_handle("pipeline");
  pipeline->set_trace(level, std::move(callback));
}

/// The names Pipeline::preset knows, in the library's order: "Chat",
/// "CodeReview", "Rag", "DocumentQa", "ToolUse", "LongRunning",
/// "Debugging", "AgentLoop".
inline std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (std::size_t i = 0, n = cupel_preset_count(); i < n; i++) out.emplace_back(cupel_preset_name(i));
  return out;
}

// ---- policy sensitivity (README "Policy sensitivity")

/// Runs every pipeline of `variants` (label, pipeline) on the same `items`
/// and `budget` and returns the comparison as JSON text (C++ has no JSON
/// library to hand it to; hand it to yours):
/// `{"diffs": [{"content", "index", "statuses": [{"label", "status"}]}],
/// "variants": [{"label", "report"}]}`, keys in alphabetical order. Each
/// variant's "report" is its run's SelectionReport JSON (Report::json);
/// "diffs" lists every item included by at least one variant and excluded
/// by another, by push index in push order, with its content when it has
/// one and its status ("Included" or "Excluded") under each label. Items
/// are matched by push index, never by content: two items with the same
/// text are two items. Fewer than two variants throws InvalidArgument
/// (naming `count`); a null pipeline InvalidArgument naming
/// `pipelines[i]`, a label holding a NUL byte or not UTF-8 names
/// `labels[i]`; a variant whose run fails throws its error, naming its
/// index and label. The variants' traces see one run each.
inline std::string policy_sensitivity(const std::vector<std::pair<std::string, Ref<Pipeline>>> &variants,
                                      Ref<Items> items, Ref<Budget> budget) {
  std::vector<const cupel_pipeline *> pipelines;
  std::vector<const char *> labels;
  pipelines.reserve(variants.size());
  labels.reserve(variants.size());
  for (std::size_t i = 0; i < variants.size(); i++) {
    labels.push_back(detail::c_str(variants[i].first, "labels[" + std::to_string(i) + "]"));
    pipelines.push_back(detail::raw(variants[i].second, "pipelines[" + std::to_string(i) + "]"));
  }
  const cupel_items *it = detail::raw(items, "items");
  const cupel_budget *b = detail::raw(budget, "budget");
  // Every call runs every pipeline: size the buffer for one call. Each
  // report holds every item (its content, kind, source, timestamp, tokens
  // and reason), the diffs some of them again.
  std::size_t per_run = 1024;
  for (std::size_t i = 0, len = cupel_items_len(it); i < len; i++) {
    const char *content = nullptr;
    std::size_t n = 0;
    per_run += 512;
    if (cupel_items_content(it, i, &content, &n) == CUPEL_OK && content) per_run += 2 * n;
  }
  std::string out((variants.size() + 1) * per_run, '\0');
  std::size_t n = 0;
  detail::RunScope scope;
  cupel_status st =
      cupel_policy_sensitivity(pipelines.data(), labels.data(), pipelines.size(), it, b, out.data(), out.size(), &n);
  // Short (a report's durations vary in length): the traces saw this call's
  // runs; the repeats only size the text.
  while (st == CUPEL_ERROR_BUFFER_TOO_SMALL && !scope.error) {
    scope.muted = true;
    out.assign(n + n / 8 + 4096, '\0');
    st = cupel_policy_sensitivity(pipelines.data(), labels.data(), pipelines.size(), it, b, out.data(), out.size(),
                                  &n);
  }
  scope.finish(st);
  out.resize(n);
  return out;
}

// ---- the one-call path (README "The one-call path", docs/policies.md)

/// One message of a conversation for select(): its text and what the
/// pipeline reads of it. Every field but `text` is optional.
struct Message {
  std::string text{};             ///< required: non-empty UTF-8 (its tokens are counted, it is the content)
  std::string kind = "Message";   ///< a visible name ("SystemPrompt", "ToolOutput", ...)
  bool pinned = false;            ///< always kept, first (a system prompt)
  /// Messages with the same non-empty group are kept or dropped together.
  std::string group{};
  std::string tool_call_id{};              ///< a tool result's (or a single tool call's) id
  std::vector<std::string> tool_call_ids{};  ///< a message that makes several calls: all their ids
  uint64_t key = 0;                        ///< the host's identity of the message, for sessions (0: none)
  std::optional<int64_t> timestamp{};      ///< Unix milliseconds
  std::optional<int64_t> priority{};       ///< for the priority scorer
  std::optional<double> relevance{};       ///< the future-relevance hint, for the reflexive scorer
  double score = 1.0;                      ///< the pushed score, for the given scorer
};

namespace detail {
struct PolicyAccess;
}  // namespace detail

/// The policy of a select() call: a preset name ("Chat", matched
/// case-insensitively), a policy document's text (a string whose first
/// non-blank character is `{`), or a Pipeline; absent (the default
/// argument, or a null pointer), the "Chat" preset. Binds a string or a
/// pipeline for the duration of the call (it does not copy or own them).
class Policy {
 public:
  /// The "Chat" preset, as when the argument is left out.
  Policy() noexcept : text_("Chat") {}
  /// A preset name or a policy document; null is no policy: "Chat".
  Policy(const char *name_or_json) noexcept  // NOLINT: implicit by design
      : text_(name_or_json ? name_or_json : "Chat") {}
  /// A preset name or a policy document.
  Policy(std::string_view name_or_json) noexcept : text_(name_or_json) {}  // NOLINT: implicit by design
  /// A preset name or a policy document.
  Policy(const std::string &name_or_json) noexcept : text_(name_or_json) {}  // NOLINT: implicit by design
  /// A pipeline, used as it is (with its trace, if set); a moved-from one
  /// is refused by the call (ClosedHandle naming `policy`).
  Policy(const Pipeline &pipeline) noexcept : pipeline_(&pipeline), is_pipeline_(true) {}  // NOLINT: implicit
  /// `*pipeline`; null is no policy: "Chat".
  Policy(const Pipeline *pipeline) noexcept  // NOLINT: implicit by design
      : text_("Chat"), pipeline_(pipeline), is_pipeline_(pipeline != nullptr) {}
  /// No policy: "Chat".
  Policy(std::nullptr_t) noexcept : text_("Chat") {}  // NOLINT: implicit by design

 private:
  friend struct detail::PolicyAccess;
  std::string_view text_;
  const Pipeline *pipeline_ = nullptr;
  bool is_pipeline_ = false;
};

namespace detail {
/// How select() reads a Policy.
struct PolicyAccess {
  /// The pipeline `policy` stands for: its own, or one made into `made`.
  static const Pipeline &resolve(const Policy &policy, std::optional<Pipeline> &made) {
    if (policy.is_pipeline_) {
      if (!policy.pipeline_->get()) closed_handle("policy");
      return *policy.pipeline_;
    }
    auto fix = [](const std::string &m) { return rename_head(rename_head(m, "json", "policy"), "name", "policy"); };
    std::string_view text = policy.text_;
    std::size_t first = text.find_first_not_of(" \t\r\n\f\v");
    if (first != std::string_view::npos && text[first] == '{')
      made.emplace(renaming([&] { return Pipeline::from_json(text); }, fix));
    else
      made.emplace(renaming([&] { return Pipeline::preset(text); }, fix));
    return *made;
  }
  /// The name of the tokenizer `pipeline` counts with, if it has one: its
  /// built-in encoding's (cupel_pipeline_tokenizer_name). One that
  /// set_tokenizer gave it from a vocabulary file has no name (an Error).
  static std::optional<std::string> tokenizer_of(const Pipeline &pipeline) {
    if (const char *name = cupel_pipeline_tokenizer_name(pipeline.get())) return std::string(name);
    if (!pipeline.tokenizer_set_) return std::nullopt;  // none: o200k_base
    throw Error(CUPEL_ERROR_UNSUPPORTED,
                "policy: cannot name the tokenizer the pipeline was given (one loaded from a vocabulary file); pass "
                "the tokenizer argument");
  }
};
}  // namespace detail

namespace detail {
/// Sets an optional column of `count` messages: `set(first, values)` once
/// per run of messages that have a value.
template <class T, class Get, class Set>
void set_present(std::size_t count, Get &&get, Set &&set) {
  for (std::size_t i = 0; i < count;) {
    if (!get(i)) {
      i++;
      continue;
    }
    std::vector<T> run;
    std::size_t first = i;
    for (; i < count && get(i); i++) run.push_back(*get(i));
    set(first, run);
  }
}

/// The keep-together group of each message (0: none): messages that share
/// a non-empty `group`, or a call id (`tool_call_id`, `tool_call_ids`),
/// are one group, transitively; every message with any of them is in a
/// group; groups are numbered 1, 2, ... in the order of their first message.
inline std::vector<uint64_t> message_groups(const Message *messages, std::size_t count) {
  std::vector<std::size_t> parent(count);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto find = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::unordered_map<std::string_view, std::size_t> by_group, by_call;
  std::vector<bool> grouped(count, false);
  auto join = [&](std::unordered_map<std::string_view, std::size_t> &seen, std::string_view id, std::size_t i) {
    if (id.empty()) return;
    grouped[i] = true;
    auto found = seen.emplace(id, i);
    if (!found.second) {
      std::size_t a = find(i), b = find(found.first->second);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  };
  for (std::size_t i = 0; i < count; i++) {
    join(by_group, messages[i].group, i);
    join(by_call, messages[i].tool_call_id, i);
    for (const std::string &id : messages[i].tool_call_ids) join(by_call, id, i);
  }
  std::vector<uint64_t> out(count, 0);
  std::unordered_map<std::size_t, uint64_t> number;
  for (std::size_t i = 0; i < count; i++)
    if (grouped[i]) out[i] = number.emplace(find(i), number.size() + 1).first->second;
  return out;
}
}  // namespace detail

/// The one-call path: the indices into `messages[0 .. count)` of the
/// messages to send, in the order the policy's placer gives, selected
/// within `budget` by `policy` (a preset name, a policy document's text or
/// a Pipeline; "Chat" by default, and for a null pointer). select() gives
/// the messages themselves.
///
/// The rules (docs/policies.md, the same in every binding): each message is
/// an item whose content is its text and whose tokens are the text's count
/// with the tokenizer named `tokenizer`, else the policy's (its built-in
/// encoding, cupel_pipeline_tokenizer_name), else "o200k_base"; messages
/// that share a `group`, a
/// `tool_call_id` or one of their `tool_call_ids` are kept or dropped
/// together, transitively (a group and a call id of the same text are not
/// shared; an empty one is none), in groups numbered 1, 2, ... in the order
/// of their first message; when no message has a timestamp, message i gets
/// timestamp i (the given order is chronological), else they are used as
/// given; `pinned`, `key`, `priority`, `relevance` and `score` as set.
/// Errors as the long-hand calls give them, naming `messages[i].text`
/// (`.kind`, `.score`), `policy` (an unknown preset, a document's JSON path
/// and rule), `tokenizer`, `max_tokens` or `budget`; a null `messages` with
/// a non-zero `count` throws InvalidArgument naming `messages`. A Pipeline
/// given a tokenizer loaded from a vocabulary file (set_tokenizer) needs
/// the `tokenizer` argument: select cannot name it (Unsupported naming
/// `policy`). `key` 0 is none; an empty `group` or id is none.
inline std::vector<std::size_t> select_indices(const Message *messages, std::size_t count, Ref<Budget> budget,
                                               const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  if (!messages && count) detail::null_handle("messages");
  detail::raw(budget, "budget");
  std::optional<Pipeline> made;
  const Pipeline &pipeline = detail::PolicyAccess::resolve(policy, made);
  std::string name = !tokenizer.empty() ? std::string(tokenizer)
                                        : detail::PolicyAccess::tokenizer_of(pipeline).value_or(std::string("o200k_base"));
  Tokenizer tok = detail::renaming([&] { return Tokenizer(std::string_view(name)); },
                                   [](const std::string &m) { return detail::rename_head(m, "name", "tokenizer"); });

  Items items;
  if (count) {
    std::vector<std::string_view> texts;
    std::vector<double> scores;
    std::vector<std::string> kinds;
    texts.reserve(count);
    scores.reserve(count);
    kinds.reserve(count);
    for (std::size_t i = 0; i < count; i++) {
      texts.push_back(messages[i].text);
      scores.push_back(messages[i].score);
      kinds.push_back(messages[i].kind);
    }
    detail::renaming([&] { items.push_texts(tok, texts, scores, kinds); },
                     [](const std::string &m) {
                       return detail::rename_element(
                           detail::rename_element(detail::rename_element(m, "texts", "messages", ".text"), "scores",
                                                  "messages", ".score"),
                           "kinds", "messages", ".kind");
                     });
    std::vector<uint64_t> groups = detail::message_groups(messages, count);
    if (std::any_of(groups.begin(), groups.end(), [](uint64_t g) { return g != 0; })) items.set_groups(0, groups);
    std::vector<bool> pinned(count);
    std::vector<uint64_t> keys(count);
    bool any_pinned = false, any_key = false, any_timestamp = false;
    for (std::size_t i = 0; i < count; i++) {
      pinned[i] = messages[i].pinned;
      keys[i] = messages[i].key;
      any_pinned = any_pinned || messages[i].pinned;
      any_key = any_key || messages[i].key != 0;
      any_timestamp = any_timestamp || messages[i].timestamp.has_value();
    }
    if (any_pinned) items.set_pinned_many(0, pinned);
    if (any_key) items.set_keys(0, keys);
    if (any_timestamp) {
      detail::set_present<int64_t>(
          count, [&](std::size_t i) -> const std::optional<int64_t> & { return messages[i].timestamp; },
          [&](std::size_t first, const std::vector<int64_t> &v) { items.set_timestamps(first, v); });
    } else {
      std::vector<int64_t> positions(count);
      std::iota(positions.begin(), positions.end(), int64_t{0});
      items.set_timestamps(0, positions);
    }
    detail::set_present<int64_t>(
        count, [&](std::size_t i) -> const std::optional<int64_t> & { return messages[i].priority; },
        [&](std::size_t first, const std::vector<int64_t> &v) { items.set_priorities(first, v); });
    detail::set_present<double>(
        count, [&](std::size_t i) -> const std::optional<double> & { return messages[i].relevance; },
        [&](std::size_t first, const std::vector<double> &v) { items.set_relevance_hints(first, v); });
  }
  return pipeline.run(items, budget);
}

/// select_indices() within `max_tokens` (the target is the same): a
/// negative `max_tokens` throws InvalidArgument naming `max_tokens`.
inline std::vector<std::size_t> select_indices(const Message *messages, std::size_t count, int64_t max_tokens,
                                               const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  if (!messages && count) detail::null_handle("messages");
  Budget budget(max_tokens, max_tokens);
  return select_indices(messages, count, budget, policy, tokenizer);
}

/// select_indices() of a vector of messages, within a budget object.
inline std::vector<std::size_t> select_indices(const std::vector<Message> &messages, Ref<Budget> budget,
                                               const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  return select_indices(messages.data(), messages.size(), budget, policy, tokenizer);
}

/// select_indices() of a vector of messages, within `max_tokens`.
inline std::vector<std::size_t> select_indices(const std::vector<Message> &messages, int64_t max_tokens,
                                               const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  return select_indices(messages.data(), messages.size(), max_tokens, policy, tokenizer);
}

namespace detail {
inline std::vector<Message> pick(const Message *messages, const std::vector<std::size_t> &indices) {
  std::vector<Message> out;
  out.reserve(indices.size());
  for (std::size_t i : indices) out.push_back(messages[i]);
  return out;
}
}  // namespace detail

/// The one-call path: the messages to send, copies of `messages`' in the
/// order the policy's placer gives (select_indices() has the rules and
/// gives their indices instead).
///
///   auto kept = cupel::select(messages, 4000);                // the "Chat" preset
///   auto kept = cupel::select(messages, 4000, "AgentLoop");   // a preset by name
///   auto kept = cupel::select(messages, budget, policy_json); // a budget, a policy document
inline std::vector<Message> select(const std::vector<Message> &messages, int64_t max_tokens,
                                   const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  return detail::pick(messages.data(), select_indices(messages, max_tokens, policy, tokenizer));
}

/// select() within a budget object.
inline std::vector<Message> select(const std::vector<Message> &messages, Ref<Budget> budget,
                                   const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  return detail::pick(messages.data(), select_indices(messages, budget, policy, tokenizer));
}

/// select() of `messages[0 .. count)` (a null `messages` with a non-zero
/// `count` throws InvalidArgument naming `messages`).
inline std::vector<Message> select(const Message *messages, std::size_t count, int64_t max_tokens,
                                   const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  return detail::pick(messages, select_indices(messages, count, max_tokens, policy, tokenizer));
}

/// select() of `messages[0 .. count)` within a budget object.
inline std::vector<Message> select(const Message *messages, std::size_t count, Ref<Budget> budget,
                                   const Policy &policy = "Chat", std::string_view tokenizer = {}) {
  return detail::pick(messages, select_indices(messages, count, budget, policy, tokenizer));
}

}  // namespace cupel

#endif
