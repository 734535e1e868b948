// Whole-file replacement and all-or-none appends (contract: atomic_file.h).
#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "opbench/check.h"

namespace opbench {
namespace {

namespace fs = std::filesystem;

// Writes all of `text` to `fd`; 0, or the errno of the write that failed (ENOSPC, EFBIG, EIO).
int write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return errno;
    done += static_cast<size_t>(wrote);
  }
  return 0;
}

[[noreturn]] void fail(const std::string& path, int error, const std::string& kept) {
  throw Error(path + ": cannot be written: " + std::strerror(error) + " (" + kept + ")");
}

// The file `path` names, symbolic links followed; `path` itself when it does not exist yet.
std::string link_target(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return path;
  std::string target(real);
  std::free(real);
  return target;
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Rewrites a file that has several hard links through one of them, so that every link sees the text.
void rewrite_in_place(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) fail(path, errno, "left as it was");
  std::string old;
  char buffer[1 << 16];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) old.append(buffer, static_cast<size_t>(got));
  int error = ::lseek(fd, 0, SEEK_SET) < 0 ? errno : 0;
  if (!error) error = write_all(fd, text);
  if (!error && ::ftruncate(fd, static_cast<off_t>(text.size())) != 0) error = errno;
  if (error) {   // the old text fits where it was
    ::lseek(fd, 0, SEEK_SET);
    write_all(fd, old);
    (void)!::ftruncate(fd, static_cast<off_t>(old.size()));
  }
  if (::close(fd) != 0 && !error) error = errno;
  if (error) fail(path, error, "its previous text restored");
}

// Owns a temporary file until it is renamed: removed when the write fails or throws.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& target) : name_(target + ".opbench-XXXXXX") {
    fd_ = ::mkstemp(name_.data());
    if (fd_ < 0) fail(target, errno, "no temporary file could be created beside it; left as it was");
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(name_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  // 0, or the errno that stopped it.
  int fill(const std::string& text, mode_t mode) {
    int error = write_all(fd_, text);
    if (!error && ::fchmod(fd_, mode) != 0) error = errno;
    const int closed = ::close(fd_);
    fd_ = -1;
    if (!error && closed != 0) error = errno;
    return error;
  }
  int rename_to(const std::string& target) {
    if (::rename(name_.c_str(), target.c_str()) != 0) return errno;
    renamed_ = true;
    return 0;
  }

 private:
  std::string name_;
  int fd_ = -1;
  bool renamed_ = false;
};

// One file of an all-or-none append, open and measured; rolled back until committed.
struct OpenAppend {
  std::string path;
  int fd = -1;
  off_t size_before = 0;
  bool created = false;
};

OpenAppend open_for_append(const std::string& path) {
  OpenAppend file{path};
  file.fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0 && errno == ENOENT) {
    file.fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL, 0666);
    file.created = file.fd >= 0;
  }
  struct stat info {};
  if (file.fd >= 0 && ::fstat(file.fd, &info) == 0) file.size_before = info.st_size;
  return file;
}

void roll_back(const std::vector<OpenAppend>& files) {
  for (const auto& file : files) {
    if (file.fd < 0) continue;
    if (file.created) ::unlink(file.path.c_str());
    else (void)!::ftruncate(file.fd, file.size_before);
  }
}

void close_all(const std::vector<OpenAppend>& files) {
  for (const auto& file : files)
    if (file.fd >= 0) ::close(file.fd);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string target = link_target(path);
  std::error_code error;
  if (fs::path(target).has_parent_path()) fs::create_directories(fs::path(target).parent_path(), error);
  struct stat info {};
  const bool exists = ::stat(target.c_str(), &info) == 0;
  if (exists && info.st_nlink > 1) return rewrite_in_place(target, text);
  TemporaryFile temporary(target);
  int failed = temporary.fill(text, exists ? (info.st_mode & 07777) : new_file_mode());
  if (!failed) failed = temporary.rename_to(target);
  if (failed) fail(path, failed, exists ? "left as it was" : "not created");
}

void append_all_or_none(const std::vector<FileAppend>& appends) {
  std::vector<OpenAppend> files;
  int error = 0;
  std::string failed_path;
  for (const auto& append : appends) {
    files.push_back(open_for_append(append.path));
    if (files.back().fd < 0) error = errno;
    if (!error) error = write_all(files.back().fd, append.text);
    if (error) {
      failed_path = append.path;
      break;
    }
  }
  if (error) roll_back(files);
  close_all(files);
  if (error) fail(failed_path, error, appends.size() > 1 ? "every file of this append left as it was" : "left as it was");
}

}  // namespace opbench
