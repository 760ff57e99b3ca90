//===- frontend/TileGen.h - Typed AST to tile IR (straightforward form) -*- C++ -*-===//
//
// TileGen lowers a kernel to the "straightforward form" (docs/architecture.md, step 5): every
// expression node gets its own tiled loop nest, every intermediate lives in an
// HBM scratch tensor, and every matmul's left operand is brought onto the
// partitions (contraction dim) by an explicit tensor-engine transpose. For
// `X @ U @ V` this is the paper's "NKI XUV" baseline; for `X @ W` the dense
// "NKI XW" baseline, blocked like AWS's NKI matmul tutorial.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_TILEGEN_H
#define TESSEL_FRONTEND_TILEGEN_H

#include "frontend/AST.h"
#include "ir/Diagnostics.h"
#include "ir/Kernel.h"

#include <map>
#include <memory>

namespace tessel {

/// Everything TileGen needs from the target and the compiler's policy; the
/// driver fills it (driver::tileGenOptionsFor), there are no defaults.
struct TileGenOptions {
  /// The target's tile geometry: tile sizes, and PSUM bytes per partition
  /// (whether a row strip's accumulators for one column tile fit PSUM,
  /// double-buffered, decides the matmul loop order). Copied to the kernel.
  ir::TileGeometry geometry;
  /// SBUF bytes per partition the transposed row strip of a matmul's left
  /// operand may take.
  int64_t stripBudgetBytes = 0;
  /// The row strip tried when none is given (halved until its strip fits).
  int64_t firstBlockM = 0;
  /// The shallowest K block TileGen chooses for a given row strip whose
  /// strip does not fit (below it the strip is kept whole); 0 = any.
  int64_t minKBlock = 0;
  /// The blocks given (row strip `m`, column block `n`); the others are
  /// chosen. A given `m` is kept even when its strip exceeds the budget
  /// (allocation then spills or reports); a chosen one is halved until it
  /// fits.
  ir::BlockConfig blocks;
};

/// Returns null after reporting an error (e.g. a block that cannot fit).
/// `projectionColumns`, when given, receives the projections' own column
/// blocks (ir::BlockConfig::columnBlockName -> the columns they tile).
std::unique_ptr<ir::Kernel>
generateTileIR(const ast::Kernel &kernel, const TileGenOptions &options, DiagnosticEngine &diags,
               std::map<std::string, int64_t> *projectionColumns = nullptr);

} // namespace tessel

#endif
