//===- tests/unit/ir/VerifierTest.cpp - One test per verifier rule ---------===//
#include "IRTestUtil.h"

#include "llvm/Support/Casting.h"

using namespace tessel::ir;
using tessel::ir::test::IRFixture;
using tessel::ir::test::kMatmulExample;

namespace {

/// A kernel around `body` with A[M:256, K:256], B[K:256, N:512] -> C[M:256, N:512] f32.
std::string kernel(llvm::StringRef body) {
  return "kernel @k(%A: hbm<bf16, [M:256, K:256]>, %B: hbm<bf16, [K:256, N:512]>) -> "
         "(%C: hbm<f32, [M:256, N:512]>) {\n" +
         body.str() + "}\n";
}

TEST(Verifier, MatmulExampleIsValid) {
  IRFixture f;
  EXPECT_TRUE(f.verify(kMatmulExample)) << f.all();
  EXPECT_TRUE(f.messages.empty()) << f.all();
}

struct Case {
  std::string name;
  std::string body;
  std::string expected; // "line:col: error: substring" or just a substring
};

class VerifierRule : public ::testing::TestWithParam<Case> {};

TEST_P(VerifierRule, Rejects) {
  IRFixture f;
  EXPECT_FALSE(f.verify(kernel(GetParam().body)));
  EXPECT_TRUE(f.has(GetParam().expected)) << "got:\n" << f.all();
}

const char *kSbufA = "  %a = alloc sbuf<bf16, [K:128, M:128]>\n";
const char *kSbufB = "  %b = alloc sbuf<bf16, [K:128, N:512]>\n";
const char *kPsum = "  %p = alloc psum<f32, [M:128, N:512]>\n";

std::string mm(llvm::StringRef extra) {
  return std::string(kSbufA) + kSbufB + kPsum + extra.str();
}

INSTANTIATE_TEST_SUITE_P(
    Rules, VerifierRule,
    ::testing::Values(
        // --- types
        Case{"PartitionOver128", "  %t = alloc sbuf<bf16, [K:200, N:4]>\n",
             "2:3: error: partition dimension K of buffer %t has 200 partitions; it must be at most 128 or a multiple of 128"},
        Case{"PsumNotF32", "  %t = alloc psum<bf16, [M:128, N:4]>\n", "psum buffer %t must be f32, found bf16"},
        Case{"PsumOverBank", "  %t = alloc psum<f32, [M:128, N:1024]>\n",
             "psum tile buffer %t needs 4096 bytes per partition, more than one 2 KiB bank"},
        Case{"BufsZero", "  %t = alloc sbuf<bf16, [M:128, N:4]> bufs 0\n", "has bufs 0; at least 1 is needed"},
        Case{"NonPositiveDim", "  %t = alloc sbuf<bf16, [M:128, N:0]>\n", "dimension N of buffer %t has size 0"},
        Case{"DuplicateLabel", "  %t = alloc sbuf<bf16, [M:128, M:4]>\n", "has two dimensions labelled M"},
        Case{"SpillOnChip", "  %t = alloc sbuf<bf16, [M:128, N:4]> spill\n", "is a spill slot but lives in sbuf"},
        Case{"NoDims", "  %t = alloc sbuf<bf16, []>\n", "buffer %t has no dimensions"},
        // --- accesses
        Case{"Rank", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 128], 0.0\n",
             "3:10: error: access to %t has 1 indices but the tensor has rank 2"},
        Case{"NotTwoD", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 128, 0], 0.0\n",
             "must select a tile of at least two dimensions (two '+:' ranges), found 1"},
        // access patterns (docs/tile-ir.md, "Access patterns")
        Case{"PatternOrder", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 128, 0 +: 2 +: 2] order (0, 0, 1), 0.0\n",
             "the order of the access to %t must list each of its 3 ranges once"},
        Case{"PatternPartition", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 64 step 2, 0 +: 4], 0.0\n",
             "partition dimension M of %t must be a range, the tile's first and contiguous"},
        Case{"PatternPartitionOrder",
             "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 128, 0 +: 4] order (1, 0), 0.0\n",
             "partition dimension M of %t must be a range, the tile's first and contiguous"},
        Case{"PatternOnTensorEngine",
             "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  %p = alloc psum<f32, [N:2, M:128]>\n"
             "  transpose %p[0 +: 2, 0 +: 128] <- %t[0 +: 128, 0 +: 2 step 2]\n",
             "transpose source must be a 2-D tile of two contiguous ranges"},
        Case{"PatternOutOfBounds", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 128, 2 +: 2 step 2], 0.0\n",
             "access out of bounds: dimension N of %t is [2, 2 + 3)"},
        Case{"PatternMinExtent",
             "  for %m = 0 to 256 step 128 {\n    %t = alloc sbuf<bf16, [M:128, N:4]>\n"
             "    memset %t[0 +: min(128, 200 - %m), 0 +: 2 step 2], 0.0\n  }\n",
             "the ranges of an access pattern (dimension M of %t) need constant extents"},
        Case{"ReduceNotLeading",
             "  %t = alloc sbuf<f32, [M:128, H:4, W:6]>\n  %s = alloc sbuf<f32, [M:128, W:6]>\n"
             "  tensor_reduce add %s[0 +: 128, 0 +: 6] <- %t[0 +: 128, 0 +: 4, 0 +: 6]\n",
             "tensor_reduce of a 3-D tile folds its trailing dimensions"},
        Case{"ElementwiseRank",
             "  %t = alloc sbuf<f32, [M:128, H:4, W:6]>\n  %s = alloc sbuf<f32, [M:128, H:4, W:6]>\n"
             "  copy %s[0 +: 128, 0 +: 4, 0 +: 6] <- %t[0 +: 128, 0, 0 +: 6]\n",
             "copy source is a 2-D tile but the destination is 3-D"},
        Case{"PartitionPoint", "  %t = alloc sbuf<bf16, [X:4, M:128, N:4]>\n  memset %t[0, 0 +: 128, 0 +: 4], 0.0\n",
             "partition dimension X of %t must be a range"},
        Case{"OutOfBounds",
             "  for %m = 0 to 256 step 128 {\n    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
             "    dma %t[0 +: 128, 0 +: 128] <- %A[%m + 64 +: 128, 0 +: 128]\n  }\n",
             "4:38: error: access out of bounds: dimension M of %A is [192, 192 + 128) but its size is 256 at %m = 128"},
        Case{"ZeroExtent", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  memset %t[0 +: 0, 0 +: 4], 0.0\n",
             "3:13: error: extent of dimension M of %t is 0; it must be at least 1"},
        Case{"PointOutOfBounds", "  %t = alloc sbuf<bf16, [M:128, X:2, N:4]>\n  memset %t[0 +: 128, 2, 0 +: 4], 0.0\n",
             "3:23: error: access out of bounds: index 2 of dimension X of %t is outside [0, 2)"},
        Case{"FoldedGroup", "  %t = alloc sbuf<bf16, [K:256, N:4]>\n  memset %t[64 +: 128, 0 +: 4], 0.0\n",
             "range [64, 192) on partition-folded dimension K of %t crosses a 128-partition group"},
        // --- names and scopes (in-memory kernels are tested below)
        // --- memory spaces
        Case{"DmaNoHbm", "  %t = alloc sbuf<bf16, [M:128, N:4]>\n  %u = alloc sbuf<bf16, [M:128, N:4]>\n"
                         "  dma %t[0 +: 128, 0 +: 4] <- %u[0 +: 128, 0 +: 4]\n",
             "4:3: error: dma moves data between hbm and sbuf (hbm on exactly one side); found sbuf -> sbuf"},
        Case{"DmaPsum", "  %t = alloc psum<f32, [M:128, N:4]>\n  dma %C[0 +: 128, 0 +: 4] <- %t[0 +: 128, 0 +: 4]\n",
             "found psum -> hbm"},
        Case{"MatmulWritesSbuf", "  %a = alloc sbuf<bf16, [K:128, M:128]>\n  %b = alloc sbuf<bf16, [K:128, N:512]>\n"
                                 "  %p = alloc sbuf<f32, [M:128, N:512]>\n"
                                 "  matmul %p[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512]\n",
             "5:10: error: matmul writes its destination from psum; %p is in sbuf"},
        Case{"MatmulReadsPsum", mm("  %q = alloc psum<f32, [K:128, N:512]>\n"
                                   "  matmul %p[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %q[0 +: 128, 0 +: 512]\n"),
             "matmul reads its moving from sbuf; %q is in psum"},
        Case{"CopyWritesPsum", mm("  copy %p[0 +: 128, 0 +: 512] <- %p[0 +: 128, 0 +: 512]\n"),
             "copy writes its destination from sbuf; %p is in psum"},
        Case{"ActivationReadsHbm", "  %t = alloc sbuf<bf16, [M:128, K:4]>\n  activation exp %t[0 +: 128, 0 +: 4] <- %A[0 +: 128, 0 +: 4]\n",
             "activation reads its source from sbuf or psum; %A is in hbm"},
        Case{"TransposeToSbuf", "  %t = alloc sbuf<bf16, [M:128, K:128]>\n  %u = alloc sbuf<bf16, [K:128, M:128]>\n"
                                "  transpose %u[0 +: 128, 0 +: 128] <- %t[0 +: 128, 0 +: 128]\n",
             "transpose writes its destination from psum"},
        Case{"MemsetHbm", "  memset %C[0 +: 1, 0 +: 1], 0.0\n", "memset writes its destination from sbuf or psum; %C is in hbm"},
        Case{"SpillSaveTarget", "  %t = alloc sbuf<bf16, [M:128, K:4]>\n  dma spill_save %A[0 +: 128, 0 +: 4] <- %t[0 +: 128, 0 +: 4]\n",
             "dma spill_save must write a spill slot"},
        Case{"SpillUntagged", "  %s = alloc hbm<bf16, [M:128, K:4]> spill\n  %t = alloc sbuf<bf16, [M:128, K:4]>\n"
                              "  dma %t[0 +: 128, 0 +: 4] <- %s[0 +: 128, 0 +: 4]\n",
             "spill slot %s may only be read by dma spill_reload"},
        // --- dtypes
        Case{"DmaCast", "  %t = alloc sbuf<f32, [M:128, K:4]>\n  dma %t[0 +: 128, 0 +: 4] <- %A[0 +: 128, 0 +: 4]\n",
             "dma cannot convert bf16 to f32"},
        Case{"MatmulMixedDtypes", "  %a = alloc sbuf<bf16, [K:128, M:128]>\n  %b = alloc sbuf<f32, [K:128, N:512]>\n"
                                  "  %p = alloc psum<f32, [M:128, N:512]>\n"
                                  "  matmul %p[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512]\n",
             "matmul operands must have the same dtype"},
        // --- layout
        Case{"ContractionNotOnPartitions",
             "  %a = alloc sbuf<bf16, [M:128, K:128]>\n  %b = alloc sbuf<bf16, [K:128, N:512]>\n"
             "  %p = alloc psum<f32, [M:128, N:512]>\n"
             "  matmul %p[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512]\n",
             "5:36: error: matmul contraction dimension K must be on the partitions of both operands; "
             "stationary has M on partitions — transpose it"},
        Case{"MatmulResultLabels", mm("  %q = alloc psum<f32, [N:512, M:128]>\n"
                                      "  matmul %q[0 +: 128, 0 +: 128] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512]\n"),
             "matmul result must be labelled [M, N] (stationary free, moving free), found [N, M]"},
        Case{"DmaLabels", "  %t = alloc sbuf<bf16, [K:128, M:128]>\n  dma %t[0 +: 128, 0 +: 128] <- %A[0 +: 128, 0 +: 128]\n",
             "dma source and destination must carry the same dimension labels in the same order: [M, K] vs [K, M]; use 'dma transpose'"},
        Case{"DmaTransposeLabels", "  %t = alloc sbuf<bf16, [M:128, K:128]>\n  dma transpose %t[0 +: 128, 0 +: 128] <- %A[0 +: 128, 0 +: 128]\n",
             "dma swaps its two dimensions: the destination must be [K, M], found [M, K]"},
        Case{"TransposeLabels", "  %t = alloc sbuf<bf16, [M:128, K:128]>\n  %p = alloc psum<f32, [M:128, K:128]>\n"
                                "  transpose %p[0 +: 128, 0 +: 128] <- %t[0 +: 128, 0 +: 128]\n",
             "transpose swaps its two dimensions: the destination must be [K, M], found [M, K]"},
        Case{"ElementwiseLabels", "  %t = alloc sbuf<bf16, [M:128, K:128]>\n  %u = alloc sbuf<bf16, [K:128, M:128]>\n"
                                  "  tensor_tensor add %t[0 +: 128, 0 +: 128] <- %t[0 +: 128, 0 +: 128], %u[0 +: 128, 0 +: 128]\n",
             "tensor_tensor second operand must carry the destination's dimension labels in the same order: [K, M] vs [M, K]"},
        // --- shapes
        Case{"MatmulN", "  %a = alloc sbuf<bf16, [K:128, M:128]>\n  %b = alloc sbuf<bf16, [K:128, N:1024]>\n"
                        "  %p = alloc psum<f32, [M:128, N:1024]>\n"
                        "  matmul %p[0 +: 128, 0 +: 1024] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 1024]\n",
             "matmul moving free size N (N) is 1024, more than the limit of 512"},
        Case{"MatmulM", "  %a = alloc sbuf<bf16, [K:128, M:256]>\n  %b = alloc sbuf<bf16, [K:128, N:4]>\n"
                        "  %p = alloc psum<f32, [M:256, N:4]>\n"
                        "  matmul %p[0 +: 128, 0 +: 4] <- %a[0 +: 128, 0 +: 256], %b[0 +: 128, 0 +: 4]\n",
             "matmul stationary free size M (M) is 256, more than the limit of 128"},
        Case{"MatmulK", "  %a = alloc sbuf<bf16, [K:256, M:128]>\n  %b = alloc sbuf<bf16, [K:256, N:4]>\n"
                        "  %p = alloc psum<f32, [M:128, N:4]>\n"
                        "  matmul %p[0 +: 128, 0 +: 4] <- %a[0 +: 256, 0 +: 128], %b[0 +: 256, 0 +: 4]\n",
             "matmul contraction size K (K) is 256, more than the limit of 128"},
        Case{"MatmulRowsMismatch", mm("  matmul %p[0 +: 64, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512]\n"),
             "matmul result rows (M) must equal the stationary free extent: 64 vs 128"},
        Case{"PerIterationMismatch",
             "  for %m = 0 to 256 step 96 {\n    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
             "    dma %t[0 +: min(128, 256 - %m), 0 +: 128] <- %A[%m +: min(96, 256 - %m), 0 +: 128]\n  }\n",
             "dma source extent of dimension M must equal the destination's: 128 vs 96 at %m = 0"}),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

