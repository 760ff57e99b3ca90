//===- passes/Trial.h - Predicting a rewrite before taking it ---*- C++ -*-===//
//
// Passes that choose between forms of a kernel (io-transpose, widen-columns)
// build each form on a copy and ask the cost model for its latency after the
// passes of the pipeline that still shape its buffers (widen-loads: the
// transfers; schedule: the copies a streamed tile gets, which decide what a
// strip's fill exposes).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_TRIAL_H
#define TESSEL_PASSES_TRIAL_H

#include "ir/Kernel.h"
#include "runtime/Target.h"

#include <memory>
#include <optional>

namespace tessel::passes {

/// A copy of `kernel` (ir::cloneOp on every op, the arguments mapped to
/// their copies), or null if an op cannot be copied.
std::unique_ptr<ir::Kernel> copyKernel(const ir::Kernel &kernel);

/// The predicted latency (KernelCost::predictedUs) of `trial` after
/// widen-loads and schedule, which it runs on it; nullopt when one fails or
/// the result does not fit the block planner's SBUF or the target's PSUM.
std::optional<double> predictAfterLatePasses(ir::Kernel &trial, const runtime::Target &target);

} // namespace tessel::passes

#endif
