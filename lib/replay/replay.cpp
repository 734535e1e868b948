#include "replay/replay.h"

#include <ATen/Context.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/jit_type.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/isclose.h>
#include <c10/util/Exception.h>
#include <torch/headeronly/version.h>

#include <sstream>
#include <stdexcept>

#include "opbench/reference.h"
#include "replay/tensors.h"

namespace opbench::replay {
namespace {

using oplog::DType;
using oplog::Value;

constexpr std::int64_t kIntBound = 8;   // integer tensors that are not index arguments: [0, 8)

// A recorded value that cannot be given to its schema argument: the input is not replayed.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<std::int64_t>(shape[i], 1);
  return strides;
}

void fill_random(const at::Tensor& tensor) {
  if (tensor.numel() == 0) return;
  at::Tensor flat = detail::whole_storage(tensor);
  if (at::isFloatingType(tensor.scalar_type()) || at::isComplexType(tensor.scalar_type()))
    flat.normal_();
  else if (tensor.scalar_type() == at::kBool)
    flat.random_(0, 2);
  else
    flat.random_(0, kIntBound);
}

const std::vector<Value>* items_of(const Value& value) {
  if (auto* list = value.get_if<oplog::List>()) return &list->items;
  if (auto* tuple = value.get_if<oplog::Tuple>()) return &tuple->items;
  return nullptr;
}

// Converts recorded values to IValues of a schema type. On the meta device it allocates nothing and
// fills nothing: plan_call uses it to check an input without building it.
class Builder {
 public:
  explicit Builder(const ReplayOptions& options, c10::Device device)
      : options_(options), device_(device) {}

  c10::IValue convert(const Value& value, const c10::TypePtr& type, const c10::Argument& arg) {
    using K = c10::TypeKind;
    switch (type->kind()) {
      case K::OptionalType:
        if (value.is_none()) return c10::IValue();
        return convert(value, type->castRaw<c10::OptionalType>()->getElementType(), arg);
      case K::TensorType:
        if (value.number() || value.is<bool>()) return wrapped_number(value);
        return tensor(expect<oplog::TensorSpec>(value, "a Tensor"));
      case K::IntType:
      case K::SymIntType: return expect<std::int64_t>(value, "an int");
      case K::FloatType:
      case K::SymFloatType: return number(value);
      case K::BoolType:
      case K::SymBoolType: return expect<bool>(value, "a bool");
      case K::NumberType: return scalar(value);
      case K::StringType: return expect<std::string>(value, "a str");
      case K::ScalarTypeType: return dtype(expect<DType>(value, "a dtype"));
      case K::LayoutType: return layout(expect<oplog::Symbol>(value, "a layout").name);
      case K::MemoryFormatType: return memory_format(expect<oplog::Symbol>(value, "a memory format").name);
      case K::DeviceObjType:
        expect<std::string>(value, "a device string");
        return device_;   // a recorded device ('cuda') means the replay's device
      case K::ListType: return list(value, type->castRaw<c10::ListType>()->getElementType(), arg);
      default: throw Unsupported("its type is not mapped yet");
    }
  }

 private:
  template <class T>
  const T& expect(const Value& value, const char* what) {
    if (auto* got = value.get_if<T>()) return *got;
    throw Unsupported(std::string("expected ") + what + ", got a " + value.kind());
  }

  double number(const Value& value) {
    if (value.is<bool>()) throw Unsupported("expected a number, got a bool");
    if (auto x = value.number()) return *x;
    throw Unsupported(std::string("expected a number, got a ") + value.kind());
  }

  c10::IValue scalar(const Value& value) {
    if (auto* b = value.get_if<bool>()) return *b;
    if (auto* i = value.get_if<std::int64_t>()) return *i;
    return number(value);
  }

  // A Python number where the schema has a Tensor (aten.div.Tensor(x, 8.0)): a 0-d CPU tensor
  // marked as a wrapped number, as Python's argument parser makes it, so that type promotion treats
  // it as a scalar (f16 / 8.0 stays f16).
  c10::IValue wrapped_number(const Value& value) {
    return at::native::wrapped_scalar_tensor(scalar(value).toScalar(), c10::kCPU);
  }

