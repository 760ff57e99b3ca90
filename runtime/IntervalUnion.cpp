//===- runtime/IntervalUnion.cpp - Busy time as a union of intervals ------===//
#include "runtime/IntervalUnion.h"

#include <algorithm>
#include <tuple>

namespace tessel::runtime {

std::map<uint32_t, double> IntervalUnion::lengths() const {
  std::vector<Interval> sorted = intervals;
  std::sort(sorted.begin(), sorted.end(), [](const Interval &a, const Interval &b) {
    return std::tie(a.key, a.start, a.end) < std::tie(b.key, b.start, b.end);
  });
  std::map<uint32_t, double> out;
  for (size_t i = 0; i < sorted.size();) {
    uint32_t key = sorted[i].key;
    double total = 0, start = sorted[i].start, end = sorted[i].end;
    for (; i < sorted.size() && sorted[i].key == key; ++i) {
      if (sorted[i].start > end) {
        total += end - start;
        start = sorted[i].start;
      }
      end = std::max(end, sorted[i].end);
    }
    out[key] = total + (end - start);
  }
  return out;
}

} // namespace tessel::runtime
