// The Collective family without a process group: nccl-tests' bus factors, what a message size means
// per collective, and the known inputs against the expected outputs — each rank's expected output
// must be exactly what the collective makes of every rank's input (simulated here, with the sums taken
// in two orders). The end-to-end runs: FamilyCases (a world of one, gloo) and
// tests/python/test_collective.py (2 and 4 gloo processes).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "collective/collective_ops.h"
#ifdef OPBENCH_HAVE_CUDA
#include "collective/lsa_sum.h"
#endif
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/family.h"

namespace opbench::collective {
namespace {

TEST(CollectiveBusFactor, AreNcclTestsFactors) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 8), 1.0);
  for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll})
    EXPECT_DOUBLE_EQ(bus_factor(op, 1), 0.0) << op_name(op);   // one rank moves nothing over a bus
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 1), 1.0);
  for (Op op : kAllOps) EXPECT_EQ(op_named(op_name(op)), op);
  EXPECT_THROW(op_named("allreduce"), Error);
}

TEST(CollectiveLayout, MessageSizeIsNcclTestsSize) {
  const int64_t mib = 1 << 20;
  Layout ar = layout_of(Op::kAllReduce, mib, 2, 8);
  EXPECT_EQ(ar.input_elements, mib / 2);
  EXPECT_TRUE(ar.in_place);
  EXPECT_DOUBLE_EQ(ar.bytes, mib);
  Layout ag = layout_of(Op::kAllGather, mib, 2, 8);   // S is the gathered output
  EXPECT_EQ(ag.input_elements, mib / 16);
  EXPECT_EQ(ag.output_elements, mib / 2);
  Layout rs = layout_of(Op::kReduceScatter, mib, 4, 8);   // S is the input
  EXPECT_EQ(rs.input_elements, mib / 4);
  EXPECT_EQ(rs.output_elements, mib / 32);
  Layout a2a = layout_of(Op::kAllToAll, mib, 4, 8);
  EXPECT_EQ(a2a.input_elements, mib / 4);
  EXPECT_EQ(a2a.chunk, mib / 32);
  // 8 B of fp32 over 3 ranks: two elements do not split three ways; each rank's share is one element,
  // and the case counts the 12 bytes that move.
  Layout tiny = layout_of(Op::kAllGather, 8, 4, 3);
  EXPECT_EQ(tiny.chunk, 1);
  EXPECT_DOUBLE_EQ(tiny.bytes, 12);
}

// What `op` makes of every rank's input, rank by rank: the collective's definition.
std::vector<at::Tensor> simulate(Op op, const std::vector<at::Tensor>& inputs, int64_t chunk, bool reverse_sums) {
  const int ranks = static_cast<int>(inputs.size());
  std::vector<at::Tensor> out;
  auto sum = [&] {
    at::Tensor total = inputs[reverse_sums ? ranks - 1 : 0].clone();
    for (int i = 1; i < ranks; ++i) total += inputs[reverse_sums ? ranks - 1 - i : i];   // in the dtype
    return total;
  };
  for (int r = 0; r < ranks; ++r) {
    switch (op) {
      case Op::kAllReduce: out.push_back(sum()); break;
      case Op::kReduceScatter: out.push_back(sum().narrow(0, r * chunk, chunk)); break;
      case Op::kAllGather: out.push_back(at::cat(inputs)); break;
      case Op::kAllToAll: {
        std::vector<at::Tensor> received;
        for (int from = 0; from < ranks; ++from) received.push_back(inputs[from].narrow(0, r * chunk, chunk));
        out.push_back(at::cat(received));
        break;
      }
      case Op::kBroadcast: out.push_back(inputs[0].clone()); break;
    }
  }
  return out;
}

TEST(CollectiveCheck, ExpectedOutputsAreWhatTheCollectivesMakeOfTheKnownInputs) {
  for (auto dtype : {c10::kBFloat16, c10::kFloat})
    for (int ranks : {1, 2, 3, 4, 8, 64})
      for (int64_t bytes : {8, 1024, 3000})
        for (Op op : kAllOps) {
          auto options = at::TensorOptions().dtype(dtype);
          Layout layout = layout_of(op, bytes, static_cast<int64_t>(c10::elementSize(dtype)), ranks);
          std::vector<at::Tensor> inputs;
          for (int r = 0; r < ranks; ++r) {
            inputs.push_back(known_input(op, layout, r, ranks, options));
            ASSERT_EQ(inputs.back().numel(), layout.input_elements);
          }
          for (bool reverse : {false, true}) {
            auto outputs = simulate(op, inputs, layout.chunk, reverse);
            for (int r = 0; r < ranks; ++r) {
              at::Tensor expected = expected_output(op, layout, r, ranks, options);
              EXPECT_EQ(expected.numel(), layout.output_elements);
              EXPECT_EQ(first_difference(outputs[r], expected), "")
                  << op_name(op) << " " << c10::toString(dtype) << " " << ranks << " ranks, " << bytes << " B, rank " << r;
            }
          }
        }
}

