#include "replay_flags.h"

#include <stdexcept>

#include "flag_values.h"

namespace opbench::replay {
namespace {

OplogOptions& created(std::optional<OplogOptions>& oplog) {
  if (!oplog) oplog.emplace();
  return *oplog;
}

}  // namespace

bool parse_replay_flag(const std::vector<std::string>& args, std::size_t& i, std::optional<OplogOptions>& oplog) {
  if (auto v = flag_value(args, i, "--oplog")) {
    if (v->empty()) throw std::invalid_argument("--oplog needs a file or folder of operator-input logs");
    created(oplog).path = *v;
  } else if (auto v = flag_value(args, i, "--oplog_dtype")) {
    if (*v != "f16" && *v != "bf16" && *v != "f32")
      throw std::invalid_argument("--oplog_dtype=" + *v + ": expected f16, bf16 or f32");
    created(oplog).dtype = *v;
  } else if (auto v = flag_value(args, i, "--oplog_max_inputs")) {
    created(oplog).max_inputs = parse_integer("--oplog_max_inputs", *v, 1, 1e9);
  } else if (auto v = flag_value(args, i, "--oplog_case_budget_s")) {
    created(oplog).case_budget_s = parse_number("--oplog_case_budget_s", *v, 0.001, 86400);
  } else if (auto v = flag_value(args, i, "--oplog_max_input_mb")) {
    created(oplog).max_input_mb = parse_number("--oplog_max_input_mb", *v, 0, 1e9);
  } else if (args[i] == "--channels_last") {
    created(oplog).channels_last = true;
  } else {
    return false;
  }
  return true;
}

void check_replay_flags(const OplogOptions& oplog, bool sharded) {
  if (sharded)
    throw std::invalid_argument("--opbench_shard does not apply to --oplog (a replay runs in one process)");
  if (oplog.path.empty())
    throw std::invalid_argument("--oplog_dtype, --oplog_max_inputs, --oplog_case_budget_s, --oplog_max_input_mb and "
                                "--channels_last need --oplog FILE|DIR");
}

std::string replay_help() {
  return R"(Operator replay (instead of the families):
  --oplog FILE|DIR            replay every operator input recorded in an operator-input log
  --oplog_dtype=f16|bf16|f32  recast the floating-point inputs
  --oplog_max_inputs=N        at most N inputs per operator
  --channels_last             4-d inputs in channels-last layout
  --oplog_case_budget_s=S     skip (after it) an input whose first call takes longer than S seconds
                              (default 10 on the CPU, 60 on a GPU)
  --oplog_max_input_mb=MB     do not run inputs larger than MB (default 256 on the CPU, where a
                              model-sized matmul takes minutes a call; none on a GPU; 0: no limit)
  The log's lines that do not parse are listed as file:line:column: reason; bench_ops then exits 1.
  A log of which nothing can run exits 2, listing every reason.

)";
}

}  // namespace opbench::replay
