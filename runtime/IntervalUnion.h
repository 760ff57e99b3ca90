//===- runtime/IntervalUnion.h - Busy time as a union of intervals -*- C++ -*-===//
//
// The busy time of something that runs on several units at once (a DMA
// instruction whose transfers rotate over queues) is the length of the union
// of its intervals, not their sum: the sum can exceed the kernel's latency.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_INTERVALUNION_H
#define TESSEL_RUNTIME_INTERVALUNION_H

#include <cstdint>
#include <map>
#include <vector>

namespace tessel::runtime {

class IntervalUnion {
public:
  /// Records that `key` was busy over [start, end).
  void add(uint32_t key, double start, double end) { intervals.push_back({key, start, end}); }
  /// Per key, the length of the union of its intervals.
  std::map<uint32_t, double> lengths() const;

private:
  struct Interval {
    uint32_t key;
    double start, end;
  };
  std::vector<Interval> intervals;
};

} // namespace tessel::runtime

#endif
