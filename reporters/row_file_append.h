// The experiment rows on disk, appended safely: the CSV (`--output FILE.csv`, cells from row_csv.h)
// and its dashboard sidecar (`FILE.json`, one record per line, from dashboard_json.h). Several
// bench_ops runs may write the same pair at once (CI shards, a user's two terminals): every append
// takes an exclusive lock on the folder of the CSV (of its target, when it is a symbolic link), re-reads
// and checks both files, and appends this run's new rows to each, all or none (atomic_file.h): so no
// writer loses another's rows, what a file held is kept byte for byte (cells a user added, its links,
// its mode), and a failed write (a full disk) leaves both files as they were, in step.
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
  // sidecar, under the lock. An older header is repaired (the CSV replaced atomically with its rows
  // padded with empty cells). Throws opbench::Error naming the file and the reason when a file cannot be
  // read (or is over 64 MiB) or written; both files are then as they were.
  void append(const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& records) const;

 private:
  std::string csv_path_, json_path_;
};

}  // namespace opbench