TEST(Verifier, PartialTileIsInBounds) {
  IRFixture f;
  EXPECT_TRUE(f.verify(kernel(
      "  for %m = 0 to 256 step 96 {\n    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
      "    dma %t[0 +: min(96, 256 - %m), 0 +: 128] <- %A[%m +: min(96, 256 - %m), 0 +: 128]\n  }\n")))
      << f.all();
}

TEST(Verifier, PartialTileOverflow) {
  IRFixture f;
  EXPECT_FALSE(f.verify(kernel(
      "  for %m = 0 to 256 step 96 {\n    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
      "    dma %t[0 +: 96, 0 +: 128] <- %A[%m +: 96, 0 +: 128]\n  }\n")));
  EXPECT_TRUE(f.has("dimension M of %A is [192, 192 + 96) but its size is 256 at %m = 192")) << f.all();
}

TEST(Verifier, ReportsAllViolations) {
  IRFixture f;
  EXPECT_FALSE(f.verify(kernel("  %t = alloc sbuf<bf16, [K:200, N:4]>\n  %u = alloc psum<bf16, [M:128, N:4]>\n"
                               "  memset %C[0 +: 1, 0 +: 1], 0.0\n")));
  EXPECT_EQ(f.count("error"), 3u) << f.all();
}

TEST(Verifier, EnumerationCapWarns) {
  IRFixture f;
  VerifierOptions opts;
  opts.maxPointsPerOp = 100;
  EXPECT_TRUE(f.verify(kernel("  for %i = 0 to 1000 step 1 {\n    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
                              "    dma %t[0 +: 128, 0 +: 128] <- %A[min(%i, 0) +: 128, 0 +: 128]\n  }\n"),
                       opts))
      << f.all();
  EXPECT_TRUE(f.has("warning: could not verify bounds and shapes of this dma: more than 100")) << f.all();
}

