//===- tests/unit/runtime/TimeShiftTest.cpp - fast-forward's time shifts ---===//
//
// Loop fast-forward (runtime/FastForward.h) moves timing state k periods
// later: the structures must end as if the k periods had been added one by
// one.
//
//===----------------------------------------------------------------------===//
#include "runtime/Timing.h"

#include <gtest/gtest.h>

using namespace tessel::runtime;

TEST(TimeShift, IntervalUnionLengthEstimateFollowsAddsAndForgets) {
  IntervalUnion u;
  u.add(0, 10);
  u.add(5, 12);
  u.add(20, 25);
  u.add(24, 30);
  EXPECT_DOUBLE_EQ(u.lengthEstimate(), u.length());
  u.forget(15);
  u.add(40, 41);
  EXPECT_DOUBLE_EQ(u.lengthEstimate(), u.length());
}

TEST(TimeShift, IntervalUnionShiftKeepsWhatIsBeforeTheCut) {
  // Periods of 10: busy [0, 4) then [10, 14); skipping 3 periods moves [10, 14) to [40, 44).
  IntervalUnion u;
  u.add(0, 4);
  u.add(10, 14);
  u.shiftFrom(10, 30, 3 * 4);
  EXPECT_DOUBLE_EQ(u.length(), 8 + 12);
  // A later interval merges with the moved one, not with the gap it left.
  u.add(44, 46);
  EXPECT_DOUBLE_EQ(u.length(), 8 + 12 + 2);
}

TEST(TimeShift, CalendarRepeatsThePeriodsPattern) {
  // One transfer of 4 ns per 10 ns period. After two periods, three more
  // skipped: a reservation that fits a gap of the skipped pattern finds it,
  // as it would have if the three periods had been reserved one by one.
  BandwidthCalendar skipped, stepped;
  for (int p = 0; p < 2; ++p) {
    skipped.reserve(10 * p, 4);
    stepped.reserve(10 * p, 4);
  }
  for (int p = 2; p < 5; ++p)
    stepped.reserve(10 * p, 4);
  skipped.repeatPeriods(10, 10, 3, 12);
  EXPECT_DOUBLE_EQ(skipped.totalReserved(), stepped.totalReserved());
  EXPECT_EQ(skipped.intervals(), stepped.intervals());
  EXPECT_DOUBLE_EQ(skipped.reserve(25, 3), stepped.reserve(25, 3));
  EXPECT_DOUBLE_EQ(skipped.reserve(31, 8), stepped.reserve(31, 8));
}

TEST(TimeShift, PortUsesRepeatThePeriodsPattern) {
  PortUses skipped, stepped;
  for (int p = 0; p < 2; ++p) {
    skipped.add(10 * p + 2, 10 * p + 5);
    stepped.add(10 * p + 2, 10 * p + 5);
  }
  for (int p = 2; p < 5; ++p)
    stepped.add(10 * p + 2, 10 * p + 5);
  skipped.repeatPeriods(10, 10, 3);
  for (double t : {0.0, 11.0, 23.0, 30.5, 44.0, 47.0})
    EXPECT_DOUBLE_EQ(skipped.fitAround(t, 2), stepped.fitAround(t, 2)) << t;
}
