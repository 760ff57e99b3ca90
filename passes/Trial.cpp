//===- passes/Trial.cpp - Predicting a rewrite before taking it -----------===//
#include "passes/Trial.h"

#include "passes/Passes.h"
#include "passes/analysis/KernelCost.h"
#include "passes/analysis/KernelCost.h"

#include "ir/Parser.h"
#include "ir/Printer.h"

#include "llvm/Support/SourceMgr.h"

namespace tessel::passes {

std::unique_ptr<ir::Kernel> copyKernel(const ir::Kernel &kernel) {
  llvm::SourceMgr sm;
  DiagnosticEngine quiet = DiagnosticEngine::quiet(sm);
  auto module = ir::parseModuleString(ir::toString(kernel), "<trial>", quiet, kernel.geometry);
  if (!module || module->kernels.size() != 1)
    return nullptr;
  return std::move(module->kernels.front());
}

std::optional<double> predictAfterLatePasses(ir::Kernel &trial, const runtime::Target &target) {
  llvm::SourceMgr sm;
  DiagnosticEngine quiet = DiagnosticEngine::quiet(sm);
  PassContext ctx{target, quiet};
  for (auto create : {createWidenLoadsPass, createSchedulePass})
    if (create()->run(trial, ctx) == PassResult::Failed)
      return std::nullopt;
  analysis::KernelCost cost = analysis::analyzeKernel(trial, target);
  if (cost.sbufLeastPeakBytesPerPartition > analysis::plannerSbufLimit(target) ||
      cost.psumPeakBytesPerPartition > target.psum_bytes_per_partition)
    return std::nullopt;
  return cost.predictedUs(target);
}

} // namespace tessel::passes
