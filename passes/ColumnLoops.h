//===- passes/ColumnLoops.h - A weight's column-block loops -----*- C++ -*-===//
//
// The loops over a projection's output column blocks whose contraction
// loops stream a [P, B] tile of a weight per step, the column block's
// columns: what widen-columns loads wider (passes/WidenColumns.cpp,
// passes/ColumnJam.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_COLUMNLOOPS_H
#define TESSEL_PASSES_COLUMNLOOPS_H

#include "ir/Kernel.h"

#include "llvm/ADT/SmallVector.h"

namespace tessel::passes {

/// A [P, B] tile a contraction loop streams from a weight whose columns
/// advance with the column-block loop: the alloc and the one load, at the
/// top of the contraction loop's body.
struct ColumnTile {
  ir::ForOp *kLoop;
  ir::AllocOp *alloc;
  ir::DmaOp *load;
};

/// The column loops the pass widens and their tiles: constant bounds, at
/// least two whole blocks, every contraction loop directly in the body
/// independent of the block, no accumulation group restarting per block.
struct ColumnLoop {
  ir::ForOp *nLoop;
  llvm::SmallVector<ColumnTile, 4> tiles;
};

/// The column loops of `block` (outermost first; a column loop's body is not
/// searched further), P the target's partitions.
void collectColumnLoops(ir::Block &block, int64_t P, llvm::SmallVectorImpl<ColumnLoop> &out);

/// Splits each loop of `kernel` that would be a column loop but for a
/// partial last block (`for %n = 0 to 2880 step 512`, extents
/// `min(512, 2880 - %n)`) into a loop over its whole blocks, where every such
/// extent is the block, and the last block in a loop of its own, as it was;
/// only where the whole blocks' loop is then a column loop. The number split.
int splitRaggedColumnLoops(ir::Kernel &kernel);

} // namespace tessel::passes

#endif
