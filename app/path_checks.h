// Every file and folder a run reads or writes, resolved and checked before its first case: a run that
// could not write an output, or whose outputs would overwrite each other or an input, stops at once
// instead of after a sweep. Paths are compared as the files they name (device and inode; for a file
// not there yet, its resolved folder and name), so ./a.csv, a symbolic link to a.csv and a hard link
// of it are all a.csv. No LibTorch.
#pragma once
#include <string>
#include <vector>

namespace opbench {

enum class PathUse {
  kOutputFile,      // written (created, appended to or replaced): a regular file or none yet
  kOutputFolder,    // files are written into it: a folder or none yet
  kInputFile,       // read: a regular file or a device; not a FIFO, socket or folder
  kInputFileOrFolder,
};

struct NamedPath {
  std::string flag;   // as the user gave it: "--output", "--opbench_markdown", "--benchmark_out"
  std::string path;
  PathUse use;
  std::string role;   // "" or what the file is to `flag`, e.g. "dashboard sidecar"
};

// Throws std::invalid_argument with one line naming the flag, for the first path that is: empty;
// longer than PATH_MAX or with a name longer than NAME_MAX; a symbolic link loop or a dangling link;
// under something that is not a folder; unreachable; a FIFO, socket or device (an output), a folder
// where a file is meant or a file where a folder is; an input that does not exist; an output whose
// file or folder cannot be written (probed by opening it, and by creating and removing an empty file
// in its folder). Then for any two paths of which one is an output and both are the same file.
void check_run_paths(const std::vector<NamedPath>& paths);

}  // namespace opbench
