//===- tests/unit/runtime/FastForwardTest.cpp - what fast-forward watches --===//
//
// The parts of loop fast-forward (runtime/FastForward.h) that decide what is
// watched: the least period a loop's rotations allow, and the backoff that
// stops watching a loop whose executions never settle. That skipped runs
// agree with exact ones is tests/unit/analysis/FastForwardAgreementTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "runtime/FastForward.h"

using namespace tessel::runtime;
using namespace tessel::runtime::test;

namespace {

// Loop 0 (%i): one alloc of a 2-slot buffer and 8 transfers over 4 queues per
// iteration: period 2. Loop 1 (%k, inside %j): 1 alloc of a 3-slot buffer per
// iteration: period 3. Loop 2 (%j): 8 allocs of it, and one transfer over 4
// queues per iteration: period lcm(3, 4) = 12, more than any skip tries.
const char *kRotations = R"(
tensor %A : bf16[4096, 128] input
buffer %a : sbuf bf16[128, 128] bufs=2 addr=0
buffer %b : sbuf bf16[128, 128] bufs=3 addr=512
for %i = 0 to 64 {
  alloc %a
  for %q = 0 to 8 {
    dma %a <- %A[%q*128 : 128, 0:128] queue=0 queues=4
  }
}
for %j = 0 to 32 {
  dma %a <- %A[%j*128 : 128, 0:128] queue=4 queues=4
  for %k = 0 to 8 {
    alloc %b
    dma %b <- %A[%k*128 : 128, 0:128] queue=8
  }
}
)";

TEST(FastForward, PeriodBringsEveryRotationBack) {
  Program p = parseOrFail(kRotations);
  LoopShapes shapes(p);
  ASSERT_EQ(p.loops.size(), 4u);
  auto loopOf = [&](const char *var) {
    for (uint32_t l = 0; l < p.loops.size(); ++l)
      if (p.vars[p.loops[l].var] == var)
        return l;
    ADD_FAILURE() << "no loop %" << var;
    return 0u;
  };
  EXPECT_EQ(shapes[loopOf("i")].period, 2);
  EXPECT_TRUE(shapes[loopOf("i")].skippable);
  EXPECT_EQ(shapes[loopOf("k")].period, 3);
  EXPECT_EQ(shapes[loopOf("j")].period, 12);
  EXPECT_FALSE(shapes[loopOf("j")].skippable);
  // Too short for two periods, a skip and a last period: not watched.
  EXPECT_FALSE(LoopWatch::worthWatching(p.loops[loopOf("k")], shapes[loopOf("k")]));
  EXPECT_TRUE(LoopWatch::worthWatching(p.loops[loopOf("i")], shapes[loopOf("i")]));
}

TEST(FastForward, BackoffWatchesUnsettledLoopsLessAndLess) {
  WatchBackoff backoff(2);
  std::vector<int> watched;
  for (int e = 0; e < 40; ++e)
    if (backoff.shouldWatch(0)) {
      watched.push_back(e);
      backoff.watched(0, false);
    }
  // Watched, then 1, 2, 4, 8, ... executions left alone after each miss.
  EXPECT_EQ(watched, (std::vector<int>{0, 2, 5, 10, 19, 36}));
  // A skip makes every execution watched again; loops are independent.
  EXPECT_TRUE(backoff.shouldWatch(1));
  backoff.watched(1, false);
  EXPECT_FALSE(backoff.shouldWatch(1));
  EXPECT_TRUE(backoff.shouldWatch(1));
  backoff.watched(1, true);
  EXPECT_TRUE(backoff.shouldWatch(1));
  backoff.watched(1, true);
  EXPECT_TRUE(backoff.shouldWatch(1));
}

} // namespace