TEST(CollectiveCheck, AMisplacedChunkOrAStaleBufferIsCaught) {
  auto options = at::TensorOptions().dtype(c10::kBFloat16);
  Layout layout = layout_of(Op::kAllGather, 4096, 2, 4);
  std::vector<at::Tensor> inputs;
  for (int r = 0; r < 4; ++r) inputs.push_back(known_input(Op::kAllGather, layout, r, 4, options));
  std::swap(inputs[1], inputs[2]);   // ranks' chunks in the wrong order
  EXPECT_NE(first_difference(at::cat(inputs), expected_output(Op::kAllGather, layout, 0, 4, options)), "");
  // A broadcast that did not reach a rank leaves its own buffer.
  Layout b = layout_of(Op::kBroadcast, 4096, 2, 4);
  EXPECT_NE(first_difference(known_input(Op::kBroadcast, b, 2, 4, options), expected_output(Op::kBroadcast, b, 2, 4, options)), "");
  // The message says where and what.
  at::Tensor expected = expected_output(Op::kAllReduce, layout_of(Op::kAllReduce, 64, 4, 2), 0, 2, at::TensorOptions());
  at::Tensor wrong = expected.clone();
  wrong[5] = 0;
  EXPECT_EQ(first_difference(wrong, expected).rfind("element 5 of 16 is 0.000000 where", 0), 0u) << first_difference(wrong, expected);
}

TEST(CollectiveCheck, SumsThatCannotBeExactAreRefused) {
  Layout layout = layout_of(Op::kAllReduce, 64, 2, 300);
  EXPECT_THROW(known_input(Op::kAllReduce, layout, 0, 300, at::TensorOptions().dtype(c10::kBFloat16)), Error);
  EXPECT_NO_THROW(known_input(Op::kAllReduce, layout, 0, 300, at::TensorOptions().dtype(c10::kFloat)));
}

#ifdef OPBENCH_HAVE_CUDA
// The lent machines' LibTorch loads NCCL 2.28.3 where pip's torch pins 2.28.9: a device-API kernel built
// against the other release's headers read a zeroed barrier count and faulted (illegal address).
TEST(LsaSum, RefusesAnNcclOtherThanItsHeadersRelease) {
  EXPECT_EQ(device_api_mismatch(22809, 22809), "");
  const std::string problem = device_api_mismatch(22809, 22803);
  EXPECT_NE(problem.find("built against NCCL 22809"), std::string::npos) << problem;
  EXPECT_NE(problem.find("NCCL 22803 is loaded"), std::string::npos) << problem;
  EXPECT_NE(problem.find("OPBENCH_NCCL_INCLUDE"), std::string::npos) << problem;
}
#endif

TEST(CollectiveFamily, CasesRunOnEveryRankWithRowsPerProcessCount) {
  const Family& f = family_named("Collective");
  EXPECT_TRUE(f.every_rank);
  ASSERT_EQ(f.experiments.size(), 1u);
  EXPECT_EQ(experiment_row_name(f.experiments[0], 8), "collective_n8");
  EXPECT_EQ(metric_name(f.experiments[0].metric), std::string("bus_bandwidth(GB/s)"));
  DeviceInfo gpu;
  gpu.is_gpu = true;
  auto cases = cases_of(f, gpu);
  // {bf16, fp32} x 8 B .. 1 GiB (x8) x five collectives, eager and in a CUDA graph
  EXPECT_EQ(cases.size(), 2u * 10 * 5 * 2);
  EXPECT_EQ(cases.front().name(), "Collective/bf16/8B/all_reduce");
  EXPECT_EQ(cases.back().name(), "Collective/fp32/1GiB/broadcast_graph");
  int graph_cases = 0;
  for (const auto& c : cases) graph_cases += c.backend == "all_reduce_graph";
  EXPECT_EQ(graph_cases, 2 * 10);
  DeviceInfo cpu;
  auto small = cases_of(f, cpu);
  ASSERT_EQ(small.size(), 2u * 3 * 5);   // no graph mode on the CPU
  EXPECT_EQ(small[5].name(), "Collective/bf16/1KiB/all_reduce");
  EXPECT_EQ(small[10].name(), "Collective/bf16/1MiB/all_reduce");
  EXPECT_DOUBLE_EQ(small[10].work.bytes_read, 1 << 20);   // a world of one here
  EXPECT_FALSE(small[10].work.through_memory);             // no %peak or %ceiling against HBM
}

}  // namespace
}  // namespace opbench::collective
