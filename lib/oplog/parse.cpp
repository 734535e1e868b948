// A recursive-descent parser for the Python-literal subset the operator-input log uses.
// It accepts what the reference loader's eval() accepts in recorded logs, minus what cannot be
// replayed (sparse tensors), and reports the first error of a line with its byte offset.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "oplog/parser.h"

namespace opbench::oplog::detail {
namespace {

constexpr int kMaxDepth = 64;  // nesting of lists/tuples/calls; recorded logs use at most ~4

struct Fail {
  SyntaxError error;
};

// "a list", "an int", "None" -- for messages about a value's kind.
std::string a_kind(const Value& v) {
  const std::string k = v.kind();
  if (k == "None") return k;
  return (k[0] == 'i' ? "an " : "a ") + k;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
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

class Parser {
 public:
  Parser(std::string_view text, std::size_t pos) : s_(text), pos_(pos) {}

  Value value() {
    if (++depth_ > kMaxDepth) fail(pos_, "values nested deeper than " + std::to_string(kMaxDepth) + " levels");
    Value v = value_inner();
    --depth_;
    return v;
  }

  void payload(OpInput* out) {
    ws();
    const std::size_t open = pos_;
    if (!eat('(')) fail(pos_, "expected '(' starting the input ((args...), {kwargs}), found " + here());
    ws();
    const std::size_t args_at = pos_;
    Value args = value();
    if (auto* t = std::get_if<Tuple>(&args.v)) {
      out->args = std::move(t->items);
    } else {
      std::string hint = s_[args_at] == '(' ? " (one argument needs a trailing comma: (x,))" : "";
      fail(args_at, "the positional args must be a tuple, got " + a_kind(args) + hint);
    }
    if (!eat(',')) {
      if (at_end()) fail_unclosed(open, ')');
      fail(pos_, "expected ',' between the args tuple and the kwargs dict, found " + here());
    }
    ws();
    if (!eat('{')) fail(pos_, "expected '{' starting the kwargs dict, found " + here());
    kwargs(pos_ - 1, &out->kwargs);
    eat(',');
    if (!eat(')')) {
      if (at_end()) fail_unclosed(open, ')');
      fail(pos_, "expected ')' closing the input after the kwargs, found " + here());
    }
    ws();
    if (pos_ < s_.size()) fail(pos_, "unexpected text after the input: " + here());
  }

  void expect_end() {
    ws();
    if (pos_ < s_.size()) fail(pos_, "unexpected text after the value: " + here());
  }

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

  Value value_inner() {
    ws();
    const std::size_t sign_at = pos_;
    bool negative = false, has_sign = false;
    while (at('-') || at('+')) {
      negative ^= s_[pos_] == '-';
      has_sign = true;
      ++pos_;
      ws();
    }
    if (at_end()) fail(pos_, has_sign ? "expected a number after the sign" : "expected a value, found the end of the line");
    const char c = s_[pos_];
    if (is_digit(c) || (c == '.' && pos_ + 1 < s_.size() && is_digit(s_[pos_ + 1]))) return number(negative);
    Value v;
    if (c == '[') {
      v = list();
    } else if (c == '(') {
      v = paren();
    } else if (c == '\'' || c == '"') {
      v = string_literal();
    } else if (c == '{') {
      fail(pos_, "a dict is only allowed as the kwargs of an input");
    } else if (is_ident_start(c)) {
      v = name();
    } else {
      fail(pos_, "expected a value, found " + here());
    }
    if (has_sign) {
      if (auto* d = std::get_if<double>(&v.v)) {
        if (negative) *d = -*d;
      } else if (auto* i = std::get_if<std::int64_t>(&v.v)) {
        if (negative && *i == std::numeric_limits<std::int64_t>::min()) fail(sign_at, "integer out of the int64 range");
        if (negative) *i = -*i;
      } else {
        fail(sign_at, "a sign must be followed by a number, not " + a_kind(v));
      }
    }
    return v;
  }

  Value number(bool negative) {
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
  static bool overflows(std::string_view tok) {
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

  List list() {
    const std::size_t open = pos_++;
    List l;
    if (eat(']')) return l;
    for (;;) {
      l.items.push_back(value());
      if (eat(']')) return l;
      if (!eat(',')) {
        if (at_end()) fail_unclosed(open, ']');
        fail(pos_, "expected ',' or ']' in the list, found " + here());
      }
      if (eat(']')) return l;
    }
  }

  // (x) is x, as in Python; () and (x,) and (x, y) are tuples.
  Value paren() {
    const std::size_t open = pos_++;
    if (eat(')')) return Tuple{};
    Value first = value();
    if (eat(')')) return first;
    if (!eat(',')) {
      if (at_end()) fail_unclosed(open, ')');
      fail(pos_, "expected ',' or ')' in the tuple, found " + here());
    }
    Tuple t;
    t.items.push_back(std::move(first));
    for (;;) {
      if (eat(')')) return t;
      t.items.push_back(value());
      if (eat(')')) return t;
      if (!eat(',')) {
        if (at_end()) fail_unclosed(open, ')');
        fail(pos_, "expected ',' or ')' in the tuple, found " + here());
      }
    }
  }

  std::string string_literal() {
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

  std::uint32_t hex_escape(std::size_t esc, int digits) {
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

  Value name() {
    const std::size_t start = pos_;
    const std::string id = ident();
    if (id == "None") return None{};
    if (id == "True") return true;
    if (id == "False") return false;
    if (id == "inf") return std::numeric_limits<double>::infinity();
    if (id == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (auto dt = dtype_from_abbr(id)) return *dt;
    if (id == "T") {
      if (!eat('(')) fail(start, "T must be called: T([shape], dtype[, stride=(...)])");
      return tensor(pos_ - 1);
    }
    if (id == "ST") fail(start, "sparse tensor ST(...) is not supported (the reference loader cannot build it either)", true);
    if (id == "torch" || id == "th") return torch_attribute(start);
    if (id == "device")
      fail(start, "device(...) is not supported: the recorder writes devices as strings such as 'cuda'", true);
    if (looks_like_dtype(id)) fail(start, "unknown dtype '" + id + "' (known: f16 f32 f64 bf16 i8 i16 i32 i64 b8 u8 c32 c64 c128)");
    fail(start, "unknown name '" + id + "'");
  }

  // f17, i4, fp16: letters then digits, as the dtype abbreviations are.
  static bool looks_like_dtype(const std::string& id) {
    std::size_t i = 0;
    while (i < id.size() && std::islower(static_cast<unsigned char>(id[i]))) ++i;
    if (i == 0 || i == id.size()) return false;
    while (i < id.size() && is_digit(id[i])) ++i;
    return i == id.size();
  }

  // torch.strided, th.contiguous_format, torch.float16 (-> the dtype f16) ...
  Value torch_attribute(std::size_t start) {
    std::string path = "torch";
    while (eat('.')) {
      ws();
      if (at_end() || !is_ident_start(s_[pos_])) fail(pos_, "expected a name after '.', found " + here());
      path += '.' + ident();
    }
    if (path == "torch") fail(start, "a bare 'torch' is not a value; expected e.g. torch.strided");
    if (auto dt = dtype_from_torch_name(std::string_view(path).substr(6))) return *dt;
    ws();
    if (at('(')) fail(start, "calls such as " + path + "(...) are not supported", true);
    return Symbol{path};
  }

  // After "T(": size, dtype and stride, positionally or by keyword, as the reference loader's
  // deserialize_tensor(size, dtype, stride=None).
  Value tensor(std::size_t open) {
    static const char* const kParams[] = {"size", "dtype", "stride"};
    Value params[3];
    std::size_t param_at[3] = {0, 0, 0};
    bool given[3] = {false, false, false}, keyword_seen = false;
    int positional = 0;
    if (!eat(')')) {
      for (;;) {
        ws();
        const std::size_t arg_at = pos_;
        int slot = -1;
        if (pos_ < s_.size() && is_ident_start(s_[pos_])) {
          const std::string key = ident();
          ws();
          if (at('=') && !(pos_ + 1 < s_.size() && s_[pos_ + 1] == '=')) {
            ++pos_;
            for (int k = 0; k < 3; ++k)
              if (key == kParams[k]) slot = k;
            if (slot < 0) fail(arg_at, "T() has no parameter '" + key + "' (size, dtype, stride)");
            if (given[slot]) fail(arg_at, "T() got '" + key + "' twice");
            keyword_seen = true;
          } else {
            pos_ = arg_at;
          }
        }
        if (slot < 0) {
          if (keyword_seen) fail(arg_at, "T(): a positional argument follows a keyword argument");
          if (positional >= 3) fail(arg_at, "T() takes at most 3 arguments (size, dtype, stride)");
          slot = positional++;
          if (given[slot]) fail(arg_at, std::string("T() got '") + kParams[slot] + "' twice");
        }
        params[slot] = value();
        param_at[slot] = arg_at;
        given[slot] = true;
        if (eat(')')) break;
        if (!eat(',')) {
          if (at_end()) fail_unclosed(open, ')');
          fail(pos_, "expected ',' or ')' in T(...), found " + here());
        }
        if (eat(')')) break;
      }
    }
    if (!given[0] || !given[1]) fail(open, "T() needs a shape and a dtype: T([shape], dtype)");
    TensorSpec t;
    auto shape = params[0].int_list();
    if (!shape) fail(param_at[0], "T(): the shape must be a list of ints, got " + a_kind(params[0]));
    t.shape = std::move(*shape);
    std::int64_t numel = 1;
    for (auto d : t.shape) {
      if (d < 0) fail(param_at[0], "T(): negative dimension " + std::to_string(d));
      if (d != 0 && numel > std::numeric_limits<std::int64_t>::max() / d)
        fail(param_at[0], "T(): the shape's element count overflows int64");
      if (d != 0) numel *= d;
    }
    auto* dtype = std::get_if<DType>(&params[1].v);
    if (!dtype) fail(param_at[1], "T(): expected a dtype such as f16, got " + a_kind(params[1]));
    t.dtype = *dtype;
    if (given[2] && !params[2].is_none()) {
      auto stride = params[2].int_list();
      if (!stride) fail(param_at[2], "T(): stride must be a tuple of ints, got " + a_kind(params[2]));
      if (stride->size() != t.shape.size())
        fail(param_at[2], "T(): stride has " + std::to_string(stride->size()) + " entries for a shape of " +
                              std::to_string(t.shape.size()));
      for (auto st : *stride)
        if (st < 0) fail(param_at[2], "T(): negative stride " + std::to_string(st));
      t.stride = std::move(*stride);
    }
    return t;
  }

  // After "{": 'key': value pairs, string keys only, no duplicates.
  void kwargs(std::size_t open, std::vector<std::pair<std::string, Value>>* out) {
    if (eat('}')) return;
    for (;;) {
      ws();
      const std::size_t key_at = pos_;
      if (!at('\'') && !at('"')) {
        if (at_end()) fail_unclosed(open, '}');
        fail(key_at, "kwargs keys must be quoted strings, found " + here());
      }
      std::string key = string_literal();
      for (const auto& kv : *out)
        if (kv.first == key) fail(key_at, "duplicate kwarg '" + key + "'");
      if (!eat(':')) fail(end_or(open), "expected ':' after the kwarg '" + key + "', found " + here());
      Value v = value();
      out->emplace_back(std::move(key), std::move(v));
      if (eat('}')) return;
      if (!eat(',')) {
        if (at_end()) fail_unclosed(open, '}');
        fail(pos_, "expected ',' or '}' in the kwargs, found " + here());
      }
      if (eat('}')) return;
    }
  }
};

}  // namespace

std::optional<SyntaxError> parse_input_payload(std::string_view text, std::size_t begin, OpInput* out) {
  try {
    Parser p(text, begin);
    p.payload(out);
    return std::nullopt;
  } catch (const Fail& f) {
    return f.error;
  }
}

std::optional<SyntaxError> parse_single_value(std::string_view text, Value* out) {
  try {
    Parser p(text, 0);
    *out = p.value();
    p.expect_end();
    return std::nullopt;
  } catch (const Fail& f) {
    return f.error;
  }
}

}  // namespace opbench::oplog::detail

namespace opbench::oplog {

std::optional<Value> parse_value(std::string_view text, std::string* error) {
  Value v;
  if (auto err = detail::parse_single_value(text, &v)) {
    if (error) *error = "column " + std::to_string(err->offset + 1) + ": " + err->message;
    return std::nullopt;
  }
  return v;
}

}  // namespace opbench::oplog
