//===- passes/Passes.h - Factories of the tile-IR passes --------*- C++ -*-===//
//
// One factory per pass, in the order of passes/PassRegistry.def; each is
// defined in passes/<Name>.cpp next to the pass class (which stays in that
// file's anonymous namespace).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_PASSES_H
#define TESSEL_PASSES_PASSES_H

#include "passes/Pass.h"

#include <memory>

namespace tessel::passes {

/// SBUF/PSUM addresses by liveness (passes/Allocate.cpp).
std::unique_ptr<Pass> createAllocatePass();
/// A tile only copied into a strip is written there directly (passes/ForwardCopies.cpp).
std::unique_ptr<Pass> createForwardCopiesPass();
std::unique_ptr<Pass> createFusePass();
std::unique_ptr<Pass> createFuseEpiloguePass();
std::unique_ptr<Pass> createFuseHandoffPass();
/// Row-wise chains per row strip, intermediates in SBUF (passes/FuseRows.cpp).
std::unique_ptr<Pass> createFuseRowsPass();
std::unique_ptr<Pass> createFoldRowSumsPass();
std::unique_ptr<Pass> createBalanceEnginesPass();
std::unique_ptr<Pass> createDeferRowScalePass();
std::unique_ptr<Pass> createFoldActivationInputsPass();
std::unique_ptr<Pass> createFuseSiblingsPass();
/// Per-block row partials reduced once after their loop (passes/GatherRowPartials.cpp).
std::unique_ptr<Pass> createGatherRowPartialsPass();
std::unique_ptr<Pass> createImplicitTransposePass();
/// Partial row maxima of bf16 values kept in bf16 (passes/NarrowRowMax.cpp).
std::unique_ptr<Pass> createNarrowRowMaxPass();
/// I/O transposes on the DMA or the tensor engine (passes/IoTranspose.cpp).
std::unique_ptr<Pass> createIoTransposePass();
std::unique_ptr<Pass> createSchedulePass();
std::unique_ptr<Pass> createSelectBlocksPass();
std::unique_ptr<Pass> createStripCachePass();
std::unique_ptr<Pass> createStripAccumulatePass();
/// A weight's column blocks loaded two at a time (passes/WidenColumns.cpp).
std::unique_ptr<Pass> createWidenColumnsPass();
/// Elementwise column loops in wider tiles (passes/WidenElementwise.cpp).
std::unique_ptr<Pass> createWidenElementwisePass();
std::unique_ptr<Pass> createWidenLoadsPass();
std::unique_ptr<Pass> createWholeRowReductionsPass();

} // namespace tessel::passes

#endif