  c10::ScalarType dtype(DType type) {
    c10::ScalarType out = scalar_type(type);
    if (options_.dtype && out == c10::kHalf) out = *options_.dtype;
    return out;
  }

  static c10::Layout layout(const std::string& name) {
    if (name == "torch.strided") return c10::kStrided;
    if (name == "torch.sparse_coo") return c10::kSparse;
    throw Unsupported("layout " + name + " is not mapped");
  }

  static c10::MemoryFormat memory_format(const std::string& name) {
    if (name == "torch.contiguous_format") return c10::MemoryFormat::Contiguous;
    if (name == "torch.preserve_format") return c10::MemoryFormat::Preserve;
    if (name == "torch.channels_last") return c10::MemoryFormat::ChannelsLast;
    if (name == "torch.channels_last_3d") return c10::MemoryFormat::ChannelsLast3d;
    throw Unsupported("memory format " + name + " is not mapped");
  }

  at::Tensor tensor(const oplog::TensorSpec& spec) {
    auto stride = spec.stride.value_or(contiguous_strides(spec.shape));
    auto options = at::TensorOptions().dtype(dtype(spec.dtype)).device(device_);
    at::Tensor out = at::empty_strided(spec.shape, stride, options);
    if (device_.type() != c10::kMeta) fill_random(out);
    if (options_.channels_last && out.dim() == 4) out = out.contiguous(c10::MemoryFormat::ChannelsLast);
    return out;
  }

  c10::IValue list(const Value& value, const c10::TypePtr& elem, const c10::Argument& arg) {
    using K = c10::TypeKind;
    const std::vector<Value>* items = items_of(value);
    std::vector<Value> repeated;
    if (!items && value.is<std::int64_t>() && (elem->kind() == K::IntType || elem->kind() == K::SymIntType)) {
      repeated.assign(arg.N().value_or(1), value);   // int[2] given as one int, as Python allows
      items = &repeated;
    }
    if (!items) throw Unsupported(std::string("expected a list, got a ") + value.kind());
    switch (elem->kind()) {
      case K::IntType:
      case K::SymIntType: return fill_list<std::int64_t>(*items, elem, arg);
      case K::FloatType: return fill_list<double>(*items, elem, arg);
      case K::BoolType: return fill_list<bool>(*items, elem, arg);
      case K::TensorType: return fill_list<at::Tensor>(*items, elem, arg);
      case K::OptionalType:
        if (elem->castRaw<c10::OptionalType>()->getElementType()->kind() == K::TensorType)
          return fill_list<std::optional<at::Tensor>>(*items, elem, arg);
        [[fallthrough]];
      default: throw Unsupported("lists of " + elem->str() + " are not mapped yet");
    }
  }

  template <class T>
  c10::IValue fill_list(const std::vector<Value>& items, const c10::TypePtr& elem, const c10::Argument& arg) {
    c10::List<T> out;
    for (const Value& item : items) out.push_back(convert(item, elem, arg).template to<T>());
    return out;
  }

  const ReplayOptions& options_;
  c10::Device device_;
};

// The slots as a stack on `device` (meta: a check that allocates nothing).
torch::jit::Stack build_on(const CallPlan& plan, const ReplayOptions& options, c10::Device device) {
  const auto& args = plan.op.schema().arguments();
  Builder builder(options, device);
  torch::jit::Stack stack;
  stack.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSlot& slot = plan.slots[i];
    if (!slot.value) {
      stack.push_back(slot.default_value);
      continue;
    }
    try {
      stack.push_back(builder.convert(*slot.value, args[i].real_type(), args[i]));
    } catch (const Unsupported& e) {
      throw Unsupported("argument '" + args[i].name() + "' (" + args[i].real_type()->str() + "): " +
                        e.what());
    }
  }
  return stack;
}

