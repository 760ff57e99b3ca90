//===- runtime/RegionTracker.h - Last writers/readers of regions -*- C++ -*-===//
//
// Internal to the runtime. Hazard records of one memory object for the timing
// model (Timing.h): for every region accessed, when its last write becomes
// visible and when its last reads end, and by which unit.
//
// Records are grouped by shape (rows x columns) and kept sorted by position
// (a flat vector: a group holds at most MaxRecords, so moving them on an
// insertion costs less than a tree node's allocation), so an access visits
// only the records whose position can overlap it: O(groups x log n) per
// access for a program's regular tiles, where scanning every record was O(n).
//
// The record count stays bounded as before: past MaxRecords, the oldest
// records are merged into one bounding box (later accesses may then wait
// more, never less) until MaxRecords / 2 remain. The answers, compaction
// included, are exactly those of the linear scan the tracker replaced
// (tests/unit/runtime/RegionTrackerTest.cpp compares the two).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_REGIONTRACKER_H
#define TESSEL_RUNTIME_REGIONTRACKER_H

#include "llvm/Support/Compiler.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessel::runtime {

/// A half-open 2-D region [r0, r1) x [c0, c1): partitions x bytes for a
/// buffer (physical per-partition byte addresses), rows x flattened inner
/// elements for an HBM tensor.
struct Rect {
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  bool overlaps(const Rect &o) const { return r0 < o.r1 && o.r0 < r1 && c0 < o.c1 && o.c0 < c1; }
  bool contains(const Rect &o) const { return r0 <= o.r0 && o.r1 <= r1 && c0 <= o.c0 && o.c1 <= c1; }
  bool operator==(const Rect &o) const { return r0 == o.r0 && r1 == o.r1 && c0 == o.c0 && c1 == o.c1; }
};

/// Last writers / readers of the regions of one memory object.
class RegionTracker {
public:
  static constexpr int NoUnit = -2, MixedUnits = -1;
  /// Earliest time a reader on `unit` may start (RAW), or `floor` if later.
  double readReady(const Rect &r, int unit, double floor = 0) const {
    return lateW.excluding(unit) <= floor ? floor : scanReadReady(r, unit, floor);
  }
  /// Earliest time a writer on `unit` may start (WAW + WAR), or `floor` if later.
  double writeReady(const Rect &r, int unit, double floor = 0) const {
    return lateW.excluding(unit) <= floor && lateR.excluding(unit) <= floor ? floor
                                                                            : scanWriteReady(r, unit, floor);
  }
  /// Whether a region overlapping `r` was last written by `unit` with its
  /// data visible exactly at `t` (i.e. by the unit's previous instruction).
  bool writtenBy(const Rect &r, int unit, double t) const { return maxW >= t && scanWrittenBy(r, unit, t); }
  /// A read of `r` by `unit` that finishes reading at `end`.
  void recordRead(const Rect &r, double end, int unit) {
    // Mostly the region read is the one the last access found or made (a
    // tile read again, or the next tile of a sweep): no search.
    if (Rec *x = atHint(r); x && !(box && boxRect == r)) {
      mergeRead(*x, groups[lastGroup], end, unit);
      return;
    }
    recordReadSlow(r, end, unit);
  }
  /// A write of `r` by `unit` whose data is visible at `end`. Records of
  /// regions it covers are dropped: the writer waited for them.
  void recordWrite(const Rect &r, double end, int unit) {
    // With one shape of records, a write covers only the record at its own
    // key (and perhaps the box).
    if (Rec *x = atHint(r); x && groups.size() == 1) {
      if (box && r.contains(boxRect))
        box = false;
      remakeWritten(*x, groups[lastGroup], end, unit);
      return;
    }
    recordWriteSlow(r, end, unit);
  }
  size_t size() const { return count + (box ? 1 : 0); }
  /// A bound on every write and read end recorded (0 if none).
  double latestEnd() const { return std::max(lateW.first, lateR.first); }
  /// Loop fast-forward: every write or read end at or after `cut` moves
  /// later by `d` (the records stay where they are).
  void shiftFrom(double cut, double d);
  static constexpr size_t MaxRecords = 256;

private:
  struct Rec {
    double wEnd = 0, rEnd = 0;
    int wUnit = NoUnit, rUnit = NoUnit;
    uint64_t seq = 0; ///< creation order
  };
  using Key = std::pair<int64_t, int64_t>; ///< (c0, r0)
  /// Records of one shape, keyed by position.
  struct Group {
    int64_t rows, cols;
    std::vector<std::pair<Key, Rec>> recs; ///< sorted by key
    /// Bounds on the records' wEnd and rEnd: a query whose answer is
    /// already this late skips the group.
    double maxW = 0, maxR = 0;
    /// Where the last record was found or made: tile sweeps access it or
    /// its successor next.
    size_t hint = 0;
    /// The last move of the hint other than to the next record: a loop
    /// that visits every few tiles, or comes back to its first one.
    ptrdiff_t jump = 0;
    void moveHint(size_t to) {
      if (to != hint && to != hint + 1)
        jump = ptrdiff_t(to) - ptrdiff_t(hint);
      hint = to;
    }
    /// The index of the first record whose key is not less than `k`.
    size_t lowerBound(const Key &k);
  };
  std::vector<Group> groups;
  uint32_t lastGroup = 0; ///< the group groupFor() found last: most objects are accessed in one shape
  /// Bounds on the wEnd and rEnd of every record of a unit other than the
  /// one asking: most queries of an object (and of the objects aliasing
  /// it) are answered by them alone, a unit's own records being no hazard
  /// (in-order units).
  struct UnitBound {
    double first = 0, second = 0; ///< the latest time; the latest of another unit than firstUnit
    int firstUnit = NoUnit;
    /// A record of `unit` now ends at `t`.
    void add(double t, int unit) {
      if (unit == NoUnit)
        return;
      if (unit == firstUnit) {
        first = std::max(first, t);
      } else if (t > first) {
        second = first;
        first = t;
        firstUnit = unit;
      } else {
        second = std::max(second, t);
      }
    }
    double excluding(int unit) const { return unit == firstUnit ? second : first; }
    void shiftFrom(double cut, double d) {
      first += first >= cut ? d : 0;
      second += second >= cut ? d : 0;
    }
  };
  UnitBound lateW, lateR;
  double maxW = 0; ///< bound on every record's wEnd
  size_t count = 0; ///< records in groups
  uint64_t nextSeq = 0;
  /// The oldest record once compaction has merged records into it; it is
  /// always older than every record in groups.
  bool box = false;
  Rect boxRect;
  Rec boxRec;

