// Resolving a recorded operator, matching a recorded input against its schema, and the boxed call.
#include <ATen/core/function_schema.h>
#include <c10/util/Exception.h>
#include <torch/headeronly/version.h>

#include <algorithm>

#include "replay/input_builder.h"
#include "replay/operator_call.h"

namespace opbench::replay {
namespace {

using detail::Unsupported;

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

}  // namespace

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
    plan.input_bytes = storage_bytes(detail::build_on(plan, options, c10::Device(c10::kMeta)));
    return plan;
  } catch (const Unsupported& e) {
    if (why) *why = e.what();
  } catch (const c10::Error& e) {
    if (why) *why = e.what_without_backtrace();
  }
  return std::nullopt;
}

torch::jit::Stack call(const CallPlan& plan, const torch::jit::Stack& inputs) {
  torch::jit::Stack stack = inputs;
  plan.op.callBoxed(stack);
  return stack;
}

}  // namespace opbench::replay
