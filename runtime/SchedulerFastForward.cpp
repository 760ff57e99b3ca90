//===- runtime/SchedulerFastForward.cpp - Skipping steady loop periods -----===//
//
// The timing scheduler's side of loop fast-forward (FastForward.h): marks of
// its state at loop iteration boundaries, the test that two periods between
// marks were the same pattern moved in time, and the advance by k periods.
//
//===----------------------------------------------------------------------===//
#include "runtime/TimingScheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessel::runtime {

namespace {

/// Times are sums of many costs: equal up to rounding.
bool close(double x, double y) { return std::abs(x - y) <= 1e-6 + 1e-9 * std::max(std::abs(x), std::abs(y)); }

} // namespace

uint64_t *TimingScheduler::counter(int i) {
  uint64_t *fields[NumCounters] = {&counts.flops,           &counts.transposeFlops,    &counts.hbmReadBytes,
                                   &counts.hbmWriteBytes,   &counts.spillSaveBytes,    &counts.spillReloadBytes,
                                   &counts.trafficInputs,   &counts.trafficOutputs,    &counts.trafficIntermediates,
                                   &counts.trafficSpill};
  return fields[i];
}

void TimingScheduler::setLogging(bool on) {
  logging = on;
  if (!on) {
    logBase += log.size();
    log.clear();
  }
}

void TimingScheduler::trimLog(uint64_t pos) {
  if (pos <= logBase)
    return;
  size_t n = size_t(std::min<uint64_t>(pos - logBase, log.size()));
  log.popFront(n);
  logBase += n;
}

void TimingScheduler::mark(Mark &m, llvm::ArrayRef<uint32_t> body, llvm::ArrayRef<uint32_t> bodyDma,
                           llvm::ArrayRef<uint32_t> units, size_t maxTail) const {
  // Assigned into m's vectors: a watched loop reuses its oldest mark's storage.
  m.tails.clear();
  m.tailSizes.clear();
  m.tailsTooLong = false;
  m.body.clear();
  m.dmaLength.clear();
  m.cut = std::numeric_limits<double>::infinity();
  for (uint32_t u : units)
    m.cut = std::min(m.cut, unitFree[u]);
  auto addTail = [&](llvm::ArrayRef<std::pair<double, double>> iv) {
    auto it = std::lower_bound(iv.begin(), iv.end(), m.cut,
                               [](const std::pair<double, double> &x, double t) { return x.second <= t; });
    if (m.tailsTooLong || size_t(iv.end() - it) + m.tails.size() > maxTail) {
      m.tailsTooLong = true;
      return;
    }
    for (; it != iv.end(); ++it)
      m.tails.emplace_back(std::max(it->first, m.cut) - m.cut, it->second - m.cut);
    m.tailSizes.push_back(uint32_t(m.tails.size()));
  };
  addTail(shared.intervals());
  for (int u = 0; u < NumComputeUnits; ++u) {
    addTail(psumPort[u].live());
    addTail(sbufPort[u].live());
  }
  m.unitFree = unitFree;
  m.unitBusy = unitBusy;
  m.unitCount = unitCount;
  m.queueBytes = queueBytes;
  m.queueEnd = queueEnd;
  for (int i = 0; i < NumCounters; ++i)
    m.counters[i] = counter(i);
  for (uint32_t id : body)
    m.body.push_back(perInstr[id]);
  for (uint32_t id : bodyDma)
    m.dmaLength.push_back(dmaInstrBusy[id].lengthEstimate());
  m.dmaBusyLength = dmaBusy.lengthEstimate();
  m.reserved = shared.totalReserved();
  m.makespan = makespan;
  m.haveStationary = haveStationary;
  m.lastStatObj = lastStatObj;
  m.lastStatRect = lastStatRect;
  m.tensorWarmNs = tensorWarmNs;
  m.logPos = logBase + log.size();
}