  double scanReadReady(const Rect &r, int unit, double floor) const;
  double scanWriteReady(const Rect &r, int unit, double floor) const;
  bool scanWrittenBy(const Rect &r, int unit, double t) const;
  uint32_t groupFor(const Rect &r);
  /// The record at `r`'s key in the last group used, when that group holds
  /// `r`'s shape and the record is at its hint, the next one, or one jump
  /// away (the hint then moves there).
  LLVM_ATTRIBUTE_ALWAYS_INLINE Rec *atHint(const Rect &r) {
    if (lastGroup >= groups.size())
      return nullptr;
    Group &g = groups[lastGroup];
    if (g.rows != r.r1 - r.r0 || g.cols != r.c1 - r.c0)
      return nullptr;
    const Key k{r.c0, r.r0};
    auto at = [&](size_t i) { return i < g.recs.size() && g.recs[i].first == k; };
    if (at(g.hint))
      return &g.recs[g.hint].second;
    size_t i = g.hint + 1;
    if (!at(i) && !at(i = g.hint + size_t(g.jump)))
      return nullptr;
    g.moveHint(i);
    return &g.recs[i].second;
  }
  /// The unit of a record that merges accesses of units `a` and `b`.
  static int mergeUnit(int a, int b) { return a == NoUnit ? b : b == NoUnit ? a : a == b ? a : MixedUnits; }
  void mergeRead(Rec &x, Group &g, double end, int unit) {
    x.rUnit = mergeUnit(x.rUnit, unit);
    x.rEnd = std::max(x.rEnd, end);
    lateR.add(x.rEnd, x.rUnit);
    g.maxR = std::max(g.maxR, end);
  }
  /// Makes `x` (in `g`) anew as the record of a write.
  void remakeWritten(Rec &x, Group &g, double end, int unit) {
    x = Rec();
    x.seq = nextSeq++;
    x.wEnd = end;
    x.wUnit = unit;
    lateW.add(end, unit);
    g.maxW = std::max(g.maxW, end);
    maxW = std::max(maxW, end);
  }
  void recordReadSlow(const Rect &r, double end, int unit);
  void recordWriteSlow(const Rect &r, double end, int unit);
  /// A new record of `r` in group `g` at `pos`, the place of its key.
  Rec &insert(Group &g, std::vector<std::pair<Key, Rec>>::iterator pos, const Rect &r);
  /// Calls fn(rec) for every record whose region overlaps `r`, skipping the
  /// groups for which skip(group) holds.
  template <class Skip, class Fn> void forOverlapping(const Rect &r, Skip skip, Fn fn) const;
  void compact();
};

} // namespace tessel::runtime

#endif
