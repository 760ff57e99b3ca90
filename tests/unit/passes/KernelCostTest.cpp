//===- tests/unit/passes/KernelCostTest.cpp - static cost of tile IR ------===//
//
// Hand-counted kernels: partial tiles, loops whose bounds depend on outer
// loops, spill tags, placed and unplaced buffers. Agreement with the
// simulator over many compiled kernels is tests/unit/analysis.
//
//===----------------------------------------------------------------------===//
#include "passes/analysis/KernelCost.h"

#include "ir/Parser.h"
#include "tests/unit/ir/IRTestUtil.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "tests/unit/TestGeometry.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::passes::analysis;

namespace {

struct Parsed {
  llvm::SourceMgr sm;
  DiagnosticEngine diags{sm};
  std::unique_ptr<ir::Module> module;
  explicit Parsed(llvm::StringRef text) {
    module = ir::parseModuleString(text, "test.tir", diags, test::trn1Geometry());
    EXPECT_TRUE(module && ir::verifyModule(*module, diags));
  }
  const ir::Kernel &kernel() const { return *module->kernels.at(0); }
};

// docs/tile-ir.md's example: A [647, 256] @ B [256, 512], straightforward form
// (tests/unit/ir/IRTestUtil.h). Row strips: five of 128 rows and one of 7.
const char *kPartialTiles = ir::test::kMatmulExample;

} // namespace

TEST(KernelCost, CountsPartialTilesExactly) {
  Parsed p(kPartialTiles);
  KernelCost c = analyzeKernel(p.kernel(), runtime::trn1Target());
  EXPECT_EQ(c.flops, uint64_t(2) * 647 * 256 * 512);
  // Each row strip is transposed as two [rows, 128] tiles: 2 * rows^2 * 128 each.
  EXPECT_EQ(c.transposeFlops, uint64_t(2) * 2 * (5 * 128 * 128 + 7 * 7) * 128);
  // A once, B once per row strip (6), C once.
  EXPECT_EQ(c.hbmReadBytes, uint64_t(647 * 256 * 2 + 6 * 256 * 512 * 2));
  EXPECT_EQ(c.hbmWriteBytes, uint64_t(647 * 512 * 2));
  EXPECT_EQ(c.spillSaveBytes, 0u);
  EXPECT_EQ(c.spillReloadBytes, 0u);
}

TEST(KernelCost, UnplacedPeakIsTheMostCrowdedPoint) {
  Parsed p(kPartialTiles);
  KernelCost c = analyzeKernel(p.kernel(), runtime::trn1Target());
  // %aT (2 folds x 128 bf16 = 512 B) lives across the row strip. %b and %c
  // (2 x 1024 B each) live across the column loop's body: one iteration's
  // loads of %b overlap the previous one's stores of %c, so they do not share
  // space. %a (512 B), in the other loop directly in the row strip (a phase
  // of it), lives only in its own loop (passes/BufferLiveness.h), so with
  // phases sharing: 512 + 2048 + 2048.
  EXPECT_EQ(c.sbufLeastPeakBytesPerPartition, 4608);
  // allocate makes the column loop's tiles live through the %a loop before
  // it (phases prefetching: it fits), which adds %a's 512 B.
  EXPECT_EQ(c.sbufPeakBytesPerPartition, 4608 + 512);
  // %p (2 x 512 B) and %acc (2 x 2048 B) never live together.
  EXPECT_EQ(c.psumPeakBytesPerPartition, 4096);
}

TEST(KernelCost, PlacedPeakIsTheHighestEndAddress) {
  Parsed p(R"(
kernel @k(%A: hbm<bf16, [M:128, K:128]>) -> (%C: hbm<bf16, [K:128, M:128]>) {
  %a = alloc sbuf<bf16, [M:128, K:128]> bufs 3 addr 1024
  %b = alloc sbuf<bf16, [K:128, M:128]> addr 0
  %q = alloc psum<f32, [K:128, M:128]> bufs 2 addr 2048
  dma %a[0 +: 128, 0 +: 128] <- %A[0 +: 128, 0 +: 128]
  transpose %q[0 +: 128, 0 +: 128] <- %a[0 +: 128, 0 +: 128]
  copy %b[0 +: 128, 0 +: 128] <- %q[0 +: 128, 0 +: 128]
  dma %C[0 +: 128, 0 +: 128] <- %b[0 +: 128, 0 +: 128]
}
)");
  KernelCost c = analyzeKernel(p.kernel(), runtime::trn1Target());
  EXPECT_EQ(c.sbufPeakBytesPerPartition, 1024 + 3 * 256);
  EXPECT_EQ(c.psumPeakBytesPerPartition, 2048 + 2 * 512);
  EXPECT_EQ(c.transposeFlops, uint64_t(2) * 128 * 128 * 128);
}

