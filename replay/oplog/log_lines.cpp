// The operator-input log, line by line: "Operator:" lines open an entry, "cnt:" lines add inputs.
// Every line is accounted for (parsed, skipped with an issue, or blank); see docs/oplog.md.
#include "replay/oplog/oplog.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "lib/opbench/bounded_read.h"
#include "replay/oplog/expression_parser.h"

namespace opbench::oplog {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

struct LineError {
  std::size_t offset;
  std::string message;
};

// "aten.add.Tensor" (from text[begin, end)) -> name "add", overload "Tensor".
std::optional<LineError> split_operator(std::string_view line, std::size_t begin, std::size_t end,
                                        std::string* name, std::string* overload) {
  if (begin >= end) return LineError{begin, "missing the operator name after 'Operator:'"};
  const std::string_view op = line.substr(begin, end - begin);
  std::vector<std::string_view> parts;
  std::size_t part_start = 0;
  for (std::size_t i = 0; i <= op.size(); ++i) {
    if (i == op.size() || op[i] == '.') {
      if (i == part_start) return LineError{begin + i, "empty part in the operator name '" + std::string(op) + "'"};
      parts.push_back(op.substr(part_start, i - part_start));
      part_start = i + 1;
    } else if (!is_ident_char(op[i])) {
      return LineError{begin + i, "unexpected character '" + std::string(1, op[i]) + "' in the operator name"};
    }
  }
  const std::string expected = "; expected aten.<name>.<overload>";
  if (parts.size() == 1) return LineError{begin, "operator '" + std::string(op) + "' has no '.'" + expected};
  if (parts.size() != 3)
    return LineError{begin, "operator '" + std::string(op) + "' has " + std::to_string(parts.size()) + " parts" + expected};
  if (parts[0] != "aten")
    return LineError{begin, "only aten operators can be replayed, not namespace '" + std::string(parts[0]) + "'"};
  const std::string key = std::string(parts[1]) + "." + std::string(parts[2]);
  const std::string_view resolved = resolve_alias(key);
  const std::size_t dot = resolved.find('.');
  *name = std::string(resolved.substr(0, dot));
  *overload = std::string(resolved.substr(dot + 1));
  return std::nullopt;
}

class LogParser {
 public:
  LogParser(std::string file, OpLog* log) : file_(std::move(file)), log_(log) {}

  void line(std::string_view text, int number) {
    ++log_->lines_total;
    std::size_t b = 0, e = text.size();
    while (b < e && is_space(text[b])) ++b;
    while (e > b && is_space(text[e - 1])) --e;
    if (b == e) {
      ++log_->lines_blank;
      return;
    }
    const std::string_view body = text.substr(b, e - b);
    if (starts_with(body, "Operator:")) {
      operator_line(text, b + 9, e, number);
    } else if (starts_with(body, "cnt:")) {
      input_line(text, b, b + 4, e, number);
    } else {
      skip(number, b, "unrecognized line; expected 'Operator: aten.<name>.<overload>' or 'cnt: N, ((args...), {kwargs})'");
    }
  }

  void finish() {
    for (const auto& op : log_->ops)
      if (op.inputs.empty()) warn(op.line, 1, "operator " + op.original + " has no input lines");
  }

 private:
  std::string file_;
  OpLog* log_;
  int current_ = -1;        // index into log_->ops of the open entry
  int rejected_op_line_ = 0;  // line of the last Operator line, if it was rejected
  std::unordered_map<std::string, std::size_t> op_index_;                      // qualified -> ops index
  std::vector<std::unordered_map<std::string, std::size_t>> input_index_;   // per op: text -> inputs index

  void skip(int line, std::size_t offset, std::string message) {
    ++log_->lines_skipped;
    log_->issues.push_back({file_, line, static_cast<int>(offset) + 1, std::move(message), true});
  }
  void warn(int line, int column, std::string message) {
    log_->issues.push_back({file_, line, column, std::move(message), false});
  }

  void operator_line(std::string_view text, std::size_t begin, std::size_t end, int number) {
    while (begin < end && is_space(text[begin])) ++begin;
    std::string name, overload;
    if (auto err = split_operator(text, begin, end, &name, &overload)) {
      current_ = -1;
      rejected_op_line_ = number;
      skip(number, err->offset, err->message);
      return;
    }
    rejected_op_line_ = 0;
    ++log_->lines_parsed;
    const std::string original(text.substr(begin, end - begin));
    const std::string qualified = "aten." + name + "." + overload;
    auto it = op_index_.find(qualified);
    if (it != op_index_.end()) {
      current_ = static_cast<int>(it->second);
      const OpEntry& first = log_->ops[it->second];
      warn(number, static_cast<int>(begin) + 1,
           "operator " + original + " already listed at line " + std::to_string(first.line) + " as " +
               first.original + "; its inputs are merged there");
      return;
    }
    OpEntry entry;
    entry.name = std::move(name);
    entry.overload = std::move(overload);
    entry.original = original;
    entry.line = number;
    current_ = static_cast<int>(log_->ops.size());
    op_index_.emplace(qualified, log_->ops.size());
    log_->ops.push_back(std::move(entry));
    input_index_.emplace_back();
  }

