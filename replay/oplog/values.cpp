// The value model of the operator-input log: dtypes, equality, printing in the log's syntax.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "replay/oplog/oplog.h"

namespace opbench::oplog {
namespace {

struct DTypeInfo {
  DType type;
  const char* abbr;
  int itemsize;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kF16, "f16", 2}, {DType::kF32, "f32", 4},  {DType::kF64, "f64", 8},
    {DType::kBF16, "bf16", 2}, {DType::kI8, "i8", 1},  {DType::kI16, "i16", 2},
    {DType::kI32, "i32", 4}, {DType::kI64, "i64", 8},  {DType::kB8, "b8", 1},
    {DType::kU8, "u8", 1},   {DType::kC32, "c32", 4},  {DType::kC64, "c64", 8},
    {DType::kC128, "c128", 16},
};

// torch.<name> spellings of the same dtypes (torch.float16, torch.half, ...).
struct TorchDTypeName {
  const char* name;
  DType type;
};
constexpr TorchDTypeName kTorchDTypeNames[] = {
    {"float16", DType::kF16},    {"half", DType::kF16},       {"float32", DType::kF32},
    {"float", DType::kF32},      {"float64", DType::kF64},    {"double", DType::kF64},
    {"bfloat16", DType::kBF16},  {"int8", DType::kI8},        {"int16", DType::kI16},
    {"short", DType::kI16},      {"int32", DType::kI32},      {"int", DType::kI32},
    {"int64", DType::kI64},      {"long", DType::kI64},       {"bool", DType::kB8},
    {"uint8", DType::kU8},       {"complex32", DType::kC32},  {"chalf", DType::kC32},
    {"complex64", DType::kC64},  {"cfloat", DType::kC64},     {"complex128", DType::kC128},
    {"cdouble", DType::kC128},
};

const DTypeInfo& info(DType type) {
  for (const auto& d : kDTypes)
    if (d.type == type) return d;
  return kDTypes[1];  // unreachable for a valid enum value
}

bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);  // 0.0 and -0.0 print differently
}

bool same_items(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Python's repr of a float: shortest round-trip digits, fixed notation for 1e-4 <= |x| < 1e16,
// scientific otherwise, and always a '.0' or an exponent so it never reads back as an int.
std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // e.g. "-6.5504e+04"
  std::string out;
  std::size_t i = 0;
  if (sci[i] == '-') {
    out += '-';
    ++i;
  }
  std::size_t epos = sci.find('e');
  std::string digits;
  for (std::size_t k = i; k < epos; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exp10 = std::atoi(sci.c_str() + epos + 1);
  int decpt = exp10 + 1;  // digits "d1d2..." times 10^decpt means 0.d1d2... * 10^decpt
  int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (n > 1) out += '.' + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    return out + e;
  }
  if (decpt <= 0) return out + "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
  if (decpt < n) {
    const auto split = static_cast<std::size_t>(decpt);
    return out + digits.substr(0, split) + "." + digits.substr(split);
  }
  return out + digits + std::string(static_cast<std::size_t>(decpt - n), '0') + ".0";
}

// Python's repr of a str: single quotes unless the text has ' and no ".
std::string python_str_repr(const std::string& s) {
  char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);  // printable ASCII and UTF-8 bytes as they are
    }
  }
  return out + quote;
}

void append_ints(std::string& out, const std::vector<std::int64_t>& xs, bool tuple) {
  out += tuple ? '(' : '[';
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(xs[i]);
  }
  if (tuple && xs.size() == 1) out += ',';
  out += tuple ? ')' : ']';
}

void append(std::string& out, const Value& v);

void append_items(std::string& out, const std::vector<Value>& items, bool tuple) {
  out += tuple ? '(' : '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append(out, items[i]);
  }
  if (tuple && items.size() == 1) out += ',';
  out += tuple ? ')' : ']';
}

void append(std::string& out, const Value& v) {
  struct Visitor {
    std::string& out;
    void operator()(None) const { out += "None"; }
    void operator()(bool b) const { out += b ? "True" : "False"; }
    void operator()(std::int64_t i) const { out += std::to_string(i); }
    void operator()(double d) const { out += python_float_repr(d); }
    void operator()(const std::string& s) const { out += python_str_repr(s); }
    void operator()(DType t) const { out += dtype_abbr(t); }
    void operator()(const TensorSpec& t) const { out += to_string(t); }
    void operator()(const Symbol& s) const { out += s.name; }
    void operator()(const List& l) const { append_items(out, l.items, false); }
    void operator()(const Tuple& t) const { append_items(out, t.items, true); }
  };
  std::visit(Visitor{out}, v.v);
}

}  // namespace

