// Replaying one recorded operator input: resolve the operator through the c10 dispatcher,
// match the recorded values against its schema, build the inputs on the device and call it boxed.
// Docs: docs/oplog.md, "Replay".
//
//   auto op = find_operator(entry, &why);                        // aten::addmm, overload ""
//   auto plan = plan_call(*op, entry, entry.inputs[0], options, &why);   // nullopt + why: not runnable
//   torch::jit::Stack inputs = build_stack(*plan, options, seed); // random tensors, valid indices
//   torch::jit::Stack outputs = call(*plan, inputs);
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "replay/oplog/oplog.h"

namespace opbench::replay {

struct ReplayOptions {
  c10::Device device = c10::Device(c10::kCPU);
  // --oplog_dtype: f16 tensors and f16 dtype arguments become this dtype (other dtypes are kept, as
  // the reference loader does: the logs are recorded in f16 and f32 marks what must stay f32).
  std::optional<c10::ScalarType> dtype;
  bool channels_last = false;   // --channels_last: 4-d tensors in channels-last layout
};

c10::ScalarType scalar_type(oplog::DType type);
// "f16" | "bf16" | "f32" (the values --oplog_dtype accepts); nullopt for anything else.
std::optional<c10::ScalarType> dtype_option(std::string_view abbr);

// aten::<name>.<overload>; the log's overload "default" is the empty overload name. nullopt + *why
// when this LibTorch has no such operator.
std::optional<c10::OperatorHandle> find_operator(const oplog::OpEntry& entry, std::string* why);

// One slot per schema argument: the recorded value, or the schema default where none was recorded.
struct ArgSlot {
  std::optional<oplog::Value> value;
  c10::IValue default_value;
};

struct CallPlan {
  c10::OperatorHandle op;
  std::string name;             // the aten name without overload ("embedding"): keys the index rules
  std::vector<ArgSlot> slots;   // schema order
  double input_bytes = 0;       // storage the inputs need on the device (from the meta build)
};

// Matches positional args in schema order and kwargs by name, fills defaults, and checks that every
// value converts to its argument's type (by building the stack on the meta device: no memory, no
// kernels). nullopt + *why ("argument 'dim' (int[1]): got a str") when it cannot be replayed.
std::optional<CallPlan> plan_call(const c10::OperatorHandle& op, const oplog::OpEntry& entry,
                                  const oplog::OpInput& input, const ReplayOptions& options,
                                  std::string* why);

// The inputs on options.device: tensors with the recorded shape, dtype and strides filled with
// random values (floating: standard normal; integer: uniform in [0, 8); bool: 0/1), then the index
// arguments of index_rules() refilled with valid indices. Deterministic for a given seed.
// Throws c10::Error or opbench::Error (e.g. a dtype this device cannot fill).
torch::jit::Stack build_stack(const CallPlan& plan, const ReplayOptions& options, std::uint64_t seed);

// Calls the operator boxed on a copy of `inputs` (tensors are shared, not copied) and returns its
// outputs. In-place operators modify the input tensors.
torch::jit::Stack call(const CallPlan& plan, const torch::jit::Stack& inputs);

}  // namespace opbench::replay
