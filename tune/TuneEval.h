//===- tune/TuneEval.h - Compile, cost and simulate one configuration -*- C++ -*-===//
//
// The work `tessel tune` does per block configuration (CompileSession::measure,
// then the simulator), callable from several
// threads at once: every compile parses its own copy of the source (an AST,
// a SourceMgr and a DiagnosticEngine are not shared between threads) and
// records the compiler's error instead of printing it, since a configuration
// the compiler rejects is simply excluded from the search.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TUNE_TUNEEVAL_H
#define TESSEL_TUNE_TUNEEVAL_H

#include "tune/TuneSpace.h"
#include "frontend/Frontend.h"
#include "runtime/Program.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::tune {

/// The kernel being tuned and how it is compiled.
struct TuneJob {
  std::string path;       ///< names the source in the compiler's messages
  std::string sourceText;
  std::vector<Define> defines;
  std::string kernelName; ///< the selected kernel
  BlockConfig blockParams; ///< the kernel's block parameters (their defaults)
  runtime::Target target;
  std::vector<std::string> passes;
  bool verifyEach = true; ///< --verify-each
  int tp = 1;             ///< --tp: the per-core kernel of this many cores is tuned
};

/// What the static cost model (passes/analysis/KernelCost.h) says.
struct ModelEstimate {
  double predictedUs = 0;    ///< KernelCost::predictedUs: the model's latency estimate
  double ai = 0;             ///< flop per HBM byte
  int64_t sbufPeakBytes = 0; ///< per-partition peak x partitions, as the run report counts
  uint64_t spillBytes = 0;   ///< spill saves + reloads
  double boundUs = 0;        ///< KernelCost::boundUs: a lower bound on any simulated latency
};

/// What the timing-only simulation measured (the run report's numbers).
struct SimMeasure {
  double latencyUs = 0;
  double mfu = 0;
  double ai = 0;
  int64_t sbufPeakBytes = 0;
  uint64_t spillBytes = 0;
};

/// A configuration compiled to a simulator program with its cost, or the
/// reason the compiler rejected it (`program` empty).
struct CompiledConfig {
  std::optional<runtime::Program> program;
  BlockConfig blocks; ///< what it was built with (the planner's choices and TileGen's defaults filled in)
  ModelEstimate model;
  std::string error;
};

CompiledConfig compileConfig(const TuneJob &job, const BlockConfig &config);

/// Runs `program` through the timing-only simulator.
llvm::Expected<SimMeasure> simulateConfig(const runtime::Program &program,
                                          const runtime::Target &target, bool fastForward);

} // namespace tessel::tune

#endif
