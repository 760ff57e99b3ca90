//===- passes/FoldRowSums.cpp - Row sums taken as an activation writes ----===//
//
// `fold-row-sums`: a loop that sums each row of what an activation wrote in
// the loop just before it (same iterations), tile by tile,
//   for %n { activation exp %E[r, %n +: w] <- ... }
//   %acc = alloc ...; memset %acc, 0.0
//   for %n1 { %part = alloc; tensor_reduce add %part <- %E[r, %n1 +: w]
//             tensor_tensor add %acc <- %acc, %part }
// takes the sums from the activation itself (the scalar engine's
// accumulate, NKI's activation_reduce), and the second loop goes:
//   %acc = alloc ...; memset %acc, 0.0
//   for %n { %part = alloc; activation exp %E[r, %n +: w] <- ... accumulate %part
//            tensor_tensor add %acc <- %acc, %part }
// Softmax's sum of exponentials is the case: one vector-engine pass over the
// row strip less (fuse-rows keeps that strip in SBUF, and on a row strip the
// vector engine, not the tensor engine, bounds attention). The activation
// sums its fp32 results where the reduction summed the rounded tile: the
// sum differs by the roundings of the tile, within --check's tolerance.
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/LoopFusion.h"
#include "passes/Passes.h"

#include "ir/Clone.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// The parts of a loop whose body is exactly `alloc %part; tensor_reduce add
/// %part <- X; tensor_tensor add %acc <- %acc, %part`.
struct SumLoop {
  AllocOp *part;
  TensorReduceOp *reduce;
  TensorTensorOp *add;
};

std::optional<SumLoop> matchSumLoop(ForOp &loop) {
  Block &b = loop.body;
  if (b.ops.size() != 3)
    return std::nullopt;
  auto *part = llvm::dyn_cast<AllocOp>(b.ops[0].get());
  auto *reduce = llvm::dyn_cast<TensorReduceOp>(b.ops[1].get());
  auto *add = llvm::dyn_cast<TensorTensorOp>(b.ops[2].get());
  if (!part || !reduce || !add || reduce->alu != AluOp::Add || add->alu != AluOp::Add ||
      reduce->dst.base != part->result || part->result->type.space != MemSpace::SBUF ||
      part->result->type.dtype != DType::F32 || add->dst.base == part->result ||
      add->lhs.base != add->dst.base || add->rhs.base != part->result)
    return std::nullopt;
  return SumLoop{part, reduce, add};
}

/// The activation of `loop`'s body (not nested) that writes `region` (an
/// access of the sum loop, its variable renamed), with no accumulator yet.
ActivationOp *writerOf(ForOp &loop, const Access &region) {
  for (auto &op : loop.body.ops)
    if (auto *act = llvm::dyn_cast<ActivationOp>(op.get());
        act && !act->accumulator && act->dst.base == region.base && sameIndices(act->dst, region))
      return act;
  return nullptr;
}

/// Whether `op` (between the loops) may move above the producer loop.
bool movable(Op &op, const Footprint &producer) {
  if (llvm::isa<AllocOp>(op))
    return true;
  auto *set = llvm::dyn_cast<MemsetOp>(&op);
  return set && !producer.reads.count(set->dst.base) && !producer.writes.count(set->dst.base);
}

/// Folds the sum loop at `block.ops[j]` into the producer at `block.ops[i]`.
bool foldAt(Block &block, size_t i) {
  auto *producer = llvm::dyn_cast<ForOp>(block.ops[i].get());
  if (!producer)
    return false;
  Footprint pf = footprintOf(*producer);
  size_t j = i + 1;
  while (j < block.ops.size() && movable(*block.ops[j], pf))
    ++j;
  auto *sums = j < block.ops.size() ? llvm::dyn_cast<ForOp>(block.ops[j].get()) : nullptr;
  if (!sums || !sums->lo.structurallyEqual(producer->lo) ||
      !sums->hi.structurallyEqual(producer->hi) || sums->step != producer->step)
    return false;
  auto sum = matchSumLoop(*sums);
  if (!sum)
    return false;
  IndexExpr iv = IndexExpr::var(producer->iv);
  Access region = sum->reduce->src;
  for (Index &x : region.indices) {
    x.start = x.start.substitute(sums->iv, iv);
    if (x.extent)
      x.extent = x.extent->substitute(sums->iv, iv);
  }
  ActivationOp *act = writerOf(*producer, region);
  if (!act || pf.reads.count(sum->add->dst.base) || pf.writes.count(sum->add->dst.base))
    return false;
  substituteInOp(*sums, sums->iv, iv);
  act->accumulator = sum->reduce->dst;
  Block &body = producer->body;
  size_t at = 0;
  while (body.ops[at].get() != act)
    ++at;
  body.ops.insert(body.ops.begin() + at + 1, std::move(sums->body.ops[2]));
  body.ops.insert(body.ops.begin() + at, std::move(sums->body.ops[0]));
  // The allocs and memsets between the loops go above the producer.
  std::unique_ptr<Op> loop = std::move(block.ops[i]);
  for (size_t k = i + 1; k < j; ++k)
    block.ops[k - 1] = std::move(block.ops[k]);
  block.ops[j - 1] = std::move(loop);
  block.ops.erase(block.ops.begin() + j);
  return true;
}

bool foldIn(Block &block) {
  bool changed = false;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get()))
      changed |= foldIn(loop->body);
    changed |= foldAt(block, i);
  }
  return changed;
}

class FoldRowSumsPass : public Pass {
public:
  llvm::StringRef name() const override { return "fold-row-sums"; }
  llvm::StringRef description() const override {
    return "take a row sum of what an activation wrote from the activation itself (accumulate), "
           "not from a second pass over the rows";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    if (!foldIn(kernel.body))
      return PassResult::Unchanged;
    kernel.notes.push_back("[fold-row-sums] row sums taken as the activation writes the rows");
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldRowSumsPass() { return std::make_unique<FoldRowSumsPass>(); }

} // namespace tessel::passes
