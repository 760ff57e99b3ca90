//===- passes/Fusion.h - Producer-into-consumer fusion of matmul nests -*- C++ -*-===//
//
// Shared by `fuse` and `strip-cache`. A *fusible edge* is an HBM scratch
// tensor C written by one row-strip loop nest P (the producer) and read by
// one row-strip loop nest Q (the consumer) only to fill an SBUF strip S
// (`%S = alloc sbuf`; then one fill loop nest reading C and writing S), where
// P and Q iterate the same row strips. Fusing clones P's row-strip body into
// Q, retargets P's stores from C to S (a copy when S has C's layout, a
// tensor-engine transpose per 128 x 128 tile otherwise), and deletes the fill
// loop, P and C: the intermediate never goes to HBM.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_FUSION_H
#define TESSEL_PASSES_FUSION_H

#include "ir/Kernel.h"

namespace tessel::passes {

enum class StripPlacement {
  /// Inside Q's output column loop: the strip is recomputed for every column
  /// block (the paper's naive fused kernel, Algorithm 1).
  PerColumnBlock,
  /// At Q's row-strip level: computed once per row strip and reused by every
  /// column block (the paper's caching).
  PerRowStrip,
};

/// Fuses every fusible edge; returns whether anything changed.
bool fuseProducers(ir::Kernel &kernel, StripPlacement placement);

/// Moves strips that `fuseProducers(PerColumnBlock)` placed inside a column
/// loop (and that do not depend on it) out to the row-strip level, at every
/// level a chain nested them.
bool hoistFusedStrips(ir::Kernel &kernel);

} // namespace tessel::passes

#endif
