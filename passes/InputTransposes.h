//===- passes/InputTransposes.h - A transposed input read in place -*- C++ -*-===//
#ifndef TESSEL_PASSES_INPUTTRANSPOSES_H
#define TESSEL_PASSES_INPUTTRANSPOSES_H

#include "ir/Kernel.h"

#include <optional>
#include <vector>

namespace tessel::passes {

/// A DMA that reads an argument's transpose scratch, and how many elements
/// it reads over the whole kernel (its tile times its loops' trips; 0 when
/// not constant).
struct ScratchReader {
  ir::DmaOp *dma;
  int64_t elements;
};

/// An HBM scratch that TileGen filled with an argument's transpose: its
/// alloc and its writing nest (top-level positions), and every read of it,
/// each a DMA into SBUF.
struct ArgumentTranspose {
  size_t allocAt, writerAt;
  ir::Value *scratch, *arg;
  /// scratch[i, j] = arg[j + offset[0], i + offset[1]]: the nest may
  /// transpose a block of the argument (one head's rows of a stacked K).
  int64_t offset[2];
  std::vector<ScratchReader> readers;
};

/// The argument transpose whose scratch `kernel.body.ops[i]` allocates.
std::optional<ArgumentTranspose> matchArgumentTranspose(ir::Kernel &kernel, size_t i);

/// `r` reads `t`'s argument with the indices swapped (and its offsets
/// added) and the opposite `transpose` flag: the same elements, without
/// the scratch.
void readArgumentTransposed(const ScratchReader &r, const ArgumentTranspose &t);

/// implicit-transpose's rewrite of an argument's transpose that TileGen
/// wrote to an HBM scratch: its readers read the argument with the indices
/// swapped (passes/InputTransposes.cpp), where that is cheaper than the
/// scratch. True if any scratch went.
bool absorbInputTransposes(ir::Kernel &kernel);

/// The scratches that absorbInputTransposes kept (a weight read again by
/// every row strip) become SBUF buffers holding the argument's transpose,
/// filled once at the kernel's start by partition-square transposing loads
/// (which io-transpose may move to the tensor engine), while they take at
/// most policy::kResidentTransposeShare of SBUF (passes/ResidentTransposes.cpp).
/// True if any scratch went.
bool keepArgumentTransposesResident(ir::Kernel &kernel);

} // namespace tessel::passes

#endif
