// An experiment row as a PyTorch OSS benchmark database (v3) record, the line the dashboard sidecar
// holds for it (docs/dashboard_schema.md): benchmark, model, metric (its extra_info: status, cases,
// failed cases, the timer and cache mode that measured the row's cases, the percentages), runners
// (this machine), dependencies (torch, CUDA, opbench). Formats only.
#pragma once
#include <nlohmann/json.hpp>

#include "opbench/rows.h"
#include "run_info.h"

namespace opbench {

nlohmann::json dashboard_record(const ExperimentRow& row, const RunInfo& info);

}  // namespace opbench
