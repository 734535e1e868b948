// What a replay is asked to do: the log and the options that shape it (bench_ops' --oplog flags,
// parsed by app/replay_flags.h).
#pragma once
#include <optional>
#include <string>

namespace opbench::replay {

// --oplog: replay a recorded operator-input log (or a folder of them) instead of the families.
struct OplogOptions {
  std::string path;                   // FILE or DIR
  std::optional<std::string> dtype;   // --oplog_dtype f16|bf16|f32: recast floating inputs
  int max_inputs = 0;                 // --oplog_max_inputs N: per operator, 0 = all
  bool channels_last = false;         // --channels_last: 4-d inputs in channels-last layout
  // --oplog_case_budget_s: a case whose first call takes longer is skipped after it (no timing), so one
  // huge input cannot hold a sweep for minutes. Default: 10 s on the CPU, 60 s on a GPU.
  std::optional<double> case_budget_s;
  // --oplog_max_input_mb: inputs larger than this are not run. Default: 256 MB on the CPU (where a
  // model-sized matmul takes minutes per call), none on a GPU.
  std::optional<double> max_input_mb;
};

}  // namespace opbench::replay
