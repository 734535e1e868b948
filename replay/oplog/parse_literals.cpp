// The expression parser's literals: numbers (ints within int64, floats as Python reads them, 1e999
// -> inf) and quoted strings with Python's escapes.
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "replay/oplog/parser.h"

namespace opbench::oplog::detail {
namespace {

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

Value Parser::number(bool negative) {
  const std::size_t start = pos_;
  bool is_float = false;
  while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
  if (at('.')) {
    is_float = true;
    ++pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
  }
  if (at('e') || at('E')) {
    std::size_t p = pos_ + 1;
    if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
    if (p < s_.size() && is_digit(s_[p])) {
      is_float = true;
      pos_ = p;
      while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    }
  }
  std::string_view tok = s_.substr(start, pos_ - start);
  if (pos_ < s_.size() && (is_ident_char(s_[pos_]) || s_[pos_] == '.')) {
    while (pos_ < s_.size() && (is_ident_char(s_[pos_]) || s_[pos_] == '.')) ++pos_;
    fail(start, "malformed number '" + std::string(s_.substr(start, pos_ - start)) + "'");
  }
  if (!is_float) {
    std::uint64_t magnitude = 0;
    const std::uint64_t limit = negative ? (std::uint64_t{1} << 63) : (std::uint64_t{1} << 63) - 1;
    for (char d : tok) {
      std::uint64_t digit = static_cast<std::uint64_t>(d - '0');
      if (magnitude > (limit - digit) / 10) fail(start, "integer '" + std::string(tok) + "' out of the int64 range");
      magnitude = magnitude * 10 + digit;
    }
    if (!negative) return Value(static_cast<std::int64_t>(magnitude));
    if (magnitude == (std::uint64_t{1} << 63)) return Value(std::numeric_limits<std::int64_t>::min());
    return Value(-static_cast<std::int64_t>(magnitude));
  }
  double d = 0;
  auto res = std::from_chars(tok.data(), tok.data() + tok.size(), d);
  if (res.ec == std::errc::result_out_of_range) {
    d = overflows(tok) ? std::numeric_limits<double>::infinity() : 0.0;  // as Python: 1e999 -> inf
  } else if (res.ec != std::errc() || res.ptr != tok.data() + tok.size()) {
    fail(start, "malformed number '" + std::string(tok) + "'");
  }
  return Value(negative ? -d : d);
}

// For an out-of-range float literal: true if it is too large (-> inf), false if too small (-> 0).
bool Parser::overflows(std::string_view tok) {
  const std::size_t e = tok.find_first_of("eE");
  const std::string_view mantissa = tok.substr(0, e);
  const std::size_t dot = mantissa.find('.');
  const long long point = static_cast<long long>(dot == std::string_view::npos ? mantissa.size() : dot);
  const std::size_t nz = mantissa.find_first_of("123456789");
  if (nz == std::string_view::npos) return false;
  const long long first = static_cast<long long>(nz);
  // power of ten of the leading significant digit: "123.4" -> 2, "0.05" -> -2
  long long magnitude = first < point ? point - first - 1 : point - first;
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::size_t i = e + 1;
    bool neg = false;
    if (tok[i] == '+' || tok[i] == '-') neg = tok[i++] == '-';
    for (; i < tok.size() && exponent < 1000000; ++i) exponent = exponent * 10 + (tok[i] - '0');
    if (neg) exponent = -exponent;
  }
  return magnitude + exponent > 0;
}

std::string Parser::string_literal() {
  const std::size_t open = pos_;
  const char quote = s_[pos_++];
  std::string out;
  for (;;) {
    if (at_end()) fail(open, "unterminated string");
    const char c = s_[pos_++];
    if (c == quote) return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (at_end()) fail(open, "unterminated string");
    const std::size_t esc = pos_ - 1;
    const char e = s_[pos_++];
    switch (e) {
      case '\\': case '\'': case '"': out += e; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'x': out += static_cast<char>(hex_escape(esc, 2)); break;
      case 'u': append_utf8(out, hex_escape(esc, 4)); break;
      case 'U': append_utf8(out, hex_escape(esc, 8)); break;
      default:
        if (e >= '0' && e <= '7') {
          unsigned v = static_cast<unsigned>(e - '0');
          for (int k = 0; k < 2 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++k)
            v = v * 8 + static_cast<unsigned>(s_[pos_++] - '0');
          if (v > 0xFF) fail(esc, "octal escape above \\377");
          out += static_cast<char>(v);
          break;
        }
        fail(esc, "unsupported escape sequence in a string");
    }
  }
}

std::uint32_t Parser::hex_escape(std::size_t esc, int digits) {
  std::uint32_t v = 0;
  for (int k = 0; k < digits; ++k) {
    int h = pos_ < s_.size() ? hex_value(s_[pos_]) : -1;
    if (h < 0) fail(esc, "truncated \\" + std::string(1, s_[esc + 1]) + " escape: needs " + std::to_string(digits) + " hex digits");
    v = v * 16 + static_cast<std::uint32_t>(h);
    ++pos_;
  }
  if (v > 0x10FFFF) fail(esc, "escape names a code point above U+10FFFF");
  return v;
}

}  // namespace opbench::oplog::detail
