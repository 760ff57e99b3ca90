//===- tests/unit/runtime/IntervalUnionTest.cpp - busy time as a union ----===//
#include "runtime/Timing.h"

#include <gtest/gtest.h>

using namespace tessel::runtime;

TEST(IntervalUnion, OverlapsCountOnceGapsNotAtAll) {
  // [0, 10) and [5, 12) overlap, [20, 25) after a gap; added out of order.
  IntervalUnion u;
  u.add(20, 25);
  u.add(5, 12);
  u.add(0, 10);
  EXPECT_DOUBLE_EQ(u.length(), 12 + 5);
  // Four transfers at once on four queues are busy once.
  IntervalUnion q;
  for (int i = 0; i < 4; ++i)
    q.add(100, 200);
  EXPECT_DOUBLE_EQ(q.length(), 100);
}

TEST(IntervalUnion, NestedAndTouching) {
  IntervalUnion u;
  u.add(0, 100);
  u.add(10, 20);
  u.add(100, 110);
  EXPECT_DOUBLE_EQ(u.length(), 110);
}