TEST(Verifier, OnlyEnumeratesLoopsTheAccessDependsOn) {
  // 2^40 iterations in total, but the access depends on %j only.
  IRFixture f;
  VerifierOptions opts;
  opts.maxPointsPerOp = 1000;
  EXPECT_TRUE(f.verify(kernel("  for %i = 0 to 1048576 step 1 {\n  for %j = 0 to 256 step 128 {\n"
                              "    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
                              "    dma %t[0 +: 128, 0 +: 128] <- %A[%j +: 128, 0 +: 128]\n  }\n  }\n"),
                       opts))
      << f.all();
  EXPECT_TRUE(f.messages.empty()) << f.all();
}

// --- symbolic bounds: large trip counts with one enumerated point allowed ----------

/// One point of enumeration: whatever the verifier proves here, it proves symbolically.
VerifierOptions noEnumeration() {
  VerifierOptions opts;
  opts.maxPointsPerOp = 1;
  return opts;
}

TEST(Verifier, TiledNestIsProvenWithoutEnumerating) {
  // 977 row strips x 8 strips x 2 x 4 K tiles; partial last block and strip,
  // strip offsets %mb + %mi, a folded K buffer read at %kb + %ki.
  IRFixture f;
  EXPECT_TRUE(f.verify(
      "kernel @big(%A: hbm<bf16, [M:1000000, K:1024]>) -> () {\n"
      "  for %mb = 0 to 1000000 step 1024 {\n"
      "  for %mi = 0 to min(1024, 1000000 - %mb) step 128 {\n"
      "  for %kb = 0 to 1024 step 512 {\n"
      "  for %ki = 0 to 512 step 128 {\n"
      "    %t = alloc sbuf<bf16, [K:1024, M:128]>\n"
      "    dma transpose %t[%kb + %ki +: 128, 0 +: min(128, 1000000 - (%mb + %mi))] <- "
      "%A[%mb + %mi +: min(128, 1000000 - (%mb + %mi)), %kb + %ki +: 128]\n"
      "  }\n  }\n  }\n  }\n}\n",
      noEnumeration()))
      << f.all();
  EXPECT_TRUE(f.messages.empty()) << f.all();
}

