#include "replay/reporter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/gbench_compat.h"
#include "atomic_file.h"
#include "csv_format.h"

namespace opbench {
namespace {

constexpr const char* kHarnessSuffix = "/iterations:1/manual_time";

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string cell(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : "";
}

std::string human_time(double seconds) {
  if (seconds < 1e-3) return fixed(seconds * 1e6, 1) + " us";
  if (seconds < 1) return fixed(seconds * 1e3, 3) + " ms";
  return fixed(seconds, 3) + " s";
}

std::string plural(int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

std::string operator_key(const std::string& model, const std::string& op) { return model + "\n" + op; }

}  // namespace

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  double h = q * static_cast<double>(values.size() - 1);
  auto low = static_cast<std::size_t>(std::floor(h));
  std::size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (h - static_cast<double>(low)) * (values[high] - values[low]);
}

bool filter_selects(const std::string& filter, const std::string& case_name) {
  std::string spec = filter.empty() || filter == "all" ? "." : filter;
  bool negative = spec[0] == '-';
  if (negative) spec.erase(0, 1);
  try {
    bool match = std::regex_search(case_name + kHarnessSuffix, std::regex(spec, std::regex::extended));
    return match != negative;
  } catch (const std::regex_error&) {
    return true;   // Google Benchmark reports the bad filter itself
  }
}

struct ReplayReporter::CaseResult {
  bool selected = false, reported = false;
  std::vector<double> seconds;   // one per repetition
  std::string error, unavailable, mismatch;
  std::optional<bool> accuracy_ok;
  double elapsed = 0;
  std::size_t op = 0;            // index into operators_
};

struct ReplayReporter::OperatorState {
  std::size_t info = 0;                    // index into plan_.operators
  std::vector<std::size_t> cases;          // indices into plan_.cases
  std::vector<std::size_t> not_run;        // indices into plan_.not_run
  int selected_cases = 0, reported = 0;
  bool selected = false;
  bool complete() const { return reported == selected_cases; }
};

namespace {
class LineClearer : public benchmark::BenchmarkReporter {
 public:
  explicit LineClearer(std::function<void()> clear) : clear_(std::move(clear)) {}
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override { clear_(); }

 private:
  std::function<void()> clear_;
};
}  // namespace

ReplayReporter::ReplayReporter(replay::ReplayPlan plan, std::string filter, std::string output_csv,
                               std::ostream* summary, std::ostream* progress, bool tty)
    : plan_(std::move(plan)), output_csv_(std::move(output_csv)), summary_(summary), progress_(progress),
      tty_(tty), results_(plan_.cases.size()) {
  std::map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < plan_.operators.size(); ++i) {
    by_key[operator_key(plan_.operators[i].model, plan_.operators[i].op)] = i;
    operators_.push_back(OperatorState{i, {}, {}, 0, 0, false});
  }
  for (std::size_t i = 0; i < plan_.cases.size(); ++i) {
    const auto& c = plan_.cases[i];
    case_index_[c.name] = i;
    results_[i].op = by_key.at(operator_key(c.model, c.op));
    OperatorState& op = operators_[results_[i].op];
    op.cases.push_back(i);
    results_[i].selected = filter_selects(filter, c.name);
    if (!results_[i].selected) continue;
    ++op.selected_cases;
    ++selected_;
    op.selected = true;
  }
  for (std::size_t i = 0; i < plan_.not_run.size(); ++i) {
    const auto& n = plan_.not_run[i];
    auto it = by_key.find(operator_key(n.model, n.op));
    if (it == by_key.end()) continue;   // a log line that did not parse: listed in the summary
    operators_[it->second].not_run.push_back(i);
    if (filter_selects(filter, replay::case_name(n.model, n.op, std::max(n.input, 0), replay::kEager)))
      operators_[it->second].selected = true;
  }
  clearer_ = std::make_unique<LineClearer>([this] { clear_progress(); });
  std::error_code error;
  if (output_csv_.empty() || !std::filesystem::exists(output_csv_, error)) return;
  auto existing = read_csv(output_csv_);
  if (existing.empty()) return;
  if (existing[0] != csv_header(plan_.backends))
    throw Error(output_csv_ + ": its header is not the replay CSV's for these backends; refusing to write to it "
                "(choose another --output)");
  prior_rows_.assign(existing.begin() + 1, existing.end());
}

