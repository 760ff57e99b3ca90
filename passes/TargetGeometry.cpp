//===- passes/TargetGeometry.cpp - The IR's tile geometry of a target -----===//
#include "passes/TargetGeometry.h"

#include "ir/Types.h"

#include "llvm/Support/FormatVariadic.h"

#include <string>

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

llvm::Error checkCodegenGeometry(const runtime::Target &t) {
  auto unsupported = [&](const std::string &what) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "target '%s': tessel compiles .tsl kernels only for targets with %s "
                                   "(as trn1 and trn2); it can still simulate .tasm, .tir and NKI "
                                   "programs for this one",
                                   t.name.c_str(), what.c_str());
  };
  if (t.pe_rows != t.sbuf_partitions || t.pe_cols != t.sbuf_partitions)
    return unsupported(llvm::formatv("a square PE array as wide as the partitions (pe_rows = pe_cols = "
                                     "sbuf_partitions; here {0}, {1}, {2})",
                                     t.pe_rows, t.pe_cols, t.sbuf_partitions));
  // TileGen's column blocks are whole PSUM banks of fp32, four tiles wide.
  const int64_t accBytes = ir::dtypeBytes(ir::DType::F32), tilesPerBank = 4;
  if (t.matmul_max_moving * accBytes != t.psum_bank_bytes ||
      t.matmul_max_moving != tilesPerBank * t.sbuf_partitions)
    return unsupported(llvm::formatv("a moving free size of one fp32 PSUM bank, four partitions' worth "
                                     "(matmul_max_moving = psum_bank_bytes / 4 = 4 sbuf_partitions; "
                                     "here {0}, {1} / 4, 4 x {2})",
                                     t.matmul_max_moving, t.psum_bank_bytes, t.sbuf_partitions));
  return llvm::Error::success();
}

} // namespace tessel::passes
