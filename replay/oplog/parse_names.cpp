// The expression parser's names: None, True, False, inf, nan, the dtype abbreviations, torch.*
// attributes and the tensor constructor T([shape], dtype[, stride=(...)]).
#include <cctype>
#include <limits>
#include <string>

#include "replay/oplog/parser.h"

namespace opbench::oplog::detail {

Value Parser::name() {
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
bool Parser::looks_like_dtype(const std::string& id) {
  std::size_t i = 0;
  while (i < id.size() && std::islower(static_cast<unsigned char>(id[i]))) ++i;
  if (i == 0 || i == id.size()) return false;
  while (i < id.size() && is_digit(id[i])) ++i;
  return i == id.size();
}

// torch.strided, th.contiguous_format, torch.float16 (-> the dtype f16) ...
Value Parser::torch_attribute(std::size_t start) {
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
Value Parser::tensor(std::size_t open) {
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

}  // namespace opbench::oplog::detail
