// The GEMV's launch configurations (the kernels: gemv_kernels.cuh) and the table that picks one per
// launch, a set of rows per GPU it was tuned on (kernels/common/launch_rules.h): data, so that a retune
// edits rows. gemv.cu compiles the configurations the table names and runs its pick; the tuner
// (gemv_tune.cu) times these and more. Plain C++: the table's test runs without CUDA.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/common/launch_rules.h"
#include "kernels/gemv/gemv_args.h"

namespace opbench::kernels {

enum class GemvPath : uint8_t {
  kScalar,       // any layout: a row a warp, element by element
  kVector,       // 16-byte loads: blocks of `warps` warps in row groups of `group` warps, `rows` rows a
                 // group, `steps` column steps of all its rows in flight per lane
  kExactRow,     // a plain GEMV whose rows are the kernel's span: a row a block of `warps` warps, each
                 // thread `chunks` 16-byte loads, all issued before any arithmetic, no loop
  kGatherPair,   // a gather of two slices that share x, rows of the kernel's span: row r of both slices
                 // a block, both indices loaded together, x converted once for both rows
  kMma,          // int4 and int8 on tensor cores (gemv_mma.cuh): blocks of `warps` warps over `tiles`
                 // tiles of 16 rows, `steps` units of 64 bytes of a row (128 int4 or 64 int8 columns) a
                 // warp step; rows of whole units of up to kMmaMaxCols columns (x is staged in shared
                 // memory)
};
constexpr int64_t kMmaMaxCols = 16384;
constexpr int kMmaUnitBytes = 64;   // a unit: the bytes of a row a tile's 4 lanes load at once (gemv_mma.cuh)
constexpr int kMmaTileRows = 16;    // a tile: the rows of W a warp's mmas hold (A's 16 rows)
// The columns of a unit of weights of type `w` (int4 128, int8 64).
constexpr int mma_unit_cols(WeightType w) { return kMmaUnitBytes * 8 / weight_bits(w); }
// Whether the tensor-core kernel takes rows of `cols` weights of type `w`: int4 or int8, whole units,
// x short enough to stage.
constexpr bool mma_fits(WeightType w, int64_t cols) {
  return w != WeightType::kBf16 && cols % mma_unit_cols(w) == 0 && cols <= kMmaMaxCols;
}

// One configuration: a kernel and its template parameters.
struct GemvConfig {
  GemvPath path = GemvPath::kScalar;
  int warps = 0, group = 0, rows = 0, steps = 0;   // kVector
  int chunks = 0;                                  // kExactRow, kGatherPair
  // Blocks an SM the registers must allow (__launch_bounds__'s second argument); 0: no minimum. A
  // kVector configuration with a minimum also issues x's loads with W's.
  int min_blocks = 0;
  int tiles = 0;   // kMma
  // Whether the paired epilogues (SwiGLU, RoPE) can run: two rows a group, or the tensor-core tiles.
  constexpr bool pairs_rows() const {
    return path == GemvPath::kMma || (path == GemvPath::kVector && rows == 2);
  }
  // Elements a row of an exact-fit kernel (kExactRow, kGatherPair) spans for weights of type `w`.
  constexpr int64_t span(WeightType w) const {
    return int64_t{warps} * 32 * chunks * (128 / weight_bits(w));
  }
};
constexpr GemvConfig vector_config(int warps, int group, int rows, int steps, int min_blocks = 0) {
  return {GemvPath::kVector, warps, group, rows, steps, 0, min_blocks};
}
constexpr GemvConfig exact_row_config(int warps, int chunks, int min_blocks) {
  return {GemvPath::kExactRow, warps, 0, 0, 0, chunks, min_blocks};
}
constexpr GemvConfig gather_pair_config(int warps, int chunks, int min_blocks) {
  return {GemvPath::kGatherPair, warps, 0, 0, 0, chunks, min_blocks};
}
constexpr GemvConfig mma_config(int warps, int tiles, int steps) {
  return {GemvPath::kMma, warps, 0, 0, steps, 0, 0, tiles};
}

// The configuration's name in the tuner's CSV: "w8g4r2s2m0" (warps, group, rows, steps, min blocks),
// "row.w16c4m2" and "pair.w4c8m0" (warps, chunks, min blocks), "mma.w8t1s2" (warps, tiles, steps),
// "scalar".
std::string gemv_config_name(const GemvConfig& config);

// Which launches a table row applies to: all of its conditions hold (the defaults hold for any launch).
enum class GemvCondition : uint8_t { kAny, kYes, kNo };
struct GemvWhen {
  int64_t min_row_bytes = 0, max_row_bytes = std::numeric_limits<int64_t>::max();   // one row of W
  int64_t min_output_rows = 0, max_output_rows = std::numeric_limits<int64_t>::max();   // rows x slices
  GemvCondition plain = GemvCondition::kAny;         // no gather and no fusion
  GemvCondition paired_rows = GemvCondition::kAny;   // the SwiGLU or RoPE epilogue (two rows a group)
  GemvCondition programmatic = GemvCondition::kAny;  // a programmatic dependent launch
  GemvCondition gathered = GemvCondition::kAny;      // an expert gather (kNo: gemv.cu compiles no gather kernel)

