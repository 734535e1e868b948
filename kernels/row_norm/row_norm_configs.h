// The row norms' launch configurations (the kernels: row_norm_kernels.cuh) and the table that picks one
// per launch by the row's width, a set of rows per GPU it was tuned on (kernels/common/launch_rules.h):
// data, so that a retune edits rows. Both norms and every dtype follow the same rows. row_norm.cu
// compiles the configurations the table names and runs its pick; the tuner (row_norm_tune.cu) times
// these and more. Plain C++: the table's test runs without CUDA.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/common/launch_rules.h"

namespace opbench::kernels {

enum class RowNormPath : uint8_t {
  kScalar,      // any layout: a block of 256 threads a row, x read per pass
  kRegisters,   // vector_kernel: a row per group of threads, held in registers, several rows a block
  kTwoPass,     // two_pass_kernel: a row per block, read twice, the second time from L1 or L2
};

// One configuration: a kernel and its template parameters.
struct RowNormConfig {
  RowNormPath path = RowNormPath::kScalar;
  int threads = 0;          // a block's threads (kRegisters: about that many, whole row groups)
  int vectors = 0;          // 16-byte vectors a thread holds (kRegisters) or has in flight a pass (kTwoPass)
  bool streaming = false;   // kRegisters: x and y streamed past the caches (__ldcs/__stcs), else cached
  bool keep_y = false;      // kTwoPass: y stored under an L2 evict_last policy
  int min_blocks = 0;       // kTwoPass: blocks an SM the registers must allow
};
constexpr RowNormConfig registers_config(int vectors, bool streaming, int threads) {
  return {RowNormPath::kRegisters, threads, vectors, streaming, false, 0};
}
constexpr RowNormConfig two_pass_config(int threads, int vectors, bool keep_y, int min_blocks) {
  return {RowNormPath::kTwoPass, threads, vectors, false, keep_y, min_blocks};
}

// The configuration's name in the tuner's CSV: "r4s.b128" (registers: vectors, s streamed or c cached,
// block), "t.b512v4k.m3" (two passes: block, vectors, k y kept in L2, min blocks), "scalar".
std::string row_norm_config_name(const RowNormConfig& config);

// A row of the table: under `rules`, rows of at most `max_vectors` 16-byte vectors run `config`.
struct RowNormRule {
  LaunchRules rules;
  int64_t max_vectors;
  RowNormConfig config;
};

// The first row that applies wins. 4 vectors a thread: rows of up to 256 vectors (2048 bf16) in
// registers, streamed, on blocks of 4 warps; longer rows in two passes on the fewest threads that take
// the row in one step, at most 512, 1536 threads an SM, y kept in L2 past 512 vectors.
inline constexpr RowNormRule kRowNormRules[] = {
    {LaunchRules::kH100, 256, registers_config(4, true, 128)},
    {LaunchRules::kH100, 512, two_pass_config(128, 4, false, 12)},
    {LaunchRules::kH100, 1024, two_pass_config(256, 4, true, 6)},
    {LaunchRules::kH100, std::numeric_limits<int64_t>::max(), two_pass_config(512, 4, true, 3)},
    {LaunchRules::kH200, 256, registers_config(4, true, 128)},
    {LaunchRules::kH200, 512, two_pass_config(128, 4, false, 12)},
    {LaunchRules::kH200, 1024, two_pass_config(256, 4, true, 6)},
    {LaunchRules::kH200, std::numeric_limits<int64_t>::max(), two_pass_config(512, 4, true, 3)},
};
constexpr int kRowNormRuleCount = static_cast<int>(sizeof(kRowNormRules) / sizeof(kRowNormRules[0]));

// The row of kRowNormRules a launch on rows of `vectors` 16-byte vectors runs under `rules`, or -1 for
// the scalar kernel (`vectorized` false: a layout the vector paths cannot take).
int row_norm_rule_index(LaunchRules rules, bool vectorized, int64_t vectors);

// The configuration that launch runs: kRowNormRules[row_norm_rule_index(...)].config, or the scalar kernel.
RowNormConfig row_norm_config(LaunchRules rules, bool vectorized, int64_t vectors);

}  // namespace opbench::kernels
