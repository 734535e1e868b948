// Operator replay's command line: --oplog FILE|DIR and the flags that shape the replay. bench_ops'
// main hands parse_cli (app/cli.h) parse_replay_flag for the flags the sweep does not know; a run with
// --oplog then goes to replay's entry (replay_entry.h) instead of the sweep.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "replay/replay_options.h"

namespace opbench::replay {

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
