// An experiment row as CSV cells: gpt-fast's columns first (name,metric,target,actual,dtype,device,arch,
// is_model, is_model written True/False as gpt-fast's CSV does), then opbench's (backend,
// pct_of_target,pct_of_peak,pct_of_ceiling,cases,status), then run_id, timestamp and device_id (which
// device: "cuda:3", "cpu"). Numbers keep six decimals where that keeps their value. Formats only.
#pragma once
#include <string>
#include <vector>

#include "opbench/rows.h"
#include "run_info.h"

namespace opbench {

const std::vector<std::string>& csv_header();
std::vector<std::string> csv_cells(const ExperimentRow& row, const RunInfo& info);

}  // namespace opbench
