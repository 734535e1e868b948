// Header lines wrapped to the terminal after their "; " separators (contract: line_wrap.h).
#include "line_wrap.h"

namespace opbench {

std::string wrap_line(const std::string& line, size_t columns) {
  const std::string separator = "; ", indent = "  ";
  std::string wrapped, rest = line;
  while (rest.size() > columns) {
    size_t at = rest.rfind(separator, columns - 1);   // the separator's ';' stays within `columns`
    if (at == std::string::npos || at == 0) at = rest.find(separator, columns);
    if (at == std::string::npos) break;
    wrapped += rest.substr(0, at + 1) + "\n";
    rest = indent + rest.substr(at + separator.size());
  }
  return wrapped + rest;
}

}  // namespace opbench