ReplayReporter::~ReplayReporter() = default;

benchmark::BenchmarkReporter* ReplayReporter::line_clearer() { return clearer_.get(); }

bool ReplayReporter::ReportContext(const Context&) {
  start_ = last_ = std::chrono::steady_clock::now();
  write_csv();   // operators that have nothing to run are final already
  return true;
}

void ReplayReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const auto& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;
    auto it = case_index_.find(run.run_name.function_name);
    if (it == case_index_.end()) continue;
    record(run);
  }
}

void ReplayReporter::record(const Run& run) {
  std::size_t index = case_index_.at(run.run_name.function_name);
  CaseResult& result = results_[index];
  auto now = std::chrono::steady_clock::now();
  result.elapsed += std::chrono::duration<double>(now - last_).count();
  last_ = now;
  if (gbench::run_skipped(run)) {
    std::string message = gbench::skip_message(run);
    if (message.rfind(kUnavailablePrefix, 0) == 0)
      result.unavailable = message.substr(std::string(kUnavailablePrefix).size());
    else
      result.error = message;
  } else {
    result.seconds.push_back(run.real_accumulated_time / static_cast<double>(std::max<int64_t>(run.iterations, 1)));
    auto ok = run.counters.find("accuracy_ok");
    if (ok != run.counters.end()) result.accuracy_ok = static_cast<double>(ok->second) != 0;
    auto at = run.report_label.find("mismatch: ");
    if (at != std::string::npos) result.mismatch = run.report_label.substr(at + 10);
  }
  if (result.reported) return;
  result.reported = true;
  ++done_;
  OperatorState& op = operators_[result.op];
  if (result.selected) ++op.reported;
  if (op.complete()) write_csv();
  show_progress("[" + std::to_string(done_) + "/" + std::to_string(selected_) + "] " + run.run_name.function_name +
                "  done");
}

void ReplayReporter::case_started(const std::string& name) {
  auto it = case_index_.find(name);
  if (it == case_index_.end() || !results_[it->second].selected) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // The ETA counts the case starting now: the mean time per case so far times what is left, this one in.
  double eta = done_ > 0 ? elapsed / done_ * std::max(selected_ - done_, 0) : 0;
  show_progress("[" + std::to_string(done_ + 1) + "/" + std::to_string(selected_) + "] " + name + "  running" +
                (done_ > 0 ? "  ETA " + fixed(eta, 0) + "s" : ""));
}

void ReplayReporter::Finalize() {
  clear_progress();
  for (auto& op : operators_) op.reported = op.selected_cases;   // what did not report is final too
  write_csv();
  print_summary();
}

void ReplayReporter::show_progress(const std::string& line) {
  if (!progress_) return;
  if (tty_) {
    *progress_ << "\r\033[K" << line << std::flush;
    progress_shown_ = true;
  } else {
    *progress_ << line << "\n" << std::flush;
  }
}

void ReplayReporter::clear_progress() {
  if (!progress_ || !progress_shown_) return;
  *progress_ << "\r\033[K" << std::flush;
  progress_shown_ = false;
}