  constexpr GemvWhen row_bytes_up_to(int64_t bytes) const { GemvWhen w = *this; w.max_row_bytes = bytes; return w; }
  constexpr GemvWhen row_bytes_from(int64_t bytes) const { GemvWhen w = *this; w.min_row_bytes = bytes; return w; }
  constexpr GemvWhen output_rows_up_to(int64_t n) const { GemvWhen w = *this; w.max_output_rows = n; return w; }
  constexpr GemvWhen output_rows_from(int64_t n) const { GemvWhen w = *this; w.min_output_rows = n; return w; }
  constexpr GemvWhen not_plain() const { GemvWhen w = *this; w.plain = GemvCondition::kNo; return w; }
  constexpr GemvWhen with_paired_rows() const { GemvWhen w = *this; w.paired_rows = GemvCondition::kYes; return w; }
  constexpr GemvWhen programmatic_only() const { GemvWhen w = *this; w.programmatic = GemvCondition::kYes; return w; }
  constexpr GemvWhen not_gathered() const { GemvWhen w = *this; w.gathered = GemvCondition::kNo; return w; }
};
constexpr GemvWhen kAnyLaunch{};

// A row of the table: under `rules`, for weights of `w_type`, the launches `when` selects run `config`.
// An exact-fit configuration applies only where its kernel runs: kExactRow to a plain GEMV of an
// ordinary launch (not programmatic) whose rows are its span; kGatherPair to an ordinary, unfused
// gather of two slices that share x (x_stride 0) whose rows are its span.
struct GemvRule {
  LaunchRules rules;
  WeightType w_type;
  GemvWhen when;
  GemvConfig config;
};

// The table: the first row that applies wins. Exact-fit rows come first, then the vector path's rows,
// the last of each set and weight type applying to any launch.
namespace gemv_table {
constexpr auto kH100 = LaunchRules::kH100, kH200 = LaunchRules::kH200;
constexpr auto kBf16 = WeightType::kBf16, kInt8 = WeightType::kInt8, kInt4 = WeightType::kInt4;
constexpr GemvWhen kAny = kAnyLaunch;
// The programmatic launches, gathers aside, whose grid of 8-warp tensor-core blocks of `tiles` tiles
// (kMmaTileRows rows each) is one full wave on kTunedSms SMs: 2 to 3 blocks an SM, 3 being what the
// integer kernels' registers (71-80) let an SM hold. There a block of more tiles stages x once for more
// rows, while the grid still fills every SM (measured on plain GEMVs; gathers were slower on more tiles).
constexpr GemvWhen one_wave_of_tiles(int64_t tiles) {
  const int64_t wave_rows = int64_t{kTunedSms} * kMmaTileRows * tiles;   // a block an SM
  return kAny.programmatic_only().not_gathered().output_rows_from(2 * wave_rows).output_rows_up_to(3 * wave_rows);
}
inline constexpr GemvRule kRows[] = {
    // Exact-fit rows: every load of a row issued at once, as inductor's kernels for static shapes. A
    // gather runs no row kernel: a row a block waits on its index for every row.
    {kH100, kBf16, kAny, exact_row_config(16, 4, 2)},    // 16384 columns
    {kH100, kBf16, kAny, exact_row_config(16, 2, 0)},    // 8192
    {kH100, kBf16, kAny, exact_row_config(8, 2, 0)},     // 4096
    {kH100, kInt8, kAny, exact_row_config(8, 4, 4)},     // 16384
    {kH100, kInt8, kAny, exact_row_config(4, 4, 8)},     // 8192
    {kH100, kInt8, kAny, gather_pair_config(16, 2, 4)},  // 16384
    {kH200, kBf16, kAny, exact_row_config(16, 4, 2)},    // 16384
    {kH200, kBf16, kAny, exact_row_config(16, 2, 0)},    // 8192
    {kH200, kBf16, kAny, exact_row_config(8, 2, 0)},     // 4096
    {kH200, kInt8, kAny, exact_row_config(4, 8, 8)},     // 16384
    {kH200, kInt8, kAny, exact_row_config(4, 4, 12)},    // 8192
    {kH200, kBf16, kAny, gather_pair_config(16, 4, 2)},  // 16384
    {kH200, kBf16, kAny, gather_pair_config(16, 2, 3)},  // 8192
    {kH200, kInt8, kAny, gather_pair_config(4, 8, 0)},   // 16384
    // bf16 on the H100: rows of up to 4 KB by groups of 4 warps, 2 rows x 2 steps (as the paired
    // epilogues need: two rows a group); longer rows a row per 8-warp block, or per 16-warp block from
    // 8192 output rows (with fewer, the last wave of 4 such blocks an SM leaves SMs idle).
    {kH100, kBf16, kAny.with_paired_rows(), vector_config(8, 4, 2, 2)},
    {kH100, kBf16, kAny.row_bytes_up_to(4096), vector_config(8, 4, 2, 2)},
    {kH100, kBf16, kAny.row_bytes_up_to(8192), vector_config(8, 8, 1, 2)},
    {kH100, kBf16, kAny.output_rows_up_to(8191), vector_config(8, 8, 1, 2)},
    {kH100, kBf16, kAny, vector_config(16, 16, 1, 2)},
    // bf16 on the H200: past 4 KB a gathered or fused row per 4-warp block up to 16 KB; plain GEMVs
    // (their kernel without the expert's code) and longer rows per 8-warp block.
    {kH200, kBf16, kAny.with_paired_rows(), vector_config(8, 4, 2, 2)},
    {kH200, kBf16, kAny.row_bytes_up_to(4096), vector_config(8, 4, 2, 2)},
    {kH200, kBf16, kAny.row_bytes_up_to(16384).not_plain(), vector_config(4, 4, 1, 2)},
    {kH200, kBf16, kAny, vector_config(8, 8, 1, 2)},
    // int8 rows of whole 64-column units, up to 16384, of a programmatic launch on tensor cores
    // (gemv_mma.cuh). Chosen on its fp16 mmas (047d890), int8 decode, ms a generation, 0851c58's vector
    // rows -> w8t1s2 (one binary each, alternating, two rounds): H100 Llama-2-7B 613.6 -> 593.3,
    // Llama-3-8B 664.2 -> 658.6, Mixtral 560.7 -> 548.2; H200 520.3 -> 494.9, 570.9 -> 542.0, 469.8 ->
    // 449.8, where w8t1s2 also beat w16t1s2, w8t2s2, w8t1s1 and w4t1s2 by 2-44%. On its integer mmas
    // (1bf8924, H200) w8t2s2 from 12288 output rows ran 0.3-0.9% faster on Llama-2-7B and Mixtral and 4.9%
    // slower on Llama-3-8B. Alone, in ordinary launches, the vector and exact-fit rows stay as fast (the
    // tuner), so those keep them. On the H200, grids that make one wave of 2 or 4 tiles a block
    // (one_wave_of_tiles: Llama-2-7B's wqkv, 12288 rows, and w13, 22016) take them: Llama-2-7B int8
    // decode 470.7 -> 461.1 ms a generation with wqkv on w8t2s2, 465.2 with w13 on w8t4s2 (a3bbfb2 with
    // every candidate in one binary, one call); Llama-3-8B's wqkv (6144 rows) and w13 (28672), outside
    // those grids, ran 1.4% and 5.9% slower on them, Mixtral 0.9% on 2 tiles.
    {kH100, kInt8, kAny.programmatic_only(), mma_config(8, 1, 2)},
    {kH200, kInt8, one_wave_of_tiles(4), mma_config(8, 4, 2)},
    {kH200, kInt8, one_wave_of_tiles(2), mma_config(8, 2, 2)},
    {kH200, kInt8, kAny.programmatic_only(), mma_config(8, 1, 2)},
    // int8 on the H100: rows under 8 KB by groups of 2 warps, longer by groups of 4, 2 rows x 2 steps.
    {kH100, kInt8, kAny.row_bytes_up_to(8191), vector_config(8, 2, 2, 2)},
    {kH100, kInt8, kAny, vector_config(8, 4, 2, 2)},
    // int8 on the H200: rows of 4 KB or more a warp a block, 2 rows x 4 steps, given more than 4096
    // output rows (with 4096, an SM holds 16 such warps); else groups of 2 warps at any length.
    {kH200, kInt8, kAny.row_bytes_from(4096).output_rows_from(4097), vector_config(1, 1, 2, 4)},
    {kH200, kInt8, kAny, vector_config(8, 2, 2, 2)},
    // int4 rows of up to 16384 columns of a programmatic launch (the decode step's) on tensor cores
    // (gemv_mma.cuh): Llama-2-7B int4 decode 1.36x the vector kernel's tok/s (H100, e229ce9), 1.32x
    // on the H200 (0b848f5), where w8t1s2 also beats w8t1s1, w8t1s4 and w4t1s2 by 2-19%. On the integer
    // mmas (6e86b49) an int4 block of 16 rows of 4096 columns reads 32 KB of W for 12 KB of x staged, so
    // on the H200 the grids that make one wave of more tiles take them: Llama-2-7B int4 decode 371.7 ->
    // 331.8 ms a generation with wqkv and w13 on w8t2s2, 312.8 with w13 on w8t4s2 (the same sweep); on
    // w13 w4t2s2, w8t4s1, w4t2s1, w8t2s1 and w16t4s1 took 323-374, on wqkv the six others 338-378; w2
    // and wo (256 blocks at one tile) lose 4-10% on 2 tiles. The H100 keeps w8t1s2: not measured there.
    {kH100, kInt4, kAny.programmatic_only(), mma_config(8, 1, 2)},
    {kH200, kInt4, one_wave_of_tiles(4), mma_config(8, 4, 2)},
    {kH200, kInt4, one_wave_of_tiles(2), mma_config(8, 2, 2)},
    {kH200, kInt4, kAny.programmatic_only(), mma_config(8, 1, 2)},
    // Other int4 launches on the vector path (a 16-byte load holds 32 weights, a quarter of a group; no
    // exact-fit kernel takes int4), up to 14% faster than the tensor cores alone (Gemv int4 16384), tuned
    // on the H100 at the decode shapes: the paired epilogues (two rows a group) a warp a block, 2 rows x 4
    // steps; else up to 4096 output rows groups of 2 warps, 4 rows a step; more a warp a block, 4 rows x
    // 2 steps, 4 blocks an SM (20-50% faster than 2 rows x 2 steps there). The H200 takes the H100's
    // rows until it is tuned.
    {kH100, kInt4, kAny.with_paired_rows(), vector_config(1, 1, 2, 4)},
    {kH100, kInt4, kAny.output_rows_up_to(4096), vector_config(8, 2, 4, 1)},
    {kH100, kInt4, kAny, vector_config(4, 1, 4, 2, 4)},
    {kH200, kInt4, kAny.with_paired_rows(), vector_config(1, 1, 2, 4)},
    {kH200, kInt4, kAny.output_rows_up_to(4096), vector_config(8, 2, 4, 1)},
    {kH200, kInt4, kAny, vector_config(4, 1, 4, 2, 4)},
};
}  // namespace gemv_table
inline constexpr const auto& kGemvRules = gemv_table::kRows;
constexpr int kGemvRuleCount = static_cast<int>(sizeof(kGemvRules) / sizeof(kGemvRules[0]));
// Whether every tensor-core row applies to programmatic launches only: gemv.cu compiles their kernels
// for those alone.
constexpr bool mma_rows_are_programmatic_only() {
  for (const GemvRule& r : kGemvRules)
    if (r.config.path == GemvPath::kMma && r.when.programmatic != GemvCondition::kYes) return false;
  return true;
}
static_assert(mma_rows_are_programmatic_only(), "a tensor-core row must be programmatic_only()");

// The row of kGemvRules a launch of `args` runs under `rules`, or -1 for the scalar kernel (a layout
// that is not gemv_vectorizable). `programmatic_launch`: the launch is programmatic (asked for, and
// the device supports it), which the exact-fit kernels are not.
int gemv_rule_index(LaunchRules rules, const GemvArgs& args, bool programmatic_launch);

// The configuration that launch runs: kGemvRules[gemv_rule_index(...)].config, or the scalar kernel.
GemvConfig gemv_config(LaunchRules rules, const GemvArgs& args, bool programmatic_launch);

}  // namespace opbench::kernels