TEST(KernelCost, LoopBoundsThatDependOnOuterLoops) {
  // A triangular nest: %j runs 4, 3, 2, 1 times; the tile shrinks with %j.
  Parsed p(R"(
kernel @tri(%A: hbm<bf16, [M:128, K:512]>) -> (%C: hbm<bf16, [M:128, K:512]>) {
  for %i = 0 to 512 step 128 {
    for %j = %i to 512 step 128 {
      %t = alloc sbuf<bf16, [M:128, K:128]>
      dma %t[0 +: 128, 0 +: min(128, 500 - %j)] <- %A[0 +: 128, %j +: min(128, 500 - %j)]
      dma %C[0 +: 128, %i +: 64] <- %t[0 +: 128, 0 +: 64]
    }
  }
}
)");
  KernelCost c = analyzeKernel(p.kernel(), runtime::trn1Target());
  // %j = 0, 128, 256, 384 appear 1, 2, 3, 4 times; the last tile has 116 columns.
  EXPECT_EQ(c.hbmReadBytes, uint64_t(128 * 2 * (128 * (1 + 2 + 3) + 116 * 4)));
  EXPECT_EQ(c.hbmWriteBytes, uint64_t(128 * 64 * 2 * 10));
}

TEST(KernelCost, SpillTrafficIsHbmTrafficToo) {
  Parsed p(R"(
kernel @s(%A: hbm<bf16, [M:128, K:256]>) -> (%C: hbm<bf16, [M:128, K:256]>) {
  %slot = alloc hbm<bf16, [M:128, K:256]> spill
  for %k = 0 to 256 step 128 {
    %t = alloc sbuf<bf16, [M:128, K:128]>
    dma %t[0 +: 128, 0 +: 128] <- %A[0 +: 128, %k +: 128]
    dma spill_save %slot[0 +: 128, %k +: 128] <- %t[0 +: 128, 0 +: 128]
    dma spill_reload %t[0 +: 128, 0 +: 128] <- %slot[0 +: 128, %k +: 128]
    dma %C[0 +: 128, %k +: 128] <- %t[0 +: 128, 0 +: 128]
  }
}
)");
  KernelCost c = analyzeKernel(p.kernel(), runtime::trn1Target());
  const uint64_t tensor = 128 * 256 * 2;
  EXPECT_EQ(c.spillSaveBytes, tensor);
  EXPECT_EQ(c.spillReloadBytes, tensor);
  EXPECT_EQ(c.hbmReadBytes, 2 * tensor);
  EXPECT_EQ(c.hbmWriteBytes, 2 * tensor);
}

TEST(KernelCost, IntensityAndRoofline) {
  const runtime::Target &t = runtime::trn1Target();
  KernelCost none;
  EXPECT_EQ(none.arithmeticIntensity(), 0.0);
  EXPECT_EQ(none.rooflineUs(t), 0.0);

  KernelCost c;
  c.flops = 1'000'000'000;
  c.hbmReadBytes = 1'000'000;
  c.hbmWriteBytes = 1'000'000;
  EXPECT_DOUBLE_EQ(c.arithmeticIntensity(), 500.0);
  // Above the ridge: compute bound.
  EXPECT_DOUBLE_EQ(c.rooflineUs(t), 1e9 / t.peakBf16Flops() * 1e6);
  c.hbmReadBytes = 100'000'000;
  EXPECT_DOUBLE_EQ(c.rooflineUs(t), 101e6 / (t.hbm_bandwidth_gbs * 1e9) * 1e6);
}

TEST(KernelCost, LivenessPeakIsALowerBoundOnUnalignedSizes) {
  // Two 200-byte buffers live together: 400 bytes live, but `allocate` starts
  // SBUF buffers on 64 bytes, so it places the second at 256. TileGen's tiles
  // are multiples of 128 elements, so its kernels never show the gap.
  Parsed p(R"(
kernel @odd(%A: hbm<bf16, [M:128, K:100]>) -> (%C: hbm<bf16, [M:128, K:100]>) {
  %a = alloc sbuf<bf16, [M:128, K:100]>
  %b = alloc sbuf<bf16, [M:128, K:100]>
  dma %a[0 +: 128, 0 +: 100] <- %A[0 +: 128, 0 +: 100]
  copy %b[0 +: 128, 0 +: 100] <- %a[0 +: 128, 0 +: 100]
  dma %C[0 +: 128, 0 +: 100] <- %b[0 +: 128, 0 +: 100]
}
)");
  ir::Kernel &kernel = *p.module->kernels.at(0);
  const runtime::Target &target = runtime::trn1Target();
  EXPECT_EQ(analyzeKernel(kernel, target).sbufPeakBytesPerPartition, 400);
  passes::PassManager pm;
  ASSERT_TRUE(pm.addPass("allocate"));
  passes::PassContext ctx{target, p.diags};
  ASSERT_TRUE(pm.run(kernel, ctx));
  EXPECT_EQ(analyzeKernel(kernel, target).sbufPeakBytesPerPartition, 456);
}
