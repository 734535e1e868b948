// Replacing a whole file so that a reader never sees it half written: the text goes to `path.tmp`,
// which is then renamed over `path` (rename is atomic within a file system). The rows file, its
// dashboard sidecar, the markdown summary and the replay CSV are written this way.
#pragma once
#include <string>

namespace opbench {

// Writes `text` to `path` via `path.tmp` + rename; creates parent folders. Throws opbench::Error.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace opbench
