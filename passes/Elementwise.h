//===- passes/Elementwise.h - TileGen's elementwise nests -------*- C++ -*-===//
//
// TileGen lowers each elementwise DSL expression (`silu(a)`, `a * b`, ...)
// into its own top-level nest over tiles of the result D:
//
//   for %m { for %n { %a_t = alloc; dma %a_t <- %A[%m +: em, %n +: en]   (per operand)
//                     %d_t = alloc; <compute> %d_t <- %a_t (, %b_t)
//                     dma %D[%m +: em, %n +: en] <- %d_t } }
//
// Every operand tile covers the same region of its tensor as the result
// tile of D (operands loaded with `dma transpose` cover the swapped region):
// the nest is pointwise. implicit-transpose turns such a nest around when D
// is wanted transposed; fuse-epilogue folds it into the stores of the nests
// producing its operands.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_ELEMENTWISE_H
#define TESSEL_PASSES_ELEMENTWISE_H

#include "ir/Kernel.h"

namespace tessel::passes {

struct ElementwiseNest {
  ir::ForOp *outer = nullptr, *inner = nullptr;
  /// The operand loads (HBM -> SBUF tile), in the order of the inner body.
  llvm::SmallVector<ir::DmaOp *, 2> loads;
  /// The one computing instruction (activation, tensor_tensor, tensor_scalar, copy).
  ir::Op *compute = nullptr;
  ir::DmaOp *store = nullptr;
  ir::Value *dest() const { return store->dst.base; }
};

/// Whether two accesses name the same region (their bases aside): the same
/// index expressions, ranges where the other has ranges.
bool sameIndices(const ir::Access &a, const ir::Access &b);

/// Erases the allocs of SBUF tiles of `block` that no op of it (nested ops
/// included) reads or writes any more: what a rewrite that bypassed a tile
/// leaves behind.
void eraseUnusedTiles(ir::Block &block);

/// Matches `op` (a top-level op) against the elementwise form above.
std::optional<ElementwiseNest> matchElementwiseNest(ir::Op &op);

/// Rewrites every elementwise nest whose scratch result is read only through
/// transposing DMAs, and whose operands are all scratch tensors, to compute
/// the transposed result D^T from transposed operand tiles; the readers of D
/// then load D^T plainly. The operands' own producers see transposing
/// readers in turn (implicit-transpose iterates). Returns whether anything
/// changed.
bool transposeElementwiseNests(ir::Kernel &kernel);

} // namespace tessel::passes

#endif
