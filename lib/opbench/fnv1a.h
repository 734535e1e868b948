// FNV-1a, 64 bits: a hash that is the same on every rank, host and run for the same bytes (case
// fingerprints the ranks compare, seeds of replayed inputs, the inductor package key).
#pragma once
#include <cstdint>
#include <string_view>

namespace opbench {

inline std::uint64_t fnv1a_hash(std::string_view bytes) {
  std::uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char b : bytes) hash = (hash ^ b) * 0x100000001B3ull;
  return hash;
}

}  // namespace opbench
