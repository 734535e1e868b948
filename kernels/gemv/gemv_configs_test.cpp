// The GEMV's configuration table (gemv_configs.h) picks, for each rule set, the configuration written
// out below for representative launches: the seed's and the decode models' shapes, each fusion, gathers
// sharing x or not, programmatic launches, and the boundaries of every row-length and row-count
// condition. The expectations are written out by hand from the rules as tuned, not read from the table.
// No GPU needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/gemv/gemv_configs.h"

namespace opbench::kernels {
namespace {

constexpr auto kBf16 = WeightType::kBf16, kInt8 = WeightType::kInt8, kInt4 = WeightType::kInt4;

// A GEMV of `rows` x `cols` weights on 16-byte aligned (never dereferenced) pointers.
GemvArgs plain(WeightType w, int64_t rows, int64_t cols) {
  GemvArgs a;
  a.w = reinterpret_cast<const void*>(uintptr_t{1} << 20);
  a.w_type = w;
  a.rows = rows;
  a.cols = a.row_stride = cols;
  a.x = reinterpret_cast<const void*>(uintptr_t{1} << 21);
  a.y = reinterpret_cast<void*>(uintptr_t{1} << 22);
  return a;
}
// `selected` of 8 experts, one x for all (shared_x) or one each.
GemvArgs gathered(WeightType w, int64_t rows, int64_t cols, int64_t selected, bool shared_x) {
  GemvArgs a = plain(w, rows, cols);
  a.expert_idx = reinterpret_cast<const int64_t*>(uintptr_t{1} << 23);
  a.num_selected = selected;
  a.num_experts = 8;
  a.expert_stride = rows * cols;
  a.x_stride = shared_x ? 0 : cols;
  return a;
}
GemvArgs normed(GemvArgs a, GemvEpilogue e = GemvEpilogue::kStore) {
  a.fusion.norm_w = reinterpret_cast<const void*>(uintptr_t{1} << 24);
  a.fusion.epilogue = e;
  return a;
}
GemvArgs with_epilogue(GemvArgs a, GemvEpilogue e) {
  a.fusion.epilogue = e;
  return a;
}
GemvArgs misaligned_x(GemvArgs a) {
  a.x = static_cast<const char*>(a.x) + 2;
  return a;
}

struct Expected {
  std::string launch;
  GemvArgs args;
  bool programmatic;   // a programmatic launch on a device that supports it
  const char* h100;
  const char* h200;
};

const std::vector<Expected> kBf16Expected = {
    {"odd width", plain(kBf16, 37, 1003), false, "scalar", "scalar"},
    {"misaligned x", misaligned_x(plain(kBf16, 64, 1024)), false, "scalar", "scalar"},
    {"Gemv 1024", plain(kBf16, 1024, 1024), false, "w8g4r2s2m0", "w8g4r2s2m0"},
    {"Gemv 4096", plain(kBf16, 4096, 4096), false, "row.w8c2m0", "row.w8c2m0"},
    {"Gemv 8192", plain(kBf16, 8192, 8192), false, "row.w16c2m0", "row.w16c2m0"},
    {"Gemv 16384", plain(kBf16, 16384, 16384), false, "row.w16c4m2", "row.w16c4m2"},
    {"Gemv 16384 programmatic", plain(kBf16, 16384, 16384), true, "w16g16r1s2m0", "w8g8r1s2m0"},
    {"Gemv 4096 programmatic", plain(kBf16, 4096, 4096), true, "w8g8r1s2m0", "w8g8r1s2m0"},
    {"4 KB rows", plain(kBf16, 100, 2048), false, "w8g4r2s2m0", "w8g4r2s2m0"},
    {"rows just past 4 KB", plain(kBf16, 100, 2056), false, "w8g8r1s2m0", "w8g8r1s2m0"},
    {"rows past 8 KB, 8191 of them", plain(kBf16, 8191, 4104), false, "w8g8r1s2m0", "w8g8r1s2m0"},
    {"rows past 8 KB, 8192 of them", plain(kBf16, 8192, 4104), false, "w16g16r1s2m0", "w8g8r1s2m0"},
    {"llama.w2 (4096 rows of 22 KB)", plain(kBf16, 4096, 11008), false, "w8g8r1s2m0", "w8g8r1s2m0"},
    {"llama.output", plain(kBf16, 32000, 4096), false, "row.w8c2m0", "row.w8c2m0"},
    {"GatherGemv 1024", gathered(kBf16, 1024, 1024, 2, true), false, "w8g4r2s2m0", "w8g4r2s2m0"},
    {"GatherGemv 4096", gathered(kBf16, 4096, 4096, 2, true), false, "w8g8r1s2m0", "w4g4r1s2m0"},
    {"GatherGemv 8192", gathered(kBf16, 8192, 8192, 2, true), false, "w16g16r1s2m0", "pair.w16c2m3"},
    {"GatherGemv 16384", gathered(kBf16, 16384, 16384, 2, true), false, "w16g16r1s2m0", "pair.w16c4m2"},
    {"GatherGemv 16384 programmatic", gathered(kBf16, 16384, 16384, 2, true), true, "w16g16r1s2m0", "w8g8r1s2m0"},
    {"gather of 3 slices", gathered(kBf16, 8192, 8192, 3, true), false, "w16g16r1s2m0", "w4g4r1s2m0"},
    {"gather of 2, rows just under 16 KB", gathered(kBf16, 1000, 8184, 2, true), false, "w8g8r1s2m0", "w4g4r1s2m0"},
    {"gather of 2, rows just past 16 KB", gathered(kBf16, 1000, 8200, 2, true), false, "w8g8r1s2m0", "w8g8r1s2m0"},
    {"mixtral.w2 (one x each)", gathered(kBf16, 4096, 14336, 2, false), false, "w16g16r1s2m0", "w8g8r1s2m0"},
    {"norm prologue, output head", normed(plain(kBf16, 32000, 4096)), false, "w8g8r1s2m0", "w4g4r1s2m0"},
    {"norm prologue, 16 KB rows", normed(plain(kBf16, 8192, 8192)), true, "w16g16r1s2m0", "w4g4r1s2m0"},
    {"rope epilogue (wqkv)", normed(plain(kBf16, 12288, 4096), GemvEpilogue::kRopeCache), true, "w8g4r2s2m0",
     "w8g4r2s2m0"},
    {"swiglu epilogue (w13)", normed(plain(kBf16, 22016, 4096), GemvEpilogue::kSwiglu), true, "w8g4r2s2m0",
     "w8g4r2s2m0"},
    {"swiglu, gathered", normed(gathered(kBf16, 28672, 4096, 2, true), GemvEpilogue::kSwiglu), true, "w8g4r2s2m0",
     "w8g4r2s2m0"},
    {"add-to-y (wo)", with_epilogue(plain(kBf16, 4096, 4096), GemvEpilogue::kAddToY), true, "w8g8r1s2m0",
     "w4g4r1s2m0"},
    {"add-to-y, 22 KB rows (w2)", with_epilogue(plain(kBf16, 4096, 11008), GemvEpilogue::kAddToY), true,
     "w8g8r1s2m0", "w8g8r1s2m0"},
};

const std::vector<Expected> kInt8Expected = {
    {"odd width", plain(kInt8, 37, 1000), false, "scalar", "scalar"},
    {"misaligned x", misaligned_x(plain(kInt8, 64, 1024)), false, "scalar", "scalar"},
    {"Gemv 1024", plain(kInt8, 1024, 1024), false, "w8g2r2s2m0", "w8g2r2s2m0"},
    {"Gemv 4096", plain(kInt8, 4096, 4096), false, "w8g2r2s2m0", "w8g2r2s2m0"},
    {"Gemv 8192", plain(kInt8, 8192, 8192), false, "row.w4c4m8", "row.w4c4m12"},
    {"Gemv 16384", plain(kInt8, 16384, 16384), false, "row.w8c4m4", "row.w4c8m8"},
    {"Gemv 16384 programmatic", plain(kInt8, 16384, 16384), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"4 KB rows, 4096 of them", plain(kInt8, 4096, 4096), false, "w8g2r2s2m0", "w8g2r2s2m0"},
    {"4 KB rows, 4097 of them", plain(kInt8, 4097, 4096), false, "w8g2r2s2m0", "w1g1r2s4m0"},
    {"rows just under 4 KB", plain(kInt8, 8192, 4080), false, "w8g2r2s2m0", "w8g2r2s2m0"},
    {"rows just under 8 KB", plain(kInt8, 8192, 8176), false, "w8g2r2s2m0", "w1g1r2s4m0"},
    {"llama.wqkv", plain(kInt8, 12288, 4096), false, "w8g2r2s2m0", "w1g1r2s4m0"},
    {"llama.w2 (4096 rows of 11 KB)", plain(kInt8, 4096, 11008), false, "w8g4r2s2m0", "w8g2r2s2m0"},
    {"GatherGemv 4096", gathered(kInt8, 4096, 4096, 2, true), false, "w8g2r2s2m0", "w1g1r2s4m0"},
    {"GatherGemv 8192", gathered(kInt8, 8192, 8192, 2, true), false, "w8g4r2s2m0", "w1g1r2s4m0"},
    {"GatherGemv 16384", gathered(kInt8, 16384, 16384, 2, true), false, "pair.w16c2m4", "pair.w4c8m0"},
    {"GatherGemv 16384 programmatic", gathered(kInt8, 16384, 16384, 2, true), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"mixtral.w2 (one x each)", gathered(kInt8, 4096, 14336, 2, false), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"mixtral.w2, ordinary launch", gathered(kInt8, 4096, 14336, 2, false), false, "w8g4r2s2m0", "w1g1r2s4m0"},
    {"mixtral.w13 swiglu, gathered", normed(gathered(kInt8, 28672, 4096, 2, true), GemvEpilogue::kSwiglu), true,
     "mma.w8t1s2", "mma.w8t1s2"},
    {"mixtral.w13 swiglu, gathered, ordinary launch", normed(gathered(kInt8, 28672, 4096, 2, true), GemvEpilogue::kSwiglu),
     false, "w8g2r2s2m0", "w1g1r2s4m0"},
    {"llama.w13 swiglu", normed(plain(kInt8, 22016, 4096), GemvEpilogue::kSwiglu), true, "mma.w8t1s2", "mma.w8t4s2"},
    {"llama3.w13 swiglu (past one wave of 4 tiles)", normed(plain(kInt8, 28672, 4096), GemvEpilogue::kSwiglu), true,
     "mma.w8t1s2", "mma.w8t1s2"},
    {"llama.wqkv rope, programmatic", normed(plain(kInt8, 12288, 4096), GemvEpilogue::kRopeCache), true, "mma.w8t1s2",
     "mma.w8t2s2"},
    // The one-wave windows' edges: 2 x 132 to 3 x 132 blocks of 16-row tiles, 2 or 4 tiles a block.
    {"8447 rows, programmatic", plain(kInt8, 8447, 4096), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"8448 rows, programmatic", plain(kInt8, 8448, 4096), true, "mma.w8t1s2", "mma.w8t2s2"},
    {"12672 rows, programmatic", plain(kInt8, 12672, 4096), true, "mma.w8t1s2", "mma.w8t2s2"},
    {"12673 rows, programmatic", plain(kInt8, 12673, 4096), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"16896 rows, programmatic", plain(kInt8, 16896, 4096), true, "mma.w8t1s2", "mma.w8t4s2"},
    {"25344 rows, programmatic", plain(kInt8, 25344, 4096), true, "mma.w8t1s2", "mma.w8t4s2"},
    {"25345 rows, programmatic", plain(kInt8, 25345, 4096), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"gather of 2 x 6144 rows, programmatic (no gather takes the windows)", gathered(kInt8, 6144, 4096, 2, true), true,
     "mma.w8t1s2", "mma.w8t1s2"},
    {"router (norm prologue)", normed(plain(kInt8, 8, 4096)), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"router, ordinary launch", normed(plain(kInt8, 8, 4096)), false, "w8g2r2s2m0", "w8g2r2s2m0"},
    {"programmatic, rows not whole 64-column units", plain(kInt8, 64, 4080), true, "w8g2r2s2m0", "w8g2r2s2m0"},
    {"programmatic, longer than the staged x", plain(kInt8, 1024, 32768), true, "w8g4r2s2m0", "w8g2r2s2m0"},
    {"norm prologue, 16 KB rows", normed(plain(kInt8, 16384, 16384)), false, "w8g4r2s2m0", "w1g1r2s4m0"},
    {"rope epilogue (wqkv)", normed(plain(kInt8, 6144, 4096), GemvEpilogue::kRopeCache), false, "w8g2r2s2m0",
     "w1g1r2s4m0"},
    {"rope epilogue (wqkv), programmatic", normed(plain(kInt8, 6144, 4096), GemvEpilogue::kRopeCache), true,
     "mma.w8t1s2", "mma.w8t1s2"},
    {"add-to-y (wo)", with_epilogue(plain(kInt8, 4096, 4096), GemvEpilogue::kAddToY), false, "w8g2r2s2m0",
     "w8g2r2s2m0"},
    {"add-to-y (wo), programmatic", with_epilogue(plain(kInt8, 4096, 4096), GemvEpilogue::kAddToY), true,
     "mma.w8t1s2", "mma.w8t1s2"},
};

// int4: a programmatic launch (the decode step's) on tensor cores on rows of up to 16384 columns; an
// ordinary one on the vector path (no exact-fit kernel takes int4), as are longer rows; the scalar loop
// where the layout allows no vectors.
const std::vector<Expected> kInt4Expected = {
    {"odd width", plain(kInt4, 37, 1000), true, "scalar", "scalar"},
    {"misaligned x", misaligned_x(plain(kInt4, 64, 1024)), false, "scalar", "scalar"},
    {"Gemv 4096", plain(kInt4, 4096, 4096), false, "w8g2r4s1m0", "w8g2r4s1m0"},
    {"Gemv 4096 programmatic", plain(kInt4, 4096, 4096), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"Gemv 16384", plain(kInt4, 16384, 16384), false, "w4g1r4s2m4", "w4g1r4s2m4"},
    {"Gemv 32768 programmatic (longer than the staged x)", plain(kInt4, 1024, 32768), true, "w8g2r4s1m0",
     "w8g2r4s1m0"},
    {"GatherGemv 4096 (8192 output rows)", gathered(kInt4, 4096, 4096, 2, true), false, "w4g1r4s2m4", "w4g1r4s2m4"},
    {"llama.w13 swiglu", normed(plain(kInt4, 22016, 4096), GemvEpilogue::kSwiglu), true, "mma.w8t1s2", "mma.w8t4s2"},
    {"llama.w13 swiglu, ordinary launch", normed(plain(kInt4, 22016, 4096), GemvEpilogue::kSwiglu), false,
     "w1g1r2s4m0", "w1g1r2s4m0"},
    {"llama.wqkv rope", normed(plain(kInt4, 12288, 4096), GemvEpilogue::kRopeCache), true, "mma.w8t1s2", "mma.w8t2s2"},
    {"llama.wqkv rope, ordinary launch", normed(plain(kInt4, 12288, 4096), GemvEpilogue::kRopeCache), false,
     "w1g1r2s4m0", "w1g1r2s4m0"},
    {"llama.wo", with_epilogue(plain(kInt4, 4096, 4096), GemvEpilogue::kAddToY), true, "mma.w8t1s2", "mma.w8t1s2"},
    {"llama.w2", with_epilogue(plain(kInt4, 4096, 11008), GemvEpilogue::kAddToY), true, "mma.w8t1s2", "mma.w8t1s2"},
};

void expect_picks(const std::vector<Expected>& cases) {
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.launch);
    EXPECT_EQ(gemv_config_name(gemv_config(LaunchRules::kH100, e.args, e.programmatic)), e.h100);
    EXPECT_EQ(gemv_config_name(gemv_config(LaunchRules::kH200, e.args, e.programmatic)), e.h200);
  }
}

