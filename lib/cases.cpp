#include "opbench/cases.h"

#include <benchmark/benchmark.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "opbench/check.h"
#include "opbench/interrupt.h"
#include "opbench/kernel_breakdown.h"
#include "opbench/telemetry.h"

namespace opbench {
namespace {

std::unique_ptr<Sampler> make_sampler(const DeviceInfo& device, TimerKind timer, CacheMode cache) {
  if (!device.is_gpu || timer == TimerKind::kHost) return make_host_sampler();
  if (timer == TimerKind::kGraph) return make_graph_sampler(cache);
  if (timer == TimerKind::kCupti) return make_cupti_sampler(cache);
  return make_event_sampler(cache);
}

ThrottleRule throttle_rule(const DeviceInfo& device, const RunOptions& options) {
  ThrottleRule rule;
  rule.expected_sm_clock_mhz = device.rated_sm_clock_mhz;
  rule.threshold = options.throttle_threshold;
  return rule;
}

bool injected_here(const RunOptions& options, const std::string& name) {
  return options.inject && (options.inject->pattern.empty() || std::regex_search(name, std::regex(options.inject->pattern)));
}

// Clock, power and throttling of a GPU case: counters, and a label note when it throttled.
std::string add_clock_counters(benchmark::State& state, const Measurement& m, const DeviceInfo& device) {
  state.counters["throttled_samples"] = m.throttled_samples;
  if (!m.sm_clock_mhz.empty()) state.counters["sm_clock_mhz"] = median_of(m.sm_clock_mhz);
  GpuTelemetry t = Nvml::instance().read(device.pci_bus_id);
  if (t.sm_clock_mhz) state.counters["nvml_sm_clock_mhz"] = *t.sm_clock_mhz;
  if (t.power_w) state.counters["power_w"] = *t.power_w;
  if (t.temperature_c) state.counters["temperature_c"] = *t.temperature_c;
  if (!throttled_share_exceeded(m.throttled_samples, static_cast<double>(m.samples.size()))) return "";
  std::string note = " THROTTLED(" + std::to_string(m.throttled_samples) + " of " +
                     std::to_string(m.samples.size() + m.throttled_samples) + " samples discarded";
  if (t.clock_reasons)
    for (const std::string& why : slowdown_reason_names(*t.clock_reasons)) note += " " + why;
  return note + ")";
}

// The kinds' bytes (Work::bytes_read_by_kind, per iteration) over the traced window, and the read
// ceiling at the bytes one of a kind's kernels reads.
void add_kind_bytes(KernelBreakdown& b, const Work& work, int iterations, const Ceilings& ceilings) {
  for (KindTime& k : b.kinds) {
    auto bytes = work.bytes_read_by_kind.find(k.kind);
    if (bytes == work.bytes_read_by_kind.end() || k.kernels == 0) continue;
    k.bytes_read = bytes->second * iterations;
    k.read_ceiling_gbps = ceilings.read.gbps_at(k.bytes_read / k.kernels);
  }
}

// Records the case's trace and reports gpu_util / mm_util (fractions of wall time) and its events; with
// GPU events, where the time goes by kernel kind (kernel_breakdown.h): counters "time_<kind>_%" and
// "time_idle_%" (shares of the traced window), "GB/s_<kind>" and "%read_ceiling_<kind>" for the kinds
// whose bytes `work` counts, and the rows of DIR/<case>.breakdown.csv.
void add_trace_counters(benchmark::State& state, const TraceOptions& options, const std::string& name,
                        const std::function<void()>& iteration, const Work& work, const Ceilings& ceilings) {
  TraceFigures t = record_trace(options, name, iteration);
  state.counters["trace_gpu_events"] = t.gpu_events;
  state.counters["trace_wall_us"] = t.wall_us;
  if (t.gpu_events == 0) return;
  state.counters["trace_busy_us"] = t.busy_us;
  state.counters["trace_mm_busy_us"] = t.mm_busy_us;
  state.counters["gpu_util"] = t.busy_us / t.wall_us;
  state.counters["mm_util"] = t.mm_busy_us / t.wall_us;
  KernelBreakdown b = kernel_breakdown(t.intervals, t.wall_us);
  add_kind_bytes(b, work, t.iterations, ceilings);
  for (const KindTime& k : b.kinds) {
    state.counters[kind_counter(k.kind, KindFigure::kSharePct)] = 100 * k.us / b.window_us;
    if (auto gbps = k.gbps()) state.counters[kind_counter(k.kind, KindFigure::kGbps)] = *gbps;
    if (auto pct = k.pct_of_read_ceiling()) state.counters[kind_counter(k.kind, KindFigure::kPctOfReadCeiling)] = *pct;
  }
  state.counters[kind_counter("idle", KindFigure::kSharePct)] = 100 * b.idle_us / b.window_us;
  write_breakdown_csv(b, t.iterations, t.path);
}

}  // namespace

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Half: return "fp16";
    case c10::ScalarType::Float: return "fp32";
    case c10::ScalarType::Double: return "fp64";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Int4: return "int4";   // int4 weight-only cases (their weights packed two a byte)
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

std::string CaseInfo::name() const { return family + "/" + dtype + "/" + shape + "/" + backend; }

const CaseInfo& CaseRegistry::add(CaseInfo info) {
  std::string name = info.name();
  auto [it, fresh] = by_name_.emplace(name, nullptr);
  if (!fresh) throw Error("case " + name + " is registered twice");
  it->second = std::make_unique<CaseInfo>(std::move(info));
  order_.push_back(it->second.get());
  return *it->second;
}

const CaseInfo* CaseRegistry::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

c10::Device RunContext::torch_device() const {
  return device.is_gpu ? c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device.index))
                       : c10::Device(c10::kCPU);
}

