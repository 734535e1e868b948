// Resolving and checking a run's paths before its first case (contract: path_checks.h).
#include "path_checks.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace opbench {
namespace {

namespace fs = std::filesystem;

struct Resolved {
  bool exists = false;
  struct stat info {};     // when it exists (symbolic links followed)
  std::string canonical;   // its real path; for a missing file its nearest folder's real path + the rest
  std::string folder;      // the existing folder new files are created in (for the write probe)
};

// A path as a message shows it: a very long one cut in the middle.
std::string shown(const std::string& path) {
  if (path.size() <= 120) return path;
  return path.substr(0, 60) + "..." + path.substr(path.size() - 40) + " (" + std::to_string(path.size()) + " bytes)";
}

std::string described(const NamedPath& p) {
  return p.flag + " " + shown(p.path) + (p.role.empty() ? "" : " (its " + p.role + ")");
}

[[noreturn]] void refuse(const NamedPath& p, const std::string& why) {
  throw std::invalid_argument(described(p) + ": " + why);
}

std::string reason(int error) {
  if (error == ELOOP) return "is a symbolic link loop (or its links nest too deeply)";
  if (error == ENAMETOOLONG) return "is too long for the file system";
  return std::string("cannot be reached: ") + std::strerror(error);
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a regular file";
}

void check_length(const NamedPath& p) {
  if (p.path.empty()) refuse(p, "is empty");
  if (p.path.size() >= PATH_MAX)
    refuse(p, "is longer than PATH_MAX (" + std::to_string(PATH_MAX) + " bytes)");
  for (size_t begin = 0, slash; begin < p.path.size(); begin = slash + 1) {
    slash = std::min(p.path.find('/', begin), p.path.size());
    if (slash - begin > NAME_MAX)
      refuse(p, "holds a name longer than NAME_MAX (" + std::to_string(NAME_MAX) + " bytes)");
  }
}

// The first leading part of `path` that exists and is not a folder ("" if none).
std::string first_non_folder(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    struct stat info {};
    const std::string prefix = path.substr(0, slash);
    if (::stat(prefix.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) return prefix;
  }
  return "";
}

// `path`'s real path; nullopt when `gone_ok` and it no longer exists (ENOENT). `info`, where the path
// exists: what it is, named when it has no real path (a pipe, e.g. /dev/stdout when stdout is one).
std::optional<std::string> real_path(const NamedPath& p, const std::string& path, const struct stat* info = nullptr,
                                     bool gone_ok = false) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real && info && !S_ISREG(info->st_mode) && !S_ISDIR(info->st_mode))
    refuse(p, "is " + kind_of(info->st_mode) + " with no path of its own; expected a regular file");
  if (!real && gone_ok && errno == ENOENT) return std::nullopt;
  if (!real) refuse(p, reason(errno));
  std::string text(real);
  std::free(real);
  return text;
}

[[noreturn]] void refuse_under_non_folder(const NamedPath& p) {
  refuse(p, "is under " + shown(first_non_folder(p.path)) + ", which is not a folder");
}

// A path that does not exist yet: its nearest existing folder, resolved, and the rest of the path.
void resolve_missing(const NamedPath& p, Resolved& r) {
  struct stat link {};
  if (::lstat(p.path.c_str(), &link) == 0) refuse(p, "is a symbolic link to a file that does not exist");
  fs::path rest = fs::path(p.path).filename();
  for (fs::path at = fs::path(p.path).parent_path();; rest = at.filename() / rest, at = at.parent_path()) {
    const std::string folder = at.empty() ? "." : at.string();
    struct stat info {};
    if (::stat(folder.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) refuse_under_non_folder(p);
      r.folder = *real_path(p, folder);
      r.canonical = (fs::path(r.folder) / rest).lexically_normal().string();
      while (r.canonical.size() > 1 && r.canonical.back() == '/') r.canonical.pop_back();
      return;
    }
    if (errno == ENOTDIR) refuse_under_non_folder(p);
    if (errno != ENOENT || at.empty() || at == at.parent_path()) refuse(p, reason(errno));
  }
}

