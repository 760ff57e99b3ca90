//===- passes/SelectBlocks.cpp - The block planner's step in a pipeline ---===//
//
// `select-blocks` names the block planner (compiler/BlockPlanner.h) in
// a pipeline. Block sizes shape the loop nests TileGen builds, so the planner
// is a step of the compile path (compiler/Compile.cpp), taken before TileGen
// when the pipeline starts with `select-blocks`; it is not a rewrite of a
// built kernel. This pass is what remains for a kernel that is already built
// -- tile IR read by `tessel opt`, which has no source to re-tile: its blocks
// are kept and the cost model's predictions for them are noted.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/analysis/KernelCost.h"
#include "passes/analysis/KernelCost.h"

#include <algorithm>

namespace tessel::passes {
namespace {

class SelectBlocksPass : public Pass {
public:
  llvm::StringRef name() const override { return "select-blocks"; }
  llvm::StringRef description() const override {
    return "set the block sizes from the cost models: the smallest row strip clearing the ridge "
           "point, then the largest whose SBUF peak fits with headroom (on tile IR text: note the "
           "predictions, blocks kept)";
  }

  PassResult run(ir::Kernel &kernel, PassContext &ctx) override {
    kernel.notes.erase(std::remove_if(kernel.notes.begin(), kernel.notes.end(),
                                      [](const std::string &n) {
                                        return llvm::StringRef(n).startswith("[select-blocks]");
                                      }),
                       kernel.notes.end());
    analysis::KernelCost cost = analysis::analyzeKernel(kernel, ctx.target);
    kernel.notes.push_back("[select-blocks] kernel read from IR text cannot be re-tiled; blocks "
                           "kept: " +
                           analysis::describeCost(cost, ctx.target));
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createSelectBlocksPass() { return std::make_unique<SelectBlocksPass>(); }

} // namespace tessel::passes
