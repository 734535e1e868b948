// Internal to replay/oplog: the recursive-descent parser for the Python-literal subset the
// operator-input log uses. It accepts what the reference loader's eval() accepts in recorded logs,
// minus what cannot be replayed (sparse tensors), and reports the first error of a line with its byte
// offset: a construct that does not parse throws Fail, which the entry points (expression_parser.h)
// turn into a SyntaxError. One member function per construct, defined by what it parses:
//   parse_values.cpp    a value's dispatch, lists, tuples, the input payload and its kwargs
//   parse_literals.cpp  numbers and strings
//   parse_names.cpp     names: None, True, dtypes, torch.* attributes, T(...)
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replay/oplog/expression_parser.h"

namespace opbench::oplog::detail {

inline constexpr int kMaxDepth = 64;  // nesting of lists/tuples/calls; recorded logs use at most ~4

struct Fail {
  SyntaxError error;
};

// "a list", "an int", "None" -- for messages about a value's kind.
inline std::string a_kind(const Value& v) {
  const std::string k = v.kind();
  if (k == "None") return k;
  return (k[0] == 'i' ? "an " : "a ") + k;
}

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
 public:
  Parser(std::string_view text, std::size_t pos) : s_(text), pos_(pos) {}

  Value value();                 // one value, nested at most kMaxDepth deep
  void payload(OpInput* out);    // `((args...), {kwargs})` up to the end of the text
  void expect_end();             // nothing but whitespace left

 private:
  std::string_view s_;
  std::size_t pos_;
  int depth_ = 0;

  [[noreturn]] void fail(std::size_t at, std::string message, bool unsupported = false) const {
    throw Fail{SyntaxError{at, std::move(message), unsupported}};
  }
  bool at_end() const { return pos_ >= s_.size(); }
  bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void ws() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }
  bool eat(char c) {
    ws();
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  // Where to point for a missing closer: at the opener when the line just ended, else here.
  std::size_t end_or(std::size_t opener) const { return at_end() ? opener : pos_; }
  std::string here() const {
    if (at_end()) return "the end of the line";
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
      return buf;
    }
    std::string_view rest = s_.substr(pos_, 24);
    return "'" + std::string(rest) + (s_.size() - pos_ > 24 ? "...'" : "'");
  }
  [[noreturn]] void fail_unclosed(std::size_t opener, char close) const {
    fail(opener, std::string("unclosed '") + s_[opener] + "': the line ends before its '" + close + "'");
  }
  std::string ident() {
    std::size_t start = pos_;
    while (pos_ < s_.size() && is_ident_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  // parse_values.cpp
  Value value_inner();
  List list();
  Value paren();
  void kwargs(std::size_t open, std::vector<std::pair<std::string, Value>>* out);
  // parse_literals.cpp
  Value number(bool negative);
  static bool overflows(std::string_view tok);
  std::string string_literal();
  std::uint32_t hex_escape(std::size_t esc, int digits);
  // parse_names.cpp
  Value name();
  static bool looks_like_dtype(const std::string& id);
  Value torch_attribute(std::size_t start);
  Value tensor(std::size_t open);
};

}  // namespace opbench::oplog::detail
