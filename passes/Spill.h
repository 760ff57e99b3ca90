//===- passes/Spill.h - Moving an SBUF buffer to an HBM spill slot -*- C++ -*-===//
//
// The rewrite `allocate` uses when the SBUF working set does not fit. Spilling
// buffer %b:
//  - its alloc becomes `%b_spill = alloc hbm<same type> spill`, at the same
//    place (so the slot's scope covers every use of %b; the verifier allows
//    hbm allocs in loop bodies, and the backend declares one tensor for it,
//    whose reuse across iterations the simulator orders by region hazards);
//  - an instruction writing a region of %b writes a fresh staging tile
//    `%b_save` (allocated just before it, shaped by the upper bounds
//    of the region's extents), then `dma spill_save` copies the tile to the
//    same region of the slot;
//    Staging tiles get as many copies as their DMAs need to keep HBM busy
//    (prefetchDepth; 2 when no target is given): one spill DMA per
//    iteration of a short loop body otherwise waits for the DMA fixed cost;
//  - an instruction reading a region of %b reads a staging tile `%b_reload`
//    filled by a `dma spill_reload` of the region. The reload sits in the
//    innermost loop the region depends on: it is hoisted out of enclosing
//    loops whose variable the region does not mention, whose body writes no
//    part of %b and which run at least once, but never out of %b's own block;
//  - a same-dtype SBUF-to-SBUF `copy` into or out of %b needs no staging
//    tile: the spill DMA replaces it, moving straight between the slot and
//    the copy's other operand.
//  - a reload in a loop whose variable is only the start of the region's
//    partition dimension, one tile of it per iteration (a strip's rows read
//    tile by tile as a matmul's contraction), is hoisted out of that loop
//    too, widened to the rows the whole loop reads, when that staging tile
//    takes at most policy::kSpillReloadSbufShare of a partition: one wide DMA
//    replaces one narrow DMA per iteration (the same bytes, far fewer
//    transfers, each with its fixed and per-engine costs).
// Extents (`min(...)` of partial tiles) are copied unchanged, so a staging
// tile and its DMA move exactly the elements the instruction touches.
//
// Partial residency (splitTail): a buffer whose last dimension is indexed
// only by constants and by loop variables themselves (`%i +: e`, e <= the
// loop's step) can be cut in two along that dimension: the first columns
// stay resident in SBUF, the rest become a buffer of their own (`%b_tail`),
// which `allocate` then spills. Each such loop that crosses the cut is split
// into two loops (the second a clone reading `%b_tail` at `%i - cut`), and a
// memset that crosses it into two memsets. A loop whose variable resets a
// matmul accumulator is not split (its clone would start past the reset).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_SPILL_H
#define TESSEL_PASSES_SPILL_H

#include "ir/Kernel.h"
#include "passes/BufferLiveness.h"
#include "runtime/Target.h"

#include <cstdint>
#include <functional>

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

/// Copies a tile loaded (or stored) by DMA once per loop iteration needs so
/// that the DMAs keep HBM busy: ceil((fixed cost + transfer) / transfer),
/// the transfer at the target's HBM bandwidth, from 2 up to
/// policy::kMaxPrefetch (`schedule` and the spill staging tiles use it).
int64_t prefetchDepth(const ir::TensorType &tile, const runtime::Target &target, int64_t partitions);

/// Before spilling `alloc`'s buffer: a loop over the row tiles of a
/// reduction whose stationary operand is the buffer, read a tile of its free
/// dimension per row tile, processes several row tiles per iteration (one
/// accumulator of that many partition groups, as PSUM room allows, up to the
/// moving width), so that the spill reload of one contraction step is one
/// wide DMA (see tileReductionRows in Spill.cpp).
void widenReductionReloads(ir::Kernel &kernel, ir::AllocOp &alloc);

/// The buffer count of a staging tile of the given type (2 when empty).
using StagingDepth = std::function<int64_t(const ir::TensorType &)>;

/// Estimates spilling `alloc` (an sbuf buffer of `kernel`) as seen from the
/// program point `at` (a position of `positions`, which numbers `kernel`).
SpillEstimate estimateSpill(ir::Kernel &kernel, ir::AllocOp &alloc, const OpPositions &positions,
                            unsigned at, const StagingDepth &depth = {});

/// Moves `alloc`'s buffer to an HBM spill slot (see the file comment) and
/// returns the slot. `alloc` must be spillable per estimateSpill.
/// The staging allocs it adds are appended to `staging` when given.
ir::Value *spillToHbm(ir::Kernel &kernel, ir::AllocOp &alloc, const StagingDepth &depth = {},
                      std::vector<ir::AllocOp *> *staging = nullptr);

/// The column counts at which splitTail can cut `alloc`'s buffer are the
/// multiples of this (the least common multiple of the steps of the loops
/// indexing its last dimension); 0 when it cannot be cut.
int64_t tailGranule(ir::Kernel &kernel, ir::AllocOp &alloc);

/// Keeps the first `residentCols` columns (last dimension) of `alloc`'s
/// buffer in it and moves the others to a new SBUF buffer `%b_tail`, whose
/// alloc (inserted right after `alloc`) it returns. `residentCols` must be a
/// positive multiple of tailGranule, below the dimension's size.
ir::AllocOp *splitTail(ir::Kernel &kernel, ir::AllocOp &alloc, int64_t residentCols);

} // namespace tessel::passes

#endif
