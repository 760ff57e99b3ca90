//===- tests/unit/runtime/CollectiveTest.cpp ------------------------------===//
#include "runtime/Collective.h"

#include "gtest/gtest.h"

using namespace tessel::runtime;

TEST(Collective, OneCoreCostsNothing) {
  Target t = trn1Target();
  CollectiveCost c = ringAllReduce(t, 1, 1 << 20, 2);
  EXPECT_EQ(c.steps, 0);
  EXPECT_EQ(c.totalUs(), 0);
}

TEST(Collective, RingStepsAndBytesFollowTheAlgorithm) {
  Target t = trn1Target();
  t.neuron_cores_per_chip = 8; // one chip's ring at every n below
  const int64_t bytes = int64_t(4096) * 18432 * 2; // DeepSeek up_proj's output at M = 4096, bf16
  for (int n : {2, 4, 8}) {
    CollectiveCost c = ringAllReduce(t, n, bytes, 2);
    EXPECT_EQ(c.steps, 2 * (n - 1));
    EXPECT_EQ(c.chunkBytes, bytes / n);
    // Each core moves 2 (N-1)/N of the buffer, read and written once each.
    EXPECT_EQ(c.hbmBytesPerCore, 2 * 2 * (n - 1) * (bytes / n));
    // Never faster than moving those bytes at the core's HBM share.
    EXPECT_GE(c.transferNs, double(c.hbmBytesPerCore) / t.hbmBytesPerNs());
  }
}

TEST(Collective, SmallBuffersPayTheFixedLatencyPerStep) {
  Target t = trn1Target();
  CollectiveCost c = ringAllReduce(t, 2, 2 * 128, 2);
  EXPECT_GE(c.transferNs, c.steps * t.dma_fixed_latency_ns);
  EXPECT_LT(c.transferNs, c.steps * (t.dma_fixed_latency_ns + 10));
}

// Beyond one chip: a reduce-scatter and an all-gather among each chip's cores
// around a ring between the chips, whose steps share the chip's link.
TEST(Collective, ChipsAreARingOfChipRings) {
  Target t = trn1Target(); // 2 cores per chip
  const int64_t bytes = int64_t(640) * 4096 * 2;
  CollectiveCost c = ringAllReduce(t, 8, bytes, 2);
  EXPECT_EQ(c.chips, 4);
  EXPECT_EQ(c.steps, 2 * (2 - 1) + 2 * (4 - 1));
  EXPECT_EQ(c.chunkBytes, bytes / 2 / 4);
  // The link steps: each pays the fixed latency and the chip's two cores'
  // chunks at the chip's link bandwidth.
  EXPECT_DOUBLE_EQ(c.linkNs, 6 * (t.dma_fixed_latency_ns + 2.0 * double(c.chunkBytes) / t.chip_link_gbps));
  EXPECT_GT(c.transferNs, c.linkNs);
  // A slower link makes only the steps between chips slower.
  Target slow = t;
  slow.chip_link_gbps = t.chip_link_gbps / 4;
  CollectiveCost s = ringAllReduce(slow, 8, bytes, 2);
  EXPECT_DOUBLE_EQ(s.transferNs - s.linkNs, c.transferNs - c.linkNs);
  EXPECT_GT(s.linkNs, c.linkNs);
  // On one chip nothing crosses a link.
  EXPECT_EQ(ringAllReduce(t, 2, bytes, 2).linkNs, 0);
}

TEST(Collective, CoreCountsAreOneChipOrWholeChips) {
  Target t = trn1Target();
  for (int64_t ok : {1, 2, 4, 32})
    EXPECT_FALSE(bool(checkCoreCount(t, ok))) << ok;
  for (int64_t bad : {0, 3, 5, 34, 64}) {
    llvm::Error e = checkCoreCount(t, bad);
    EXPECT_TRUE(bool(e)) << bad;
    llvm::consumeError(std::move(e));
  }
}
