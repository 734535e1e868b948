// The experiment rows on disk, appended safely: the CSV (`--output FILE.csv`, cells from row_csv.h)
// and its dashboard sidecar (`FILE.json`, one record per line, from dashboard_json.h). Several
// bench_ops runs may write the same pair at once (CI shards, a user's two terminals): every append
// takes an exclusive lock on the CSV's folder, re-reads both files, adds this run's new rows after
// whatever is there now, and replaces each file atomically (atomic_file.h). So no writer loses
// another's rows, and a crash never leaves a torn file.
#pragma once
#include <string>
#include <vector>

namespace opbench {

// The dashboard sidecar beside a rows CSV: `<path without .csv>.json`.
std::string dashboard_path(const std::string& csv_path);

class RowFile {
 public:
  // Checks everything that can be checked before a case runs, and throws opbench::Error with one line
  // naming the file otherwise: the path ends in .csv and is not a folder; its folder can be created and
  // locked; an existing CSV has opbench's header or an older prefix of it (the seed's 8 columns, an
  // older opbench) — a file with other columns is refused, never rewritten; an existing sidecar holds
  // only JSON records, one per line (file:line of the first that is not).
  explicit RowFile(std::string csv_path);

  const std::string& csv_path() const { return csv_path_; }
  const std::string& json_path() const { return json_path_; }

  // Appends `rows` (cells in csv_header() order) to the CSV and `records` (one JSON object each) to the
  // sidecar, under the lock. An older header is repaired (rows padded with empty cells). Throws
  // opbench::Error when a file cannot be read or written.
  void append(const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& records) const;

 private:
  std::string csv_path_, json_path_;
};

}  // namespace opbench