TEST(Verifier, FoldedRangeAtAFixedOffsetIsProven) {
  IRFixture f;
  EXPECT_TRUE(f.verify(kernel("  %b = alloc sbuf<bf16, [K:1024, N:64]>\n"
                              "  for %k = 64 to 1024 step 128 {\n"
                              "    memset %b[%k +: 64, 0 +: 64], 0.0\n  }\n"),
                       noEnumeration()))
      << f.all();
  EXPECT_TRUE(f.messages.empty()) << f.all();
}

TEST(Verifier, LastPartialTileOverflowPastTheCap) {
  // Only the last of 10417 tiles overflows; it is found at the extreme.
  IRFixture f;
  VerifierOptions opts;
  opts.maxPointsPerOp = 100;
  EXPECT_FALSE(f.verify("kernel @k(%A: hbm<bf16, [M:1000000, K:128]>) -> () {\n"
                        "  for %m = 0 to 1000000 step 96 {\n"
                        "    %t = alloc sbuf<bf16, [M:96, K:128]>\n"
                        "    dma %t[0 +: 96, 0 +: 128] <- %A[%m +: 96, 0 +: 128]\n  }\n}\n",
                        opts));
  EXPECT_TRUE(f.has("dimension M of %A is [999936, 999936 + 96) but its size is 1000000 at %m = 999936"))
      << f.all();
  EXPECT_EQ(f.count("warning"), 0u) << f.all();
}

