//===- tests/unit/runtime/IntervalUnionTest.cpp - busy time as a union ----===//
#include "runtime/IntervalUnion.h"

#include <gtest/gtest.h>

using namespace tessel::runtime;

TEST(IntervalUnion, OverlapsCountOnceGapsNotAtAll) {
  IntervalUnion u;
  // Key 7: [0, 10) and [5, 12) overlap, [20, 25) after a gap; added out of order.
  u.add(7, 20, 25);
  u.add(7, 5, 12);
  u.add(7, 0, 10);
  // Key 3: four transfers at once on four queues.
  for (int q = 0; q < 4; ++q)
    u.add(3, 100, 200);
  std::map<uint32_t, double> lengths = u.lengths();
  EXPECT_EQ(lengths.size(), 2u);
  EXPECT_DOUBLE_EQ(lengths[7], 12 + 5);
  EXPECT_DOUBLE_EQ(lengths[3], 100);
}

TEST(IntervalUnion, NestedAndTouching) {
  IntervalUnion u;
  u.add(0, 0, 100);
  u.add(0, 10, 20);
  u.add(0, 100, 110);
  EXPECT_DOUBLE_EQ(u.lengths()[0], 110);
}