ReplayRow ReplayReporter::make_row(const OperatorState& state) const {
  const auto& info = plan_.operators[state.info];
  ReplayRow row;
  row.model = info.model;
  row.op = info.op;
  row.recorded = info.recorded_inputs;
  row.selected = info.selected_inputs;
  std::map<std::string, std::map<int, double>> times;   // backend -> input -> seconds
  std::map<int, std::int64_t> weights;
  int failed = 0, unavailable = 0, compared = 0, missing = 0;
  std::string first_error, first_unavailable;
  for (std::size_t index : state.cases) {
    const auto& c = plan_.cases[index];
    const CaseResult& r = results_[index];
    if (!r.selected) continue;
    row.elapsed += r.elapsed;
    if (!r.error.empty() && failed++ == 0) first_error = c.backend + ": " + r.error;
    if (!r.unavailable.empty() && unavailable++ == 0) first_unavailable = c.backend + ": " + r.unavailable;
    if (!r.reported) ++missing;
    if (r.seconds.empty()) continue;
    times[c.backend][c.input] = median(r.seconds);
    weights[c.input] = c.weight;
    if (r.accuracy_ok) {
      ++compared;
      if (!*r.accuracy_ok) ++row.mismatches;
    }
  }
  const auto& eager = times[replay::kEager];
  row.run = static_cast<int>(eager.size());
  for (const auto& [input, seconds] : eager) row.weight += weights[input];
  for (const auto& backend : plan_.backends) {
    ReplayBackendStats stats;
    std::vector<double> all, speedups;
    double weighted = 0;
    for (const auto& [input, seconds] : times[backend]) {
      all.push_back(seconds);
      weighted += static_cast<double>(weights[input]) * seconds;
      auto base = eager.find(input);
      if (base != eager.end() && seconds > 0) speedups.push_back(base->second / seconds);
    }
    stats.inputs = static_cast<int>(all.size());
    if (!all.empty()) {
      stats.median_seconds = median(all);
      stats.weighted_seconds = weighted;
    }
    if (backend != replay::kEager && !speedups.empty()) {
      stats.q20 = quantile(speedups, kReplayQuantiles[0]);
      stats.q50 = quantile(speedups, kReplayQuantiles[1]);
      stats.q80 = quantile(speedups, kReplayQuantiles[2]);
    }
    row.backends[backend] = stats;
  }
  if (compared > 0)
    row.accuracy = row.mismatches == 0 ? "ok" : std::to_string(row.mismatches) + " of " +
                                                    std::to_string(compared) + " mismatch";
  std::vector<std::string> parts;
  for (std::size_t index : state.not_run) {
    const auto& n = plan_.not_run[index];
    parts.push_back(n.input < 0 ? "not run: " + n.reason
                                : "input " + std::to_string(n.input) + " not run: " + n.reason);
  }
  if (failed) parts.push_back(plural(failed, "case") + " failed (" + first_error + ")");
  if (unavailable) parts.push_back(plural(unavailable, "case") + " unavailable (" + first_unavailable + ")");
  if (missing) parts.push_back(plural(missing, "case") + " did not report");
  for (const auto& part : parts) row.status += (row.status.empty() ? "" : "; ") + part;
  if (row.status.empty()) row.status = "ok";
  return row;
}

std::vector<std::string> ReplayReporter::csv_header(const std::vector<std::string>& backends) {
  std::vector<std::string> header{"operator"};   // operatorbench's columns, named with their units
  for (std::size_t b = 1; b < backends.size(); ++b)
    for (const char* q : {"p20", "p50", "p80"}) header.push_back(backends[b] + "_speedup_" + q);
  header.push_back("elapsed_s");
  for (const auto& backend : backends) header.push_back(backend + "_median_s");
  for (const char* extra : {"model", "inputs", "inputs_replayed", "inputs_run", "weight"}) header.push_back(extra);
  for (const auto& backend : backends) header.push_back(backend + "_weighted_s");
  header.push_back("accuracy");
  header.push_back("status");
  return header;
}

std::vector<ReplayRow> ReplayReporter::rows() const {
  std::vector<ReplayRow> out;
  for (const auto& op : operators_)
    if (op.selected) out.push_back(make_row(op));
  return out;
}