bool TimingScheduler::samePeriods(const Mark &a, const Mark &b, const Mark &c, double &delta) const {
  if (b.haveStationary != c.haveStationary || b.lastStatObj != c.lastStatObj || !(b.lastStatRect == c.lastStatRect) ||
      !close(b.tensorWarmNs, c.tensorWarmNs))
    return false;
  delta = -1;
  for (size_t u = 0; u < unitFree.size(); ++u) {
    uint64_t n = c.unitCount[u] - b.unitCount[u];
    if (n != b.unitCount[u] - a.unitCount[u])
      return false;
    double fa = b.unitFree[u] - a.unitFree[u], fb = c.unitFree[u] - b.unitFree[u];
    if (n == 0) {
      if (fa != 0 || fb != 0)
        return false;
      continue;
    }
    if (delta < 0)
      delta = fb;
    if (!close(fa, fb) || !close(fb, delta) || !close(b.unitBusy[u] - a.unitBusy[u], c.unitBusy[u] - b.unitBusy[u]))
      return false;
    if (u >= size_t(NumComputeUnits)) {
      size_t q = u - size_t(NumComputeUnits);
      if (!close(b.queueEnd[q] - a.queueEnd[q], delta) || !close(c.queueEnd[q] - b.queueEnd[q], delta))
        return false;
    }
  }
  if (!(delta > 0))
    return false;
  for (size_t q = 0; q < queueBytes.size(); ++q)
    if (c.queueBytes[q] - b.queueBytes[q] != b.queueBytes[q] - a.queueBytes[q])
      return false;
  for (int i = 0; i < NumCounters; ++i)
    if (c.counters[i] - b.counters[i] != b.counters[i] - a.counters[i])
      return false;
  for (size_t i = 0; i < c.body.size(); ++i) {
    const InstrStats &x = a.body[i], &y = b.body[i], &z = c.body[i];
    if (z.count - y.count != y.count - x.count || z.bytes - y.bytes != y.bytes - x.bytes ||
        !close(z.busyNs - y.busyNs, y.busyNs - x.busyNs) ||
        !close(z.waitNs - y.waitNs, y.waitNs - x.waitNs))
      return false;
  }
  for (size_t i = 0; i < c.dmaLength.size(); ++i)
    if (!close(c.dmaLength[i] - b.dmaLength[i], b.dmaLength[i] - a.dmaLength[i]))
      return false;
  if (!close(c.dmaBusyLength - b.dmaBusyLength, b.dmaBusyLength - a.dmaBusyLength) ||
      !close(c.reserved - b.reserved, b.reserved - a.reserved) ||
      !close(c.makespan - b.makespan, b.makespan - a.makespan))
    return false;
  // What the shared resources hold ahead of the loop's units: the loop's
  // own work moved by delta, nothing else.
  if (b.tailsTooLong || c.tailsTooLong || b.tailSizes != c.tailSizes)
    return false;
  for (size_t i = 0; i < c.tails.size(); ++i)
    if (!close(b.tails[i].first, c.tails[i].first) || !close(b.tails[i].second, c.tails[i].second))
      return false;
  // The hazard records: the same accesses, each one moved by a fixed step
  // and made delta later.
  if (a.logPos < logBase || c.logPos - b.logPos != b.logPos - a.logPos)
    return false;
  for (uint64_t i = 0, n = c.logPos - b.logPos; i < n; ++i) {
    const TrackOp &x = log[a.logPos - logBase + i], &y = log[b.logPos - logBase + i];
    if (x.obj != y.obj || x.unit != y.unit || x.write != y.write || x.rect.r1 - x.rect.r0 != y.rect.r1 - y.rect.r0 ||
        x.rect.c1 - x.rect.c0 != y.rect.c1 - y.rect.c0 || !close(y.time - x.time, delta))
      return false;
  }
  return true;
}

bool TimingScheduler::futureClear(const Mark &a, const Mark &b, const Mark &c, double delta, uint64_t k) const {
  const uint64_t n = c.logPos - b.logPos;
  const size_t from = size_t(b.logPos - logBase), prev = size_t(a.logPos - logBase);
  for (uint64_t i = 0; i < n; ++i) {
    const TrackOp &y = log[from + i], &x = log[prev + i];
    int64_t dr = y.rect.r0 - x.rect.r0, dc = y.rect.c0 - x.rect.c0;
    if (dr == 0 && dc == 0)
      continue;
    for (uint64_t m = 1; m <= k; ++m) {
      Rect r = {y.rect.r0 + int64_t(m) * dr, y.rect.r1 + int64_t(m) * dr, y.rect.c0 + int64_t(m) * dc,
                y.rect.c1 + int64_t(m) * dc};
      double start = y.start + double(m) * delta;
      // A DMA queue's own accesses are hazards to it (TimingScheduler::dma).
      int unit = y.unit >= NumComputeUnits ? RegionTracker::NoUnit : y.unit;
      double ready = y.write ? trackers[y.obj].writeReady(r, unit, 0) : trackers[y.obj].readReady(r, unit, 0);
      if (ready > start && !close(ready, start))
        return false;
    }
  }
  return true;
}