void CaseContext::time(const std::function<void()>& iteration, const TimingRequest& request) {
  time(iteration, info_.work, request);
}

// The injected slowdown, calibrated: a first pass delays each iteration by fraction x base; the delay
// costs more than itself on a GPU (a kernel's launch gap, the spin's overshoot of globaltimer's tick),
// so a second pass, when the first missed by over 10%, takes that overhead off the delay.
Measurement CaseContext::measure_slowed(const std::function<void()>& iteration, double base_seconds, TimerKind kind,
                                        CacheMode cache, const StoppingRule& rule, const ThrottleRule& throttle) {
  const double wanted = run_.options.inject->fraction * base_seconds;
  double delay = wanted;
  Measurement slowed;
  for (int pass = 0; pass < 2; ++pass) {
    auto sampler = make_sampler(run_.device, kind, cache);   // a graph sampler captures its iteration once
    slowed = measure(*sampler, [&] { iteration(); inject_delay(kind, delay); }, rule, throttle);
    const double extra = slowed.median - base_seconds;
    if (std::abs(extra - wanted) <= 0.1 * wanted) break;
    if (pass == 0) delay = std::max(0.0, delay - (extra - wanted));
  }
  state_.counters["injected_delay_us"] = delay * 1e6;
  state_.counters["injected_slowdown_pct"] = 100 * (slowed.median / base_seconds - 1);   // as measured here
  return slowed;
}

