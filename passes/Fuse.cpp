//===- passes/Fuse.cpp - Naive fusion of a producer into its consumer -----===//
//
// `fuse` removes the HBM round trip of an intermediate: the producer's
// computation of a row strip is cloned into the consumer's output column
// loop, writing the consumer's SBUF strip directly (passes/Fusion.h). Every
// column block recomputes the strip -- the paper's naive fused kernel
// (Algorithm 1): FLOPs of the producer grow by the number of column blocks.
// `strip-cache` then hoists the strip out of the column loop.
//
//===----------------------------------------------------------------------===//
#include "passes/Fusion.h"
#include "passes/Passes.h"

namespace tessel::passes {
namespace {

class FusePass : public Pass {
public:
  llvm::StringRef name() const override { return "fuse"; }
  llvm::StringRef description() const override {
    return "fuse a producer matmul nest into its consumer's column loop (no HBM round trip; the "
           "intermediate is recomputed per output column block)";
  }
  PassResult run(ir::Kernel &kernel, PassContext &) override {
    return fuseProducers(kernel, StripPlacement::PerColumnBlock) ? PassResult::Changed
                                                                 : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createFusePass() { return std::make_unique<FusePass>(); }

} // namespace tessel::passes
