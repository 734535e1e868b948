// How one definition is measured.
//
// Under callgrind (run with --instr-atstart=no --collect-atstart=no), for each variant and thread
// count:
//   at::set_num_threads(t); at::manual_seed(0); stmt = def.setup(ctx); warm-up   (uninstrumented)
//   START_INSTRUMENTATION
//   repeat r: ZERO_STATS, TOGGLE_COLLECT, <empty loop, n iterations>, TOGGLE_COLLECT, DUMP "...rR.base"
//             ZERO_STATS, TOGGLE_COLLECT, <statement loop, n iterations>, TOGGLE_COLLECT, DUMP "...rR.stmt"
//   STOP_INSTRUMENTATION
// Instrumenting only the measured loops keeps LibTorch's start-up and one-time initialisation at
// valgrind's uninstrumented speed (several times faster than callgrind's).
// Callgrind's collection state is per thread, so the counts are the calling thread's instructions:
// the framework overhead a statement costs its caller (intra-op pool workers are not counted).
// The dumps' totals are read by opbench-instr (tools/opbench_tools/instr_pool.py):
// per call = (stmt - base) / n.
//
// Natively, the same setup and warm-up, then the statement loop timed with steady_clock.
#include "measure.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones_like.h>
#include <torch/csrc/autograd/autograd.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace opbench::instr {
namespace {

// Not inlined, so the statement loop and the empty loop are the same machine code.
__attribute__((noinline)) void run_loop(const Stmt& body, int n) {
  for (int i = 0; i < n; ++i) body();
}

void counted_loop(const Stmt& body, int n, const std::string& dump_label) {
  CALLGRIND_ZERO_STATS;
  CALLGRIND_TOGGLE_COLLECT;
  run_loop(body, n);
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_DUMP_STATS_AT(dump_label.c_str());
}

double timed_loop_ns(const Stmt& body, int n) {
  auto t0 = std::chrono::steady_clock::now();
  run_loop(body, n);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

// The per-iteration body of a variant, built on the definition's statement.
Stmt variant_body(const Definition& def, const std::string& variant, Stmt stmt) {
  if (variant == "fwd" || def.autograd == Autograd::kStep) return stmt;
  // fwdbwd of a kBackward definition: backward from the output with a fixed all-ones gradient.
  at::Tensor out = stmt();
  if (!out.defined() || !out.requires_grad())
    throw std::runtime_error(def.label + ": fwdbwd needs an output that requires grad");
  at::Tensor grad = at::ones_like(out);
  return [stmt = std::move(stmt), grad] {
    at::Tensor y = stmt();
    torch::autograd::backward({y}, {grad});
    return at::Tensor();
  };
}

}  // namespace

bool on_callgrind() { return RUNNING_ON_VALGRIND > 0; }

std::vector<VariantResult> measure(const Definition& def, const MeasureOptions& opts) {
  auto all = variants_of(def);
  auto variants = opts.variants.empty() ? all : opts.variants;
  for (const auto& v : variants)
    if (std::find(all.begin(), all.end(), v) == all.end())
      throw std::invalid_argument(def.label + " has no variant '" + v + "'");
  const int iters = opts.iters > 0 ? opts.iters : (def.iters > 0 ? def.iters : kDefaultIters);
  const bool counting = on_callgrind();
  const Stmt empty = [] { return at::Tensor(); };

  std::vector<VariantResult> results;
  for (int threads : opts.threads) {
    for (const auto& variant : variants) {
      at::set_num_threads(threads);
      at::manual_seed(0);
      at::AutoGradMode grad_mode(true);
      Stmt stmt = def.setup(Ctx(variant == "fwdbwd"));
      if (opts.extra_work) stmt = [s = std::move(stmt)] { s(); return s(); };
      Stmt body = variant_body(def, variant, std::move(stmt));
      VariantResult r;
      r.variant = variant;
      r.threads = threads;
      // Dump labels made before the warm-up: from the warm-up on, nothing but the loops touches
      // the heap, whose state then only depends on the statement itself.
      for (int rep = 0; rep < (counting ? opts.repeats : 0); ++rep) {
        std::string prefix = variant + ".t" + std::to_string(threads) + ".r" + std::to_string(rep);
        r.dumps.push_back(prefix + ".base");
        r.dumps.push_back(prefix + ".stmt");
      }
      run_loop(body, std::max(3, iters / 10));  // warm-up: caches, lazy init, .grad allocation

      if (counting) {
        // Instrumented only from here: setup and warm-up ran at valgrind's uninstrumented speed.
        CALLGRIND_START_INSTRUMENTATION;
        r.iters = iters;
        for (size_t i = 0; i + 1 < r.dumps.size(); i += 2) {
          counted_loop(empty, iters, r.dumps[i]);
          counted_loop(body, iters, r.dumps[i + 1]);
        }
        CALLGRIND_STOP_INSTRUMENTATION;
      } else {
        // Natively: as many iterations as fill about 2 ms, five timed repeats or more.
        int n = 1;
        while (n < (1 << 20) && timed_loop_ns(body, n) < 2e6) n *= 2;
        r.iters = n;
        for (int rep = 0; rep < std::max(5, opts.repeats); ++rep)
          r.wall_ns.push_back(timed_loop_ns(body, n) / n);
      }
      results.push_back(std::move(r));
    }
  }
  return results;
}

}  // namespace opbench::instr
