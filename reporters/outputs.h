// The experiment rows on disk: the seed-compatible CSV (header kept, repaired if older, rows appended)
// and the PyTorch OSS benchmark database (v3) records, one JSON object per line. Both files are
// rewritten whole through a temporary file and rename, so a crash never leaves a torn file.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "csv.h"
#include "experiments.h"

namespace opbench {

// name,metric,target,actual,dtype,device,arch,is_model (gpt-fast's; is_model True/False as its CSV
// writes it), then the extras, run_id and timestamp, and device_id (which device: "cuda:3", "cpu").
const std::vector<std::string>& csv_header();
std::vector<std::string> csv_cells(const ExperimentRow& row, const RunInfo& info);


// Writes `text` to `path` via `path.tmp` + rename; creates parent folders. Throws opbench::Error.
void write_file_atomically(const std::string& path, const std::string& text);

// `<path without .csv>.json`.
std::string dashboard_path(const std::string& csv_path);
nlohmann::json dashboard_record(const ExperimentRow& row, const RunInfo& info);

}  // namespace opbench
