// The instruction-count registry: small LibTorch statements, each with its setup, measured by
// bench_instr under callgrind (instr/measure.cpp). Definitions live in tables, one entry each: the
// plain ATen statements in instr/definitions.cpp, the torch::nn / torch::optim ones in
// instr/nn_definitions.cpp.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace opbench::instr {

// A statement: what the measured loop calls once per iteration. It returns its output tensor when
// the definition has a backward variant, an undefined tensor otherwise.
using Stmt = std::function<at::Tensor()>;

// Which variants a definition has.
enum class Autograd {
  kForward,   // "fwd" only: in-place ops, integer or boolean results, metadata queries
  kBackward,  // "fwd" and "fwdbwd": the statement returns its output; fwdbwd runs backward on it
  kStep,      // "fwdbwd" only: the statement is a whole training step that calls backward itself
};

// What a setup gets: the variant being set up. Inputs and module parameters require grad only in
// the fwdbwd variant, so "fwd" measures the op without autograd recording.
class Ctx {
 public:
  explicit Ctx(bool grad) : grad_(grad) {}
  bool grad() const { return grad_; }
  // A leaf input: requires grad in the fwdbwd variant.
  at::Tensor input(at::Tensor t) const;
  // A module (any torch::nn ModuleHolder): its parameters stop requiring grad in the fwd variant.
  template <class M>
  M module(M m) const {
    if (!grad_)
      for (auto& p : m->parameters()) p.requires_grad_(false);
    return m;
  }

 private:
  bool grad_;
};

// Keeps a non-tensor result (an int from size(), stride()) alive so the compiler cannot drop the
// statement; returns the undefined tensor a kForward statement returns.
at::Tensor sink(int64_t value);

// A setup's input: uniform in [0, 1), float32.
at::Tensor rand(at::IntArrayRef shape);

struct Definition {
  std::string group;  // e.g. "pointwise"; the second component of the result name
  std::string label;  // unique, [a-z0-9_]; the third component of the result name
  std::string stmt;   // the statement as C++ text, for --list and the results
  Autograd autograd;
  std::function<Stmt(const Ctx&)> setup;  // builds the inputs and returns the statement
  int iters = 0;                          // measured iterations per repeat; 0: the default
};

// Every definition: definitions.cpp's table, then nn_definitions(); labels checked unique, [a-z0-9_].
const std::vector<Definition>& definitions();
// The table of nn_definitions.cpp (nn modules, few-op graphs, training steps).
std::vector<Definition> nn_definitions();
const Definition* find_definition(const std::string& label);

// "fwd", "fwdbwd" or both, by the definition's Autograd.
std::vector<std::string> variants_of(const Definition& def);

}  // namespace opbench::instr
