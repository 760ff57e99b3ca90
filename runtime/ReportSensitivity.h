//===- runtime/ReportSensitivity.h - Which unpublished value a latency rests on -*- C++ -*-===//
//
// `tessel run --sensitivity` (docs/calibration.md, "Which value a latency
// depends on"): the program is timed again (timing only, loop fast-forward)
// with each non-published target value it uses moved by +-10%, one at a time,
// and the report names the value whose change moves the latency most. A
// value is non-published when its provenance (runtime/TargetProvenance.h) is
// derived, derived from a point, assumed, fitted or unrecorded; it is used
// when it times an engine the run kept busy (a DMA transpose efficiency: only
// when a DMA transposes), or is the launch term of the latency predicted.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_REPORTSENSITIVITY_H
#define TESSEL_RUNTIME_REPORTSENSITIVITY_H

#include "runtime/Program.h"
#include "runtime/Report.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"
#include "runtime/TargetProvenance.h"

#include "llvm/Support/Error.h"

namespace tessel::runtime {

/// The relative step each value is moved by, up and down.
constexpr double SensitivityStep = 0.10;

/// Fills `r.sensitivity` for `prog` on `t`, whose provenance is `p`; `base`
/// gives the latency kind and the threads (the re-timings run side by side).
/// `r` is the report of the run being explained (its engines say which are used).
llvm::Error addLatencySensitivity(const Program &prog, const Target &t, const TargetProvenance &p,
                                  const SimOptions &base, Report &r);

} // namespace tessel::runtime

#endif
