//===- tests/unit/runtime/RegionTrackerTest.cpp - indexed vs linear tracker -===//
//
// The indexed RegionTracker must answer exactly as the linear scan it
// replaced, compaction included, on random access sequences of regular
// tiles, odd rectangles and overlapping windows. IntervalUnion must give the
// length that sorting and merging all intervals at the end gives.
//
//===----------------------------------------------------------------------===//
#include "runtime/RegionTracker.h"
#include "runtime/Timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace tessel::runtime;

namespace {

/// The straightforward tracker (the runtime's before it was indexed): every
/// record in a list in creation order, every query a scan, and past
/// MaxRecords the two oldest records merged into their bounding box until
/// half remain.
class LinearTracker {
public:
  static constexpr int NoUnit = RegionTracker::NoUnit, MixedUnits = RegionTracker::MixedUnits;
  double readReady(const Rect &r, int unit) const {
    double t = 0;
    for (const Rec &x : recs)
      if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t && x.r.overlaps(r))
        t = x.wEnd;
    return t;
  }
  double writeReady(const Rect &r, int unit) const {
    double t = 0;
    for (const Rec &x : recs) {
      if (!x.r.overlaps(r))
        continue;
      if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t)
        t = x.wEnd;
      if (x.rUnit != unit && x.rUnit != NoUnit && x.rEnd > t)
        t = x.rEnd;
    }
    return t;
  }
  bool writtenBy(const Rect &r, int unit, double t) const {
    for (const Rec &x : recs)
      if (x.wUnit == unit && x.wEnd == t && x.r.overlaps(r))
        return true;
    return false;
  }
  void recordRead(const Rect &r, double end, int unit) {
    for (Rec &x : recs) {
      if (x.r == r) {
        if (x.rUnit == NoUnit)
          x.rUnit = unit;
        else if (x.rUnit != unit)
          x.rUnit = MixedUnits;
        x.rEnd = std::max(x.rEnd, end);
        return;
      }
    }
    recs.push_back({r, 0, end, NoUnit, unit});
    if (recs.size() > RegionTracker::MaxRecords)
      compact();
  }
  void recordWrite(const Rect &r, double end, int unit) {
    recs.erase(std::remove_if(recs.begin(), recs.end(), [&](const Rec &x) { return r.contains(x.r); }),
               recs.end());
    recs.push_back({r, end, 0, unit, NoUnit});
    if (recs.size() > RegionTracker::MaxRecords)
      compact();
  }
  size_t size() const { return recs.size(); }

private:
  struct Rec {
    Rect r;
    double wEnd, rEnd;
    int wUnit, rUnit;
  };
  std::vector<Rec> recs;
  void compact() {
    while (recs.size() > RegionTracker::MaxRecords / 2) {
      Rec &a = recs[0];
      const Rec &b = recs[1];
      a.r.r0 = std::min(a.r.r0, b.r.r0);
      a.r.r1 = std::max(a.r.r1, b.r.r1);
      a.r.c0 = std::min(a.r.c0, b.r.c0);
      a.r.c1 = std::max(a.r.c1, b.r.c1);
      auto mergeUnit = [](int x, int y) { return x == NoUnit ? y : y == NoUnit ? x : x == y ? x : MixedUnits; };
      a.wUnit = mergeUnit(a.wUnit, b.wUnit);
      a.rUnit = mergeUnit(a.rUnit, b.rUnit);
      a.wEnd = std::max(a.wEnd, b.wEnd);
      a.rEnd = std::max(a.rEnd, b.rEnd);
      recs.erase(recs.begin() + 1);
    }
  }
};

/// Random rectangles: mostly tiles of a few shapes on a grid (as programs
/// make them), some at odd offsets and sizes that straddle the tiles.
Rect randomRect(std::mt19937 &rng, int area) {
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  static const int64_t shapes[][2] = {{128, 512}, {128, 128}, {64, 256}, {32, 32}};
  if (pick(5) == 0) {
    int64_t r0 = pick(300 * area), c0 = pick(2000);
    return {r0, r0 + 1 + pick(200), c0, c0 + 1 + pick(900)};
  }
  const int64_t *s = shapes[pick(4)];
  int64_t r0 = s[0] * pick(4 * area), c0 = s[1] * pick(6);
  return {r0, r0 + s[0], c0, c0 + s[1]};
}

/// Runs random accesses on both trackers and compares every answer. Units
/// run in order: each access starts no earlier than its unit is free and
/// after the hazards; writes may become visible later (a pipeline latency).
/// Small integer times make equal times (writtenBy) common; `area` sets how
/// many distinct regions there are, hence whether compaction runs.
void compareOnRandomSequences(int area) {
  constexpr int Units = 6;
  for (unsigned seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(seed);
    RegionTracker fast;
    LinearTracker ref;
    double freeAt[Units] = {};
    size_t maxSize = 0;
    for (int step = 0; step < 3000; ++step) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " step " << step);
      Rect r = randomRect(rng, area);
      int unit = int(rng() % Units);
      bool write = rng() % 3 == 0;
      double ready = write ? ref.writeReady(r, unit) : ref.readReady(r, unit);
      ASSERT_EQ(write ? fast.writeReady(r, unit) : fast.readReady(r, unit), ready);
      double floor = double(rng() % 64);
      ASSERT_EQ(write ? fast.writeReady(r, unit, floor) : fast.readReady(r, unit, floor), std::max(floor, ready));
      ASSERT_EQ(fast.writtenBy(r, unit, freeAt[unit]), ref.writtenBy(r, unit, freeAt[unit]));
      double start = std::max(freeAt[unit], ready) + double(rng() % 3);
      double end = start + double(rng() % 4);
      freeAt[unit] = end;
      if (write) {
        double visible = end + double(rng() % 3);
        fast.recordWrite(r, visible, unit);
        ref.recordWrite(r, visible, unit);
      } else {
        fast.recordRead(r, end, unit);
        ref.recordRead(r, end, unit);
      }
      ASSERT_EQ(fast.size(), ref.size());
      maxSize = std::max(maxSize, ref.size());
    }
    if (area > 1) {
      EXPECT_EQ(maxSize, RegionTracker::MaxRecords); // compaction ran
    }
  }
}

TEST(RegionTracker, AgreesWithLinearScan) { compareOnRandomSequences(1); }

TEST(RegionTracker, AgreesWithLinearScanThroughCompaction) { compareOnRandomSequences(16); }

TEST(IntervalUnion, LengthAsSortAndMerge) {
  std::mt19937 rng(1);
  std::vector<std::pair<double, double>> all;
  IntervalUnion u;
  double now = 0;
  for (int i = 0; i < 5000; ++i) {
    now += double(rng() % 5);
    double s = now + double(rng() % 10), e = s + double(rng() % 30);
    all.push_back({s, e});
    u.add(s, e);
    if (i % 100 == 0)
      u.forget(now); // every later interval starts at or after now
  }
  std::sort(all.begin(), all.end());
  double total = 0, cs = -1, ce = -1;
  for (auto &iv : all) {
    if (iv.first > ce) {
      if (ce > cs)
        total += ce - cs;
      cs = iv.first;
      ce = iv.second;
    } else {
      ce = std::max(ce, iv.second);
    }
  }
  if (ce > cs)
    total += ce - cs;
  EXPECT_EQ(u.length(), total);
  EXPECT_LT(u.size(), 100u);
}

} // namespace
