//===- passes/Trial.cpp - Predicting a rewrite before taking it -----------===//
#include "passes/Trial.h"

#include "passes/Passes.h"
#include "passes/analysis/KernelCost.h"

#include "ir/Clone.h"

#include "llvm/Support/SourceMgr.h"

namespace tessel::passes {

std::unique_ptr<ir::Kernel> copyKernel(const ir::Kernel &kernel) {
  auto copy = std::make_unique<ir::Kernel>();
  copy->name = kernel.name;
  copy->loc = kernel.loc;
  copy->blockParams = kernel.blockParams;
  copy->notes = kernel.notes;
  copy->geometry = kernel.geometry;
  ir::ValueMap map;
  for (const ir::Value *arg : kernel.args) {
    ir::Value *v = copy->newValue(arg->kind, arg->name);
    v->type = arg->type;
    v->role = arg->role;
    v->loc = arg->loc;
    map[arg] = v;
    copy->args.push_back(v);
  }
  for (const auto &op : kernel.body.ops) {
    std::unique_ptr<ir::Op> cloned = ir::cloneOp(*op, *copy, map);
    if (!cloned)
      return nullptr;
    copy->body.ops.push_back(std::move(cloned));
  }
  return copy;
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
