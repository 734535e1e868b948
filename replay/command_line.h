// Operator replay's command line: --oplog FILE|DIR and the flags that shape the replay. bench_ops'
// main hands parse_cli (app/cli.h) parse_replay_flag for the flags the sweep does not know; a run with
// --oplog then goes to replay's entry (run_replay.h) instead of the sweep.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

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


// Takes args[i] when it is one of replay's flags (its value too: `--flag=value` or `--flag value`,
// advancing i) into *oplog, created on the first one; false for any other argument. Throws
// std::invalid_argument naming the flag and the accepted values on a bad or missing value.
bool parse_replay_flag(const std::vector<std::string>& args, std::size_t& i, std::optional<OplogOptions>& oplog);

// After the whole command line is parsed: throws std::invalid_argument when the flags cannot go
// together (replay's flags without --oplog; --oplog with --opbench_shard, `sharded`).
void check_replay_flags(const OplogOptions& oplog, bool sharded);

// Replay's part of --help (bench_ops' own flags: cli_help).
std::string replay_help();

}  // namespace opbench::replay
