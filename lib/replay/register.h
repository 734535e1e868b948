// Registers one Google Benchmark case per (operator, input, backend) of an operator-input log (or a
// folder of logs) as `Replay/<model>/<op>/<input>/<backend>`. Docs: docs/oplog.md, "Replay".
#pragma once
#include <optional>
#include <string>

#include "opbench/cases.h"
#include "opbench/device.h"
#include "replay/plan.h"

namespace opbench {

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

}  // namespace opbench

namespace opbench::replay {

// Loads the log(s), resolves every operator and matches every selected input against its schema;
// registers the runnable ones (eager everywhere, graph too on a CUDA device) and returns what was
// registered and what was not, with the reasons. Parse warnings go to stderr.
// Throws opbench::Error when the path cannot be read or holds no operator at all.
ReplayPlan register_replay(RunContext& run, const OplogOptions& options);

// The case bodies' timing and check (see register.cpp): the backends this build can run here.
std::vector<std::string> replay_backends(const DeviceInfo& device);

}  // namespace opbench::replay
