// Registers one Google Benchmark case per (operator, input, backend) of an operator-input log (or a
// folder of logs) as `Replay/<model>/<op>/<input>/<backend>`. Docs: docs/oplog.md, "Replay".
#pragma once
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/device.h"
#include "replay/replay_options.h"
#include "replay/replay_plan.h"

namespace opbench::replay {

// Loads the log(s), resolves every operator and matches every selected input against its schema;
// registers the runnable ones (eager everywhere, graph too on a CUDA device) and returns what was
// registered and what was not, with the reasons. Parse warnings go to stderr.
// Throws opbench::Error when the path cannot be read or holds no operator at all.
ReplayPlan register_replay(RunContext& run, const OplogOptions& options);

// The case bodies' timing and check (see registration.cpp): the backends this build can run here.
std::vector<std::string> replay_backends(const DeviceInfo& device);

}  // namespace opbench::replay
