//===- runtime/Timing.cpp - Region hazards, bandwidth calendar, costs -----===//
#include "runtime/Timing.h"
#include "runtime/DmaModel.h"

#include <algorithm>
#include <cmath>

namespace tessel::runtime {

double RegionTracker::readReady(const Rect &r, int unit) const {
  double t = 0;
  for (const Rec &x : recs)
    if (x.wUnit != unit && x.wUnit != NoUnit && x.wEnd > t && x.r.overlaps(r))
      t = x.wEnd;
  return t;
}

double RegionTracker::writeReady(const Rect &r, int unit) const {
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

bool RegionTracker::writtenBy(const Rect &r, int unit, double t) const {
  for (const Rec &x : recs)
    if (x.wUnit == unit && x.wEnd == t && x.r.overlaps(r))
      return true;
  return false;
}

void RegionTracker::recordRead(const Rect &r, double end, int unit) {
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
  Rec n;
  n.r = r;
  n.rEnd = end;
  n.rUnit = unit;
  recs.push_back(n);
  if (recs.size() > MaxRecords)
    compact();
}

void RegionTracker::recordWrite(const Rect &r, double end, int unit) {
  // The writer waited for every overlapping earlier access, so records it
  // covers completely carry no further information.
  recs.erase(std::remove_if(recs.begin(), recs.end(), [&](const Rec &x) { return r.contains(x.r); }),
             recs.end());
  Rec n;
  n.r = r;
  n.wEnd = end;
  n.wUnit = unit;
  recs.push_back(n);
  if (recs.size() > MaxRecords)
    compact();
}

// Conservative bound on the record count: merge the two oldest records into
// their bounding box (later accesses may then wait more, never less).
void RegionTracker::compact() {
  while (recs.size() > MaxRecords / 2) {
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

double BandwidthCalendar::reserve(double t0, double amount) {
  if (!(amount > 0))
    return t0;
  reserved += amount;
  // First interval that ends after t0 (ends are sorted: intervals are disjoint).
  auto first = std::lower_bound(busy.begin(), busy.end(), t0,
                                [](const std::pair<double, double> &iv, double t) { return iv.second <= t; });
  double cursor = t0, rem = amount, finish = 0;
  auto j = first;
  bool done = false;
  for (; j != busy.end(); ++j) {
    if (j->first > cursor) {
      double gap = j->first - cursor;
      if (gap >= rem) {
        finish = cursor + rem;
        done = true;
        break;
      }
      rem -= gap;
    }
    cursor = std::max(cursor, j->second);
  }
  if (!done)
    finish = cursor + rem;
  // Everything from t0 (or the start of the interval containing it) to finish is now busy.
  double ns = (first != busy.end() && first->first <= t0) ? first->first : t0;
  double ne = finish;
  auto last = j;
  if (last != busy.end() && last->first <= finish) {
    ne = std::max(ne, last->second);
    ++last;
  }
  auto pos = busy.erase(first, last);
  busy.insert(pos, {ns, ne});
  if (busy.size() > MaxIntervals) {
    // Forget the oldest gaps (treat them as busy): conservative.
    size_t half = busy.size() / 2;
    busy[0].second = busy[half].second;
    busy.erase(busy.begin() + 1, busy.begin() + half + 1);
  }
  return finish;
}

double CostModel::matmulNs(int64_t K, int64_t M, int64_t N, bool fp32, bool newStationary) const {
  (void)K;
  double ii = std::max(std::min(t.matmul_min_ii_cycles, double(M)), double(N));
  if (fp32)
    ii *= t.fp32_matmul_slowdown;
  if (newStationary)
    ii = std::max(ii, double(M) / t.load_stationary_cols_per_cycle);
  return ii / t.tensor_clock_ghz;
}

double CostModel::peTransposeNs(int64_t P, int64_t F, bool fp32) const {
  double ii = std::max(double(P), std::min(t.matmul_min_ii_cycles, double(F)));
  if (fp32)
    ii *= t.fp32_matmul_slowdown;
  return ii / t.tensor_clock_ghz;
}

double CostModel::engineNs(Engine e, int64_t N, double factor, bool dependent) const {
  double clock, epc;
  switch (e) {
  case Engine::Scalar:
    clock = t.scalar_clock_ghz;
    epc = t.scalar_elems_per_cycle;
    break;
  case Engine::GpSimd:
    clock = t.gpsimd_clock_ghz;
    epc = t.gpsimd_elems_per_cycle;
    break;
  default:
    clock = t.vector_clock_ghz;
    epc = t.vector_elems_per_cycle;
    break;
  }
  double cycles = t.engine_access_overhead_cycles + std::max(t.engine_min_ii_cycles, factor * double(N) / epc);
  if (dependent)
    cycles += t.engine_dependent_overhead_cycles;
  return cycles / clock;
}

CostModel::DmaCost CostModel::dma(int64_t bytes, int64_t partitions, int64_t chunkBytes, bool transpose) const {
  DmaTiming d = DmaModel(t).cost({bytes, partitions, chunkBytes, transpose});
  return {d.rateBytesPerNs, d.occupancyNs, d.efficiency};
}

} // namespace tessel::runtime
