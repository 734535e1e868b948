// The rows CSV and its dashboard sidecar, appended under a folder lock (contract: row_file_append.h).
#include "row_file_append.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "csv_format.h"
#include "opbench/check.h"
#include "row_csv.h"

namespace opbench {
namespace {

namespace fs = std::filesystem;

bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// An exclusive flock on a folder, held for the object's life. Lock files beside the CSV would be left
// behind; the folder itself is always there.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& folder) {
    fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw Error(folder.string() + ": cannot be opened to lock it: " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      int error = errno;
      ::close(fd_);
      throw Error(folder.string() + ": cannot be locked: " + std::strerror(error));
    }
  }
  ~FolderLock() { ::close(fd_); }   // closing releases the lock
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

fs::path folder_of(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// The existing CSV's header (empty when there is no file or it is empty); refuses a foreign one.
std::vector<std::string> existing_header(const std::string& csv, std::vector<std::vector<std::string>>* rows) {
  std::error_code error;
  if (!fs::exists(csv, error)) return {};
  auto all = read_csv(csv);
  if (all.empty()) return {};
  const auto& ours = csv_header();
  if (!is_prefix(all[0], ours) && !is_prefix(ours, all[0]))
    throw Error(csv + ": its header is not opbench's (" + csv_line(ours).substr(0, 60) +
                "...) nor an older prefix of it; refusing to write to it (choose another --output)");
  if (all[0].size() < 8)
    throw Error(csv + ": its header has fewer than gpt-fast's 8 columns; refusing to write to it");
  std::vector<std::string> header = all[0];
  if (rows) rows->assign(all.begin() + 1, all.end());
  return header;
}

std::vector<std::string> existing_records(const std::string& json) {
  std::vector<std::string> records;
  std::ifstream in(json);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty()) continue;
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object())
      throw Error(json + ":" + std::to_string(line_number) +
                  ": not a dashboard record (one JSON object per line); refusing to append to it");
    records.push_back(line);
  }
  return records;
}

}  // namespace

std::string dashboard_path(const std::string& csv_path) {
  fs::path p(csv_path);
  return (p.parent_path() / p.stem()).string() + ".json";
}

RowFile::RowFile(std::string csv_path) : csv_path_(std::move(csv_path)) {
  fs::path p(csv_path_);
  if (p.extension() != ".csv")
    throw Error("--output " + csv_path_ + ": expected a .csv file (the dashboard records go beside it as " +
                p.stem().string() + ".json)");
  json_path_ = dashboard_path(csv_path_);
  std::error_code error;
  if (fs::is_directory(p, error)) throw Error("--output " + csv_path_ + ": is a folder");
  fs::path folder = folder_of(csv_path_);
  fs::create_directories(folder, error);
  if (!fs::is_directory(folder)) throw Error("--output " + csv_path_ + ": its folder " + folder.string() +
                                             " cannot be created" + (error ? ": " + error.message() : ""));
  FolderLock lock(folder);
  existing_header(csv_path_, nullptr);
  existing_records(json_path_);
  // Writable? Open both files for appending now, before a case runs, rather than fail after the first
  // experiment; a file this probe created is removed again (an existing one is left as it is).
  for (const auto& path : {csv_path_, json_path_}) {
    bool existed = fs::exists(path, error);
    if (!std::ofstream(path, std::ios::app))
      throw Error("--output: " + path + " cannot be written: " + std::strerror(errno));
    if (!existed) fs::remove(path, error);
  }
}

void RowFile::append(const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& records) const {
  FolderLock lock(folder_of(csv_path_));
  std::vector<std::vector<std::string>> prior;
  std::vector<std::string> header = csv_header();
  std::vector<std::string> old_header = existing_header(csv_path_, &prior);
  if (old_header.size() > header.size()) header = old_header;   // a newer opbench's extra columns: kept
  auto padded = [&](std::vector<std::string> cells) {
    cells.resize(header.size());
    return csv_line(cells);
  };
  std::string csv = csv_line(header);
  for (const auto& cells : prior) csv += padded(cells);
  for (const auto& cells : rows) csv += padded(cells);
  std::string json;
  for (const auto& line : existing_records(json_path_)) json += line + "\n";
  for (const auto& line : records) json += line + "\n";
  write_file_atomically(csv_path_, csv);
  write_file_atomically(json_path_, json);
}

}  // namespace opbench
