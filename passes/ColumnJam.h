//===- passes/ColumnJam.h - Several column blocks per contraction step -*- C++ -*-===//
#ifndef TESSEL_PASSES_COLUMNJAM_H
#define TESSEL_PASSES_COLUMNJAM_H

#include "passes/ColumnLoops.h"

namespace tessel::passes {

/// Whether `jamColumns(c, g)` applies: one contraction loop streams the
/// column loop's tiles, the loop has at least g blocks and its iterations
/// are independent (ir/LoopDeps.h).
bool canJamColumns(const ColumnLoop &c, int64_t g);

/// Runs g column blocks of `c.nLoop` (a child of `parent`) per iteration,
/// their contraction steps interleaved: one load of g blocks' columns per
/// step feeds g accumulators (passes/ColumnJam.cpp). Blocks past the last
/// whole group follow in a loop of their own, run together too when there
/// are two or more. `streaming`: the kernel is bound by its DMAs, so the
/// accumulators keep one copy each and the wide tile one per queue.
void jamColumns(ir::Kernel &kernel, ir::Block &parent, const ColumnLoop &c, int64_t g, bool streaming);

} // namespace tessel::passes

#endif
