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
