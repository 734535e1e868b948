// The input builder: recorded values converted to IValues of the schema's types, tensors filled with
// random values on the replay's device (or only described, on the meta device, for plan_call's check).
#include <ATen/Context.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/jit_type.h>
#include <ATen/ops/empty_strided.h>

#include "replay/index_rules.h"
#include "replay/input_builder.h"
#include "replay/operator_call.h"

namespace opbench::replay {
namespace detail {
namespace {

using oplog::DType;
using oplog::Value;

constexpr std::int64_t kIntBound = 8;   // integer tensors that are not index arguments: [0, 8)

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

}  // namespace

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

at::Tensor whole_storage(const at::Tensor& tensor) {
  auto elements = static_cast<std::int64_t>(tensor.storage().nbytes()) / tensor.element_size();
  return tensor.as_strided({elements}, {1}, 0);
}

void fill_uniform_ints(const at::Tensor& tensor, std::int64_t bound) {
  if (tensor.numel() > 0) whole_storage(tensor).random_(0, bound);
}

}  // namespace detail

using oplog::DType;

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

torch::jit::Stack build_stack(const CallPlan& plan, const ReplayOptions& options, std::uint64_t seed) {
  at::manual_seed(seed);
  torch::jit::Stack stack = detail::build_on(plan, options, options.device);
  apply_index_rules(plan, stack);
  return stack;
}

}  // namespace opbench::replay
