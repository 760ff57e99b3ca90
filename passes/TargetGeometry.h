//===- passes/TargetGeometry.h - The IR's tile geometry of a target -*- C++ -*-===//
//
// The one place a runtime::Target becomes the ir::TileGeometry that kernels
// carry (ir/ does not know the runtime, docs/architecture.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_TARGETGEOMETRY_H
#define TESSEL_PASSES_TARGETGEOMETRY_H

#include "ir/TileGeometry.h"
#include "runtime/Target.h"

#include "llvm/Support/Error.h"

namespace tessel::passes {

ir::TileGeometry geometryFor(const runtime::Target &target);

/// An error when tessel's code generator (TileGen and the passes) cannot
/// build kernels for `target`: it tiles every matmul to the full square PE
/// array (pe_rows = pe_cols = sbuf_partitions) and its accumulators to whole
/// PSUM banks (matmul_max_moving = psum_bank_bytes / 4 = 4 sbuf_partitions),
/// as on trn1 and trn2. The simulator still runs any program for `target`.
llvm::Error checkCodegenGeometry(const runtime::Target &target);

} // namespace tessel::passes

#endif
