//===- passes/StripCache.cpp - Cache the intermediate strip in SBUF -------===//
//
// `strip-cache` computes each row strip of a fused intermediate once, into an
// SBUF buffer reused by every output column block (the paper's caching):
//  1. strips that `fuse` placed inside a column loop, and that do not depend
//     on it, are hoisted to the row-strip level (in a longer chain, level by
//     level: a hoisted strip's computation brings the next one's column loop);
//  2. producers not fused yet are fused directly at the row-strip level.
// The strip's size (rows of the block x the intermediate's width) is what
// the row-strip parameter `m` (the paper's bs) trades against SBUF capacity.
//
//===----------------------------------------------------------------------===//
#include "passes/Fusion.h"
#include "passes/Passes.h"

namespace tessel::passes {
namespace {

class StripCachePass : public Pass {
public:
  llvm::StringRef name() const override { return "strip-cache"; }
  llvm::StringRef description() const override {
    return "compute each row strip of a fused intermediate once into SBUF and reuse it for every "
           "output column block";
  }
  PassResult run(ir::Kernel &kernel, PassContext &) override {
    bool changed = hoistFusedStrips(kernel);
    changed |= fuseProducers(kernel, StripPlacement::PerRowStrip);
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createStripCachePass() { return std::make_unique<StripCachePass>(); }

} // namespace tessel::passes
