//===- frontend/Heads.h - Laying out values with heads in HBM --*- C++ -*-===//
//
// TileGen lowers a kernel with heads (`bf16[H, S, D]`) head by head: each
// head's nests are the 2-D lowering, reading and writing one head's tensors
// of [S, D]. A tensor with heads is one HBM tensor holding its heads' rows one
// after another ([H * S, D], the bytes of row-major [H, S, D]); these helpers
// move a head's accesses onto its rows (or, for merge_heads, onto its columns
// of [S, H * D]) and widen the tensors at the end.
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

/// Where one head's accesses of a tensor go: its rows (a tensor with heads)
/// or its columns (merge_heads's heads side by side) start this far in.
struct HeadOffset {
  int64_t rows = 0, cols = 0;
};

/// Adds `offsets[base]` to the first (rows) and second (columns) index of
/// every access of `ops` (and of the loops among them) whose base has an entry.
void shiftHeads(llvm::MutableArrayRef<std::unique_ptr<ir::Op>> ops,
                const std::map<const ir::Value *, HeadOffset> &offsets);

/// Widens a head's tensor to all `heads` of them: its first dimension (the
/// rows) times `heads`.
void widenToHeads(ir::Value &tensor, int64_t heads);

} // namespace tessel::frontend

#endif