TEST(Verifier, LastPartialTileExtentMismatchPastTheCap) {
  IRFixture f;
  EXPECT_FALSE(f.verify("kernel @k(%A: hbm<bf16, [M:1000000, K:128]>) -> () {\n"
                        "  for %m = 0 to 1000000 step 128 {\n"
                        "    %t = alloc sbuf<bf16, [M:128, K:128]>\n"
                        "    dma %t[0 +: 128, 0 +: 128] <- %A[%m +: min(128, 1000000 - %m), 0 +: 128]\n"
                        "  }\n}\n",
                        noEnumeration()));
  EXPECT_TRUE(f.has("dma source extent of dimension M must equal the destination's: 128 vs 64 at %m = 999936"))
      << f.all();
}

TEST(Verifier, FoldedGroupCrossedAtASecondIteration) {
  // Step 112 gives no fixed offset in the group: enumerated, first failure named.
  IRFixture f;
  EXPECT_FALSE(f.verify(kernel("  %b = alloc sbuf<bf16, [K:1024, N:64]>\n"
                               "  for %k = 0 to 1024 step 112 {\n"
                               "    memset %b[%k +: min(112, 1024 - %k), 0 +: 64], 0.0\n  }\n")));
  EXPECT_TRUE(f.has("range [112, 224) on partition-folded dimension K of %b crosses a 128-partition group; "
                    "start at a multiple of 128 and take at most 128 at %k = 112"))
      << f.all();
}

