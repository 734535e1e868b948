// The rows CSV and its dashboard sidecar, appended under a folder lock (contract: row_file_append.h).
#include "row_file_append.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "opbench/bounded_read.h"
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

// The file `path` names, symbolic links followed; `path` itself when it does not exist yet.
std::string resolved(const std::string& path) {
  std::error_code error;
  fs::path real = fs::canonical(path, error);
  return error ? path : real.string();
}

// A file's text, "" when it does not exist; throws for one that cannot be read or is too large.
std::string text_of(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) return "";
  FileText file = read_bounded(path, kTableLimitBytes, "a rows file");
  if (!file.error.empty()) throw Error(path + ": " + file.error);
  return file.text;
}

// The existing CSV's header and rows (none when there is no file or it is empty); refuses a foreign header.
std::vector<std::vector<std::string>> existing_table(const std::string& csv, const std::string& text) {
  auto all = parse_csv(text, csv);
  if (all.empty()) return all;
  const auto& ours = csv_header();
  if (!is_prefix(all[0], ours) && !is_prefix(ours, all[0]))
    throw Error(csv + ": its header is not opbench's (" + csv_line(ours).substr(0, 60) +
                "...) nor an older prefix of it; refusing to write to it (choose another --output)");
  if (all[0].size() < 8)
    throw Error(csv + ": its header has fewer than gpt-fast's 8 columns; refusing to write to it");
  return all;
}

void check_records(const std::string& json, const std::string& text) {
  int line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = std::min(text.find('\n', begin), text.size());
    ++line_number;
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object())
      throw Error(json + ":" + std::to_string(line_number) +
                  ": not a dashboard record (one JSON object per line); refusing to append to it");
  }
}

// What ends a file's text before more is added: a newline if its last line has none.
std::string line_end(const std::string& text) { return text.empty() || text.back() == '\n' ? "" : "\n"; }

// Opens `path` for appending without blocking (a FIFO) and closes it again; a file this created is removed.
void probe_append(const std::string& path) {
  std::error_code error;
  const bool existed = fs::exists(path, error);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) throw Error("--output: " + path + " cannot be written: " + std::strerror(errno));
  ::close(fd);
  if (!existed) fs::remove(path, error);
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
  if (!fs::is_directory(folder, error)) throw Error("--output " + csv_path_ + ": its folder " + folder.string() +
                                                    " cannot be created" + (error ? ": " + error.message() : ""));
  FolderLock lock(folder_of(resolved(csv_path_)));
  existing_table(csv_path_, text_of(csv_path_));
  check_records(json_path_, text_of(json_path_));
  // Writable? Open both files for appending now, before a case runs, rather than fail after the first
  // experiment.
  probe_append(csv_path_);
  probe_append(json_path_);
}

void RowFile::append(const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& records) const {
  FolderLock lock(folder_of(resolved(csv_path_)));
  const std::string csv_text = text_of(csv_path_), json_text = text_of(json_path_);
  const std::vector<std::vector<std::string>> table = existing_table(csv_path_, csv_text);
  check_records(json_path_, json_text);
  const std::vector<std::string>& ours = csv_header();
  const bool repair = !table.empty() && table[0].size() < ours.size();   // an older opbench's header
  const size_t width = table.empty() ? ours.size() : std::max(table[0].size(), ours.size());
  auto line = [&](std::vector<std::string> cells) {   // short rows padded; a row's extra cells kept
    if (cells.size() < width) cells.resize(width);
    return csv_line(cells);
  };
  std::string added;
  for (const auto& cells : rows) added += line(cells);
  std::string json;
  for (const auto& record : records) json += record + "\n";
  if (!repair) {
    const std::string header = table.empty() ? csv_line(ours) : "";
    append_all_or_none({{csv_path_, line_end(csv_text) + header + added}, {json_path_, line_end(json_text) + json}});
    return;
  }
  std::string csv = csv_line(ours);
  for (size_t i = 1; i < table.size(); ++i) csv += line(table[i]);
  write_file_atomically(csv_path_, csv + added);
  try {
    append_all_or_none({{json_path_, line_end(json_text) + json}});
  } catch (const Error&) {   // the rows file back as it was, so that the two stay in step
    write_file_atomically(csv_path_, csv_text);
    throw;
  }
}

}  // namespace opbench
