// Targets per GPU arch (targets/*.json): the number an experiment row (opbench/experiment.h) should
// reach on a device, per experiment, metric, dtype and backend.
//
// A targets file:
//   {"devices": ["NVIDIA H200"],                 exact device names (cudaGetDeviceProperties)
//    "rule": "how the numbers were derived",     required: a target is never an unexplained number
//    "targets": [{"experiment": "layer_norm", "metric": "memory_bandwidth(GB/s)",
//                 "dtype": "bfloat16", "backend": "aten", "target": 950},
//                {"experiment": "llama2_7b_bf16", "metric": "token_per_sec", "dtype": "bfloat16",
//                 "backend": "graph", "bound_fraction": 0.9}]}
// An entry holds either "target" (the number itself) or "bound_fraction" (a share of the row's bound, in
// (0, 1]: the target is that share of what the row would read at 100% of its measured ceiling — for a
// model's token_per_sec, the run's read ceiling / its bytes per token — so it follows the GPU the run
// measured; token_per_sec and memory_bandwidth(GB/s) rows only, the metrics with a ceiling share).
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace opbench {

struct Target {
  std::string experiment, metric, dtype, backend;
  double value = 0;                        // the target; 0 when bound_fraction is set
  std::optional<double> bound_fraction;    // the target as a share of the row's measured bound
};

struct TargetFile {
  std::string path;
  std::vector<std::string> devices;
  std::string rule;
  std::vector<Target> targets;
};

// Throws opbench::Error naming the file and the offending entry ("targets[3].target: expected a
// positive number") on malformed JSON, a number out of range, missing or unknown keys, wrong types,
// an unknown dtype name or duplicate entries.
TargetFile load_target_file(const std::string& path);
// The same for a targets file's text (`path` names it in messages).
TargetFile parse_target_text(const std::string& text, const std::string& path);
// A file, or every *.json in a folder (sorted). A device named by two files, or a folder with no
// *.json file, is an error.
std::vector<TargetFile> load_targets(const std::string& file_or_dir);

// Names that targets may use: the experiments, metrics and backends of the registered families.
struct KnownNames {
  std::set<std::string> experiments, metrics, backends;
  std::set<std::string> per_world_experiments;   // experiments whose rows are <name>_n<processes>: a
                                                 // target names one of those ("collective_n8")
};
// One message per target naming an experiment, metric or backend no family has (a target that can
// never apply); empty when all are known.
std::vector<std::string> unknown_target_names(const std::vector<TargetFile>& files, const KnownNames& known);

// True when `row_name` is `stem`_n<processes> (processes >= 1, no leading zero): the name of a
// per-world-size experiment's rows (Experiment::per_world_size, opbench/experiment.h).
bool per_world_row_name(const std::string& stem, const std::string& row_name);

// The target for one experiment row on `device_name`, if any file names that device.
std::optional<Target> find_target(const std::vector<TargetFile>& files, const std::string& device_name,
                                  const std::string& experiment, const std::string& metric,
                                  const std::string& dtype, const std::string& backend);

// Case dtype names (bf16) as the seed's CSV writes them (bfloat16, from str(torch.bfloat16)).
std::string torch_dtype_name(const std::string& case_dtype);

}  // namespace opbench
