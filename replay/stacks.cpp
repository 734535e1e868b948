// Stacks of the boxed call's values: deep copies, logical bytes, and two backends' outputs compared.
#include <ATen/ops/equal.h>
#include <ATen/ops/isclose.h>

#include <sstream>

#include "opbench/reference.h"
#include "replay/input_builder.h"
#include "replay/stacks.h"

namespace opbench::replay {
namespace {

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
