//===- frontend/Heads.h - Laying out values with heads in HBM --*- C++ -*-===//
//
// TileGen lowers a kernel with heads (`bf16[H, S, D]`) head by head: each
// head's nests are the 2-D lowering, reading and writing one head's tensors
// of [S, D]. A tensor with heads is one HBM tensor holding its heads' rows one
// after another ([H * S, D], the bytes of row-major [H, S, D]); these helpers
// move a head's accesses onto its rows and widen the tensors at the end.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_HEADS_H
#define TESSEL_FRONTEND_HEADS_H

#include "ir/Kernel.h"

#include <map>

namespace tessel::frontend {

/// The most heads TileGen lowers: each head gets its own nests, so the IR,
/// and the -O2 passes' time over it, grow with the heads (a loop over the
/// heads is not implemented yet).
constexpr int64_t kMaxLoweredHeads = 128;

/// Adds `rowOffsets[base]` to the first index of every access of `ops` (and
/// of the loops among them) whose base has an entry.
void shiftHeadRows(llvm::MutableArrayRef<std::unique_ptr<ir::Op>> ops,
                   const std::map<const ir::Value *, int64_t> &rowOffsets);

/// Widens a head's tensor to all `heads` of them: its first dimension (the
/// rows) times `heads`.
void widenToHeads(ir::Value &tensor, int64_t heads);

} // namespace tessel::frontend

#endif
