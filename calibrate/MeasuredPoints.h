//===- calibrate/MeasuredPoints.h - Measured latencies to fit and check -*- C++ -*-===//
//
// The rows `tessel calibrate` fits to and bench/fidelity.py checks against
// (format: docs/calibration.md). A CSV with a header line; one row per
// measured kernel run:
//
//   kernel,defines,latency_us,measured,source[,target,pipeline,name,
//          tensor_us,vector_us,scalar_us,gpsimd_us,dma_us,dma_bytes,profile]
//
// `kernel` is a path relative to the CSV (optionally `path:KERNEL`),
// `measured` is `device` (one execution's timeline, a profile's total_time)
// or `benchmark` (an iteration of a benchmark loop), and `profile` names a
// neuron-profile summary JSON the row's figures are read from instead.
// `latency_us` may be left empty when the row gives an engine busy time.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CALIBRATE_MEASUREDPOINTS_H
#define TESSEL_CALIBRATE_MEASUREDPOINTS_H

#include "compiler/KernelSource.h"

#include "runtime/Launch.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::calibrate {

struct MeasuredPoint {
  std::string origin; ///< "file:line", for messages
  std::string name;   ///< short label (default: the kernel file's stem)
  compiler::KernelSpec kernel;
  std::string target; ///< empty: any
  /// 0: the row measures no latency, only engine busy times (e.g. a
  /// profile's DMA active time of a kernel whose total was not published).
  double latencyUs = 0;
  bool hasLatency() const { return latencyUs > 0; }
  runtime::LatencyKind measured = runtime::LatencyKind::Device;
  std::string source;
  /// engine name (tensor, vector, scalar, gpsimd, dma) -> measured busy time
  std::map<std::string, double> busyUs;
  std::optional<double> dmaBytes;
  std::string profile; ///< the profile JSON the row was read from, if any
};

/// The engines a row may give busy times for, in report order.
const std::vector<std::string> &measuredEngines();

/// Reads a measured-points CSV. Every bad row is an error naming it
/// (file:line): a missing kernel file, an unknown kernel type, a
/// non-positive time, a row with neither a latency nor a busy time, an
/// unknown `measured` kind, a bad profile.
llvm::Expected<std::vector<MeasuredPoint>> readMeasuredPoints(llvm::StringRef csvPath);

/// Fills `p` from a neuron-profile summary JSON: total_time (s) ->
/// latency_us (device), {tensor,vector,scalar,gpsimd}_engine_active_time and
/// dma_active_time (s) -> busy times, dma_transfer_total_bytes.
llvm::Error readProfileSummary(llvm::StringRef path, MeasuredPoint &p);

} // namespace tessel::calibrate

#endif
