//===- passes/BufferLiveness.h - Live ranges of on-chip buffers -*- C++ -*-===//
//
// The live range of every SBUF/PSUM alloc, as an interval of op positions
// (pre-order numbering of the kernel's ops; a loop covers its whole body):
//  - an alloc inside a loop body lives for the whole body: its rotating
//    copies are in use across iterations, so it may share space only with
//    buffers of sibling loops; an SBUF alloc of a loop nested in another
//    loop lives for the whole outer body, so the streamed tiles of one
//    iteration's loops do not share space with the next iteration's (which
//    would serialise the software pipeline across iterations) -- except
//    when the outer loop is a top-level nest: its loops are a row strip's
//    phases (a strip's K blocks, then its column blocks), each long, and
//    sharing between them costs one wait per row strip while it lets a
//    tall strip double-buffer its K block;
//  - an SBUF alloc directly in a top-level loop's body (a row strip's
//    strips: a chain's intermediates, X^T) lives from the first of the
//    strip's phases that touches it to the last, not the whole body: a long
//    chain's strips each live across two phases, and share SBUF as those
//    ranges allow (a chain of 64 matmuls holds 4096-row strips, not 128);
//  - with PhaseSharing::Prefetch, an SBUF tile of a phase (a loop in a
//    top-level loop's body, and the loops inside it) also lives through the
//    loop before that phase, so consecutive phases never share addresses;
//  - an alloc at the top of the kernel lives from its definition to the end
//    of the last top-level op (loop nest) that uses it, so a buffer that is
//    dead after the first nest leaves its space to the next nests.
// Two buffers may share addresses iff their intervals are disjoint.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PASSES_BUFFERLIVENESS_H
#define TESSEL_PASSES_BUFFERLIVENESS_H

#include "ir/Kernel.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <vector>

namespace tessel::passes {

struct LiveRange {
  ir::AllocOp *alloc = nullptr;
  ir::MemSpace space = ir::MemSpace::SBUF;
  int64_t bytes = 0;      // per partition, all `bufs` copies
  unsigned start = 0;     // first op position it is live at
  unsigned end = 0;       // last op position it is live at (inclusive)
  bool topLevel = false;  // allocated in the kernel body, outside loops

  bool overlaps(const LiveRange &o) const { return start <= o.end && o.start <= end; }
  bool liveAt(unsigned pos) const { return start <= pos && pos <= end; }
};

/// Pre-order positions of a kernel's ops: `pos[op]`, and `end[op]`, the last
/// position inside it (a loop covers its body). Live ranges use these.
struct OpPositions {
  llvm::DenseMap<const ir::Op *, unsigned> pos, end;
};
OpPositions numberOps(ir::Kernel &kernel);

/// Whether a phase's SBUF tiles may share addresses with the previous
/// phase's (the loop before it in a row strip's body: a strip's K blocks,
/// then its column blocks).
enum class PhaseSharing {
  /// They may: the next phase's first loads wait until the previous phase's
  /// last tiles are read (one stall per phase boundary), for the lowest peak.
  Shared,
  /// They may not: a phase's tiles live from the start of the previous
  /// phase, so its first loads run while the previous phase computes.
  Prefetch,
};

/// Live ranges of every sbuf/psum alloc, in program order.
std::vector<LiveRange> computeLiveRanges(ir::Kernel &kernel,
                                         PhaseSharing phases = PhaseSharing::Shared);

} // namespace tessel::passes

#endif