TEST(GemvConfigs, Bf16LaunchesPickTheTunedConfigurationOfEachRuleSet) { expect_picks(kBf16Expected); }
TEST(GemvConfigs, Int8LaunchesPickTheTensorCoresOrTheTunedVectorRows) { expect_picks(kInt8Expected); }
TEST(GemvConfigs, Int4LaunchesPickTheTensorCoresOrTheVectorPath) { expect_picks(kInt4Expected); }

// The paired epilogues (SwiGLU, RoPE into the cache) take two rows a group or the tensor-core tiles
// (launch_gemv refuses any other configuration): every rule set and weight type picks such a
// configuration for them, at any shape.
TEST(GemvConfigs, PairedEpiloguesGetConfigurationsThatPairRows) {
  for (LaunchRules rules : {LaunchRules::kH100, LaunchRules::kH200})
    for (WeightType w : {kBf16, kInt8, kInt4})
      for (GemvEpilogue e : {GemvEpilogue::kSwiglu, GemvEpilogue::kRopeCache})
        for (int64_t rows : {64, 4096, 12288, 28672})
          for (int64_t cols : {1024, 4096, 14336})
            for (bool programmatic : {true, false}) {
              const GemvConfig c = gemv_config(rules, normed(plain(w, rows, cols), e), programmatic);
              SCOPED_TRACE(gemv_config_name(c) + " for " + std::to_string(rows) + "x" + std::to_string(cols));
              EXPECT_TRUE(c.pairs_rows());
            }
}

