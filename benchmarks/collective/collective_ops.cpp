#include "collective/collective_ops.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "opbench/check.h"

namespace opbench::collective {
namespace {

constexpr int64_t kMovePeriod = 251;           // a prime above every rank count in the strides below
constexpr int64_t kGatherStride = 7;           // all_gather, broadcast: value (7 x source + j) mod 251
constexpr int64_t kSendStride = 11, kReceiveStride = 5;   // all_to_all: (11 x source + 5 x destination + j) mod 251
constexpr double kBroadcastUnset = 255;        // a non-root's buffer before the broadcast

// The tensor of `count` elements whose element j is period[(offset + j) mod period.numel()].
at::Tensor tiled(const at::Tensor& period, int64_t offset, int64_t count) {
  const int64_t p = period.numel();
  const int64_t start = offset % p;
  const int64_t reps = (start + count + p - 1) / p;
  return period.repeat({reps}).narrow(0, start, count).contiguous();
}

// 0, 1, ..., 250 rotated by `shift`, in the dtype (exact: integers below 256).
at::Tensor move_period(int64_t shift, const at::TensorOptions& options) {
  at::Tensor j = at::arange(kMovePeriod, at::TensorOptions().dtype(at::kLong));
  return ((j + shift) % kMovePeriod).to(options);
}

// 1, 2, 4, 8: the power-of-two factor of element j (period 4) of a sum-reduction's inputs.
at::Tensor power_period(const at::TensorOptions& options) {
  return at::tensor({1.0, 2.0, 4.0, 8.0}, at::TensorOptions().dtype(at::kDouble)).to(options);
}

int significand_bits(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::BFloat16: return 8;
    case c10::ScalarType::Half: return 11;
    case c10::ScalarType::Float: return 24;
    case c10::ScalarType::Double: return 53;
    default: throw Error(std::string("Collective: no exact check for dtype ") + c10::toString(dtype));
  }
}

// m: rank r contributes 1 + r mod m, so every partial sum stays an integer the dtype holds exactly.
int64_t rank_modulus(int ranks, c10::ScalarType dtype) {
  const int bits = significand_bits(dtype);
  const int64_t largest_exact = bits >= 40 ? (int64_t{1} << 40) : (int64_t{1} << bits);
  const int64_t m = std::min<int64_t>(4, largest_exact / ranks);
  if (m < 1)
    throw Error("Collective: a sum over " + std::to_string(ranks) + " ranks is not exact in " +
                c10::toString(dtype) + " (at most " + std::to_string(largest_exact) + " ranks)");
  return m;
}

double rank_share(int rank, int64_t m) { return static_cast<double>(1 + rank % m); }

double share_sum(int ranks, int64_t m) {
  double sum = 0;
  for (int r = 0; r < ranks; ++r) sum += rank_share(r, m);
  return sum;
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all_reduce";
    case Op::kAllGather: return "all_gather";
    case Op::kReduceScatter: return "reduce_scatter";
    case Op::kAllToAll: return "all_to_all";
    case Op::kBroadcast: return "broadcast";
  }
  return "?";
}

Op op_named(const std::string& name) {
  for (Op op : kAllOps)
    if (name == op_name(op)) return op;
  throw Error("Collective: no collective named " + name);
}

double bus_factor(Op op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Op::kAllReduce: return 2 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: return (n - 1) / n;
    case Op::kBroadcast: return 1;
  }
  return 0;
}

Layout layout_of(Op op, int64_t message_bytes, int64_t element_size, int ranks) {
  Layout l;
  const int64_t elements = std::max<int64_t>(1, message_bytes / element_size);
  if (op == Op::kAllReduce || op == Op::kBroadcast) {
    l.input_elements = l.output_elements = elements;
    l.in_place = true;
    l.bytes = static_cast<double>(elements * element_size);
    return l;
  }
  l.chunk = std::max<int64_t>(1, elements / ranks);
  const int64_t total = l.chunk * ranks;
  l.input_elements = op == Op::kAllGather ? l.chunk : total;
  l.output_elements = op == Op::kReduceScatter ? l.chunk : total;
  l.bytes = static_cast<double>(total * element_size);
  return l;
}

at::Tensor known_input(Op op, const Layout& l, int rank, int ranks, const at::TensorOptions& options) {
  switch (op) {
    case Op::kAllReduce:
    case Op::kReduceScatter: {
      const int64_t m = rank_modulus(ranks, options.dtype().toScalarType());
      return tiled(power_period(options), 0, l.input_elements) * rank_share(rank, m);
    }
    case Op::kAllGather: return tiled(move_period(kGatherStride * rank, options), 0, l.chunk);
    case Op::kAllToAll: {
      std::vector<at::Tensor> chunks;
      for (int to = 0; to < ranks; ++to)
        chunks.push_back(tiled(move_period(kSendStride * rank + kReceiveStride * to, options), 0, l.chunk));
      return at::cat(chunks);
    }
    case Op::kBroadcast:
      return rank == 0 ? tiled(move_period(0, options), 0, l.input_elements)
                       : at::full({l.input_elements}, kBroadcastUnset, options);
  }
  throw Error("Collective: unknown collective");
}

at::Tensor expected_output(Op op, const Layout& l, int rank, int ranks, const at::TensorOptions& options) {
  switch (op) {
    case Op::kAllReduce:
    case Op::kReduceScatter: {
      const double sum = share_sum(ranks, rank_modulus(ranks, options.dtype().toScalarType()));
      if (op == Op::kAllReduce) return tiled(power_period(options), 0, l.output_elements) * sum;
      return tiled(power_period(options), static_cast<int64_t>(rank) * l.chunk, l.chunk) * sum;
    }
    case Op::kAllGather: {
      std::vector<at::Tensor> chunks;
      for (int from = 0; from < ranks; ++from) chunks.push_back(tiled(move_period(kGatherStride * from, options), 0, l.chunk));
      return at::cat(chunks);
    }
    case Op::kAllToAll: {
      std::vector<at::Tensor> chunks;
      for (int from = 0; from < ranks; ++from)
        chunks.push_back(tiled(move_period(kSendStride * from + kReceiveStride * rank, options), 0, l.chunk));
      return at::cat(chunks);
    }
    case Op::kBroadcast: return tiled(move_period(0, options), 0, l.output_elements);
  }
  throw Error("Collective: unknown collective");
}

std::string first_difference(const at::Tensor& actual, const at::Tensor& expected) {
  if (actual.sizes() != expected.sizes())
    return "the output has " + std::to_string(actual.numel()) + " elements where " +
           std::to_string(expected.numel()) + " were expected";
  at::Tensor differs = actual.ne(expected).reshape({-1});
  if (!differs.any().item<bool>()) return "";
  const int64_t at_index = differs.nonzero().select(1, 0)[0].item<int64_t>();
  const int64_t count = differs.sum().item<int64_t>();
  return "element " + std::to_string(at_index) + " of " + std::to_string(actual.numel()) + " is " +
         std::to_string(actual.reshape({-1})[at_index].item<double>()) + " where " +
         std::to_string(expected.reshape({-1})[at_index].item<double>()) + " was expected (" +
         std::to_string(count) + " element(s) differ)";
}

}  // namespace opbench::collective
