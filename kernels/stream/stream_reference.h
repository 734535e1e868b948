// Float64 references of the own streams (stream_kernels.h): the Ceiling family's checks, the GPU test
// (stream_kernels_test.cpp) and the tuner (stream_tune.cpp) hold the streams' results to them.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "opbench/reference.h"

namespace opbench::kernels {

// The float64 sum of each of `chunks` equal chunks of `data` (contiguous), on data's device: what
// launch_read_stream writes to chunk_sums for chunks of kStreamChunkBytes.
at::Tensor read_stream_reference(const at::Tensor& data, int64_t chunks);
// Its tolerance: a sum of a chunk's elements accumulated in fp32 (dot_tolerance).
Tolerance read_stream_tolerance(const at::Tensor& data, int64_t chunks);

// True when every 32-bit word of `data` (contiguous) is `word`: what launch_write_stream leaves.
bool holds_word(const at::Tensor& data, uint32_t word);

}  // namespace opbench::kernels
