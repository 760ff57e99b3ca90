//===- passes/Spill.h - Moving an SBUF buffer to an HBM spill slot -*- C++ -*-===//
//
// The rewrite `allocate` uses when the SBUF working set does not fit. Spilling
// buffer %b:
//  - its alloc becomes `%b_spill = alloc hbm<same type> spill`, at the same
//    place (so the slot's scope covers every use of %b; the verifier allows
//    hbm allocs in loop bodies, and the backend declares one tensor for it,
//    whose reuse across iterations the simulator orders by region hazards);
//  - an instruction writing a region of %b writes a fresh staging tile
//    `%b_save` (allocated just before it, bufs 2, shaped by the upper bounds
//    of the region's extents), then `dma spill_save` copies the tile to the
//    same region of the slot;
//  - an instruction reading a region of %b reads a staging tile `%b_reload`
//    filled by a `dma spill_reload` of the region. The reload sits in the
//    innermost loop the region depends on: it is hoisted out of enclosing
//    loops whose variable the region does not mention, whose body writes no
//    part of %b and which run at least once, but never out of %b's own block;
//  - a same-dtype SBUF-to-SBUF `copy` into or out of %b needs no staging
//    tile: the spill DMA replaces it, moving straight between the slot and
//    the copy's other operand.
// Extents (`min(...)` of partial tiles) are copied unchanged, so a staging
// tile and its DMA move exactly the elements the instruction touches.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_SPILL_H
#define TESSEL_PASSES_SPILL_H

#include "ir/Kernel.h"
#include "passes/BufferLiveness.h"

#include <cstdint>

namespace tessel::passes {

/// What spilling one SBUF buffer would buy and cost.
struct SpillEstimate {
  /// False for buffers that are not in SBUF or are themselves staging tiles
  /// of a spill (read or written by a spill DMA).
  bool spillable = false;
  /// SBUF bytes per partition fewer live at the position asked about: the
  /// buffer's bytes minus those of the staging tiles live there.
  int64_t freedBytes = 0;
  /// Bytes per partition of all the staging tiles the rewrite adds.
  int64_t stagingBytes = 0;
  /// Bytes the save and reload DMAs move over a whole run of the kernel
  /// (region sizes at their extents' upper bounds, times loop trip counts).
  double trafficBytes = 0;
};

/// Estimates spilling `alloc` (an sbuf buffer of `kernel`) as seen from the
/// program point `at` (a position of `positions`, which numbers `kernel`).
SpillEstimate estimateSpill(ir::Kernel &kernel, ir::AllocOp &alloc, const OpPositions &positions,
                            unsigned at);

/// Moves `alloc`'s buffer to an HBM spill slot (see the file comment) and
/// returns the slot. `alloc` must be spillable per estimateSpill.
ir::Value *spillToHbm(ir::Kernel &kernel, ir::AllocOp &alloc);

} // namespace tessel::passes

#endif
