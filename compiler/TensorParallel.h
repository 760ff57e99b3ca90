//===- compiler/TensorParallel.h - `--tp N`: one kernel over N NeuronCores -*- C++ -*-===//
//
// tessel compile|run KERNEL.tsl --tp N:
//  1. shardForTensorParallel: the sharding plan of the selected kernel
//     (frontend/Partition.h) for N cores of one chip (N up to the target's
//     neuron_cores_per_chip), applied to the AST, so the normal compile path
//     builds one core's kernel -- the fused kernel on its shard;
//  2. runTensorParallel: every core runs that program on its slices of the
//     inputs (the whole inputs are read or drawn once, as for one core, then
//     sliced), the partial results are summed by a ring AllReduce
//     (runtime/Collective.h) -- numerically fp32 adds of the cores' bf16
//     partials, rounded once to the output's dtype -- and the report gives
//     the per-core figures, the collective and the total. Timing: the cores
//     run the same program at once, each with its own SBUF, PSUM, engines and
//     its share of the chip's HBM bandwidth (the target's per-core figure),
//     then the AllReduce; latency = per-core latency + AllReduce.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_TENSORPARALLEL_H
#define TESSEL_COMPILER_TENSORPARALLEL_H

#include "compiler/Compile.h"
#include "frontend/Partition.h"
#include "runtime/Program.h"
#include "runtime/Simulator.h"
#include "runtime/Target.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tessel::compiler {

/// Plans the split of `fe`'s kernel over `cores` cores of `target`'s chip and
/// rewrites the kernel's types to one core's shard. Returns false after
/// reporting (too many cores for the chip, a kernel that does not split).
bool shardForTensorParallel(Frontend &fe, int cores, const runtime::Target &target,
                            frontend::TensorParallelPlan &plan);

/// The comment lines `tessel compile --tp` prints above the per-core kernel.
std::string describeTensorParallel(const frontend::TensorParallelPlan &plan, const ast::Kernel &kernel,
                                   const runtime::Target &target);

struct TensorParallelRun {
  const runtime::Program *coreProgram = nullptr; ///< one core's program
  const ast::Kernel *wholeKernel = nullptr;      ///< the unsharded kernel (inputs, --check)
  frontend::TensorParallelPlan plan;
  runtime::Target target;
  runtime::SimOptions sim;  ///< inputFiles / seed / timingOnly / outputDir as for one core
  bool json = false;
  std::string reportPath = "-";
  bool check = false;
  int64_t kBlock = 0; ///< the core kernel's smallest contraction block (--check; 0: none)
  std::string outputName;
  /// The kernel as written on one core (same pipeline, its own blocks):
  /// latency and FLOPs, when it could be built (else latency 0).
  double oneCoreUs = 0;
  uint64_t oneCoreFlops = 0;
};

/// Runs the cores and the AllReduce and writes the report. Returns the exit status.
int runTensorParallel(const TensorParallelRun &run);

} // namespace tessel::compiler

#endif
