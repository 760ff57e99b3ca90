//===- runtime/RegionTracker.cpp - Hazard records indexed by position ------===//
#include "runtime/RegionTracker.h"

#include <algorithm>

namespace tessel::runtime {

namespace {

/// Visits the keys (c0, r0) of `m` with c0 in [cLo, cHi] and r0 in [rLo, rHi],
/// seeking past the keys of each column whose rows fall outside; fn(it)
/// returns the iterator to continue from.
template <class Map, class Fn> void forKeysIn(Map &m, int64_t cLo, int64_t cHi, int64_t rLo, int64_t rHi, Fn fn) {
  auto it = m.lower_bound({cLo, rLo});
  while (it != m.end() && it->first.first <= cHi) {
    int64_t c = it->first.first, r = it->first.second;
    if (r < rLo)
      it = m.lower_bound({c, rLo});
    else if (r > rHi)
      it = m.lower_bound({c + 1, rLo});
    else
      it = fn(it);
  }
}

/// The unit of a record that merges accesses of units `a` and `b`.
int mergeUnit(int a, int b) {
  return a == RegionTracker::NoUnit ? b : b == RegionTracker::NoUnit ? a : a == b ? a : RegionTracker::MixedUnits;
}

} // namespace

template <class Skip, class Fn> void RegionTracker::forOverlapping(const Rect &r, Skip skip, Fn fn) const {
  if (box && boxRect.overlaps(r))
    fn(boxRec);
  for (const Group &g : groups)
    if (!skip(g))
      forKeysIn(g.recs, r.c0 - g.cols + 1, r.c1 - 1, r.r0 - g.rows + 1, r.r1 - 1, [&](auto it) {
        fn(it->second);
        return std::next(it);
      });
}

uint32_t RegionTracker::groupFor(const Rect &r) {
  int64_t rows = r.r1 - r.r0, cols = r.c1 - r.c0;
  for (uint32_t i = 0; i < groups.size(); ++i)
    if (groups[i].rows == rows && groups[i].cols == cols)
      return i;
  groups.push_back(Group{rows, cols, {}});
  return uint32_t(groups.size() - 1);
}

RegionTracker::Rec &RegionTracker::insert(const Rect &r) {
  uint32_t g = groupFor(r);
  Rec &x = groups[g].recs[{r.c0, r.r0}];
  x.seq = nextSeq++;
  order.emplace(x.seq, std::make_pair(g, Key{r.c0, r.r0}));
  return x;
}

double RegionTracker::readReady(const Rect &r, int unit, double floor) const {
  double t = floor;
  forOverlapping(r, [&](const Group &g) { return g.maxW <= t; }, [&](const Rec &x) {
    if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t)
      t = x.wEnd;
  });
  return t;
}

double RegionTracker::writeReady(const Rect &r, int unit, double floor) const {
  double t = floor;
  forOverlapping(r, [&](const Group &g) { return g.maxW <= t && g.maxR <= t; }, [&](const Rec &x) {
    if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t)
      t = x.wEnd;
    if (x.rUnit != unit && x.rUnit != NoUnit && x.rEnd > t)
      t = x.rEnd;
  });
  return t;
}

bool RegionTracker::writtenBy(const Rect &r, int unit, double t) const {
  bool found = false;
  forOverlapping(r, [&](const Group &g) { return found || g.maxW < t; },
                 [&](const Rec &x) { found = found || (x.wUnit == unit && x.wEnd == t); });
  return found;
}

void RegionTracker::recordRead(const Rect &r, double end, int unit) {
  // The first record of region r in creation order takes the read: the box,
  // being the oldest, comes first.
  Rec *x = nullptr;
  if (box && boxRect == r) {
    x = &boxRec;
  } else {
    Group &g = groups[groupFor(r)];
    g.maxR = std::max(g.maxR, end);
    auto it = g.recs.find({r.c0, r.r0});
    if (it != g.recs.end())
      x = &it->second;
  }
  if (x) {
    x->rUnit = mergeUnit(x->rUnit, unit);
    x->rEnd = std::max(x->rEnd, end);
    return;
  }
  Rec &n = insert(r);
  n.rEnd = end;
  n.rUnit = unit;
  if (size() > MaxRecords)
    compact();
}

void RegionTracker::recordWrite(const Rect &r, double end, int unit) {
  if (box && r.contains(boxRect))
    box = false;
  for (Group &g : groups) {
    if (g.rows > r.r1 - r.r0 || g.cols > r.c1 - r.c0)
      continue;
    forKeysIn(g.recs, r.c0, r.c1 - g.cols, r.r0, r.r1 - g.rows, [&](auto it) {
      order.erase(it->second.seq);
      return g.recs.erase(it);
    });
  }
  Rec &n = insert(r);
  n.wEnd = end;
  n.wUnit = unit;
  Group &g = groups[groupFor(r)];
  g.maxW = std::max(g.maxW, end);
  if (size() > MaxRecords)
    compact();
}

// Merges the oldest records into the box, oldest first, until half remain.
void RegionTracker::compact() {
  auto takeOldest = [&](Rect &rect, Rec &rec) {
    auto [seq, where] = *order.begin();
    Group &g = groups[where.first];
    auto it = g.recs.find(where.second);
    rect = {where.second.second, where.second.second + g.rows, where.second.first, where.second.first + g.cols};
    rec = it->second;
    g.recs.erase(it);
    order.erase(order.begin());
  };
  while (size() > MaxRecords / 2) {
    if (!box) {
      takeOldest(boxRect, boxRec);
      box = true;
    }
    Rect r;
    Rec b;
    takeOldest(r, b);
    boxRect.r0 = std::min(boxRect.r0, r.r0);
    boxRect.r1 = std::max(boxRect.r1, r.r1);
    boxRect.c0 = std::min(boxRect.c0, r.c0);
    boxRect.c1 = std::max(boxRect.c1, r.c1);
    boxRec.wUnit = mergeUnit(boxRec.wUnit, b.wUnit);
    boxRec.rUnit = mergeUnit(boxRec.rUnit, b.rUnit);
    boxRec.wEnd = std::max(boxRec.wEnd, b.wEnd);
    boxRec.rEnd = std::max(boxRec.rEnd, b.rEnd);
  }
}

} // namespace tessel::runtime