TEST(Verifier, MatmulLimitExceededOnlyInAnInnerIteration) {
  // The stationary free size is 64 + %j: over 128 from %j = 72 on.
  IRFixture f;
  EXPECT_FALSE(f.verify(kernel("  for %i = 0 to 1000000 step 1 {\n  for %j = 0 to 100 step 8 {\n" +
                               std::string("  %a = alloc sbuf<bf16, [K:128, M:256]>\n") + kSbufB +
                               "  %p = alloc psum<f32, [M:256, N:512]>\n"
                               "  matmul %p[0 +: 64 + %j, 0 +: 512] <- %a[0 +: 128, 0 +: 64 + %j], "
                               "%b[0 +: 128, 0 +: 512]\n  }\n  }\n"),
                        noEnumeration()));
  EXPECT_TRUE(f.has("matmul stationary free size M (M) is 160, more than the limit of 128 at %j = 96"))
      << f.all();
}

// --- in-memory kernels (no locations) -------------------------------------------------

TEST(Verifier, InMemoryUseBeforeDefinition) {
  Kernel k;
  k.name = "mem";
  k.geometry = tessel::test::trn1Geometry();
  Value *a = k.newValue(ValueKind::Argument, "A");
  a->type = TensorType{MemSpace::HBM, DType::BF16, {{"M", 128}, {"N", 4}}};
  k.args.push_back(a);
  auto dma = std::make_unique<DmaOp>();
  auto alloc = std::make_unique<AllocOp>();
  Value *t = k.newValue(ValueKind::Buffer, "t");
  t->type = TensorType{MemSpace::SBUF, DType::BF16, {{"M", 128}, {"N", 4}}};
  t->role = TensorRole::Scratch;
  t->def = alloc.get();
  alloc->result = t;
  dma->dst.base = t;
  dma->dst.indices = {{IndexExpr(0), IndexExpr(128)}, {IndexExpr(0), IndexExpr(4)}};
  dma->src.base = a;
  dma->src.indices = dma->dst.indices;
  k.body.ops.push_back(std::move(dma)); // used before its alloc
  k.body.ops.push_back(std::move(alloc));

  llvm::SourceMgr sm;
  tessel::DiagnosticEngine diags(sm);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(verifyKernel(k, diags));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("error: kernel @mem: dma: use of %t before its definition"), std::string::npos)
      << err;

  // Moved after the alloc, it is valid.
  std::swap(k.body.ops[0], k.body.ops[1]);
  tessel::DiagnosticEngine diags2(sm);
  EXPECT_TRUE(verifyKernel(k, diags2));
}