  void input_line(std::string_view text, std::size_t start, std::size_t pos, std::size_t end, int number) {
    if (rejected_op_line_ > 0)
      return skip(number, start, "input of the operator rejected at line " + std::to_string(rejected_op_line_));
    if (current_ < 0) return skip(number, start, "input line before any 'Operator:' line");
    const std::string_view line = text.substr(0, end);
    while (pos < end && is_space(line[pos])) ++pos;
    const std::size_t count_at = pos;
    std::int64_t count = 0;
    while (pos < end && line[pos] >= '0' && line[pos] <= '9') {
      const int digit = line[pos] - '0';
      if (count > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
        return skip(number, count_at, "count out of the int64 range");
      count = count * 10 + digit;
      ++pos;
    }
    if (pos == count_at) return skip(number, count_at, "expected the count (a positive integer) after 'cnt:'");
    if (count == 0) return skip(number, count_at, "the count must be at least 1");
    while (pos < end && is_space(line[pos])) ++pos;
    if (pos >= end || line[pos] != ',') return skip(number, pos, "expected ',' after the count");
    OpInput input;
    if (auto err = detail::parse_input_payload(line, pos + 1, &input)) return skip(number, err->offset, err->message);
    input.count = count;
    input.line = number;

    OpEntry& op = log_->ops[static_cast<std::size_t>(current_)];
    auto& index = input_index_[static_cast<std::size_t>(current_)];
    std::string key = to_string(input);
    auto it = index.find(key);
    if (it != index.end()) {
      OpInput& first = op.inputs[it->second];
      if (first.count > std::numeric_limits<std::int64_t>::max() - count)
        return skip(number, count_at, "count overflows int64 when added to the same input at line " + std::to_string(first.line));
      first.count += count;
      ++log_->lines_parsed;
      warn(number, static_cast<int>(start) + 1,
           "same input as line " + std::to_string(first.line) + "; the counts are added there");
      return;
    }
    ++log_->lines_parsed;
    index.emplace(std::move(key), op.inputs.size());
    op.inputs.push_back(std::move(input));
  }
};

}  // namespace

std::string OpEntry::qualified() const { return "aten." + name + "." + overload; }

std::int64_t OpEntry::total_count() const {
  std::int64_t n = 0;
  for (const auto& in : inputs) {
    if (n > std::numeric_limits<std::int64_t>::max() - in.count) return std::numeric_limits<std::int64_t>::max();
    n += in.count;
  }
  return n;
}

std::string ParseIssue::str() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line);
  if (line > 0 && column > 0) out += ":" + std::to_string(column);
  out += skipped_entry ? ": " : ": warning: ";
  return out + message;
}

const OpEntry* OpLog::find(std::string_view qualified_name) const {
  for (const auto& op : ops)
    if (op.qualified() == qualified_name) return &op;
  return nullptr;
}

std::size_t OpLog::input_count() const {
  std::size_t n = 0;
  for (const auto& op : ops) n += op.inputs.size();
  return n;
}

std::string model_name_from_path(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const std::size_t dot = base.rfind('.');
  if (dot != std::string_view::npos && dot > 0) base = base.substr(0, dot);
  return std::string(base);
}

OpLog parse_oplog(std::string_view text, std::string file_name) {
  OpLog log;
  log.model = model_name_from_path(file_name);
  log.file = file_name;
  LogParser parser(std::move(file_name), &log);
  std::size_t begin = 0;
  int number = 0;
  while (begin < text.size()) {
    std::size_t nl = text.find('\n', begin);
    if (nl == std::string_view::npos) nl = text.size();
    parser.line(text.substr(begin, nl - begin), ++number);
    begin = nl + 1;
  }
  parser.finish();
  return log;
}

OpLog load_oplog(const std::string& path) {
  auto failed = [&](std::string why) {
    OpLog log;
    log.model = model_name_from_path(path);
    log.file = path;
    log.issues.push_back({path, 0, 0, std::move(why), false});
    return log;
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return failed("cannot read: is a directory");
  FileText file = read_bounded(path, kOplogLimitBytes, "an operator-input log");
  if (!file.error.empty()) return failed(file.error);
  return parse_oplog(file.text, path);
}

OpLogDir load_oplog_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  OpLogDir out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    out.issues.push_back({dir, 0, 0, ec ? "cannot read: " + ec.message() : "not a directory", false});
    return out;
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".txt" && it->is_regular_file(type_ec)) files.push_back(it->path());
  }
  if (ec) out.issues.push_back({dir, 0, 0, "cannot list: " + ec.message(), false});
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
  for (const auto& f : files) out.logs.push_back(load_oplog(f.string()));
  return out;
}

std::string format_oplog(const OpLog& log) {
  std::string out;
  for (const auto& op : log.ops) {
    out += "Operator: " + op.original + "\n";
    for (const auto& in : op.inputs) out += format_input_line(in) + "\n";
  }
  return out;
}

}  // namespace opbench::oplog
