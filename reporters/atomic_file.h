// Writing bench_ops' output files so that what was there survives any failure. The rows file, its
// dashboard sidecar, the markdown summary, the replay CSV and the inductor plan are written this way.
// Both functions follow symbolic links (the link's target gets the text, the link stays), keep hard
// links and the file's mode, and on a failure (a full disk: ENOSPC, EFBIG) leave every file as it was
// and throw opbench::Error naming the file and the reason (strerror).
#pragma once
#include <string>
#include <vector>

namespace opbench {

// Replaces the file at `path` with `text`: written to a temporary file of a unique name beside the
// target (`<name>.opbench-XXXXXX`, removed on every failure), then renamed over it, so a reader never
// sees it half written; parent folders are created. A file with several hard links is rewritten in
// place instead (a rename would split the links), its old text restored if the write fails.
void write_file_atomically(const std::string& path, const std::string& text);

// Adds each text at the end of its file, all or none: files are created when missing (mode 0666 less
// the umask); when any write fails, each file is cut back to its size before and a file this call
// created is removed. Whatever a file held (cells a user added, a header of a newer opbench) is kept.
struct FileAppend {
  std::string path;
  std::string text;
};
void append_all_or_none(const std::vector<FileAppend>& appends);

}  // namespace opbench