void TimingScheduler::skipPeriods(const Mark &a, const Mark &b, const Mark &c, llvm::ArrayRef<uint32_t> body,
                                  llvm::ArrayRef<uint32_t> bodyDma, double delta, uint64_t k) {
  const double d = double(k) * delta;
  double cut = std::numeric_limits<double>::infinity();
  bool anyDma = false;
  for (size_t u = 0; u < unitFree.size(); ++u) {
    uint64_t n = c.unitCount[u] - b.unitCount[u];
    if (!n)
      continue;
    cut = std::min(cut, b.unitFree[u]);
    anyDma |= u >= size_t(NumComputeUnits);
    unitFree[u] += d;
    if (u >= size_t(NumComputeUnits))
      queueEnd[u - size_t(NumComputeUnits)] += d;
    unitBusy[u] += double(k) * (c.unitBusy[u] - b.unitBusy[u]);
    unitCount[u] += k * n;
  }
  for (size_t q = 0; q < queueBytes.size(); ++q)
    queueBytes[q] += k * (c.queueBytes[q] - b.queueBytes[q]);
  for (int i = 0; i < NumCounters; ++i)
    *counter(i) += k * (c.counters[i] - b.counters[i]);
  for (size_t i = 0; i < body.size(); ++i) {
    InstrStats &s = perInstr[body[i]];
    s.count += k * (c.body[i].count - b.body[i].count);
    s.busyNs += double(k) * (c.body[i].busyNs - b.body[i].busyNs);
    s.waitNs += double(k) * (c.body[i].waitNs - b.body[i].waitNs);
    s.bytes += k * (c.body[i].bytes - b.body[i].bytes);
  }
  for (size_t i = 0; i < bodyDma.size(); ++i)
    if (perInstr[bodyDma[i]].count)
      dmaInstrBusy[bodyDma[i]].shiftFrom(cut, d, double(k) * (c.dmaLength[i] - b.dmaLength[i]));
  dmaBusy.shiftFrom(cut, d, double(k) * (c.dmaBusyLength - b.dmaBusyLength));
  // The shared resources hold the pattern of the skipped periods: a unit
  // the loop does not use may still fit its work between theirs.
  if (anyDma)
    shared.repeatPeriods(cut, delta, k, double(k) * (c.reserved - b.reserved));
  for (int u = 0; u < NumComputeUnits; ++u) {
    psumPort[u].repeatPeriods(cut, delta, k);
    sbufPort[u].repeatPeriods(cut, delta, k);
  }
  if (makespan >= cut)
    makespan += d;
  // A memory object whose accesses repeat in place (a rotating buffer slot)
  // has its records moved in time. One whose accesses move from period to
  // period (an HBM tensor, a strip filled column by column) has the skipped
  // periods' accesses made again where they would have been.
  const uint64_t n = c.logPos - b.logPos;
  const size_t from = size_t(b.logPos - logBase), prev = size_t(a.logPos - logBase);
  std::vector<bool> moving(trackers.size(), false);
  std::fill(moving.begin(), moving.begin() + long(P.tensors.size()), true);
  for (uint64_t i = 0; i < n; ++i) {
    const TrackOp &y = log[from + i], &x = log[prev + i];
    if (y.rect.r0 != x.rect.r0 || y.rect.c0 != x.rect.c0)
      moving[y.obj] = true;
  }
  for (size_t obj = P.tensors.size(); obj < trackers.size(); ++obj)
    if (!moving[obj]) {
      trackers[obj].shiftFrom(cut, d);
      if (!liveObject[obj]) // its records may now end later than the horizon it was retired at
        revive(uint32_t(obj));
    }
  // The records to make again, copied out of the log (which grows as they
  // are made), with their step per period. A region accessed every period
  // (no step) keeps only its last access: each of the k periods makes the
  // records that move, the last one every record, in the log's order.
  struct Again {
    TrackOp y;
    int64_t dr, dc;
  };
  std::vector<Again> again;
  std::vector<uint32_t> moves; ///< indices into again of those with a step
  for (uint64_t i = 0; i < n; ++i) {
    const TrackOp &y = log[from + i], &x = log[prev + i];
    if (!moving[y.obj])
      continue;
    int64_t dr = y.rect.r0 - x.rect.r0, dc = y.rect.c0 - x.rect.c0;
    if (dr != 0 || dc != 0)
      moves.push_back(uint32_t(again.size()));
    again.push_back({y, dr, dc});
  }
  auto make = [&](const Again &a, uint64_t m) {
    const TrackOp &y = a.y;
    Rect r = {y.rect.r0 + int64_t(m) * a.dr, y.rect.r1 + int64_t(m) * a.dr, y.rect.c0 + int64_t(m) * a.dc,
              y.rect.c1 + int64_t(m) * a.dc};
    double t = y.time + double(m) * delta;
    double start = y.start + double(m) * delta;
    if (y.write)
      recordWrite(y.obj, r, t, y.unit, start);
    else
      recordRead(y.obj, r, t, y.unit, start);
  };
  for (uint64_t m = 1; m < k; ++m)
    for (uint32_t i : moves)
      make(again[i], m);
  for (const Again &a : again)
    make(a, k);
}

} // namespace tessel::runtime
