//===- passes/Schedule.cpp - Prefetch depth for streamed loads ------------===//
//
// `schedule` lets DMA run ahead of compute (software pipelining). The engines
// already run asynchronously and the simulator orders them by the regions
// they touch, so what bounds the overlap is how many copies a streamed tile
// has: with 2, at most one load runs ahead of its consumer, and every load
// pays the DMA fixed cost (docs/hardware.md: ~1.3 us) in series with the previous one.
//
// For each SBUF tile allocated inside a loop and filled by a DMA from HBM,
// the pass raises its buffer count to the loads that must be in flight to
// keep HBM busy: ceil((fixed cost + transfer) / transfer) with the transfer
// at the target's HBM bandwidth, bounded by policy::kMaxPrefetch. It runs
// before `allocate`, which places the larger buffers (and reports if they do
// not fit).
//
// A strip filled by DMA once per iteration of its loop (an operand's row
// strip, bufs 1) is double-buffered when the kernel's SBUF peak still fits
// the target afterwards, with the block planner's headroom (so a kernel the
// planner saw fit still fits): the next row strip's strip then loads while the
// current one is being used, instead of after it (the fill -- DMA transposes
// at -O2 -- would otherwise stall the tensor engine at every row strip).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/Policy.h"
#include "passes/Spill.h"
#include "passes/analysis/KernelCost.h"
#include "passes/analysis/KernelCost.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Casting.h"

#include <cmath>

namespace tessel::passes {
namespace {

using namespace ir;

class SchedulePass : public Pass {
public:
  llvm::StringRef name() const override { return "schedule"; }
  llvm::StringRef description() const override {
    return "deepen the multi-buffering of streamed loads so DMA runs ahead of compute";
  }

  PassResult run(Kernel &kernel, PassContext &ctx) override {
    // Loads from HBM into each buffer.
    llvm::DenseMap<const Value *, DmaOp *> loads;
    walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
      if (auto *dma = llvm::dyn_cast<DmaOp>(&op))
        if (dma->src.base->type.space == MemSpace::HBM && dma->tag == DmaTag::None)
          loads[dma->dst.base] = dma;
    });
    bool changed = false;
    walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
      auto *alloc = llvm::dyn_cast<AllocOp>(&op);
      if (!alloc || loops.empty() || alloc->result->type.space != MemSpace::SBUF ||
          !loads.count(alloc->result) || alloc->bufs < 2)
        return;
      int64_t depth = prefetchDepth(alloc->result->type, ctx.target, kernel.geometry.partitions);
      if (depth > alloc->bufs) {
        alloc->bufs = depth;
        changed = true;
      }
    });
    changed |= doubleBufferStrips(kernel, ctx, loads);
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }

private:
  /// Iterations of a loop with constant bounds (0 when they are not constant).
  static int64_t trips(const ForOp &loop) { return loop.constTripCount(); }

  static bool doubleBufferStrips(Kernel &kernel, PassContext &ctx,
                                 const llvm::DenseMap<const Value *, DmaOp *> &loads) {
    llvm::SmallVector<AllocOp *, 4> strips;
    walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
      auto *alloc = llvm::dyn_cast<AllocOp>(&op);
      if (alloc && !loops.empty() && alloc->bufs == 1 && trips(*loops.back()) > 1 &&
          alloc->result->type.space == MemSpace::SBUF && loads.count(alloc->result))
        strips.push_back(alloc);
    });
    bool changed = false;
    for (AllocOp *alloc : strips) {
      alloc->bufs = 2;
      if (analysis::sbufLeastPeakBytesPerPartition(kernel) >
          analysis::plannerSbufLimit(ctx.target))
        alloc->bufs = 1;
      else
        changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createSchedulePass() { return std::make_unique<SchedulePass>(); }

} // namespace tessel::passes