// int4's layout rules count weights, not bytes: 32 a 16-byte load, half a byte each.
TEST(GemvConfigs, Int4VectorizesOnWholeLoadsOfThirtyTwoWeights) {
  EXPECT_TRUE(gemv_vectorizable(plain(kInt4, 8, 128)));
  EXPECT_FALSE(gemv_vectorizable(plain(kInt4, 8, 48)));   // a multiple of int8's 16, not of 32
  GemvArgs strided = plain(kInt4, 8, 128);
  strided.row_stride = 144;
  EXPECT_FALSE(gemv_vectorizable(strided));
  EXPECT_EQ(weight_bits(kInt4), 4);
  EXPECT_EQ(exact_row_config(4, 4, 8).span(kInt4), 16384);
}

// Every rule set and weight type ends with a vector-path row for any launch.
TEST(GemvConfigs, EverySetAndWeightTypeHasARowForAnyLaunch) {
  for (LaunchRules rules : {LaunchRules::kH100, LaunchRules::kH200})
    for (WeightType w : {kBf16, kInt8, kInt4}) {
      SCOPED_TRACE(std::string(launch_rules_name(rules)) + " weight bits " + std::to_string(weight_bits(w)));
      const GemvRule* last = nullptr;
      for (const GemvRule& r : kGemvRules)
        if (r.rules == rules && r.w_type == w) last = &r;
      ASSERT_NE(last, nullptr);
      EXPECT_EQ(last->config.path, GemvPath::kVector);
      EXPECT_EQ(last->when.max_row_bytes, kAnyLaunch.max_row_bytes);
      EXPECT_EQ(last->when.max_output_rows, kAnyLaunch.max_output_rows);
      EXPECT_EQ(last->when.min_row_bytes, 0);
      EXPECT_EQ(last->when.min_output_rows, 0);
      EXPECT_EQ(last->when.plain, GemvCondition::kAny);
    }
}

