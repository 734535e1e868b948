// libFuzzer target for the operator-input log parser (replay/oplog). Build and run: scripts/fuzz.sh oplog.
// Besides "no crash, no sanitizer report, no escaping exception", it checks the parser's promises:
// every line is accounted for, issues point inside the text, and what parses prints back to
// something that parses to the same thing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "replay/oplog/oplog.h"

namespace ol = opbench::oplog;

namespace {

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "oplog_fuzz: invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// Touches every accessor on every value, so UBSan sees them run on parsed data.
void walk(const ol::Value& v) {
  (void)v.kind();
  (void)v.int_list();
  (void)v.number();
  if (auto* t = v.get_if<ol::TensorSpec>()) {
    if (t->numel() < 0) broken("numel is not negative", ol::to_string(v));
    (void)t->is_contiguous();
    (void)ol::dtype_itemsize(t->dtype);
  }
  if (auto* l = v.get_if<ol::List>())
    for (const auto& item : l->items) walk(item);
  if (auto* t = v.get_if<ol::Tuple>())
    for (const auto& item : t->items) walk(item);
}

void check_accounting(const ol::OpLog& log, std::string_view text) {
  if (log.lines_total != log.lines_parsed + log.lines_skipped + log.lines_blank)
    broken("lines_total == parsed + skipped + blank", std::to_string(log.lines_total));
  int skipped = 0;
  for (const auto& issue : log.issues) {
    skipped += issue.skipped_entry ? 1 : 0;
    if (issue.line < 1 || issue.line > log.lines_total) broken("issue line inside the text", issue.str());
    if (issue.column < 1 || static_cast<std::size_t>(issue.column) > text.size() + 1)
      broken("issue column inside the text", issue.str());
    if (issue.message.empty() || issue.str().empty()) broken("issue has a message", issue.str());
  }
  if (skipped != log.lines_skipped) broken("one skipping issue per skipped line", std::to_string(skipped));
  std::size_t inputs = 0;
  for (const auto& op : log.ops) {
    if (op.name.empty() || op.overload.empty()) broken("operator has a name and overload", op.original);
    if (log.find(op.qualified()) != &op) broken("find() returns the entry", op.qualified());
    for (const auto& in : op.inputs) {
      if (in.count < 1 || in.line < 1 || in.line > log.lines_total) broken("input count and line", op.original);
      for (const auto& a : in.args) walk(a);
      for (const auto& kv : in.kwargs) walk(kv.second);
    }
    (void)op.total_count();
    inputs += op.inputs.size();
  }
  if (inputs > static_cast<std::size_t>(log.lines_parsed)) broken("no more inputs than parsed lines", "");
}

void check_input_round_trip(const ol::OpEntry& op, const ol::OpInput& in) {
  const std::string text = "Operator: " + op.qualified() + "\n" + ol::format_input_line(in) + "\n";
  const ol::OpLog again = ol::parse_oplog(text, "again.txt");
  if (again.ops.size() != 1 || again.ops[0].inputs.size() != 1 || !again.issues.empty())
    broken("a printed input parses cleanly", text);
  const ol::OpInput& back = again.ops[0].inputs[0];
  if (back.args != in.args || back.kwargs != in.kwargs || back.count != in.count)
    broken("a printed input parses to the same input", text + ol::format_input_line(back));
}

void check_value_round_trip(std::string_view text) {
  auto v = ol::parse_value(text);
  if (!v) return;
  const std::string printed = ol::to_string(*v);
  std::string error;
  auto back = ol::parse_value(printed, &error);
  if (!back) broken("a printed value parses", printed + "\n" + error);
  if (*back != *v) broken("a printed value parses to the same value", printed + "\n" + ol::to_string(*back));
  if (ol::to_string(*back) != printed) broken("printing is stable", printed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ol::OpLog log = ol::parse_oplog(text, "fuzz.txt");
    check_accounting(log, text);
    for (const auto& op : log.ops)
      for (const auto& in : op.inputs) check_input_round_trip(op, in);
    // The whole log printed back parses to the same operators and inputs.
    const ol::OpLog again = ol::parse_oplog(ol::format_oplog(log), "format.txt");
    if (again.lines_skipped != 0 || again.ops.size() != log.ops.size() || again.input_count() != log.input_count())
      broken("format_oplog output parses cleanly", ol::format_oplog(log));
    // The value parser on its own, on the raw bytes and on the first line.
    check_value_round_trip(text);
    check_value_round_trip(text.substr(0, text.find('\n')));
  } catch (const std::exception& e) {
    broken("no exception escapes", e.what());
  }
  return 0;
}