std::vector<std::vector<std::string>> ReplayReporter::csv_rows() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& op : operators_) {
    if (!op.selected || !op.complete()) continue;
    ReplayRow row = make_row(op);
    std::vector<std::string> cells{row.op};
    for (std::size_t b = 1; b < plan_.backends.size(); ++b) {
      const auto& stats = row.backends[plan_.backends[b]];
      for (const auto* q : {&stats.q20, &stats.q50, &stats.q80}) cells.push_back(cell(*q, 6));
    }
    cells.push_back(fixed(row.elapsed, 6));
    for (const auto& backend : plan_.backends) cells.push_back(cell(row.backends[backend].median_seconds, 9));
    cells.push_back(row.model);
    for (int n : {row.recorded, row.selected, row.run}) cells.push_back(std::to_string(n));
    cells.push_back(std::to_string(row.weight));
    for (const auto& backend : plan_.backends) cells.push_back(cell(row.backends[backend].weighted_seconds, 9));
    cells.push_back(row.accuracy);
    cells.push_back(row.status);
    out.push_back(std::move(cells));
  }
  return out;
}

void ReplayReporter::write_csv() const {
  if (output_csv_.empty()) return;
  std::string text = csv_line(csv_header(plan_.backends));
  for (const auto& cells : prior_rows_) text += csv_line(cells);
  for (const auto& cells : csv_rows()) text += csv_line(cells);
  write_file_atomically(output_csv_, text);
}

void ReplayReporter::print_summary() const {
  if (!summary_) return;
  std::ostream& out = *summary_;
  std::vector<ReplayRow> all = rows();
  int ran = 0, inputs = 0, timed = 0;
  for (const auto& row : all) {
    ran += row.run > 0;
    inputs += row.selected;
    timed += row.run;
  }
  out << "\nReplay: " << ran << " of " << all.size() << " operators ran, " << timed << " of " << inputs
      << " replayed inputs timed on eager; backends:";
  for (const auto& backend : plan_.backends) out << " " << backend;
  out << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-45s %7s %7s %12s", "operator", "inputs", "weight", "eager median");
  out << line;
  for (std::size_t b = 1; b < plan_.backends.size(); ++b) out << "  " << plan_.backends[b] << " speedup 20/50/80";
  out << "  accuracy  elapsed  status\n";
  for (const auto& row : all) {
    const auto& eager = row.backends.at(replay::kEager);
    std::string in = std::to_string(row.run) + "/" + std::to_string(row.selected);
    std::snprintf(line, sizeof line, "%-45s %7s %7lld %12s", row.op.c_str(), in.c_str(),
                  static_cast<long long>(row.weight),
                  eager.median_seconds ? human_time(*eager.median_seconds).c_str() : "-");
    out << line;
    for (std::size_t b = 1; b < plan_.backends.size(); ++b) {
      const auto& s = row.backends.at(plan_.backends[b]);
      std::string q = s.q50 ? fixed(*s.q20, 2) + "/" + fixed(*s.q50, 2) + "/" + fixed(*s.q80, 2) + "x" : "-";
      std::snprintf(line, sizeof line, "  %-*s", static_cast<int>(plan_.backends[b].size()) + 17, q.c_str());
      out << line;
    }
    std::snprintf(line, sizeof line, "  %-8s %7.1fs  ", row.accuracy.empty() ? "-" : row.accuracy.c_str(), row.elapsed);
    out << line << row.status << "\n";
  }
  if (!plan_.not_run.empty()) out << "Not run (" << plan_.not_run.size() << "):\n";
  for (const auto& n : plan_.not_run) {
    out << "  " << n.model << " " << (n.op.empty() ? "(unparsed line)" : n.op);
    if (n.input >= 0) out << " input " << n.input;
    else if (!n.op.empty()) out << " (all " << plural(n.inputs, "input") << ")";
    out << " (" << n.where << "): " << n.reason << "\n";
  }
  for (std::size_t i = 0; i < plan_.cases.size(); ++i) {
    const CaseResult& r = results_[i];
    if (!r.error.empty()) out << "Failed: " << plan_.cases[i].name << ": " << r.error << "\n";
    if (!r.unavailable.empty()) out << "Unavailable: " << plan_.cases[i].name << ": " << r.unavailable << "\n";
    if (!r.mismatch.empty()) out << "Mismatch: " << plan_.cases[i].name << ": " << r.mismatch << "\n";
  }
  if (!output_csv_.empty()) out << "Wrote " << output_csv_ << "\n";
}

}  // namespace opbench
