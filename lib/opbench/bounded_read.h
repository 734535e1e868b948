// Reading an input file whole, but never more than a stated limit: a huge file, /dev/zero or a FIFO
// cannot make a reader run out of memory or hang. Header-only and free of LibTorch, so the oplog parser
// and the fuzz targets use it too. The limits, named in every refusal:
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace opbench {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kOplogLimitBytes = 256 * kMiB;   // an operator-input log (--oplog)
constexpr std::size_t kTableLimitBytes = 64 * kMiB;    // a CSV, a dashboard sidecar, a targets or JSON file

struct FileText {
  std::string text;
  std::string error;   // "" when the whole file was read; else why not, e.g. "is a FIFO, not a regular file"
};

namespace detail {

inline std::string not_regular(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "";
}

inline std::string too_large(std::size_t limit_bytes, const char* kind) {
  return "is larger than " + std::to_string(limit_bytes / kMiB) + " MiB, the limit for " + kind;
}

}  // namespace detail

// The text of `path`, read up to `limit_bytes` (`kind` names the input in the refusal: "a CSV"); a FIFO or socket is refused without opening it for
// blocking reads, a regular file over the limit without reading it, anything else (a device) after
// limit_bytes + 1 bytes.
inline FileText read_bounded(const std::string& path, std::size_t limit_bytes, const char* kind) {
  FileText out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    out.error = std::string("cannot open: ") + std::strerror(errno);
    return out;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) out.error = std::string("cannot be read: ") + std::strerror(errno);
  if (out.error.empty()) out.error = detail::not_regular(info.st_mode);
  if (out.error.empty() && S_ISREG(info.st_mode) && static_cast<std::size_t>(info.st_size) > limit_bytes)
    out.error = detail::too_large(limit_bytes, kind);
  if (out.error.empty()) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  char buffer[1 << 16];
  while (out.error.empty()) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) out.error = std::string("cannot be read: ") + std::strerror(errno);
    if (got <= 0) break;
    out.text.append(buffer, static_cast<std::size_t>(got));
    if (out.text.size() > limit_bytes) out.error = detail::too_large(limit_bytes, kind);
  }
  ::close(fd);
  if (!out.error.empty()) out.text.clear();
  return out;
}

}  // namespace opbench