void CaseContext::time(const std::function<void()>& iteration, const Work& work, const TimingRequest& request) {
  CacheMode cache = request.cache.value_or(run_.options.cache);
  auto sampler = make_sampler(run_.device, request.timer.value_or(run_.options.gpu_timer), cache);
  const StoppingRule& rule = request.rule.value_or(run_.options.rule);
  const ThrottleRule throttle = throttle_rule(run_.device, run_.options);
  Measurement m = measure(*sampler, iteration, rule, throttle);
  std::string injected;
  if (injected_here(run_.options, info_.name())) {
    m = measure_slowed(iteration, m.median, sampler->kind(), cache, rule, throttle);
    char text[48];
    std::snprintf(text, sizeof text, " INJECTED_SLOWDOWN=%g%%", 100 * run_.options.inject->fraction);
    injected = text;
  }
  if (request.operations_per_iteration > 1) {   // seconds per operation; the relative noise is unchanged
    const double per = 1.0 / request.operations_per_iteration;
    m.median *= per;
    for (double& sample : m.samples) sample *= per;
  }
  finished_ = true;
  for (auto _ : state_) state_.SetIterationTime(m.median);
  const std::optional<CacheMode> cache_used = m.timer == TimerKind::kHost ? std::nullopt : std::optional(cache);
  result_ = timed_result(work, m.median, m.timer, cache_used, run_.device.peaks, run_.ceilings);
  result_.throttled = throttled_share_exceeded(m.throttled_samples, static_cast<double>(m.samples.size()));
  Figures& figures = result_.figures;
  if (info_.measures) {   // a ceiling is not a share of itself
    run_.ceilings.record(*info_.measures, work.bytes_read + work.bytes_written,
                         *info_.measures == CeilingKind::kGemm ? figures.tflops : figures.gbps);
    figures.bandwidth_of_ceiling = figures.compute_of_ceiling = std::nullopt;
  }
  set_figure_counters(state_, work, figures);
  state_.counters["samples"] = static_cast<double>(m.samples.size());
  state_.counters["noise_pct"] = 100 * m.noise;
  state_.counters["median_noise_pct"] = 100 * m.median_noise;
  state_.counters["converged"] = m.converged ? 1 : 0;
  const std::string throttled = m.timer != TimerKind::kHost ? add_clock_counters(state_, m, run_.device) : "";
  if (!run_.trace.dir.empty()) add_trace_counters(state_, run_.trace, info_.name(), iteration, work, run_.ceilings);
  std::string label = std::string("timer=") + timer_kind_name(m.timer);
  if (cache_used) label += std::string(" cache=") + cache_mode_name(cache_used);
  if (!request.note.empty()) label += " " + request.note;
  state_.SetLabel(label + throttled + injected);
}

void CaseContext::check_and_time(const std::function<void()>& iteration, const std::function<void()>& check,
                                 const TimingRequest& request) {
  iteration();
  check();
  time(iteration, request);
}

void CaseContext::skip(const std::string& why) {
  state_.SkipWithError(why.c_str());
  result_.failure = why;
  finished_ = true;
}

void CaseContext::skip_unavailable(const std::string& why) { skip(kUnavailablePrefix + why); }

void register_case(RunContext& run, CaseInfo info, std::function<void(CaseContext&)> body) {
  const CaseInfo& kept = run.cases.add(std::move(info));
  auto case_body = [body = std::move(body), &kept, &run](benchmark::State& state) {
    if (interrupt_signal() != 0) {   // SIGINT or SIGTERM: no further case runs (its report is dropped)
      state.SkipWithError("interrupted");
      return;
    }
    const auto started = std::chrono::steady_clock::now();
    CaseResult& result = run.results.add(kept.name());
    CaseContext ctx(state, kept, run, result);
    if (run.on_case_start) run.on_case_start(kept);
    try {
      body(ctx);
      if (!ctx.finished() && !state.error_occurred())
        ctx.skip("the case neither timed its work nor said why it was skipped");
    } catch (const c10::Error& e) {
      ctx.skip(e.what_without_backtrace());
    } catch (const std::exception& e) {
      ctx.skip(e.what());
    }
    if (state.error_occurred() && result.timed()) result.failure = "skipped through benchmark::State";
    state.counters[kCaseWallSecondsCounter] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (const auto& [name, counter] : state.counters) result.counters[name] = counter.value;
  };
  const std::string& unit = run.options.time_unit;
  benchmark::RegisterBenchmark(kept.name().c_str(), case_body)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(unit == "ns" ? benchmark::kNanosecond : unit == "ms" ? benchmark::kMillisecond
             : unit == "s" ? benchmark::kSecond : benchmark::kMicrosecond);
}

}  // namespace opbench
