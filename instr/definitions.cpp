// The instruction-count definitions, grouped like PyTorch's instruction_counts standard set: the
// registry (definitions(), find_definition, variants_of) and the tables of plain ATen statements
// (factories, pointwise math, data movement, reductions, indexing, views, linear algebra). The torch::nn
// modules, the few-op graphs and the training steps are in nn_definitions.cpp, appended after these.
//
// Adding a definition is one block in a table:
//   {"group", "label", "statement as text", Autograd::k..., [](const Ctx& c) {
//      auto x = c.input(rand({4, 4}));                 // setup: once per variant, not measured
//      return Stmt([=]() mutable { return x * x; });   // the statement: measured, once per call
//    }},
// kBackward statements return their output (fwdbwd runs backward on it); kForward statements return
// at::Tensor() (use sink() for an integer result); kStep statements are whole training steps.
// Setups start from at::manual_seed(0), so random inputs are the same in every run.
#include "definitions.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

#include <iterator>
#include <stdexcept>

namespace opbench::instr {

at::Tensor Ctx::input(at::Tensor t) const {
  if (grad_) t.requires_grad_(true);
  return t;
}

at::Tensor sink(int64_t value) {
  static volatile int64_t slot;
  slot = value;
  return at::Tensor();
}

at::Tensor rand(at::IntArrayRef shape) { return at::rand(shape); }

namespace {

using namespace at::indexing;
using A = Autograd;

at::Tensor ones(at::IntArrayRef shape) { return at::ones(shape); }
at::Tensor index_tensor() { return at::tensor({0, 2}, at::kLong); }

std::vector<Definition> op_definitions() {
  return {
      // ---- empty tensors: factory overhead --------------------------------------------------------
      {"empty", "empty_0d", "at::empty({})", A::kForward, [](const Ctx&) {
         return Stmt([] { return at::empty({}); });
       }},
      {"empty", "empty_1d", "at::empty({1})", A::kForward, [](const Ctx&) {
         return Stmt([] { return at::empty({1}); });
       }},
      {"empty", "empty_4x4", "at::empty({4, 4})", A::kForward, [](const Ctx&) {
         return Stmt([] { return at::empty({4, 4}); });
       }},
      {"empty", "zeros_4x4", "at::zeros({4, 4})", A::kForward, [](const Ctx&) {
         return Stmt([] { return at::zeros({4, 4}); });
       }},
      {"empty", "scalar_tensor", "at::scalar_tensor(1.0)", A::kForward, [](const Ctx&) {
         return Stmt([] { return at::scalar_tensor(1.0); });
       }},
      {"empty", "tensor_from_list", "torch::tensor({1.0f, 2.0f})", A::kForward, [](const Ctx&) {
         return Stmt([] { return torch::tensor({1.0f, 2.0f}); });
       }},

      // ---- pointwise math (4x4 float) -------------------------------------------------------------
      {"pointwise", "add_scalar_inplace", "x += 1.0", A::kForward, [](const Ctx&) {
         auto x = ones({4, 4});
         return Stmt([=]() mutable { x += 1.0; return at::Tensor(); });
       }},
      {"pointwise", "add_tensor_inplace", "x += y", A::kForward, [](const Ctx&) {
         auto x = ones({4, 4}), y = ones({4, 4});
         return Stmt([=]() mutable { x += y; return at::Tensor(); });
       }},
      {"pointwise", "mul_inplace", "x *= y", A::kForward, [](const Ctx&) {
         auto x = ones({4, 4}), y = ones({4, 4});
         return Stmt([=]() mutable { x *= y; return at::Tensor(); });
       }},
      {"pointwise", "add", "x + y", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4})), y = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x + y; });
       }},
      {"pointwise", "mul", "x * y", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4})), y = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x * y; });
       }},
      {"pointwise", "mul_scalar", "x * 2.0", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x * 2.0; });
       }},
      {"pointwise", "mul_broadcast", "x * y  (4x4 * 4x1)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4})), y = c.input(rand({4, 1}));
         return Stmt([=]() mutable { return x * y; });
       }},
      {"pointwise", "eq", "x == y", A::kForward, [](const Ctx&) {
         auto x = rand({4, 4}), y = rand({4, 4});
         return Stmt([=]() mutable { return x == y; });
       }},

      // ---- data movement --------------------------------------------------------------------------
      {"data", "contiguous", "x.contiguous()", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.contiguous(); });
       }},
      {"data", "t_contiguous", "x.t().contiguous()", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.t().contiguous(); });
       }},
      {"data", "clone", "x.clone()", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.clone(); });
       }},
      {"data", "to_double", "x.to(at::kDouble)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.to(at::kDouble); });
       }},
      {"data", "copy_", "y.copy_(x)", A::kForward, [](const Ctx&) {
         auto x = rand({4, 4}), y = at::empty({4, 4});
         return Stmt([=]() mutable { y.copy_(x); return at::Tensor(); });
       }},
      {"data", "zero_", "x.zero_()", A::kForward, [](const Ctx&) {
         auto x = rand({4, 4});
         return Stmt([=]() mutable { x.zero_(); return at::Tensor(); });
       }},
      {"data", "uniform_", "x.uniform_()", A::kForward, [](const Ctx&) {
         auto x = at::empty({4, 4});
         return Stmt([=]() mutable { x.uniform_(); return at::Tensor(); });
       }},

      // ---- reductions -----------------------------------------------------------------------------
      {"reduction", "max", "x.max()", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.max(); });
       }},
      {"reduction", "sum", "x.sum()", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.sum(); });
       }},
      {"reduction", "sum_dim1", "x.sum(1)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.sum(1); });
       }},
      {"reduction", "var_dim0", "x.var(0)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.var(0); });
       }},

      // ---- indexing (the C++ spelling of Python's x[...]) -----------------------------------------
      {"indexing", "index_int", "x.index({0})  # x[0]", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.index({0}); });
       }},
      {"indexing", "index_slice", "x.index({Slice(0, 2)})  # x[0:2]", A::kBackward,
       [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.index({Slice(0, 2)}); });
       }},
      {"indexing", "index_ellipsis", "x.index({Ellipsis})  # x[...]", A::kBackward,
       [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.index({Ellipsis}); });
       }},
      {"indexing", "index_none", "x.index({None})  # x[None]", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.index({None}); });
       }},
      {"indexing", "index_bool", "x.index({true})  # x[True]", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.index({true}); });
       }},
      {"indexing", "index_tensor", "x.index({i})  # x[i], i = [0, 2]", A::kBackward,
       [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         auto i = index_tensor();
         return Stmt([=]() mutable { return x.index({i}); });
       }},
      {"indexing", "index_mask", "x.index({m})  # x[m], m = x > 0.5", A::kBackward,
       [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         auto m = x.detach() > 0.5;
         return Stmt([=]() mutable { return x.index({m}); });
       }},
      {"indexing", "index_int_slice", "x.index({0, Slice(1, 3)})  # x[0, 1:3]", A::kBackward,
       [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.index({0, Slice(1, 3)}); });
       }},
      {"indexing", "setitem_int", "x.index_put_({0}, 1.0)  # x[0] = 1.0", A::kForward,
       [](const Ctx&) {
         auto x = rand({4, 4});
         return Stmt([=]() mutable { x.index_put_({0}, 1.0); return at::Tensor(); });
       }},
      {"indexing", "setitem_slice", "x.index_put_({Slice(0, 2)}, y)  # x[0:2] = y", A::kForward,
       [](const Ctx&) {
         auto x = rand({4, 4}), y = rand({2, 4});
         return Stmt([=]() mutable { x.index_put_({Slice(0, 2)}, y); return at::Tensor(); });
       }},
      {"indexing", "setitem_tensor", "x.index_put_({i}, 0.0)  # x[i] = 0.0", A::kForward,
       [](const Ctx&) {
         auto x = rand({4, 4});
         auto i = index_tensor();
         return Stmt([=]() mutable { x.index_put_({i}, 0.0); return at::Tensor(); });
       }},
      {"indexing", "setitem_mask", "x.index_put_({m}, 0.0)  # x[m] = 0.0", A::kForward,
       [](const Ctx&) {
         auto x = rand({4, 4});
         auto m = x > 0.5;
         return Stmt([=]() mutable { x.index_put_({m}, 0.0); return at::Tensor(); });
       }},

      // ---- metadata and views ---------------------------------------------------------------------
      {"views", "size", "x.size(0)", A::kForward, [](const Ctx&) {
         auto x = rand({4, 4});
         return Stmt([=]() mutable { return sink(x.size(0)); });
       }},
      {"views", "stride", "x.stride(0)", A::kForward, [](const Ctx&) {
         auto x = rand({4, 4});
         return Stmt([=]() mutable { return sink(x.stride(0)); });
       }},
      {"views", "as_strided", "x.as_strided({2, 2}, {1, 2}, 1)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.as_strided({2, 2}, {1, 2}, 1); });
       }},
      {"views", "select", "x.select(1, 1)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.select(1, 1); });
       }},
      {"views", "unsqueeze", "x.unsqueeze(0)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.unsqueeze(0); });
       }},
      {"views", "view", "x.view({-1, 1})", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.view({-1, 1}); });
       }},
      {"views", "reshape", "x.reshape({2, 8})", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.reshape({2, 8}); });
       }},
      {"views", "transpose", "x.transpose(0, 1)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return x.transpose(0, 1); });
       }},
      {"views", "expand", "y.expand({4, 4})  (y 4x1)", A::kBackward, [](const Ctx& c) {
         auto y = c.input(rand({4, 1}));
         return Stmt([=]() mutable { return y.expand({4, 4}); });
       }},

      // ---- misc: resize_, sort, cat ---------------------------------------------------------------
      {"misc", "resize_same", "x.resize_({4, 4})", A::kForward, [](const Ctx&) {
         auto x = rand({4, 4});
         return Stmt([=]() mutable { x.resize_({4, 4}); return at::Tensor(); });
       }},
      {"misc", "resize_shrink_grow", "x.resize_({0}); x.resize_({4, 4})", A::kForward,
       [](const Ctx&) {
         auto x = rand({4, 4});
         return Stmt([=]() mutable { x.resize_({0}); x.resize_({4, 4}); return at::Tensor(); });
       }},
      {"misc", "sort", "std::get<0>(at::sort(x))", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return std::get<0>(at::sort(x)); });
       }},
      {"misc", "cat", "at::cat({x, y})", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4})), y = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return at::cat({x, y}); });
       }},

      // ---- linear algebra -------------------------------------------------------------------------
      {"linalg", "matmul", "at::matmul(x, y)  (4x4 @ 4x4)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4})), y = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return at::matmul(x, y); });
       }},
      {"linalg", "matmul_batched", "at::matmul(x, y)  (2x4x4 @ 4x4)", A::kBackward,
       [](const Ctx& c) {
         auto x = c.input(rand({2, 4, 4})), y = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return at::matmul(x, y); });
       }},
      {"linalg", "mm", "at::mm(x, y)  (4x4 @ 4x4)", A::kBackward, [](const Ctx& c) {
         auto x = c.input(rand({4, 4})), y = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return at::mm(x, y); });
       }},
      {"linalg", "addmm", "at::addmm(b, x, w)  (4 + 4x4 @ 4x4)", A::kBackward, [](const Ctx& c) {
         auto b = c.input(rand({4})), x = c.input(rand({4, 4})), w = c.input(rand({4, 4}));
         return Stmt([=]() mutable { return at::addmm(b, x, w); });
       }},
  };
}

void check_labels(const std::vector<Definition>& defs) {
  for (size_t i = 0; i < defs.size(); ++i) {
    for (char ch : defs[i].label + defs[i].group)
      if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
        throw std::logic_error("instr: label/group must be [a-z0-9_]: " + defs[i].label);
    for (size_t j = 0; j < i; ++j)
      if (defs[j].label == defs[i].label)
        throw std::logic_error("instr: duplicate label " + defs[i].label);
  }
}

}  // namespace

const std::vector<Definition>& definitions() {
  static const std::vector<Definition> defs = [] {
    auto d = op_definitions();
    auto nn = nn_definitions();
    d.insert(d.end(), std::make_move_iterator(nn.begin()), std::make_move_iterator(nn.end()));
    check_labels(d);
    return d;
  }();
  return defs;
}

const Definition* find_definition(const std::string& label) {
  for (const auto& d : definitions())
    if (d.label == label) return &d;
  return nullptr;
}

std::vector<std::string> variants_of(const Definition& def) {
  switch (def.autograd) {
    case Autograd::kForward: return {"fwd"};
    case Autograd::kBackward: return {"fwd", "fwdbwd"};
    case Autograd::kStep: return {"fwdbwd"};
  }
  return {};
}

}  // namespace opbench::instr
