#include "opbench/cases.h"

#include <benchmark/benchmark.h>

#include "opbench/trace.h"
#include <c10/util/Exception.h>

#include <algorithm>
#include <sstream>

namespace opbench {
namespace {

thread_local bool case_was_timed = false;
thread_local std::string current_case;   // the name of the case being run

std::vector<std::pair<std::string, FamilyRegistration>>& families() {
  static std::vector<std::pair<std::string, FamilyRegistration>> list;
  return list;
}

std::unique_ptr<Sampler> make_sampler(CacheMode cache) {
  if (!current_device().is_gpu) return make_host_sampler();
  if (run_options().gpu_timer == TimerKind::kGraph) return make_graph_sampler(cache);
  return make_event_sampler(cache);
}

// Records the case's trace and reports gpu_util / mm_util (fractions of wall time) and its events.
void add_trace_counters(benchmark::State& state, const std::function<void()>& iteration) {
  TraceFigures t = record_trace(current_case, iteration);
  state.counters["trace_gpu_events"] = t.gpu_events;
  state.counters["trace_wall_us"] = t.wall_us;
  if (t.gpu_events == 0) return;
  state.counters["trace_busy_us"] = t.busy_us;
  state.counters["trace_mm_busy_us"] = t.mm_busy_us;
  state.counters["gpu_util"] = t.busy_us / t.wall_us;
  state.counters["mm_util"] = t.mm_busy_us / t.wall_us;
}

}  // namespace

std::string CaseName::str() const { return family + "/" + dtype + "/" + shape + "/" + backend; }

std::optional<CaseName> CaseName::parse(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t slash = text.find('/', start);
    parts.emplace_back(text.substr(start, slash - start));
    if (parts.back().empty()) return std::nullopt;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 4) return std::nullopt;
  return CaseName{parts[0], parts[1], parts[2], parts[3]};
}

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Half: return "fp16";
    case c10::ScalarType::Float: return "fp32";
    case c10::ScalarType::Double: return "fp64";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Bool: return "bool";
    default: return c10::toString(type);
  }
}

std::string shape_name(const std::vector<int64_t>& dims) {
  std::ostringstream out;
  for (size_t i = 0; i < dims.size(); ++i) out << (i ? "x" : "") << dims[i];
  return out.str();
}

RunOptions& run_options() {
  static RunOptions options;
  return options;
}

c10::Device bench_device() {
  return current_device().is_gpu ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::kCPU);
}

void time_iterations(benchmark::State& state, const std::function<void()>& iteration,
                     const Work& work, const TimingRequest& request) {
  CacheMode cache = request.cache.value_or(run_options().cache);
  auto sampler = make_sampler(cache);
  Measurement m = measure(*sampler, iteration, run_options().rule);
  case_was_timed = true;
  for (auto _ : state) state.SetIterationTime(m.median);
  set_work_counters(state, work, m.median, current_device().peaks);
  state.counters["samples"] = static_cast<double>(m.samples.size());
  state.counters["noise_pct"] = 100 * m.noise;
  state.counters["median_noise_pct"] = 100 * m.median_noise;
  state.counters["converged"] = m.converged ? 1 : 0;
  if (!trace_options().dir.empty()) add_trace_counters(state, iteration);
  std::string label = std::string("timer=") + timer_kind_name(m.timer);
  if (m.timer != TimerKind::kHost) label += cache == CacheMode::kCold ? " cache=cold" : " cache=warm";
  state.SetLabel(label);
}

void register_case(const CaseName& name, std::function<void(benchmark::State&)> body) {
  auto run = [body = std::move(body), case_name = name.str()](benchmark::State& state) {
    case_was_timed = false;
    current_case = case_name;
    try {
      body(state);
    } catch (const c10::Error& e) {
      state.SkipWithError(e.what_without_backtrace());
      return;
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return;
    }
    if (!case_was_timed && !state.error_occurred())
      state.SkipWithError("the case neither timed its work nor said why it was skipped");
  };
  benchmark::RegisterBenchmark(name.str().c_str(), run)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

void skip_unavailable(benchmark::State& state, const std::string& why) {
  state.SkipWithError((kUnavailablePrefix + why).c_str());
  case_was_timed = true;
}

bool add_family(const char* family, FamilyRegistration registration) {
  families().emplace_back(family, registration);
  return true;
}

void register_all_families(const DeviceInfo& device) {
  // Ceiling first: the measured ceilings of the run must be known when the other cases report.
  auto ordered = families();
  std::stable_partition(ordered.begin(), ordered.end(), [](const auto& f) { return f.first == "Ceiling"; });
  for (const auto& [name, registration] : ordered) registration(device);
}

}  // namespace opbench
