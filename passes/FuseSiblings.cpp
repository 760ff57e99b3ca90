//===- passes/FuseSiblings.cpp - Nests that read one strip share it -------===//
//
// `fuse-siblings`: two row-strip nests that fill an SBUF strip from the same
// tensor region (the gate and up projections of an MLP both transpose X's
// row strip) and that are independent of each other become one nest: X's
// strip is loaded once and feeds both, as the paper's UpGate kernel does.
// Any number of siblings merge pairwise. Inside the merged nest, loops with
// the same iteration space are merged level by level (the gate and up
// column loops, then their K and store loops), so both results of one
// output tile are on chip at once, which `fuse-epilogue` needs to combine
// them. Merging only reorders independent work: the numbers are unchanged.
//
//===----------------------------------------------------------------------===//
#include "passes/LoopFusion.h"
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// The (strip, source) pairs a row-strip nest fills at its top level.
llvm::SmallVector<std::pair<ForOp *, const Value *>, 2> fillsOf(ForOp &nest) {
  llvm::SmallVector<std::pair<ForOp *, const Value *>, 2> fills;
  Block &b = nest.body;
  for (size_t i = 0; i + 1 < b.ops.size(); ++i) {
    auto *alloc = llvm::dyn_cast<AllocOp>(b.ops[i].get());
    auto *fill = llvm::dyn_cast<ForOp>(b.ops[i + 1].get());
    if (alloc && fill && alloc->result->type.space == MemSpace::SBUF)
      if (const Value *src = fillSource(*fill, alloc->result))
        fills.push_back({fill, src});
  }
  return fills;
}

bool shareASource(ForOp &a, ForOp &b) {
  auto fa = fillsOf(a), fb = fillsOf(b);
  return llvm::any_of(fa, [&](auto &x) {
    return llvm::any_of(fb, [&](auto &y) { return x.second == y.second; });
  });
}

/// Scratch tensors are allocated where TileGen first needed them; merged
/// nests may need them earlier. Moving every top-level HBM alloc to the front
/// changes nothing else (they have no address and no cost).
void hoistHbmAllocs(Block &top) {
  std::stable_partition(top.ops.begin(), top.ops.end(), [](const std::unique_ptr<Op> &op) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    return alloc && alloc->result->type.space == MemSpace::HBM;
  });
}

/// The kinds of the ops in `op`, nested as they are: "for(alloc dma for(matmul))".
std::string shapeOf(Op &op) {
  if (auto *loop = llvm::dyn_cast<ForOp>(&op)) {
    std::string s = "for(";
    for (auto &inner : loop->body.ops)
      s += shapeOf(*inner) + " ";
    return s + ")";
  }
  return op.mnemonic().str();
}

/// Inside merged nests, only loops doing the same job for the two siblings
/// merge (gate's K loop with up's K loop, not with up's store loop, which
/// may have the same bounds).
bool sameShape(ForOp &a, ForOp &b) { return shapeOf(a) == shapeOf(b); }

/// Whether the PSUM buffers of loops `a` and `b` fit PSUM when both are live
/// (as in the merged loop); when they fit only single-buffered, they become
/// so: the merged loop then overlaps the two accumulations instead.
bool fitPsumTogether(ForOp &a, ForOp &b, const TileGeometry &g) {
  llvm::SmallVector<AllocOp *, 4> psum;
  for (ForOp *loop : {&a, &b})
    walkOp(*loop, [&](Op &o) {
      if (auto *alloc = llvm::dyn_cast<AllocOp>(&o); alloc && alloc->result->type.space == MemSpace::PSUM)
        psum.push_back(alloc);
    });
  int64_t single = 0, total = 0;
  for (AllocOp *alloc : psum) {
    int64_t bytes = alloc->result->type.bytesPerPartition(g.partitions);
    single += bytes;
    total += bytes * alloc->bufs;
  }
  if (total <= g.psumBytes)
    return true;
  if (single > g.psumBytes)
    return false;
  for (AllocOp *alloc : psum)
    alloc->bufs = 1;
  return true;
}

bool anySiblings(Block &top) {
  llvm::SmallVector<ForOp *, 8> nests;
  for (auto &op : top.ops)
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      nests.push_back(loop);
  for (size_t i = 0; i < nests.size(); ++i)
    for (size_t j = i + 1; j < nests.size(); ++j)
      if (shareASource(*nests[i], *nests[j]))
        return true;
  return false;
}

class FuseSiblingsPass : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-siblings"; }
  llvm::StringRef description() const override {
    return "merge row-strip nests that fill a strip from the same tensor (gate and up "
           "projections): the strip is loaded once and feeds both";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    if (!anySiblings(kernel.body))
      return PassResult::Unchanged;
    llvm::SmallVector<Op *, 16> order;
    for (auto &op : kernel.body.ops)
      order.push_back(op.get());
    hoistHbmAllocs(kernel.body);
    bool changed = !llvm::equal(order, llvm::map_range(kernel.body.ops, [](auto &op) { return op.get(); }));
    // Row-strip nests merge when they share a strip; inside, loops merge
    // when the accumulators of both still fit PSUM together.
    auto eligible = [&](ForOp &a, ForOp &b) {
      bool topLevel = llvm::any_of(kernel.body.ops, [&](auto &op) { return op.get() == &a; });
      return topLevel ? shareASource(a, b)
                      : sameShape(a, b) && fitPsumTogether(a, b, kernel.geometry);
    };
    changed |= mergeLoops(kernel.body, eligible, [](ForOp &merged) { shareFills(merged.body); });
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseSiblingsPass() { return std::make_unique<FuseSiblingsPass>(); }

} // namespace tessel::passes
