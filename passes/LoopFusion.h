//===- passes/LoopFusion.h - Merging independent loops, sharing fills -*- C++ -*-===//
//
// The building blocks of `fuse-siblings` (passes/FuseSiblings.cpp):
// dependences at buffer granularity, merging two loops with the same
// iteration space into one, and removing a duplicate strip fill.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_LOOPFUSION_H
#define TESSEL_PASSES_LOOPFUSION_H

#include "ir/Kernel.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

namespace tessel::passes {

/// The buffers and tensors an op (with everything nested in it) reads and
/// writes, and the values it defines (allocs, loop variables) and uses.
struct Footprint {
  llvm::SmallPtrSet<const ir::Value *, 8> reads, writes, defines, uses;
};
Footprint footprintOf(ir::Op &op);

/// Moves `b`'s body to the end of `a`'s, `b`'s loop variable renamed to `a`'s.
void appendBody(ir::ForOp &a, ir::ForOp &b);

/// Whether `a` and `b` may run in either order (or interleaved): neither
/// writes what the other reads or writes.
bool independent(const Footprint &a, const Footprint &b);

/// Whether an op of footprint `moved` may move across one of `other` (in
/// either direction): they are independent and neither uses what the other defines.
bool canSwap(const Footprint &moved, const Footprint &other);

/// Merges pairs of loops of `block` with the same bounds and step whose
/// bodies are independent, when the ops between them let one move next to
/// the other: the second loop's body is appended to the first's (its loop
/// variable renamed). `onMerged` sees each merged loop, then its body is
/// merged recursively. `eligible` is asked last, about a pair that may merge
/// (it may prepare them, say by giving up double buffers). Returns whether
/// anything changed.
bool mergeLoops(ir::Block &block, const std::function<bool(ir::ForOp &, ir::ForOp &)> &eligible,
                const std::function<void(ir::ForOp &)> &onMerged);

/// Within `block`: a strip `%S2 = alloc sbuf` filled by a loop that does what
/// an earlier strip `%S1`'s fill loop does (same tensor, same region, same
/// shape) is dropped and its readers read %S1. Returns whether anything changed.
bool shareFills(ir::Block &block);

/// The HBM tensor a pure fill loop (loads, transposes, copies into `strip`)
/// reads, or null when `fill` is not one.
const ir::Value *fillSource(ir::ForOp &fill, const ir::Value *strip);

} // namespace tessel::passes

#endif
