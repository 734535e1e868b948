// The own streams' tuner entry (kernels/tune/tune.h): their one configuration each at the Ceiling
// family's sizes (16 MiB, 64 MiB, 256 MiB, 1 GiB of bf16), each checked against its reference first.
#include <ATen/ATen.h>

#include <cstdint>
#include <limits>
#include <string>

#include "kernels/stream/stream_kernels.h"
#include "kernels/stream/stream_reference.h"
#include "kernels/tune/tune.h"
#include "opbench/check.h"
#include "opbench/reference.h"

namespace opbench::kernels {
namespace {

void tune_streams(tune::Tuner& tuner, int64_t mib) {
  const int64_t bytes = mib << 20, chunks = bytes / kStreamChunkBytes;
  const auto gpu = at::TensorOptions().device(at::kCUDA);
  at::Tensor data = at::randn({bytes / 2}, gpu.dtype(at::kBFloat16));
  at::Tensor sums = at::empty({chunks}, gpu.dtype(at::kFloat));
  const at::Tensor expected = read_stream_reference(data, chunks).cpu();
  const Tolerance tol = read_stream_tolerance(data, chunks);
  const std::string size = std::to_string(mib) + "MiB";
  const tune::Case read{"stream", "bf16", "read/" + size, static_cast<double>(bytes)};
  tuner.run(read, "launch", [&] { sums.fill_(std::numeric_limits<float>::quiet_NaN()); },
            [&](cudaStream_t s) { launch_read_stream(data.data_ptr(), bytes, sums.data_ptr<float>(), s); },
            [&] { expect_close(sums, expected, tol, read.name); });
  constexpr uint32_t kWord = 0x3F803F80u;   // two bf16 ones
  const tune::Case write{"stream", "bf16", "write/" + size, static_cast<double>(bytes)};
  auto write_launch = [&](cudaStream_t s) { launch_write_stream(data.data_ptr(), bytes, kWord, s); };
  tuner.run(write, "launch", [&] { data.zero_(); }, write_launch, [&] {
    if (!holds_word(data, kWord)) throw Error(write.name + ": the buffer does not hold the word written");
  });
}

}  // namespace
}  // namespace opbench::kernels

OPBENCH_TUNE_ENTRY(stream) {
  for (int64_t mib : {16, 64, 256, 1024}) opbench::kernels::tune_streams(tuner, mib);
}
