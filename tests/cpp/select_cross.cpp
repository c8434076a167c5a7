// The one-call path's cross-binding driver (tests/select_agreement.rs) for
// the C++ binding: reads the cases' JSON file, calls cupel::select_indices
// on each and prints "case K: i j ..." (the kept messages' indices, in
// prompt order) or "case K: error" (the message on stderr).
//
//   select_cross cases.json
//
// A case: max_tokens, messages (key as decimal text), and optionally policy
// and tokenizer. A null group, call id or kind is "" (std::string has no
// null). An absent policy is left out on even cases and passed as a null
// pointer on odd ones.
#include "cupel.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A JSON value of the cases' file: null, a bool, a number (its text), a
// string, an array or an object.
struct Json {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool boolean = false;
  std::string text;  // a string's value, a number's text
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json *get(const std::string &key) const {
    auto it = fields.find(key);
    return it == fields.end() || it->second.type == Null ? nullptr : &it->second;
  }
};

class Reader {
 public:
  explicit Reader(std::string s) : s_(std::move(s)) {}

  Json value() {
    blank();
    Json v;
    char c = peek();
    if (c == '{') {
      v.type = Json::Object;
      pos_++;
      blank();
      if (peek() == '}') {
        pos_++;
        return v;
      }
      for (;;) {
        blank();
        std::string key = string();
        blank();
        expect(':');
        v.fields[key] = value();
        blank();
        if (peek() == '}') {
          pos_++;
          return v;
        }
        expect(',');
      }
    }
    if (c == '[') {
      v.type = Json::Array;
      pos_++;
      blank();
      if (peek() == ']') {
        pos_++;
        return v;
      }
      for (;;) {
        v.items.push_back(value());
        blank();
        if (peek() == ']') {
          pos_++;
          return v;
        }
        expect(',');
      }
    }
    if (c == '"') {
      v.type = Json::String;
      v.text = string();
      return v;
    }
    if (s_.compare(pos_, 4, "true") == 0 || s_.compare(pos_, 5, "false") == 0) {
      v.type = Json::Bool;
      v.boolean = c == 't';
      pos_ += v.boolean ? 4 : 5;
      return v;
    }
    if (s_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
      return v;
    }
    std::size_t start = pos_;
    while (pos_ < s_.size() && std::string("+-.eE0123456789").find(s_[pos_]) != std::string::npos) pos_++;
    if (pos_ == start) fail("an unexpected character");
    v.type = Json::Number;
    v.text = s_.substr(start, pos_ - start);
    return v;
  }

 private:
  [[noreturn]] void fail(const char *what) const {
    throw std::runtime_error(std::string("JSON: ") + what + " at byte " + std::to_string(pos_));
  }
  char peek() const {
    if (pos_ >= s_.size()) fail("the end");
    return s_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail("an unexpected character");
    pos_++;
  }
  void blank() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n')) pos_++;
  }
  void utf8(uint32_t c, std::string &out) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  uint32_t hex4() {
    uint32_t v = static_cast<uint32_t>(std::stoul(s_.substr(pos_, 4), nullptr, 16));
    pos_ += 4;
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      char c = peek();
      pos_++;
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      pos_++;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t c1 = hex4();
          if (c1 >= 0xD800 && c1 < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
            pos_ += 2;
            c1 = 0x10000 + ((c1 - 0xD800) << 10) + (hex4() - 0xDC00);
          }
          utf8(c1, out);
          break;
        }
        default: fail("a bad escape");
      }
    }
  }

  std::string s_;
  std::size_t pos_ = 0;
};

std::string str(const Json *v) { return v ? v->text : std::string(); }

cupel::Message message_of(const Json &m) {
  cupel::Message out;
  out.text = m.get("text")->text;
  if (const Json *kind = m.get("kind")) out.kind = kind->text;
  if (const Json *pinned = m.get("pinned")) out.pinned = pinned->boolean;
  out.group = str(m.get("group"));
  out.tool_call_id = str(m.get("tool_call_id"));
  if (const Json *ids = m.get("tool_call_ids"))
    for (const Json &id : ids->items) out.tool_call_ids.push_back(id.text);  // null: ""
  if (const Json *key = m.get("key")) out.key = std::stoull(key->text);
  if (const Json *t = m.get("timestamp")) out.timestamp = std::stoll(t->text);
  if (const Json *p = m.get("priority")) out.priority = std::stoll(p->text);
  if (const Json *r = m.get("relevance")) out.relevance = std::stod(r->text);
  if (const Json *s = m.get("score")) out.score = std::stod(s->text);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: select_cross cases.json\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  Json root = Reader(buf.str()).value();
  const std::vector<Json> &cases = root.get("cases")->items;
  for (std::size_t k = 0; k < cases.size(); k++) {
    const Json &c = cases[k];
    std::vector<cupel::Message> messages;
    for (const Json &m : c.get("messages")->items) messages.push_back(message_of(m));
    const int64_t max = std::stoll(c.get("max_tokens")->text);
    const Json *policy = c.get("policy");
    const std::string tokenizer = str(c.get("tokenizer"));
    std::vector<std::size_t> kept;
    try {
      if (policy)
        kept = cupel::select_indices(messages, max, policy->text, tokenizer);
      else if (k % 2)
        kept = cupel::select_indices(messages, max, nullptr, tokenizer);
      else if (tokenizer.empty())
        kept = cupel::select_indices(messages, max);
      else
        kept = cupel::select_indices(messages, max, cupel::Policy(), tokenizer);
    } catch (const cupel::Exception &e) {
      std::printf("case %zu: error\n", k);
      std::fprintf(stderr, "case %zu: %s\n", k, e.what());
      continue;
    }
    std::printf("case %zu:", k);
    for (std::size_t i : kept) std::printf(" %zu", i);
    std::printf("\n");
  }
  return 0;
}
