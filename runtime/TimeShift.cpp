//===- runtime/TimeShift.cpp - Moving timing state later in time -----------===//
//
// Loop fast-forward (FastForward.h) skips whole periods of a loop in steady
// state: what the last period left in the timing state from `cut` on is moved
// `d` later, as the skipped periods would have left it.
//
//===----------------------------------------------------------------------===//
#include "runtime/RegionTracker.h"
#include "runtime/Timing.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

namespace tessel::runtime {

namespace {

/// Sorted, disjoint intervals (from index `first` on: those ending after
/// `cut`) as `k` more periods of length `period` would leave them: what
/// the last period left in [cut, cut + period) is repeated k times and
/// everything from `cut` on moves k periods later. At most `maxCopies`
/// repetitions are kept, the oldest ones merged into one busy interval, as
/// the structures forget their oldest gaps. `grew` is called after each
/// interval added (to forget as the structure would).
template <class Grew>
void repeatPeriods(std::vector<std::pair<double, double>> &iv, size_t first, double cut, double period, uint64_t k,
                   size_t maxCopies, Grew grew) {
  const double d = double(k) * period;
  std::vector<std::pair<double, double>> pattern, moved;
  for (size_t i = first; i < iv.size() && iv[i].first < cut + period; ++i)
    pattern.emplace_back(std::max(iv[i].first, cut), std::min(iv[i].second, cut + period));
  for (size_t i = first; i < iv.size(); ++i)
    moved.emplace_back(std::max(iv[i].first, cut) + d, iv[i].second + d);
  double before = first < iv.size() && iv[first].first < cut ? iv[first].first : cut;
  iv.resize(first);
  auto push = [&](double a, double b) {
    if (!(b > a))
      return;
    if (!iv.empty() && a <= iv.back().second) {
      iv.back().second = std::max(iv.back().second, b);
      return;
    }
    iv.emplace_back(a, b);
    grew();
  };
  if (before < cut)
    push(before, cut);
  uint64_t copies = pattern.empty() ? 0 : std::min<uint64_t>(k, std::max<size_t>(1, maxCopies / pattern.size()));
  if (copies < k && !pattern.empty())
    push(cut, cut + double(k - copies) * period);
  for (uint64_t m = k - copies; m < k; ++m)
    for (const auto &[a, b] : pattern)
      push(a + double(m) * period, b + double(m) * period);
  for (const auto &[a, b] : moved)
    push(a, b);
}

} // namespace

void BandwidthCalendar::repeatPeriods(double cut, double period, uint64_t k, double reservedMore) {
  reserved += reservedMore;
  auto first = std::lower_bound(busy.begin(), busy.end(), cut,
                                [](const std::pair<double, double> &iv, double t) { return iv.second <= t; });
  runtime::repeatPeriods(busy, size_t(first - busy.begin()), cut, period, k, std::numeric_limits<size_t>::max(), [&] {
    if (busy.size() > MaxIntervals) { // as reserve() forgets the oldest gaps
      size_t half = busy.size() / 2;
      busy[0].second = busy[half].second;
      busy.erase(busy.begin() + 1, busy.begin() + long(half) + 1);
    }
  });
}

void IntervalUnion::shiftFrom(double cut, double d, double grown) {
  double before = length();
  // As a map keyed by start: the first of equal starts is kept.
  std::map<double, double> all(open.begin(), open.end());
  auto it = all.lower_bound(cut);
  if (it != all.begin() && std::prev(it)->second >= cut)
    --it;
  std::map<double, double> moved;
  for (auto j = it; j != all.end(); ++j)
    moved.emplace(j->first < cut ? j->first : j->first + d, j->second + d);
  all.erase(it, all.end());
  all.insert(moved.begin(), moved.end());
  open.assign(all.begin(), all.end());
  openLength = 0;
  for (const auto &iv : open)
    openLength += std::max(0.0, iv.second - iv.first);
  closed += before + grown - length();
}

void PortUses::repeatPeriods(double cut, double period, uint64_t k) {
  size_t first = head;
  while (first < uses.size() && uses[first].second <= cut)
    ++first;
  runtime::repeatPeriods(uses, first, cut, period, k, MaxRepeated, [] {});
}

void RegionTracker::shiftFrom(double cut, double d) {
  auto shift = [&](Rec &x) {
    if (x.wEnd >= cut)
      x.wEnd += d;
    if (x.rEnd >= cut)
      x.rEnd += d;
  };
  if (box)
    shift(boxRec);
  if (maxW >= cut)
    maxW += d;
  lateW.shiftFrom(cut, d);
  lateR.shiftFrom(cut, d);
  for (Group &g : groups) {
    for (auto &kv : g.recs)
      shift(kv.second);
    if (g.maxW >= cut)
      g.maxW += d;
    if (g.maxR >= cut)
      g.maxR += d;
  }
}

} // namespace tessel::runtime
