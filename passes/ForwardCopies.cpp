//===- passes/ForwardCopies.cpp - Write strips directly, not via tiles ----===//
//
// `forward-copies`: a tile written by one op and then only copied, whole,
// into an SBUF strip is written into the strip directly:
//   %t = alloc sbuf; op %t[r] <- ...; copy %S[r'] <- %t[r]
//   =>  op %S[r'] <- ...
// The fusing passes leave this shape behind where a nest's store to HBM
// became a copy into a strip (strip-cache, fuse-handoff): the evacuation of an
// accumulator (`copy t <- acc`) and an MLP's gating product (`t = silu(g) * u`)
// each went through a tile. The vector engine then does one pass over the
// data instead of two; on an MLP that copy was a third of the epilogue's
// vector time, and the tensor engine waits for the epilogue to release the
// accumulators it reuses. The tile and the strip have one dtype, so the value
// written is the same (the op rounds once either way).
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// How often each value is read and written anywhere in the kernel.
struct UseCounts {
  llvm::DenseMap<const Value *, unsigned> reads, writes;
};

void countUses(Block &block, UseCounts &u) {
  for (auto &op : block.ops)
    walkOp(*op, [&](Op &x) {
      for (Access *a : x.reads())
        ++u.reads[a->base];
      for (Access *w : x.writes())
        ++u.writes[w->base];
    });
}

bool touches(Op &op, const Value *v) {
  bool hit = false;
  walkOp(op, [&](Op &x) {
    for (Access *a : x.reads())
      hit |= a->base == v;
    for (Access *w : x.writes())
      hit |= w->base == v;
  });
  return hit;
}

/// Forwards the copies of `block` (and of the loops in it); true if any.
bool forwardIn(Block &block, const UseCounts &uses) {
  bool changed = false;
  for (auto &op : block.ops)
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      changed |= forwardIn(loop->body, uses);
  for (size_t c = 0; c < block.ops.size(); ++c) {
    auto *copy = llvm::dyn_cast<CopyOp>(block.ops[c].get());
    if (!copy)
      continue;
    Value *tile = copy->src.base, *strip = copy->dst.base;
    if (tile->type.space != MemSpace::SBUF || strip->type.space != MemSpace::SBUF ||
        tile->type.dtype != strip->type.dtype || uses.reads.lookup(tile) != 1 ||
        uses.writes.lookup(tile) != 1)
      continue;
    // The tile's writer: in this block, before the copy, writing what the
    // copy reads; nothing between them touches the strip.
    size_t w = c;
    while (w > 0 && !touches(*block.ops[w - 1], tile) && !touches(*block.ops[w - 1], strip))
      --w;
    if (w == 0)
      continue;
    Op &writer = *block.ops[w - 1];
    Access *out = writer.write();
    if (llvm::isa<ForOp>(writer) || !out || out->base != tile || !sameIndices(*out, copy->src) ||
        llvm::any_of(writer.reads(), [&](Access *a) { return a->base == strip; }))
      continue;
    *out = copy->dst;
    block.ops.erase(block.ops.begin() + c);
    --c;
    changed = true;
  }
  // Tiles no longer read or written lose their alloc.
  if (changed)
    eraseUnusedTiles(block);
  return changed;
}

class ForwardCopiesPass : public Pass {
public:
  llvm::StringRef name() const override { return "forward-copies"; }
  llvm::StringRef description() const override {
    return "an op whose tile is only copied into an SBUF strip writes the strip directly";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    UseCounts uses;
    countUses(kernel.body, uses);
    return forwardIn(kernel.body, uses) ? PassResult::Changed : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createForwardCopiesPass() { return std::make_unique<ForwardCopiesPass>(); }

} // namespace tessel::passes
