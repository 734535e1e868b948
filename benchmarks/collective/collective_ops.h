// The Collective family's five collectives as nccl-tests defines them (its PERFORMANCE.md): what a
// message size means for each, the bus-bandwidth factor, and the known inputs of every rank with the
// exact result each rank must hold afterwards. No process group here: this part is tested alone.
//
// Message size S (the case's shape; nccl-tests' "size", what algorithm bandwidth divides by the time):
//   all_reduce, broadcast   the buffer of each rank (in place)
//   all_gather              the output of each rank (each rank gives S / n)
//   reduce_scatter          the input of each rank (each rank gets S / n)
//   all_to_all              the buffer of each rank (S / n to each peer)
// With S / n not a whole number of elements (tiny messages, odd n) a rank's share is rounded down to
// at least one element and the case counts the bytes actually moved (Layout::bytes).
//
// Bus bandwidth = algorithm bandwidth x factor, n ranks: all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, all_to_all (n-1)/n; broadcast 1. (So with one rank only broadcast has a bus figure.)
//
// Known inputs, exact results: values are small integers times powers of two, so every partial sum in
// any order is exact in the dtype (bf16 holds integers to 256): a sum-reduction's rank r gives
// (1 + r mod m) x 2^(j mod 4) for element j, m = min(4, 2^significand / n); data movement sends
// (c x source + j) mod 251, c different for source and destination, so a misplaced chunk or element
// shows. Non-root ranks of a broadcast start at 255, a value the root never sends.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace opbench::collective {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };
inline constexpr Op kAllOps[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll, Op::kBroadcast};

const char* op_name(Op op);                 // "all_reduce", "all_gather", ...: the cases' backend names
Op op_named(const std::string& name);       // throws opbench::Error for any other name
double bus_factor(Op op, int ranks);        // REQUIRES: ranks >= 1

struct Layout {
  int64_t input_elements = 0;    // this rank's input
  int64_t output_elements = 0;   // this rank's output (all_reduce, broadcast: the input itself)
  int64_t chunk = 0;             // one rank's share (all_gather, reduce_scatter, all_to_all), else 0
  double bytes = 0;              // nccl-tests' size as moved: algorithm bandwidth = bytes / time
  bool in_place = false;         // all_reduce, broadcast
};
// REQUIRES: message_bytes >= 1, element_size >= 1, ranks >= 1.
Layout layout_of(Op op, int64_t message_bytes, int64_t element_size, int ranks);

// Rank `rank`'s input of `op` among `ranks`, on options' device and dtype. Throws opbench::Error when
// the sums of this many ranks cannot be exact in the dtype (bf16 beyond 256 ranks).
at::Tensor known_input(Op op, const Layout& layout, int rank, int ranks, const at::TensorOptions& options);
// What rank `rank` must hold afterwards (its output; the input buffer for all_reduce and broadcast).
at::Tensor expected_output(Op op, const Layout& layout, int rank, int ranks, const at::TensorOptions& options);
// "" when `actual` equals `expected` exactly; else where they first differ, with both values.
std::string first_difference(const at::Tensor& actual, const at::Tensor& expected);

}  // namespace opbench::collective