// Which schema argument each recorded value goes to; defaults for the others.
std::vector<ArgSlot> match_arguments(const c10::FunctionSchema& schema, const oplog::OpInput& input) {
  const auto& args = schema.arguments();
  std::vector<ArgSlot> slots(args.size());
  if (input.args.size() > args.size())
    throw Unsupported(std::to_string(input.args.size()) + " positional arguments, the schema takes " +
                      std::to_string(args.size()));
  for (size_t i = 0; i < input.args.size(); ++i) {
    if (args[i].kwarg_only())
      throw Unsupported("argument '" + args[i].name() + "' is keyword-only but given positionally");
    slots[i].value = input.args[i];
  }
  for (const auto& [key, value] : input.kwargs) {
    auto index = schema.argumentIndexWithName(key);
    if (!index) throw Unsupported("the schema has no argument '" + key + "'");
    if (slots[*index].value) throw Unsupported("argument '" + key + "' given twice");
    slots[*index].value = value;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (slots[i].value) continue;
    if (!args[i].default_value())
      throw Unsupported("argument '" + args[i].name() + "' is missing and has no default");
    slots[i].default_value = *args[i].default_value();
  }
  return slots;
}

c10::IValue clone_value(const c10::IValue& value);

at::Tensor clone_tensor(const at::Tensor& tensor) {
  if (!tensor.defined()) return tensor;
  return detail::whole_storage(tensor).clone().as_strided(tensor.sizes(), tensor.strides(),
                                                          tensor.storage_offset());
}

c10::IValue clone_value(const c10::IValue& value) {
  if (value.isTensor()) return clone_tensor(value.toTensor());
  if (value.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : value.toTensorList()) out.push_back(clone_tensor(t));
    return out;
  }
  if (value.isList()) {
    auto in = value.toList();
    c10::impl::GenericList out(in.elementType());
    for (const c10::IValue& item : in) out.push_back(clone_value(item));
    return out;
  }
  return value;
}

double value_bytes(const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    return t.defined() ? static_cast<double>(t.numel()) * static_cast<double>(t.element_size()) : 0.0;
  }
  double bytes = 0;
  if (value.isList())
    for (const c10::IValue& item : value.toList()) bytes += value_bytes(item);
  return bytes;
}

std::string compare_tensor(const at::Tensor& expected, const at::Tensor& actual, const std::string& where) {
  if (expected.defined() != actual.defined()) return where + ": one backend returned no tensor";
  if (!expected.defined()) return "";
  if (!expected.sizes().equals(actual.sizes()))
    return where + ": shape " + c10::str(actual.sizes()) + " vs " + c10::str(expected.sizes());
  if (expected.scalar_type() != actual.scalar_type())
    return where + ": dtype " + c10::toString(actual.scalar_type()) + " vs " + c10::toString(expected.scalar_type());
  if (!at::isFloatingType(expected.scalar_type())) {
    return at::equal(expected.cpu(), actual.cpu()) ? "" : where + ": values differ";
  }
  Tolerance tol = tolerance_for(expected.scalar_type());
  at::Tensor e = expected.to(at::kDouble), a = actual.to(at::kDouble);
  at::Tensor close = at::isclose(a, e, tol.rtol, tol.atol, /*equal_nan=*/true);
  if (close.all().item<bool>()) return "";
  double worst = a.sub(e).abs().masked_fill(close, 0).nan_to_num(1e300).max().item<double>();
  std::ostringstream out;
  out << where << ": max |error| " << worst << " beyond rtol " << tol.rtol << " atol " << tol.atol;
  return out.str();
}