Resolved resolve(const NamedPath& p) {
  check_length(p);
  Resolved r;
  if (::stat(p.path.c_str(), &r.info) == 0) {
    if (std::optional<std::string> real = real_path(p, p.path, &r.info, /*gone_ok=*/true)) {
      r.exists = true;
      r.canonical = *real;
      r.folder = S_ISDIR(r.info.st_mode) ? r.canonical : fs::path(r.canonical).parent_path().string();
      return r;
    }
    // Removed since the stat: missing now (another bench_ops sharing this --output creates and removes
    // it while it probes, under its folder lock: reporters/row_file_append.cpp).
    r = Resolved{};
  } else {
    if (errno == ENOTDIR) refuse_under_non_folder(p);
    if (errno != ENOENT) refuse(p, reason(errno));
  }
  resolve_missing(p, r);
  return r;
}

// Creates and removes an empty file in `folder`: the only test of writing that root cannot pass by
// privilege (a read-only mount, /proc).
void probe_folder(const NamedPath& p, const std::string& folder) {
  std::string name = folder + "/.opbench-probe-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) refuse(p, "cannot be written: no file can be created in " + shown(folder) + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(name.c_str());
}

// Opens an existing file as its use will, without changing it.
void probe_open(const NamedPath& p, int flags) {
  const int fd = ::open(p.path.c_str(), flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) refuse(p, std::string("cannot be ") + (flags == O_RDONLY ? "read: " : "written: ") + std::strerror(errno));
  ::close(fd);
}

void check_output_file(const NamedPath& p, const Resolved& r) {
  if (p.path.back() == '/') refuse(p, "ends in '/': expected a file name");
  if (r.exists && !S_ISREG(r.info.st_mode)) refuse(p, "is " + kind_of(r.info.st_mode) + "; expected a regular file");
  if (r.exists) probe_open(p, O_WRONLY);
  probe_folder(p, r.folder);
}

void check_output_folder(const NamedPath& p, const Resolved& r) {
  if (r.exists && !S_ISDIR(r.info.st_mode)) refuse(p, "is " + kind_of(r.info.st_mode) + "; expected a folder");
  probe_folder(p, r.folder);
}

void check_input(const NamedPath& p, const Resolved& r) {
  const bool folder_ok = p.use == PathUse::kInputFileOrFolder;
  if (!r.exists) refuse(p, folder_ok ? "no such file or folder" : "no such file");
  const mode_t mode = r.info.st_mode;
  if (S_ISFIFO(mode) || S_ISSOCK(mode) || (S_ISDIR(mode) && !folder_ok))
    refuse(p, "is " + kind_of(mode) + "; expected a regular file" + (folder_ok ? " or a folder" : ""));
  probe_open(p, O_RDONLY);
}

bool is_output(const NamedPath& p) { return p.use == PathUse::kOutputFile || p.use == PathUse::kOutputFolder; }

// The file a path names: device and inode when it exists, else where it will be created.
std::string identity(const Resolved& r) {
  if (!r.exists) return "path:" + r.canonical;
  return "inode:" + std::to_string(r.info.st_dev) + ":" + std::to_string(r.info.st_ino);
}

}  // namespace

void check_run_paths(const std::vector<NamedPath>& paths) {
  std::vector<std::string> identities;
  for (const auto& p : paths) {
    const Resolved r = resolve(p);
    if (p.use == PathUse::kOutputFile) check_output_file(p, r);
    else if (p.use == PathUse::kOutputFolder) check_output_folder(p, r);
    else check_input(p, r);
    identities.push_back(identity(r));
  }
  for (size_t j = 0; j < paths.size(); ++j)
    for (size_t i = 0; i < j; ++i) {
      if (identities[i] != identities[j] || (!is_output(paths[i]) && !is_output(paths[j]))) continue;
      if (is_output(paths[i]) && is_output(paths[j]))
        refuse(paths[j], "the same file as " + described(paths[i]) + "; each output needs a file of its own");
      const NamedPath& output = is_output(paths[j]) ? paths[j] : paths[i];
      const NamedPath& input = is_output(paths[j]) ? paths[i] : paths[j];
      refuse(output, "the same file as " + described(input) + ", which this run reads; an output must not "
                     "overwrite an input");
    }
}

}  // namespace opbench
