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
    return maxW <= floor ? floor : scanReadReady(r, unit, floor);
  }
  /// Earliest time a writer on `unit` may start (WAW + WAR), or `floor` if later.
  double writeReady(const Rect &r, int unit, double floor = 0) const {
    return maxW <= floor && maxR <= floor ? floor : scanWriteReady(r, unit, floor);
  }
  /// Whether a region overlapping `r` was last written by `unit` with its
  /// data visible exactly at `t` (i.e. by the unit's previous instruction).
  bool writtenBy(const Rect &r, int unit, double t) const { return maxW >= t && scanWrittenBy(r, unit, t); }
  /// A read of `r` by `unit` that finishes reading at `end`.
  void recordRead(const Rect &r, double end, int unit);
  /// A write of `r` by `unit` whose data is visible at `end`. Records of
  /// regions it covers are dropped: the writer waited for them.
  void recordWrite(const Rect &r, double end, int unit);
  size_t size() const { return count + (box ? 1 : 0); }
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
    /// The index of the first record whose key is not less than `k`.
    size_t lowerBound(const Key &k);
  };
  std::vector<Group> groups;
  uint32_t lastGroup = 0; ///< the group groupFor() found last: most objects are accessed in one shape
  /// Bounds on every record's wEnd and rEnd: most queries of an object
  /// (and of the objects aliasing it) are answered by them alone.
  double maxW = 0, maxR = 0;
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
  /// A new record of `r` in group `g` at `pos`, the place of its key.
  Rec &insert(Group &g, std::vector<std::pair<Key, Rec>>::iterator pos, const Rect &r);
  /// Calls fn(rec) for every record whose region overlaps `r`, skipping the
  /// groups for which skip(group) holds.
  template <class Skip, class Fn> void forOverlapping(const Rect &r, Skip skip, Fn fn) const;
  void compact();
};

} // namespace tessel::runtime

#endif
