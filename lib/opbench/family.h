// A family declares itself completely, in one descriptor: its experiments, its axes (dtypes x shapes x
// backends, GPU and CPU shapes), its work formula, the peak its FLOPs are held against, and how one
// case runs. The harness expands the descriptor into cases, keeps their CaseInfo in the registry and
// registers them; lib/ and reporters/ never name a family. A family's folder is benchmarks/<family>/.
//
//   OPBENCH_FAMILY(LayerNorm) {
//     Family f;
//     f.name = "LayerNorm";  f.summary = "...";
//     f.experiments = {{"layer_norm", Metric::kMemoryBandwidth}};
//     f.dtypes = {c10::kBFloat16};  f.gpu_shapes = {{4096, 1024}};  f.cpu_shapes = {{64, 256}};
//     f.backends = {{"aten"}, {"cuda", /*needs_cuda=*/true}};
//     f.work = [](c10::ScalarType dtype, const Dims& dims) { ... };
//     f.run = run_layer_norm;   // void(CaseContext&): inputs, check, ctx.time(iteration)
//     return f;
//   }
#pragma once
#include <c10/core/ScalarType.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "opbench/cases.h"

namespace opbench {

using Dims = std::vector<int64_t>;

struct Backend {
  std::string name;                       // last element of the case name: "aten", "cuda", "cublas"
  bool needs_cuda = false;                // registered only on a CUDA device (GPU-only backends)
  std::vector<c10::ScalarType> dtypes;    // the dtypes it runs; empty: every dtype of the family
  std::optional<CeilingKind> measures;    // its cases measure this run's ceiling of this kind
  // Where a backend's cases differ from the family's (e.g. Ceiling's GEMM beside its streams):
  std::vector<Dims> gpu_shapes;           // non-empty: these instead of the family's GPU shapes
  std::function<Work(c10::ScalarType, const Dims&)> work;   // set: this instead of the family's formula
  bool covers(c10::ScalarType dtype) const;
};

struct Family {
  std::string name;                       // first element of every case name: "LayerNorm"
  std::string summary;                    // one line: what it measures (bench_ops --opbench_list)
  std::vector<Experiment> experiments;    // empty only for a family whose every backend measures a ceiling
  std::vector<c10::ScalarType> dtypes;
  std::vector<Dims> gpu_shapes;           // on a CUDA device
  std::vector<Dims> cpu_shapes;           // on the CPU: small, so CI runs the family in seconds
  std::vector<Backend> backends;
  PeakKind peak = PeakKind::kBandwidth;   // the datasheet peak its FLOPs are held against
  std::function<Work(c10::ScalarType, const Dims&)> work;   // bytes, FLOPs, items per iteration
  std::function<void(CaseContext&)> run;  // inputs, check against a reference, then ctx.time()
  std::function<std::string(const Dims&)> name_shape;       // optional; default shape_name(dims)
  int layers_axis = -1;                   // models: dims[layers_axis] is the layer count, which
                                          // --opbench_model_layers (RunOptions::model_layers) replaces
  bool every_rank = false;                // its cases run on every process of a distributed launch
                                          // (opbench/world.h), together and in the same order: the
                                          // collectives; every other family's cases run on rank 0 only
  int min_world_size = 1;                 // its cases exist only in a launch of at least this many
                                          // processes (tensor-parallel decode: 2)
  std::string python_module;              // the module its `inductor` backend compiles, as PyTorch users
                                          // write it, beside the family under benchmarks/
                                          // ("layer_norm/layer_norm.py"; opbench/inductor.h)
};

// Throws opbench::Error naming the family and what is missing or inconsistent: no name, no experiment
// (unless it only measures ceilings), no dtypes, backends or shapes, no work or run function, an
// experiment or backend dtype the family does not have, an `inductor` backend without a Python module.
void validate_family(const Family& family);

// The cases `family` has on `device`, in registration order (dtype, shape, backend); `model_layers`
// replaces the layer count of a family with a layers_axis. None when this process's world
// (current_world(), opbench/world.h) has fewer than family.min_world_size processes.
std::vector<CaseInfo> cases_of(const Family& family, const DeviceInfo& device,
                               std::optional<int64_t> model_layers = std::nullopt);

// Families add themselves at start-up (OPBENCH_FAMILY); the list is described and validated on first
// use: registered_families() throws opbench::Error for an invalid family.
using FamilyDescription = Family (*)();
bool add_family(FamilyDescription describe);
const std::vector<Family>& registered_families();
// The registered family of that name; throws opbench::Error if there is none.
const Family& family_named(const std::string& name);

// Registers every case of every family for run.device: families that measure ceilings first, so the
// ceilings are known when the other cases time. Throws opbench::Error (invalid family, duplicate name).
void register_families(RunContext& run);

}  // namespace opbench

// At namespace opbench scope in the family's source, followed by the describing function's body.
#define OPBENCH_FAMILY(ident)                                                                  \
  static ::opbench::Family opbench_describe_##ident();                                         \
  static const bool opbench_family_##ident##_added = ::opbench::add_family(&opbench_describe_##ident); \
  static ::opbench::Family opbench_describe_##ident()