TEST(Verifier, InMemoryLoopVarOutOfScope) {
  IRFixture f;
  auto m = f.parse(kernel("  for %i = 0 to 2 step 1 {\n  }\n  memset %C[0 +: 1, 0 +: 1], 0.0\n"));
  ASSERT_TRUE(m);
  Kernel &k = *m->kernels[0];
  auto *loop = llvm::cast<ForOp>(k.body.ops[0].get());
  auto *ms = llvm::cast<MemsetOp>(k.body.ops[1].get());
  ms->dst.indices[0].start = IndexExpr::var(loop->iv); // %i outside its loop
  EXPECT_FALSE(verifyKernel(k, f.diags));
  EXPECT_TRUE(f.has("uses %i, which is not an enclosing loop variable")) << f.all();
}

TEST(Verifier, InMemoryRedefinition) {
  IRFixture f;
  auto m = f.parse(kernel("  %t = alloc sbuf<bf16, [M:1, N:1]>\n  %u = alloc sbuf<bf16, [M:1, N:1]>\n"));
  ASSERT_TRUE(m);
  llvm::cast<AllocOp>(m->kernels[0]->body.ops[1].get())->result->name = "t";
  EXPECT_FALSE(verifyKernel(*m->kernels[0], f.diags));
  EXPECT_TRUE(f.has("3:3: error: redefinition of %t")) << f.all();
  EXPECT_TRUE(f.has("2:3: note: previous definition of %t is here")) << f.all();
}

TEST(Verifier, InMemoryResetMustBeEnclosingLoop) {
  IRFixture f;
  auto m = f.parse(kernel("  for %i = 0 to 1 step 1 {\n  }\n" + mm("  matmul %p[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512]\n")));
  ASSERT_TRUE(m) << f.all();
  Kernel &k = *m->kernels[0];
  auto *loop = llvm::cast<ForOp>(k.body.ops[0].get());
  auto *matmul = llvm::cast<MatmulOp>(k.body.ops.back().get());
  matmul->resetOn.push_back(loop->iv);
  EXPECT_FALSE(verifyKernel(k, f.diags));
  EXPECT_TRUE(f.has("matmul reset(%i) must name an enclosing loop variable")) << f.all();
}

TEST(Verifier, InMemoryResetAndAccumulateExclude) {
  IRFixture f;
  auto m = f.parse(kernel("  for %i = 0 to 2 step 1 {\n" +
                          mm("  matmul %p[0 +: 128, 0 +: 512] <- %a[0 +: 128, 0 +: 128], %b[0 +: 128, 0 +: 512] "
                             "reset(%i)\n") +
                          "  }\n"));
  ASSERT_TRUE(m) << f.all();
  Kernel &k = *m->kernels[0];
  auto *loop = llvm::cast<ForOp>(k.body.ops[0].get());
  llvm::cast<MatmulOp>(loop->body.ops.back().get())->accumulate = true;
  EXPECT_FALSE(verifyKernel(k, f.diags));
  EXPECT_TRUE(f.has("matmul cannot both reset and always accumulate")) << f.all();
}

} // namespace
