// RFC 4180 CSV reading and writing (contract: csv_format.h).
#include "csv_format.h"

#include "opbench/bounded_read.h"
#include "opbench/check.h"

namespace opbench {

std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& name) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  size_t line = 1, quote_line = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    any = true;
    if (c == '\n') ++line;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
      quote_line = line;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      row.push_back(std::move(cell));
      cell.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (quoted)
    throw Error(name + ":" + std::to_string(quote_line) + ": a quoted cell opened here is never closed");
  if (any) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  FileText file = read_bounded(path, kTableLimitBytes, "a CSV");
  if (!file.error.empty()) throw Error(path + ": " + file.error);
  return parse_csv(file.text, path);
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n\r") == std::string::npos) {
      line += c;
      continue;
    }
    line += '"';
    for (char ch : c) line += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    line += '"';
  }
  return line + "\n";
}

}  // namespace opbench
