// The expression parser's structure: a value (dispatching on its first character), lists, tuples,
// the input payload `((args...), {kwargs})` and its kwargs dict; and the entry points.
#include <limits>
#include <string>
#include <utility>

#include "replay/oplog/expression_parser.h"
#include "replay/oplog/parser.h"

namespace opbench::oplog::detail {

Value Parser::value() {
  if (++depth_ > kMaxDepth) fail(pos_, "values nested deeper than " + std::to_string(kMaxDepth) + " levels");
  Value v = value_inner();
  --depth_;
  return v;
}

void Parser::payload(OpInput* out) {
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

void Parser::expect_end() {
  ws();
  if (pos_ < s_.size()) fail(pos_, "unexpected text after the value: " + here());
}

Value Parser::value_inner() {
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

List Parser::list() {
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
Value Parser::paren() {
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

// After "{": 'key': value pairs, string keys only, no duplicates.
void Parser::kwargs(std::size_t open, std::vector<std::pair<std::string, Value>>* out) {
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
