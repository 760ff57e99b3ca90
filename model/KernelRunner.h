//===- model/KernelRunner.h - Compile and time each distinct kernel once -*- C++ -*-===//
//
// A layer's kernels are the same in every layer, and the LM head is the same
// in prefill and decode when both have one row per sequence: each distinct
// source is compiled and simulated once (timing-only, fast-forwarded, as
// `tessel run --timing-only --fast-forward`) and the result is reused.
// Row-parallel kernels go through compiler/TensorParallel's sharding (the
// per-core kernel) and add the ring AllReduce of runtime/Collective.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_MODEL_KERNELRUNNER_H
#define TESSEL_MODEL_KERNELRUNNER_H

#include "compiler/Compile.h"
#include "model/LayerKernels.h"
#include "runtime/Collective.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>

namespace tessel::model {

/// One core's simulated figures for one kernel (all cores run alike).
struct KernelTiming {
  double kernelUs = 0;  ///< the device timeline, without the launch term
  double launchUs = 0;  ///< the target's launch term for one launch
  double flops = 0;     ///< one core's
  double hbmBytes = 0;  ///< one core's reads + writes
  double peakFlopsPerSec = 0; ///< one core's
  double hbmBytesPerSec = 0;  ///< one core's share
  runtime::CollectiveCost allReduce; ///< row-parallel kernels under --tp; else empty
  std::string split;    ///< compiler/TensorParallel's description, if split
};

/// The compile options of a kernel (the driver's -O2 or --tuned resolution).
/// Returns false after reporting.
using ResolveOptions = std::function<bool(compiler::Frontend &, compiler::CompileOptions &)>;

class KernelRunner {
public:
  KernelRunner(const runtime::Target &target, int tp, ResolveOptions resolve)
      : target(target), tp(tp), resolve(std::move(resolve)) {}

  /// The kernel's timing, simulated on first use. Errors name the kernel
  /// (compiler diagnostics are on stderr already).
  llvm::Expected<KernelTiming> time(const LayerKernel &kernel);

  /// Distinct kernels compiled and simulated so far.
  size_t simulated() const { return cache.size(); }

private:
  const runtime::Target &target;
  int tp;
  ResolveOptions resolve;
  std::map<std::string, KernelTiming> cache; ///< by source text and split
};

} // namespace tessel::model

#endif
