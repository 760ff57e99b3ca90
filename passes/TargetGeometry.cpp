//===- passes/TargetGeometry.cpp - The IR's tile geometry of a target -----===//
#include "passes/TargetGeometry.h"

namespace tessel::passes {

ir::TileGeometry geometryFor(const runtime::Target &target) {
  ir::TileGeometry g;
  g.partitions = target.sbuf_partitions;
  g.maxContraction = target.pe_rows;
  g.maxStationary = target.pe_cols;
  g.maxMoving = target.matmul_max_moving;
  g.psumBankBytes = target.psum_bank_bytes;
  g.psumBytes = target.psum_bytes_per_partition;
  g.sbufBytes = target.sbuf_bytes_per_partition;
  g.sbufAlignBytes = target.sbuf_align_bytes;
  return g;
}

} // namespace tessel::passes