TEST(GemvConfigs, NamesAreTheTunersCsvNames) {
  EXPECT_EQ(gemv_config_name(vector_config(8, 4, 2, 2)), "w8g4r2s2m0");
  EXPECT_EQ(gemv_config_name(vector_config(4, 4, 1, 4, 8)), "w4g4r1s4m8");
  EXPECT_EQ(gemv_config_name(exact_row_config(16, 4, 2)), "row.w16c4m2");
  EXPECT_EQ(gemv_config_name(gather_pair_config(4, 8, 0)), "pair.w4c8m0");
  EXPECT_EQ(exact_row_config(16, 4, 2).span(kBf16), 16384);
  EXPECT_EQ(exact_row_config(4, 4, 12).span(kInt8), 8192);
  EXPECT_EQ(gemv_config_name(mma_config(8, 1, 2)), "mma.w8t1s2");
}

// The tensor-core kernel takes int4 and int8 rows of whole 64-byte units (128 and 64 columns) up to
// kMmaMaxCols, never bf16.
TEST(GemvConfigs, TensorCoresTakeWholeUnitsOfInt4AndInt8) {
  EXPECT_TRUE(mma_fits(kInt8, 4096));
  EXPECT_TRUE(mma_fits(kInt8, 11008));   // 172 units
  EXPECT_FALSE(mma_fits(kInt8, 4080));
  EXPECT_TRUE(mma_fits(kInt4, 11008 + 64 + 64));
  EXPECT_FALSE(mma_fits(kInt4, 11008 + 64));   // 64-column multiple, not 128
  EXPECT_FALSE(mma_fits(kInt8, kMmaMaxCols + 64));
  EXPECT_FALSE(mma_fits(kBf16, 4096));
}

}  // namespace
}  // namespace opbench::kernels
