//===- passes/FuseHandoff.cpp - The MLP in one kernel ---------------------===//
//
// `fuse-handoff` fuses what `fuse-epilogue` left as a producer, the gated
// result of an MLP (stored transposed, as the down projection reads it),
// into its consumer at the row-strip level: each row strip of the result
// stays in SBUF and the down projection runs in the same kernel (one kernel
// instead of the paper's UpGate + Down with the transposed result in HBM
// between them). It is `strip-cache`'s fusion, run after the epilogues exist.
// The two-kernel form (PipelineParams::mlpForm, which -O2 leaves the pass out
// for and the block planner may choose per candidate) keeps it in HBM. The strip
// costs SBUF, so the block planner, which builds every candidate through
// this pipeline, weighs it against the row strip: when the strip of a
// candidate does not fit, TileGen K-blocks the down projection's contraction
// and the hand-off stays in HBM (two kernels) for that candidate.
//
//===----------------------------------------------------------------------===//
#include "passes/Fusion.h"
#include "passes/Passes.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

class FuseHandoffPass : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-handoff"; }
  llvm::StringRef description() const override {
    return "keep an MLP's gated result in SBUF, one row strip at a time, and run the down "
           "projection in the same kernel (not in the two-kernel form)";
  }
  PassResult run(ir::Kernel &kernel, PassContext &ctx) override {
    if (ctx.params.mlpForm == MlpForm::TwoKernel)
      return PassResult::Unchanged;
    bool changed = fuseProducers(kernel, StripPlacement::PerRowStrip);
    // Say which form the kernel took: intermediates left in HBM are hand-offs
    // between kernels (their reader K-blocks its contraction, or walks other
    // row strips).
    std::string inHbm;
    for (auto &op : kernel.body.ops)
      if (auto *alloc = llvm::dyn_cast<ir::AllocOp>(op.get());
          alloc && alloc->result->type.space == ir::MemSpace::HBM &&
          alloc->result->role == ir::TensorRole::Scratch)
        inHbm += (inHbm.empty() ? "%" : ", %") + alloc->result->name;
    // Only kernels with an epilogue (an MLP) get the note.
    bool epilogue = false;
    ir::walk(kernel.body, [&](ir::Op &o, llvm::ArrayRef<ir::ForOp *>) {
      auto *tt = llvm::dyn_cast<ir::TensorTensorOp>(&o);
      epilogue |= llvm::isa<ir::ActivationOp>(o) || (tt && tt->alu != ir::AluOp::Add);
    });
    if (!changed && (!epilogue || inHbm.empty()))
      return PassResult::Unchanged;
    kernel.notes.push_back(inHbm.empty()
                               ? "[fuse-handoff] one kernel: no intermediate goes through HBM"
                               : "[fuse-handoff] " + std::string(changed ? "" : "two kernels: ") +
                                     "through HBM between nests: " + inHbm);
    return PassResult::Changed; // the kernel's text changed at least by the note
  }
};

} // namespace

std::unique_ptr<Pass> createFuseHandoffPass() { return std::make_unique<FuseHandoffPass>(); }

} // namespace tessel::passes
