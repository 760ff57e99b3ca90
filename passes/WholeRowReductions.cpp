//===- passes/WholeRowReductions.cpp - A row strip reduced at once --------===//
//
// `whole-row-reductions`: TileGen reduces a row (softmax's max and sum) one
// block of columns at a time, combining each block's partial result into a
// running one, because it streams the row from HBM:
//   for %n = lo to hi step w {
//     %part = alloc sbuf<f32, [M:128, B:1]>
//     tensor_reduce max %part[r, 0 +: 1] <- %S[r, %n +: w]
//     tensor_tensor max %acc[r, 0 +: 1] <- %acc[r, 0 +: 1], %part[r, 0 +: 1]
//   }
// Once the row is an SBUF strip (fuse-rows), the blocks only add
// instructions: each pays the engine's fixed access overhead, and each
// combine is a dependent instruction of its own. The loop becomes its body
// once, over the whole span:
//   %part = alloc ...; tensor_reduce max %part[r, 0 +: 1] <- %S[r, lo +: hi - lo]
//   tensor_tensor max %acc[r, 0 +: 1] <- %acc[r, 0 +: 1], %part[r, 0 +: 1]
// For max the result is the same; a sum adds the same fp32 values in
// another order. One reduction cannot start before the whole row is
// written, where a block's could follow its producer's block: not in -O2,
// since the static model predicts every attention kernel faster with it
// while the simulator finds some slower (docs/passes.md).
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// Whether `e` is a block of `loop`'s columns: `w` (the step, when it
/// divides the span) or `min(w, hi - %n)` (a partial last block).
bool blockExtent(const ForOp &loop, const IndexExpr &e) {
  int64_t lo = loop.lo.constValue(), hi = loop.hi.constValue();
  if (e.isConst())
    return e.constValue() == loop.step && (hi - lo) % loop.step == 0;
  IndexExpr partial = min(IndexExpr(loop.step), IndexExpr(hi) - IndexExpr::var(loop.iv));
  return e.simplified().structurallyEqual(partial.simplified());
}

/// Whether `loop` reduces blocks of an SBUF strip's rows into a running
/// result: `alloc %part; tensor_reduce op %part <- %S[r, %n +: w];
/// tensor_tensor op %acc <- %acc, %part`, only the columns moving.
bool reducesStripBlocks(ForOp &loop) {
  Block &b = loop.body;
  if (b.ops.size() != 3 || !loop.lo.isConst() || !loop.hi.isConst() || loop.constTripCount() < 2)
    return false;
  auto *part = llvm::dyn_cast<AllocOp>(b.ops[0].get());
  auto *reduce = llvm::dyn_cast<TensorReduceOp>(b.ops[1].get());
  auto *combine = llvm::dyn_cast<TensorTensorOp>(b.ops[2].get());
  if (!part || !reduce || !combine || reduce->alu != combine->alu ||
      (reduce->alu != AluOp::Max && reduce->alu != AluOp::Add && reduce->alu != AluOp::Min) ||
      reduce->dst.base != part->result || combine->rhs.base != part->result ||
      combine->lhs.base != combine->dst.base || !sameIndices(combine->lhs, combine->dst) ||
      combine->dst.base == part->result)
    return false;
  const Access &src = reduce->src;
  if (src.base->type.space != MemSpace::SBUF || src.indices.size() != 2 || !src.indices[1].isRange())
    return false;
  const Value *iv = loop.iv;
  const Index &cols = src.indices[1];
  IndexExpr offset = (cols.start - IndexExpr::var(iv)).simplified();
  if (offset.mentions(iv) || !blockExtent(loop, *cols.extent))
    return false;
  // Only the source's columns move with the loop.
  auto fixed = [&](const Access &a) {
    return llvm::none_of(a.indices, [&](const Index &i) {
      return i.start.mentions(iv) || (i.extent && i.extent->mentions(iv));
    });
  };
  return fixed(reduce->dst) && fixed(combine->dst) && fixed(combine->rhs) && !src.indices[0].start.mentions(iv) &&
         !(src.indices[0].extent && src.indices[0].extent->mentions(iv));
}

/// Replaces the loop at `block.ops[i]` by its body once, over the whole span.
void collapse(Block &block, size_t i) {
  auto *loop = llvm::cast<ForOp>(block.ops[i].get());
  int64_t lo = loop->lo.constValue(), hi = loop->hi.constValue();
  auto *reduce = llvm::cast<TensorReduceOp>(loop->body.ops[1].get());
  Index &cols = reduce->src.indices[1];
  cols.start = cols.start.substitute(loop->iv, IndexExpr(lo)).simplified();
  cols.extent = IndexExpr(hi - lo);
  std::vector<std::unique_ptr<Op>> body = std::move(loop->body.ops);
  block.ops.erase(block.ops.begin() + i);
  block.ops.insert(block.ops.begin() + i, std::make_move_iterator(body.begin()),
                   std::make_move_iterator(body.end()));
}

bool collapseIn(Block &block) {
  bool changed = false;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get());
    if (!loop)
      continue;
    if (reducesStripBlocks(*loop)) {
      collapse(block, i);
      changed = true;
      continue;
    }
    changed |= collapseIn(loop->body);
  }
  return changed;
}

class WholeRowReductionsPass : public Pass {
public:
  llvm::StringRef name() const override { return "whole-row-reductions"; }
  llvm::StringRef description() const override {
    return "reduce the rows of an SBUF strip in one instruction instead of block by block with "
           "a running combine (softmax's max and sum on a fused strip)";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    if (!collapseIn(kernel.body))
      return PassResult::Unchanged;
    kernel.notes.push_back("[whole-row-reductions] row reductions of SBUF strips taken whole, not block by block");
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createWholeRowReductionsPass() { return std::make_unique<WholeRowReductionsPass>(); }

} // namespace tessel::passes
