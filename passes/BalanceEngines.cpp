//===- passes/BalanceEngines.cpp - Copies on the less busy engine ---------===//
//
// `balance-engines`: a copy, or a scale or shift by a number, runs on the
// vector engine as TileGen and the fusing passes write it (`copy`,
// `tensor_scalar mul/add`), but the scalar engine does the same as
// `activation copy` (fn(x * scale + bias)). On a fused attention row strip
// the vector engine evacuates the scores and P's transposes from PSUM and
// takes the row max while the scalar engine only runs exp: the kernel waits
// on the vector engine. Each candidate (innermost first, the busiest
// first) moves to the scalar engine when the cost model
// (KernelCost::predictedUs: each phase bound by its busier engine, or by
// their PSUM accesses together where the target shares PSUM's port between
// them) predicts the kernel policy::kMinEngineMoveGain faster; otherwise it
// stays. The values are the same: both engines compute in fp32 and round
// once to the destination.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/analysis/KernelCost.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/FormatVariadic.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// The activation doing what `op` does, or null when it is not a candidate.
std::unique_ptr<ActivationOp> onScalarEngine(Op &op) {
  auto act = std::make_unique<ActivationOp>();
  act->fn = ActFn::Copy;
  act->loc = op.loc;
  if (auto *copy = llvm::dyn_cast<CopyOp>(&op)) {
    act->dst = copy->dst;
    act->src = copy->src;
  } else if (auto *ts = llvm::dyn_cast<TensorScalarOp>(&op);
             ts && !ts->scalarTile && !ts->reverse &&
             (ts->alu == AluOp::Mul || ts->alu == AluOp::Add || ts->alu == AluOp::Sub)) {
    act->dst = ts->dst;
    act->src = ts->src;
    (ts->alu == AluOp::Mul ? act->scale : act->bias) = ts->alu == AluOp::Sub ? -ts->scalar : ts->scalar;
  } else {
    return nullptr;
  }
  if (act->dst.base->type.space != MemSpace::SBUF)
    return nullptr;
  return act;
}

/// Every candidate slot (the op's owning pointer), in program order.
void candidates(Block &block, std::vector<std::unique_ptr<Op> *> &out) {
  for (auto &op : block.ops) {
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      candidates(loop->body, out);
    else if (llvm::isa<CopyOp, TensorScalarOp>(op.get()))
      out.push_back(&op);
  }
}

class BalanceEnginesPass : public Pass {
public:
  llvm::StringRef name() const override { return "balance-engines"; }
  llvm::StringRef description() const override {
    return "run copies and scalings by a number on the scalar engine where the cost model "
           "predicts the kernel faster (the vector engine busier)";
  }
  PassResult run(Kernel &kernel, PassContext &ctx) override {
    double best = analysis::analyzeKernel(kernel, ctx.target).predictedUs(ctx.target);
    double before = best;
    std::vector<std::unique_ptr<Op> *> slots;
    candidates(kernel.body, slots);
    unsigned moved = 0;
    for (std::unique_ptr<Op> *slot : slots) {
      analysis::KernelCost cost = analysis::analyzeKernel(kernel, ctx.target);
      if (cost.scalarBusyNs >= cost.vectorBusyNs)
        break; // nothing left to win: the scalar engine is the busier
      std::unique_ptr<Op> act = onScalarEngine(**slot);
      if (!act)
        continue;
      std::swap(*slot, act);
      double us = analysis::analyzeKernel(kernel, ctx.target).predictedUs(ctx.target);
      if (us < best * (1 - policy::kMinEngineMoveGain)) {
        best = us;
        ++moved;
      } else {
        std::swap(*slot, act);
      }
    }
    if (!moved)
      return PassResult::Unchanged;
    kernel.notes.push_back(llvm::formatv("[balance-engines] {0} vector-engine copies moved to the "
                                         "scalar engine: predicted {1:f1} us, against {2:f1} us",
                                         moved, best, before));
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createBalanceEnginesPass() { return std::make_unique<BalanceEnginesPass>(); }

} // namespace tessel::passes
