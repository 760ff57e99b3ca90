//===- tests/unit/runtime/HorizonTest.cpp - units that may still run ------===//
#include "TestUtil.h"

#include "runtime/Horizon.h"
#include "runtime/Timing.h"

#include <limits>

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

// Two phases: a loop loading on queues 0-1 and copying on VectorE, then a
// loop storing on queue 2 after a ScalarE activation.
const char *kTwoPhases = R"(
tensor %A : bf16[512, 128] input
tensor %B : bf16[512, 128] output
buffer %a : sbuf bf16[128, 128] bufs=2 addr=0
buffer %b : sbuf bf16[128, 128] bufs=2 addr=256
for %i = 0 to 4 {
  alloc %a
  dma %a <- %A[%i*128 : 128, 0:128] queue=0 queues=2
  alloc %b
  copy %b <- %a
}
for %j = 0 to 4 {
  alloc %b
  activation.relu %b <- %a
  dma %B[%j*128 : 128, 0:128] <- %b queue=2
}
)";

constexpr unsigned Compute = 4; // tensor, vector, scalar, gpsimd

TEST(UnitHorizon, UnitsOfLaterPhasesAndEnclosingLoops) {
  Program p = parseOrFail(kTwoPhases);
  UnitHorizon h(p, Compute);
  // instrs: 0 dma (queues 0-1), 1 copy (vector), 2 activation (scalar), 3 dma (queue 2)
  EXPECT_TRUE(h.mayRun(1, Compute + 0));  // the loop repeats: its own DMA may run again
  EXPECT_TRUE(h.mayRun(0, Compute + 2));  // the second phase follows
  EXPECT_TRUE(h.mayRun(1, 2));
  EXPECT_FALSE(h.mayRun(2, 1));           // no VectorE work after the first phase
  EXPECT_FALSE(h.mayRun(3, Compute + 1)); // nor its DMA queues
  std::vector<double> freeAt = {0, 50, 30, 0, 10, 20, 40};
  EXPECT_EQ(h.at(3, freeAt), 30.0); // TensorE, free at 0, runs nothing: ScalarE 30, queue 2 at 40
  EXPECT_EQ(h.at(1, freeAt), 10.0); // TensorE, free at 0, runs nothing: queue 0 at 10
  EXPECT_EQ(h.at(0, freeAt, Compute), 10.0);
  EXPECT_EQ(h.at(2, freeAt, Compute), 40.0);
}

TEST(PortUses, ForgettingBeforeTheHorizonKeepsEveryFit) {
  PortUses all, pruned;
  for (int i = 0; i < 1000; ++i) {
    all.add(10.0 * i, 10.0 * i + 6);
    pruned.add(10.0 * i, 10.0 * i + 6);
  }
  pruned.forget(5000);
  EXPECT_LT(pruned.size(), 600u);
  for (double start = 5000; start < 10100; start += 3.5)
    EXPECT_EQ(pruned.fitAround(start, 3), all.fitAround(start, 3));
}

} // namespace
