//===- runtime/RegionTracker.cpp - Hazard records indexed by position ------===//
#include "runtime/RegionTracker.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tessel::runtime {

namespace {

/// The first element of the sorted range [from, to) whose key is not less
/// than `k`. Keys past the last one (a tile sweep's next tile) are common.
template <class It, class Key> It seek(It from, It to, const Key &k) {
  if (from == to || std::prev(to)->first < k)
    return to;
  return std::lower_bound(from, to, k, [](const auto &e, const Key &key) { return e.first < key; });
}

/// Visits the keys (c0, r0) of the sorted vector `m` with c0 in [cLo, cHi]
/// and r0 in [rLo, rHi], seeking past the keys of each column whose rows fall
/// outside; fn(it) returns the iterator to continue from.
template <class Vec, class Fn> void forKeysIn(Vec &m, int64_t cLo, int64_t cHi, int64_t rLo, int64_t rHi, Fn fn) {
  using Key = typename Vec::value_type::first_type;
  auto it = seek(m.begin(), m.end(), Key{cLo, rLo});
  while (it != m.end() && it->first.first <= cHi) {
    int64_t c = it->first.first, r = it->first.second;
    if (r < rLo)
      it = seek(it, m.end(), Key{c, rLo});
    else if (r > rHi)
      it = seek(it, m.end(), Key{c + 1, rLo});
    else
      it = fn(it);
  }
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

size_t RegionTracker::Group::lowerBound(const Key &k) {
  const size_t n = recs.size();
  auto isBound = [&](size_t i) { return i <= n && (i == n || !(recs[i].first < k)) && (i == 0 || recs[i - 1].first < k); };
  if (isBound(hint))
    return hint;
  moveHint(isBound(hint + 1) ? hint + 1 : size_t(seek(recs.begin(), recs.end(), k) - recs.begin()));
  return hint;
}

uint32_t RegionTracker::groupFor(const Rect &r) {
  int64_t rows = r.r1 - r.r0, cols = r.c1 - r.c0;
  if (lastGroup < groups.size() && groups[lastGroup].rows == rows && groups[lastGroup].cols == cols)
    return lastGroup;
  for (uint32_t i = 0; i < groups.size(); ++i)
    if (groups[i].rows == rows && groups[i].cols == cols)
      return lastGroup = i;
  groups.push_back(Group{rows, cols, {}});
  return lastGroup = uint32_t(groups.size() - 1);
}

RegionTracker::Rec &RegionTracker::insert(Group &g, std::vector<std::pair<Key, Rec>>::iterator pos,
                                          const Rect &r) {
  ++count;
  Rec &x = g.recs.insert(pos, {Key{r.c0, r.r0}, Rec()})->second;
  x.seq = nextSeq++;
  return x;
}

double RegionTracker::scanReadReady(const Rect &r, int unit, double floor) const {
  double t = floor;
  forOverlapping(r, [&](const Group &g) { return g.maxW <= t; }, [&](const Rec &x) {
    if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t)
      t = x.wEnd;
  });
  return t;
}

double RegionTracker::scanWriteReady(const Rect &r, int unit, double floor) const {
  double t = floor;
  forOverlapping(r, [&](const Group &g) { return g.maxW <= t && g.maxR <= t; }, [&](const Rec &x) {
    if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t)
      t = x.wEnd;
    if (x.rUnit != unit && x.rUnit != NoUnit && x.rEnd > t)
      t = x.rEnd;
  });
  return t;
}

bool RegionTracker::scanWrittenBy(const Rect &r, int unit, double t) const {
  bool found = false;
  forOverlapping(r, [&](const Group &g) { return found || g.maxW < t; },
                 [&](const Rec &x) { found = found || (x.wUnit == unit && x.wEnd == t); });
  return found;
}

void RegionTracker::recordReadSlow(const Rect &r, double end, int unit) {
  // The first record of region r in creation order takes the read: the box,
  // being the oldest, comes first.
  if (box && boxRect == r) {
    boxRec.rUnit = mergeUnit(boxRec.rUnit, unit);
    boxRec.rEnd = std::max(boxRec.rEnd, end);
    lateR.add(boxRec.rEnd, boxRec.rUnit);
    return;
  }
  Group &g = groups[groupFor(r)];
  Key k{r.c0, r.r0};
  auto it = g.recs.begin() + long(g.lowerBound(k));
  if (it != g.recs.end() && it->first == k)
    return mergeRead(it->second, g, end, unit);
  Rec &n = insert(g, it, r);
  mergeRead(n, g, end, unit);
  if (size() > MaxRecords)
    compact();
}

void RegionTracker::recordWriteSlow(const Rect &r, double end, int unit) {
  if (box && r.contains(boxRect))
    box = false;
  const uint32_t own = groupFor(r);
  for (uint32_t i = 0; i < groups.size(); ++i) {
    Group &g = groups[i];
    if (i == own || g.rows > r.r1 - r.r0 || g.cols > r.c1 - r.c0)
      continue;
    forKeysIn(g.recs, r.c0, r.c1 - g.cols, r.r0, r.r1 - g.rows, [&](auto it) {
      --count;
      return g.recs.erase(it);
    });
  }
  // Of r's own shape, r covers only the record at its own key: that one
  // is made anew in place (as if dropped and made again).
  Group &g = groups[own];
  const Key k{r.c0, r.r0};
  auto it = g.recs.begin() + long(g.lowerBound(k));
  if (it != g.recs.end() && it->first == k) {
    remakeWritten(it->second, g, end, unit);
    return;
  }
  remakeWritten(insert(g, it, r), g, end, unit);
  if (size() > MaxRecords)
    compact();
}

// Merges the oldest records into the box until half remain (the box then
// counting as one). Merging is order-free (maxima, bounding box, units), so
// the oldest records are found by their creation numbers alone.
void RegionTracker::compact() {
  if (size() <= MaxRecords / 2)
    return;
  size_t take = count - (MaxRecords / 2 - 1);
  std::vector<uint64_t> seqs;
  seqs.reserve(count);
  for (const Group &g : groups)
    for (const auto &e : g.recs)
      seqs.push_back(e.second.seq);
  std::nth_element(seqs.begin(), seqs.begin() + long(take - 1), seqs.end());
  const uint64_t newest = seqs[take - 1]; // the newest record merged
  for (Group &g : groups)
    llvm::erase_if(g.recs, [&](const std::pair<Key, Rec> &e) {
      if (e.second.seq > newest)
        return false;
      const Rec &b = e.second;
      Rect r{e.first.second, e.first.second + g.rows, e.first.first, e.first.first + g.cols};
      if (!box) {
        boxRect = r;
        boxRec = b;
        box = true;
        return true;
      }
      boxRect.r0 = std::min(boxRect.r0, r.r0);
      boxRect.r1 = std::max(boxRect.r1, r.r1);
      boxRect.c0 = std::min(boxRect.c0, r.c0);
      boxRect.c1 = std::max(boxRect.c1, r.c1);
      boxRec.wUnit = mergeUnit(boxRec.wUnit, b.wUnit);
      boxRec.rUnit = mergeUnit(boxRec.rUnit, b.rUnit);
      boxRec.wEnd = std::max(boxRec.wEnd, b.wEnd);
      boxRec.rEnd = std::max(boxRec.rEnd, b.rEnd);
      return true;
    });
  count -= take;
  // The box's units may now be mixed: its times bound every unit's queries.
  lateW.add(boxRec.wEnd, boxRec.wUnit);
  lateR.add(boxRec.rEnd, boxRec.rUnit);
}

} // namespace tessel::runtime
