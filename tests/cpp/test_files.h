// Small file helpers for tests that write temporary files.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace opbench::testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// Not std::filesystem::remove_all: libtorch.so exports its own copy of it, which calls through a
// null pointer when our binaries resolve to it.
inline void remove_tree(const std::filesystem::path& path) {
  std::string command = "rm -rf '" + path.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
}

}  // namespace opbench::testing
