// The index rules' table and how each bound is derived from the other arguments of the call.
#include <functional>
#include <string>

#include "opbench/check.h"
#include "replay/index_rules.h"
#include "replay/input_builder.h"

namespace opbench::replay {
namespace {

// The arguments of one call by schema name.
class Args {
 public:
  Args(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) : schema_(schema), stack_(stack) {}
  const c10::IValue& operator[](std::string_view name) const {
    auto index = schema_.argumentIndexWithName(name);
    if (!index) throw Error("index rule: the schema has no argument '" + std::string(name) + "'");
    return stack_[*index];
  }
  at::Tensor tensor(std::string_view name) const { return (*this)[name].toTensor(); }
  std::int64_t integer(std::string_view name) const { return (*this)[name].toInt(); }
  // self.size(dim) with a negative dim counted from the end; a 0-d tensor has one element.
  std::int64_t size(std::string_view tensor_name, std::int64_t dim) const {
    at::Tensor t = tensor(tensor_name);
    if (t.dim() == 0) return 1;
    if (dim < 0) dim += t.dim();
    if (dim < 0 || dim >= t.dim()) throw Error("index rule: dim " + std::to_string(dim) + " out of range");
    return t.size(dim);
  }

 private:
  const c10::FunctionSchema& schema_;
  const torch::jit::Stack& stack_;
};

// bound(args, k): the exclusive upper bound for the index tensor (element k of a list argument).
using Bound = std::function<std::int64_t(const Args&, std::size_t k)>;
struct Rule {
  IndexRule doc;
  Bound bound;
};

std::int64_t classes(const Args& a, std::string_view input) {   // nll_loss: input is (C) or (N, C, ...)
  return a.tensor(input).dim() >= 2 ? a.size(input, 1) : a.size(input, 0);
}

std::int64_t plane(const Args& a, int dims) {   // max_pool*_with_indices_backward: H*W (or D*H*W) of self
  std::int64_t n = 1;
  for (int d = 1; d <= dims; ++d) n *= a.size("self", -d);
  return n;
}

const std::vector<Rule>& rules() {
  auto weight_rows = [](const Args& a, std::size_t) { return a.size("weight", 0); };
  auto num_weights = [](const Args& a, std::size_t) { return a.integer("num_weights"); };
  auto self_classes = [](const Args& a, std::size_t) { return classes(a, "self"); };
  auto along_dim = [](const Args& a, std::size_t) { return a.size("self", a.integer("dim")); };
  auto per_dim = [](const Args& a, std::size_t k) { return a.size("self", static_cast<std::int64_t>(k)); };
  auto numel = [](const Args& a, std::size_t) { return a.tensor("self").numel(); };
  auto plane2 = [](const Args& a, std::size_t) { return plane(a, 2); };
  auto plane3 = [](const Args& a, std::size_t) { return plane(a, 3); };
  static const std::vector<Rule> table = {
      {{"embedding", "indices", "weight.size(0)"}, weight_rows},
      {{"embedding_dense_backward", "indices", "num_weights"}, num_weights},
      {{"embedding_backward", "indices", "num_weights"}, num_weights},
      {{"nll_loss", "target", "self.size(1) (self.size(0) for 1-d self)"}, self_classes},
      {{"nll_loss_forward", "target", "self.size(1) (self.size(0) for 1-d self)"}, self_classes},
      {{"nll_loss_backward", "target", "self.size(1) (self.size(0) for 1-d self)"}, self_classes},
      {{"nll_loss2d_forward", "target", "self.size(1)"}, self_classes},
      {{"nll_loss2d_backward", "target", "self.size(1)"}, self_classes},
      {{"nll_loss_nd", "target", "self.size(1) (self.size(0) for 1-d self)"}, self_classes},
      {{"cross_entropy_loss", "target", "self.size(1) (self.size(0) for 1-d self)"}, self_classes},
      {{"gather", "index", "self.size(dim)"}, along_dim},
      {{"scatter", "index", "self.size(dim)"}, along_dim},
      {{"scatter_", "index", "self.size(dim)"}, along_dim},
      {{"scatter_add", "index", "self.size(dim)"}, along_dim},
      {{"scatter_add_", "index", "self.size(dim)"}, along_dim},
      {{"scatter_reduce", "index", "self.size(dim)"}, along_dim},
      {{"scatter_reduce_", "index", "self.size(dim)"}, along_dim},
      {{"index_select", "index", "self.size(dim)"}, along_dim},
      {{"index_add", "index", "self.size(dim)"}, along_dim},
      {{"index_add_", "index", "self.size(dim)"}, along_dim},
      {{"index_copy", "index", "self.size(dim)"}, along_dim},
      {{"index_copy_", "index", "self.size(dim)"}, along_dim},
      {{"index_fill", "index", "self.size(dim)"}, along_dim},
      {{"index_fill_", "index", "self.size(dim)"}, along_dim},
      {{"index", "indices", "indices[k]: self.size(k)"}, per_dim},
      {{"_unsafe_index", "indices", "indices[k]: self.size(k)"}, per_dim},
      {{"index_put", "indices", "indices[k]: self.size(k)"}, per_dim},
      {{"index_put_", "indices", "indices[k]: self.size(k)"}, per_dim},
      {{"_index_put_impl_", "indices", "indices[k]: self.size(k)"}, per_dim},
      {{"_unsafe_index_put", "indices", "indices[k]: self.size(k)"}, per_dim},
      {{"take", "index", "self.numel()"}, numel},
      {{"max_pool2d_with_indices_backward", "indices", "self.size(-2) * self.size(-1)"}, plane2},
      {{"max_pool3d_with_indices_backward", "indices", "self.size(-3) * self.size(-2) * self.size(-1)"}, plane3},
  };
  return table;
}

bool is_index_tensor(const at::Tensor& t) {
  return t.defined() && at::isIntegralType(t.scalar_type(), /*includeBool=*/false);
}

void refill(const at::Tensor& t, std::int64_t bound, const IndexRule& rule) {
  if (!is_index_tensor(t) || t.numel() == 0) return;
  if (bound < 1)
    throw Error("cannot make valid indices for " + std::string(rule.op) + "'s '" +
                std::string(rule.argument) + "': " + std::string(rule.bound) + " is " + std::to_string(bound));
  detail::fill_uniform_ints(t, bound);
}

}  // namespace

const std::vector<IndexRule>& index_rules() {
  static const std::vector<IndexRule> docs = [] {
    std::vector<IndexRule> out;
    for (const Rule& rule : rules()) out.push_back(rule.doc);
    return out;
  }();
  return docs;
}

void apply_index_rules(const CallPlan& plan, torch::jit::Stack& stack) {
  const c10::FunctionSchema& schema = plan.op.schema();
  Args args(schema, stack);
  for (const Rule& rule : rules()) {
    if (rule.doc.op != plan.name) continue;
    auto index = schema.argumentIndexWithName(rule.doc.argument);
    if (!index) continue;   // an overload without this argument
    c10::IValue& value = stack[*index];
    if (value.isTensor()) {
      refill(value.toTensor(), rule.bound(args, 0), rule.doc);
    } else if (value.isList()) {
      auto list = value.toList();
      for (std::size_t k = 0; k < list.size(); ++k) {
        c10::IValue item = list.get(k);
        if (item.isTensor()) refill(item.toTensor(), rule.bound(args, k), rule.doc);
      }
    }
  }
}

}  // namespace opbench::replay
