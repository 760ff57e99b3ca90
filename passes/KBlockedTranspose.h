//===- passes/KBlockedTranspose.h - K-blocked producers turned around -*- C++ -*-===//
//
// implicit-transpose's rewrite 2 for TileGen's K-blocked form (block `k`,
// frontend/TileGen.cpp), where a row strip's partial sums accumulate in an
// fp32 SBUF accumulator accS[m, N] and the strip A^T holds one K block:
//
//   %accS = alloc sbuf<f32, [M:m, N]>;  for %mi { memset %accS[%mi, :] }
//   for %kb { %A_T = alloc [K:kLen, M:m]; <fill A_T>
//             for %n { <B's tiles of K block %kb, column %n>; matmuls; %accS[.., %n] += psum } }
//   for %n { for %mi { %C_tile <- %accS[%mi, %n]; dma %C[%mb + %mi, %n] <- %C_tile } }
//
// When C is wanted transposed, the row strip computes C^T[N, m] = B^T A^T
// instead, into an accumulator accS^T[N, m]: per K block and column block,
// B's block [kLen, n] is loaded once and each partition-wide slice of it is
// stationary against moving-wide chunks of the strip A^T. The strip A^T
// stays one K block deep, so A is streamed (each block read once per row
// strip) and no operand strip is held whole. Every value is the same sums
// of the same products as before, only the roles swap.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_KBLOCKEDTRANSPOSE_H
#define TESSEL_PASSES_KBLOCKEDTRANSPOSE_H

#include "ir/Kernel.h"

#include <optional>

namespace tessel::passes {

struct KBlockedProducer {
  ir::ForOp *rowStrip = nullptr;
  ir::AllocOp *accAlloc = nullptr;
  ir::ForOp *zeroLoop = nullptr;  // the memset loop of accS
  ir::ForOp *storeNest = nullptr; // for %n { for %mi { ... dma C <- tile } }
  /// The K-block loops (whole blocks, then a shorter last one) and, in each,
  /// its column loop.
  llvm::SmallVector<std::pair<ir::ForOp *, ir::ForOp *>, 2> kBlocks;
};

/// Matches the store `dma C <- tile` (inside `loops`) of a K-blocked row
/// strip against the form above.
std::optional<KBlockedProducer> matchKBlockedProducer(ir::DmaOp &store,
                                                      llvm::ArrayRef<ir::ForOp *> loops);

/// Rewrites the row strip to produce `ct` (C's dimensions swapped, or the
/// destination of an explicit transpose nest) without any transpose.
void transposeKBlockedProducer(ir::Kernel &kernel, const KBlockedProducer &p, ir::Value *ct);

} // namespace tessel::passes

#endif
