//===- tests/unit/runtime/IntervalUnionTest.cpp - busy time as a union ----===//
#include "runtime/Timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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

TEST(IntervalUnion, InOrderAddsMatchTheMergedUnion) {
  // Mostly in time order (the fast path: extending or appending after the
  // last component), now and then earlier: the length is that of the
  // intervals sorted and merged.
  IntervalUnion u;
  std::vector<std::pair<double, double>> all;
  double t = 0;
  for (int i = 0; i < 2000; ++i) {
    double start = (i % 7 == 3) ? t - 35 : t + (i % 3) * 4.0 - 3;
    double end = start + 5 + (i % 5);
    t = std::max(t, end);
    u.add(start, end);
    all.emplace_back(start, end);
  }
  std::sort(all.begin(), all.end());
  double length = 0, s = all[0].first, e = all[0].second;
  for (const auto &[a, b] : all) {
    if (a > e) {
      length += e - s;
      s = a;
    }
    e = std::max(e, b);
  }
  length += e - s;
  EXPECT_NEAR(u.length(), length, 1e-9 * length);
  EXPECT_NEAR(u.lengthEstimate(), length, 1e-9 * length);
}
