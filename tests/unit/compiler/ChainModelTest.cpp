//===- tests/unit/compiler/ChainModelTest.cpp - the chain model's check values -===//
#include "compiler/ChainModel.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::compiler;

namespace {
// DeepSeek-V3 up_proj after SVD at M = 4096, bf16: X [M, 7168] U [7168, 4096] V [4096, 18432].
ChainModel deepSeek() { return ChainModel::chain(4096, {7168, 4096, 18432}, 2); }
} // namespace

TEST(ChainModel, DeepSeekIntensityMatchesTheDesignTable) {
  ChainModel m = deepSeek();
  EXPECT_EQ(m.flops(), uint64_t(2) * 4096 * (7168 * 4096 + 4096 * 18432));
  EXPECT_NEAR(m.arithmeticIntensity(128), 124.1, 0.05);
  EXPECT_NEAR(m.arithmeticIntensity(256), 240.9, 0.05);
  EXPECT_NEAR(m.arithmeticIntensity(512), 455.1, 0.05);
  EXPECT_NEAR(m.arithmeticIntensity(1024), 819.2, 0.05);
}

TEST(ChainModel, TrafficReadsWeightsOncePerStrip) {
  ChainModel m = deepSeek();
  const uint64_t x = 4096 * 7168, y = 4096 * 18432, w = 7168 * 4096 + 4096 * 18432;
  EXPECT_EQ(m.trafficBytes(4096), 2 * (x + y + w));
  EXPECT_EQ(m.trafficBytes(512), 2 * (x + y + 8 * w));
  // A partial last strip re-reads the weights too: 647 rows are 6 strips of 128.
  ChainModel partial = ChainModel::chain(647, {256, 512}, 2);
  EXPECT_EQ(partial.trafficBytes(128), uint64_t(2) * (647 * 256 + 647 * 512 + 6 * 256 * 512));
}

TEST(ChainModel, RidgeAndSmallestStripOnTrn1) {
  const runtime::Target &trn1 = runtime::trn1Target();
  // The paper quotes a ridge of 222 flop/byte (docs/paper.md); the trn1 target's 91.75 TFLOP/s over
  // 410 GB/s gives 223.8.
  EXPECT_NEAR(trn1.ridgeFlopsPerByte(), 222.0, 2.0);
  // AI(128) = 124.1 is memory bound, AI(256) = 240.9 clears the ridge.
  EXPECT_EQ(deepSeek().smallestStripClearingRidge(trn1), 256);
  // Below the ridge the roofline is the traffic term, above it the flops term.
  ChainModel m = deepSeek();
  EXPECT_DOUBLE_EQ(m.rooflineUs(128, trn1), double(m.trafficBytes(128)) / (trn1.hbm_bandwidth_gbs * 1e9) * 1e6);
  EXPECT_DOUBLE_EQ(m.rooflineUs(1024, trn1), double(m.flops()) / trn1.peakBf16Flops() * 1e6);
}

TEST(ChainModel, StreamBoundIsTheTrafficThroughTheScarcerSharedBandwidth) {
  // trn1's DMA pool (16 engines x 17 GB/s = 272 GB/s) is scarcer than its
  // 410 GB/s HBM share: a strip re-reading the weights is bound by it.
  const runtime::Target &trn1 = runtime::trn1Target();
  ChainModel m = deepSeek();
  double pool = double(trn1.dma_engines) * trn1.dma_engine_bandwidth_gbs * 1e9;
  ASSERT_LT(pool, trn1.hbm_bandwidth_gbs * 1e9);
  EXPECT_NEAR(m.streamBoundUs(128, trn1), double(m.trafficBytes(128)) / pool * 1e6, 1e-6);
  EXPECT_GT(m.streamBoundUs(256, trn1), m.rooflineUs(256, trn1));
  // Tall strips are compute bound under either bandwidth.
  EXPECT_DOUBLE_EQ(m.streamBoundUs(4096, trn1), m.rooflineUs(4096, trn1));
}

TEST(ChainModel, NoStripClearsTheRidgeForThinWeights) {
  // A single 128 x 128 weight does 2 * 128 * 128 flops per row against at
  // least 2 * 256 bytes per row: AI < 128 whatever the strip.
  ChainModel thin = ChainModel::chain(4096, {128, 128}, 2);
  EXPECT_EQ(thin.smallestStripClearingRidge(runtime::trn1Target()), std::nullopt);
}

TEST(ChainModel, LongerChainsAndSwiGLUBlocks) {
  ChainModel three = ChainModel::chain(1000, {64, 32, 16, 8}, 4);
  EXPECT_EQ(three.flops(), uint64_t(2) * 1000 * (64 * 32 + 32 * 16 + 16 * 8));
  EXPECT_EQ(three.trafficBytes(256), uint64_t(4) * (1000 * 64 + 1000 * 8 + 4 * (64 * 32 + 32 * 16 + 16 * 8)));

  // Llama-3.2-1B SwiGLU at rank 512: X read once for both branches.
  ChainModel mlp(4096, {2048},
                 {{2048, 512}, {512, 8192}, {2048, 512}, {512, 8192}, {8192, 512}, {512, 2048}}, {2048}, 2);
  const uint64_t w = 2 * (2048 * 512 + 512 * 8192) + 8192 * 512 + 512 * 2048;
  EXPECT_EQ(mlp.flops(), 2 * 4096 * w);
  EXPECT_EQ(mlp.trafficBytes(512), 2 * (4096 * 2048 + 4096 * 2048 + 8 * w));
}

// Eq. 11 with one-tile blocks on DeepSeek-V3 (r = 4096, bf16, n = 512), per
// partition: phase 1 holds an X^T block [128, bs] (bs elements), a U block
// [128, 512] and the strip [bs, 4096] (32 bs elements); phase 2 the strip, a
// V block and an output block (512 each). Phase 1 is the larger from
// bs = 512 on; at 128 phase 2 is.
TEST(ChainModel, Eq11SbufOfTheXUVStrips) {
  const int64_t dims[] = {7168, 4096, 18432};
  EXPECT_EQ(ChainModel::eq11SbufBytes(dims, 128, 512, 128, 2), 2 * (32 * 128 + 512 + 512));
  for (int64_t bs : {512, 1024, 2048})
    EXPECT_EQ(ChainModel::eq11SbufBytes(dims, bs, 512, 128, 2), 2 * (bs + 512 + 32 * bs)) << bs;
  // A strip narrower than the blocks: phase 2 (two 512-wide blocks) is larger.
  const int64_t narrow[] = {256, 128, 256};
  EXPECT_EQ(ChainModel::eq11SbufBytes(narrow, 128, 512, 128, 2), 2 * (128 + 512 + 512));
  // A chain of three: the middle phase holds two strips.
  const int64_t three[] = {1024, 512, 1024, 256};
  EXPECT_EQ(ChainModel::eq11SbufBytes(three, 256, 256, 128, 2), 2 * (4 * 256 + 256 + 8 * 256));
}
