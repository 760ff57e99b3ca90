//===- runtime/Launch.h - Which latency a simulated figure predicts -*- C++ -*-===//
//
// A measured kernel latency is either one execution's device timeline (a
// profile's total_time) or one iteration of a benchmark loop (nki.benchmark,
// min or P99 over iterations), which adds a per-launch overhead
// (docs/measurements.md §5). The simulator reports the timeline plus the
// target's launch term for the kind asked for, and says which it is.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_LAUNCH_H
#define TESSEL_RUNTIME_LAUNCH_H

#include "runtime/Target.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tessel::runtime {

enum class LatencyKind { Device, Benchmark };

inline llvm::StringRef latencyKindName(LatencyKind k) {
  return k == LatencyKind::Device ? "device" : "benchmark";
}

/// What the figure is, for reports.
inline llvm::StringRef latencyKindMeaning(LatencyKind k) {
  return k == LatencyKind::Device ? "one execution's device timeline (profile total_time)"
                                  : "one iteration of a benchmark loop (nki.benchmark)";
}

inline std::optional<LatencyKind> parseLatencyKind(llvm::StringRef s) {
  if (s == "device")
    return LatencyKind::Device;
  if (s == "benchmark")
    return LatencyKind::Benchmark;
  return std::nullopt;
}

inline double launchOverheadNs(const Target &t, LatencyKind k) {
  return k == LatencyKind::Device ? t.launch_device_ns : t.launch_benchmark_ns;
}

} // namespace tessel::runtime

#endif