std::string compare_value(const c10::IValue& expected, const c10::IValue& actual, const std::string& where) {
  if (expected.isTensor() && actual.isTensor()) return compare_tensor(expected.toTensor(), actual.toTensor(), where);
  if (expected.isList() && actual.isList()) {
    auto e = expected.toList(), a = actual.toList();
    if (e.size() != a.size()) return where + ": list lengths differ";
    for (size_t i = 0; i < e.size(); ++i) {
      std::string diff = compare_value(e.get(i), a.get(i), where + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
    return "";
  }
  std::ostringstream e, a;
  e << expected;
  a << actual;
  return e.str() == a.str() ? "" : where + ": " + a.str() + " vs " + e.str();
}

}  // namespace

namespace detail {

at::Tensor whole_storage(const at::Tensor& tensor) {
  auto elements = static_cast<std::int64_t>(tensor.storage().nbytes()) / tensor.element_size();
  return tensor.as_strided({elements}, {1}, 0);
}

void fill_uniform_ints(const at::Tensor& tensor, std::int64_t bound) {
  if (tensor.numel() > 0) whole_storage(tensor).random_(0, bound);
}

}  // namespace detail

c10::ScalarType scalar_type(DType type) {
  switch (type) {
    case DType::kF16: return c10::kHalf;
    case DType::kF32: return c10::kFloat;
    case DType::kF64: return c10::kDouble;
    case DType::kBF16: return c10::kBFloat16;
    case DType::kI8: return c10::kChar;
    case DType::kI16: return c10::kShort;
    case DType::kI32: return c10::kInt;
    case DType::kI64: return c10::kLong;
    case DType::kB8: return c10::kBool;
    case DType::kU8: return c10::kByte;
    case DType::kC32: return c10::kComplexHalf;
    case DType::kC64: return c10::kComplexFloat;
    case DType::kC128: return c10::kComplexDouble;
  }
  return c10::kFloat;
}

std::optional<c10::ScalarType> dtype_option(std::string_view abbr) {
  if (abbr == "f16") return c10::kHalf;
  if (abbr == "bf16") return c10::kBFloat16;
  if (abbr == "f32") return c10::kFloat;
  return std::nullopt;
}

// Bytes of the storages behind the tensors of a stack (lists included), each storage counted once.
double storage_bytes(const torch::jit::Stack& stack) {
  double bytes = 0;
  std::vector<const void*> seen;
  auto add = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    const void* key = t.storage().unsafeGetStorageImpl();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return;
    seen.push_back(key);
    bytes += static_cast<double>(t.storage().nbytes());
  };
  for (const c10::IValue& value : stack) {
    if (value.isTensor()) add(value.toTensor());
    if (value.isTensorList())
      for (const at::Tensor& t : value.toTensorVector()) add(t);
  }
  return bytes;
}

std::optional<c10::OperatorHandle> find_operator(const oplog::OpEntry& entry, std::string* why) {
  std::string overload = entry.overload == "default" ? "" : entry.overload;
  auto op = c10::Dispatcher::singleton().findSchema({"aten::" + entry.name, overload});
  if (!op && why)
    *why = "no operator aten::" + entry.name + (overload.empty() ? "" : "." + overload) +
           " in this LibTorch (" + TORCH_VERSION + ")";
  return op;
}

std::optional<CallPlan> plan_call(const c10::OperatorHandle& op, const oplog::OpEntry& entry,
                                  const oplog::OpInput& input, const ReplayOptions& options,
                                  std::string* why) {
  try {
    CallPlan plan{op, entry.name, match_arguments(op.schema(), input)};
    plan.input_bytes = storage_bytes(build_on(plan, options, c10::Device(c10::kMeta)));
    return plan;
  } catch (const Unsupported& e) {
    if (why) *why = e.what();
  } catch (const c10::Error& e) {
    if (why) *why = e.what_without_backtrace();
  }
  return std::nullopt;
}

torch::jit::Stack build_stack(const CallPlan& plan, const ReplayOptions& options, std::uint64_t seed) {
  at::manual_seed(seed);
  torch::jit::Stack stack = build_on(plan, options, options.device);
  apply_index_rules(plan, stack);
  return stack;
}

torch::jit::Stack call(const CallPlan& plan, const torch::jit::Stack& inputs) {
  torch::jit::Stack stack = inputs;
  plan.op.callBoxed(stack);
  return stack;
}

torch::jit::Stack clone_stack(const torch::jit::Stack& stack) {
  torch::jit::Stack out;
  out.reserve(stack.size());
  for (const c10::IValue& value : stack) out.push_back(clone_value(value));
  return out;
}

double tensor_bytes(const torch::jit::Stack& stack) {
  double bytes = 0;
  for (const c10::IValue& value : stack) bytes += value_bytes(value);
  return bytes;
}

std::string compare_outputs(const torch::jit::Stack& expected, const torch::jit::Stack& actual) {
  if (expected.size() != actual.size())
    return std::to_string(actual.size()) + " outputs vs " + std::to_string(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string diff = compare_value(expected[i], actual[i], "output " + std::to_string(i));
    if (!diff.empty()) return diff;
  }
  return "";
}

}  // namespace opbench::replay