const char* dtype_abbr(DType type) { return info(type).abbr; }
int dtype_itemsize(DType type) { return info(type).itemsize; }
bool dtype_is_floating(DType t) {
  return t == DType::kF16 || t == DType::kF32 || t == DType::kF64 || t == DType::kBF16;
}
bool dtype_is_complex(DType t) { return t == DType::kC32 || t == DType::kC64 || t == DType::kC128; }

std::optional<DType> dtype_from_abbr(std::string_view abbr) {
  for (const auto& d : kDTypes)
    if (abbr == d.abbr) return d.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_torch_name(std::string_view name) {
  for (const auto& d : kTorchDTypeNames)
    if (name == d.name) return d.type;
  return std::nullopt;
}

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool TensorSpec::is_contiguous() const {
  if (!stride) return true;
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && (*stride)[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

const char* Value::kind() const {
  static const char* const kNames[] = {"None",  "bool",   "int",    "float", "str",
                                       "dtype", "Tensor", "symbol", "list",  "tuple"};
  return kNames[v.index()];
}

std::optional<std::vector<std::int64_t>> Value::int_list() const {
  const std::vector<Value>* items = nullptr;
  if (auto* l = get_if<List>()) items = &l->items;
  if (auto* t = get_if<Tuple>()) items = &t->items;
  if (!items) return std::nullopt;
  std::vector<std::int64_t> out;
  for (const auto& item : *items) {
    auto* i = item.get_if<std::int64_t>();
    if (!i) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

std::optional<double> Value::number() const {
  if (auto* i = get_if<std::int64_t>()) return static_cast<double>(*i);
  if (auto* d = get_if<double>()) return *d;
  return std::nullopt;
}

bool operator==(const TensorSpec& a, const TensorSpec& b) {
  return a.shape == b.shape && a.dtype == b.dtype && a.stride == b.stride;
}

bool operator==(const Value& a, const Value& b) {
  if (a.v.index() != b.v.index()) return false;
  if (auto* d = a.get_if<double>()) return same_double(*d, *b.get_if<double>());
  if (auto* l = a.get_if<List>()) return same_items(l->items, b.get_if<List>()->items);
  if (auto* t = a.get_if<Tuple>()) return same_items(t->items, b.get_if<Tuple>()->items);
  if (auto* s = a.get_if<Symbol>()) return s->name == b.get_if<Symbol>()->name;
  if (a.is<None>()) return true;
  if (auto* i = a.get_if<std::int64_t>()) return *i == *b.get_if<std::int64_t>();
  if (auto* x = a.get_if<bool>()) return *x == *b.get_if<bool>();
  if (auto* s = a.get_if<std::string>()) return *s == *b.get_if<std::string>();
  if (auto* t = a.get_if<DType>()) return *t == *b.get_if<DType>();
  return *a.get_if<TensorSpec>() == *b.get_if<TensorSpec>();
}

std::string to_string(const Value& value) {
  std::string out;
  append(out, value);
  return out;
}

std::string to_string(const TensorSpec& t) {
  std::string out = "T(";
  append_ints(out, t.shape, false);
  out += ", ";
  out += dtype_abbr(t.dtype);
  if (t.stride) {
    out += ", stride=";
    append_ints(out, *t.stride, true);
  }
  return out + ")";
}

const Value* OpInput::kwarg(std::string_view key) const {
  for (const auto& kv : kwargs)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

std::string to_string(const OpInput& input) {
  std::string out = "(";
  append_items(out, input.args, true);
  out += ", {";
  for (std::size_t i = 0; i < input.kwargs.size(); ++i) {
    if (i) out += ", ";
    out += python_str_repr(input.kwargs[i].first);
    out += ": ";
    append(out, input.kwargs[i].second);
  }
  return out + "})";
}

std::string format_input_line(const OpInput& input) {
  return "cnt: " + std::to_string(input.count) + ", " + to_string(input);
}

}  // namespace opbench::oplog
