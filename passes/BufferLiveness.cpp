#include "passes/BufferLiveness.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

namespace tessel::passes {
namespace {

using namespace ir;

struct Numbering : OpPositions {
  std::vector<std::pair<AllocOp *, ForOp *>> allocs; // with the enclosing loop (null: top)
  unsigned next = 0;
  llvm::DenseMap<const ForOp *, ForOp *> parentOf;

  void number(Block &block, ForOp *loop) {
    for (auto &op : block.ops) {
      unsigned p = next++;
      pos[op.get()] = p;
      if (auto *alloc = llvm::dyn_cast<AllocOp>(op.get()))
        allocs.push_back({alloc, loop});
      if (auto *inner = llvm::dyn_cast<ForOp>(op.get())) {
        parentOf[inner] = loop;
        number(inner->body, inner);
      }
      end[op.get()] = next - 1;
    }
  }
};

bool onChip(const AllocOp &alloc) { return alloc.result->type.space != MemSpace::HBM; }

} // namespace

OpPositions numberOps(Kernel &kernel) {
  Numbering n;
  n.number(kernel.body, nullptr);
  return std::move(static_cast<OpPositions &>(n));
}

/// The phase holding a buffer allocated in `loop`: the loop around it (or
/// itself) directly in the body of a top-level loop, or null for a buffer
/// of the top-level loop's own body (a strip's buffers are no phase's).
static const ForOp *phaseOf(const Numbering &n, const ForOp *loop) {
  while (loop) {
    const ForOp *parent = n.parentOf.lookup(loop);
    if (!parent)
      return nullptr;
    if (!n.parentOf.lookup(parent))
      return loop;
    loop = parent;
  }
  return nullptr;
}

/// The loop before `phase` in its parent's body, or null.
static const ForOp *previousLoop(const ForOp *phase, const ForOp *parent) {
  const ForOp *prev = nullptr;
  for (auto &op : parent->body.ops) {
    if (op.get() == phase)
      return prev;
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      prev = loop;
  }
  return nullptr;
}

std::vector<LiveRange> computeLiveRanges(Kernel &kernel, PhaseSharing phases) {
  Numbering n;
  n.number(kernel.body, nullptr);

  // The last top-level op (whole loop nest) touching each buffer.
  llvm::DenseMap<const Value *, unsigned> lastUse;
  for (auto &top : kernel.body.ops) {
    unsigned topEnd = n.end[top.get()];
    std::vector<Op *> stack{top.get()};
    while (!stack.empty()) {
      Op *op = stack.back();
      stack.pop_back();
      if (auto *loop = llvm::dyn_cast<ForOp>(op)) {
        for (auto &inner : loop->body.ops)
          stack.push_back(inner.get());
        continue;
      }
      llvm::SmallVector<Access *, 4> accesses = op->reads();
      for (Access *w : op->writes())
        accesses.push_back(w);
      for (Access *a : accesses)
        if (a && a->base)
          lastUse[a->base] = std::max(lastUse.lookup(a->base), topEnd);
    }
  }

  // Within a top-level loop's body (a row strip's phases), the first and the
  // last phase touching each buffer.
  llvm::DenseMap<const Value *, unsigned> firstPhaseUse, lastPhaseUse;
  for (auto &top : kernel.body.ops)
    if (auto *loop = llvm::dyn_cast<ForOp>(top.get()))
      for (auto &phase : loop->body.ops)
        walkOp(*phase, [&](Op &op) {
          llvm::SmallVector<Access *, 4> accesses = op.reads();
          for (Access *w : op.writes())
            accesses.push_back(w);
          for (Access *a : accesses)
            if (a && a->base) {
              auto [first, inserted] = firstPhaseUse.try_emplace(a->base, n.pos[phase.get()]);
              first->second = std::min(first->second, n.pos[phase.get()]);
              lastPhaseUse[a->base] = std::max(lastPhaseUse.lookup(a->base), n.end[phase.get()]);
            }
        });

  std::vector<LiveRange> ranges;
  for (auto [alloc, loop] : n.allocs) {
    if (!onChip(*alloc))
      continue;
    LiveRange r;
    r.alloc = alloc;
    r.space = alloc->result->type.space;
    r.bytes = alloc->result->type.bytesPerPartition(kernel.geometry.partitions) * alloc->bufs;
    if (loop) {
      // From the alloc to the end of the loop body: nothing earlier in the
      // body can touch it (the simulator orders any reuse of the space by
      // its address hazards, so sharing is always safe). An SBUF tile of a
      // loop nested in another loop lives for the whole body of that outer
      // loop: the outer loop's next iteration (the next column block's
      // loads) runs ahead while this one's sibling loops (its stores) drain,
      // and a shared address would serialise them. The loops directly in a
      // top-level nest (a row strip's phases: the strip's K blocks, then its
      // column blocks) are exempt: sharing there costs one wait per row
      // strip, and it is what lets a tall strip's K block double-buffer.
      ForOp *outer = n.parentOf.lookup(loop);
      if (outer && n.parentOf.lookup(outer) && !outer->body.ops.empty() && r.space == MemSpace::SBUF) {
        r.start = n.pos[outer->body.ops.front().get()];
        r.end = n.end[outer];
      } else if (!outer && r.space == MemSpace::SBUF) {
        // A buffer of a row strip's body (a chain's intermediate strip)
        // lives from the first phase that touches it to the last: the
        // strips of a long chain then share SBUF as their live ranges allow
        // (the simulator orders a reuse of the space by its address hazards).
        r.start = n.pos[alloc];
        if (auto first = firstPhaseUse.find(alloc->result); first != firstPhaseUse.end())
          r.start = std::max(r.start, first->second);
        r.end = std::max(r.start, lastPhaseUse.lookup(alloc->result));
      } else {
        r.start = n.pos[alloc];
        r.end = std::max(r.start, n.end[loop]);
      }
      // Prefetch across a phase boundary: the tile also lives through the
      // phase before its own, so the two never share addresses.
      if (phases == PhaseSharing::Prefetch && r.space == MemSpace::SBUF)
        if (const ForOp *phase = phaseOf(n, loop))
          if (const ForOp *prev = previousLoop(phase, n.parentOf.lookup(phase)))
            r.start = std::min(r.start, n.pos[prev]);
    } else {
      r.topLevel = true;
      r.start = n.pos[alloc];
      r.end = std::max(r.start, lastUse.lookup(alloc->result));
    }
    ranges.push_back(r);
  }
  return ranges;
}

} // namespace tessel::passes
