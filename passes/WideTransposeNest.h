//===- passes/WideTransposeNest.h - An argument's transpose in wide DMAs -*- C++ -*-===//
#ifndef TESSEL_PASSES_WIDETRANSPOSENEST_H
#define TESSEL_PASSES_WIDETRANSPOSENEST_H

#include "ir/Kernel.h"

namespace tessel::passes {

/// Appends to `out` top-level loops writing `wt` = `w`^T (both 2-D, HBM) in
/// blocks of several partition tiles, loads and stores of 1 KiB runs per
/// partition, and the tile-by-tile nest over what is left
/// (passes/WideTransposeNest.cpp). False, appending nothing, when `w` has
/// no whole block.
bool buildWideTransposeNest(ir::Kernel &kernel, ir::Value *w, ir::Value *wt, llvm::SMLoc loc, ir::Block &out);

} // namespace tessel::passes

#endif
