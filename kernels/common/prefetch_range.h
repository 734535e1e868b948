// Bytes that a kernel of the decode step fetches into L2 for a later kernel of the stream: memory that no
// kernel writes (the next GEMV's weights), fetched while DRAM would otherwise wait for the kernels
// between (decode/own_step.cpp says which kernel fetches what). Plain C++, so that argument structs of
// .cpp files can hold it.
#pragma once
#include <cstdint>

namespace opbench::kernels {

// REQUIRES: ptr 16-byte aligned and bytes a multiple of 16 (a bulk prefetch's rules); bytes 0: nothing.
struct PrefetchRange {
  const void* ptr = nullptr;
  int64_t bytes = 0;
};

}  // namespace opbench::kernels
