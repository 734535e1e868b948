// Whole-file replacement through a temporary file and a rename (contract: atomic_file.h).
#include "atomic_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "opbench/check.h"

namespace opbench {

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error(tmp + ": cannot be written");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(path + ": cannot replace it with " + tmp);
}

}  // namespace opbench
