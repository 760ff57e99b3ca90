//===- passes/ResidentOperands.h - Loads kept on chip across a loop -*- C++ -*-===//
//
// Building blocks of `fuse-rows` (passes/FuseRows.cpp): reading a loaded
// tile's data from a buffer that already holds it, and loading a loop's
// invariant operands once, before the loop, into buffers it keeps.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_RESIDENTOPERANDS_H
#define TESSEL_PASSES_RESIDENTOPERANDS_H

#include "ir/Kernel.h"

#include <functional>
#include <string>
#include <vector>

namespace tessel::passes {

/// Rewrites every access of `v` in `block` (recursively) with `f`.
void rewriteAccesses(ir::Block &block, const ir::Value *v,
                     const std::function<void(ir::Access &)> &f);

/// `alloc %T; dma [transpose] %T[...] <- %X[...]` at `block.ops[at - 1..at]`,
/// T written nowhere else and of X's dtype: the readers of T read `held`
/// instead, a buffer holding X's rows from `firstRow` on (transposed when
/// the load transposes), and both ops go. Returns whether it did.
bool readFromHeld(ir::Block &block, size_t at, const ir::Value *x, ir::Value *held,
                  int64_t firstRow = 0);

/// SBUF bytes per partition of the buffers allocated in `op` (recursively),
/// each counted with its rotating copies: an upper bound on what it keeps live.
int64_t sbufFootprint(ir::Op &op, int64_t partitions);

/// The loads in the top-level loop `kernel.body.ops[at]` that do not depend
/// on its iterations (the other operand of a matmul in a row-strip loop) are
/// loaded once, before it, into an SBUF buffer holding the rows of the
/// tensor it reads, while those buffers together take at most `budget`
/// bytes per partition; their tiles go. Returns the names of the tensors kept.
std::vector<std::string> keepOperandsResident(ir::Kernel &kernel, size_t at, int64_t budget);

} // namespace tessel::passes

#endif
