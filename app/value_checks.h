// The values bench_ops hands on without parsing them itself, checked before Google Benchmark or a
// family reads them: Google Benchmark's own flags (it prints its usage and exits 0 on a bad enum value,
// aborts on --benchmark_repetitions=-1, runs nothing on 0), the BENCHMARK_* variables it reads as
// defaults for them, and every OPBENCH_* variable bench_ops reads. Each check throws
// std::invalid_argument with one line naming the flag or variable and the values it accepts.
// No LibTorch.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// `args`: the arguments parse_cli passed through (args[0], the program, is skipped). Refuses an
// argument that is not a Google Benchmark flag bench_ops knows, and a value the flag does not accept.
void check_gbench_flags(const std::vector<std::string>& args);

// A variable's value, nullopt when unset (opbench/world.h's EnvReader has this shape).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// BENCHMARK_FORMAT, BENCHMARK_REPETITIONS, ... (Google Benchmark's defaults for its flags) and
// OPBENCH_LAUNCH_RULES, OPBENCH_COLLECTIVE_*, OPBENCH_INDUCTOR_CACHE, OPBENCH_PYTHON. An empty value
// counts as unset. Distributed-launch variables (RANK, ...) are opbench/world.h's.
void check_environment(const EnvLookup& env);

// The names check_environment reads, for tests and the docs.
std::vector<std::string> checked_variables();

}  // namespace opbench
