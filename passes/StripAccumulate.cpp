//===- passes/StripAccumulate.cpp - K-blocked sums straight into the strip ===//
//
// `strip-accumulate` removes the fp32 SBUF accumulator of a K-blocked
// producer whose result is cached in an SBUF strip of the same shape: the
// partial sums of each K block are added into the strip itself. The form it
// rewrites (implicit-transpose and strip-cache leave it):
//
//   %S   = alloc sbuf<bf16, [R, M:m]>          (the cached strip)
//   %acc = alloc sbuf<f32, [R, M:m]>
//   memset %acc[..], 0.0 ...                   (zero)
//   ... tensor_tensor add %acc[I] <- %acc[I], %psum ...   (per K block)
//   ... %t = alloc; copy %t <- %acc[J]; copy %S[J] <- %t ... (the strip)
//
// becomes the same memsets and adds on %S, without %acc and the copies. The
// strip then is the only buffer of the size of the intermediate, which is
// what lets a tall strip (the paper's bs = 2048 and beyond) fit SBUF: at
// DeepSeek-V3's rank 4096 the fp32 accumulator of m = 2048 rows alone is
// 256 KiB per partition, the bf16 strip 128 KiB.
//
// Precision: each add still sums in fp32 (the vector engine reads the bf16
// running sum and the fp32 partial sum, and rounds once when it writes), but
// the running sum is stored in bf16 between K blocks: with B blocks the
// intermediate is rounded B times instead of once, so its error bound grows
// from u to B*u (u = 2^-8) of the magnitude of the running sums. The pass
// folds only up to policy::kMaxStripRoundings blocks, where that worst case
// stays within what --check allows; with more, the fp32 accumulator stays
// (docs/passes.md, "K-blocked strips").
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"
#include "passes/Policy.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <string>

namespace tessel::passes {
namespace {

using namespace ir;

/// Where every access of a buffer is: its ops, each with the block that
/// holds it and the loops around it.
struct OpSite {
  Op *op;
  Block *block;
  llvm::SmallVector<ForOp *, 6> loops;
};
using SiteMap = llvm::DenseMap<const Value *, llvm::SmallVector<OpSite, 8>>;

void collect(Block &block, SiteMap &sites, llvm::SmallVector<ForOp *, 6> &loops) {
  for (auto &op : block.ops) {
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
      loops.push_back(loop);
      collect(loop->body, sites, loops);
      loops.pop_back();
      continue;
    }
    llvm::SmallPtrSet<const Value *, 4> named;
    for (Access *a : op->reads())
      named.insert(a->base);
    for (Access *w : op->writes())
      named.insert(w->base);
    for (const Value *v : named)
      sites[v].push_back({op.get(), &block, loops});
  }
}

/// How many times the op at `s` writes each element of `dst` per execution
/// of `scope` (the block allocating it): the trip counts of the loops inside
/// `scope` around the op that `dst` does not move with.
int64_t repeats(const OpSite &s, const Access &dst, const Block &scope) {
  int64_t n = 1;
  auto inside = llvm::find_if(s.loops, [&](ForOp *l) { return &l->body == &scope; });
  auto first = inside == s.loops.end() ? s.loops.begin() : std::next(inside);
  for (ForOp *loop : llvm::make_range(first, s.loops.end())) {
    bool moves = false;
    for (const Index &idx : dst.indices)
      moves |= idx.start.mentions(loop->iv) || (idx.extent && idx.extent->mentions(loop->iv));
    if (!moves && loop->lo.isConst() && loop->hi.isConst())
      n *= llvm::divideCeil(loop->hi.constValue() - loop->lo.constValue(), loop->step);
  }
  return n;
}

bool sameShape(const TensorType &a, const TensorType &b) {
  if (a.dims.size() != b.dims.size())
    return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i].label != b.dims[i].label || a.dims[i].size != b.dims[i].size)
      return false;
  return true;
}

size_t indexIn(Block &b, const Op *op) {
  for (size_t i = 0; i < b.ops.size(); ++i)
    if (b.ops[i].get() == op)
      return i;
  return b.ops.size();
}

/// Drops loops left with empty bodies.
void dropEmptyLoops(Block &block) {
  for (auto &op : block.ops)
    if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
      dropEmptyLoops(loop->body);
  llvm::erase_if(block.ops, [](const std::unique_ptr<Op> &op) {
    auto *loop = llvm::dyn_cast<ForOp>(op.get());
    return loop && loop->body.ops.empty();
  });
}

/// One accumulator folded into its strip, when `accAlloc` (in `block`) has
/// the form above. Returns whether it did.
bool foldAccumulator(Block &block, AllocOp &accAlloc, SiteMap &sites,
                     std::vector<std::string> &notes) {
  Value *acc = accAlloc.result;
  const TensorType &at = acc->type;
  if (at.space != MemSpace::SBUF || at.dtype != DType::F32 || accAlloc.bufs != 1)
    return false;
  Value *strip = nullptr;
  int64_t roundings = 0; // adds into one element: the K blocks

  // The strip copies: (tile alloc, copy from acc, copy into the strip).
  llvm::SmallVector<std::array<OpSite, 3>, 4> evacuations;
  for (const OpSite &s : sites[acc]) {
    if (auto *z = llvm::dyn_cast<MemsetOp>(s.op)) {
      if (z->value != 0.0)
        return false;
      continue;
    }
    if (auto *add = llvm::dyn_cast<TensorTensorOp>(s.op)) {
      if (add->alu != AluOp::Add || add->dst.base != acc || add->lhs.base != acc ||
          !sameIndices(add->dst, add->lhs) || add->rhs.base == acc)
        return false;
      roundings += repeats(s, add->dst, block);
      continue;
    }
    auto *out = llvm::dyn_cast<CopyOp>(s.op);
    if (!out || out->src.base != acc)
      return false;
    size_t i = indexIn(*s.block, out);
    if (i == 0 || i + 1 >= s.block->ops.size())
      return false;
    auto *tileAlloc = llvm::dyn_cast<AllocOp>(s.block->ops[i - 1].get());
    auto *in = llvm::dyn_cast<CopyOp>(s.block->ops[i + 1].get());
    if (!tileAlloc || !in || tileAlloc->result != out->dst.base || in->src.base != out->dst.base ||
        sites[out->dst.base].size() != 2 || !sameIndices(in->src, out->dst) ||
        !sameIndices(in->dst, out->src) || in->dst.base->type.space != MemSpace::SBUF ||
        !sameShape(in->dst.base->type, at) || (strip && strip != in->dst.base))
      return false;
    strip = in->dst.base;
    evacuations.push_back(
        {OpSite{tileAlloc, s.block, {}}, OpSite{out, s.block, {}}, OpSite{in, s.block, {}}});
  }
  if (!strip || roundings == 0)
    return false;
  if (roundings > policy::kMaxStripRoundings) {
    notes.push_back("[strip-accumulate] %" + strip->name + " keeps its fp32 accumulator %" +
                    acc->name + ": " + std::to_string(roundings) + " K blocks, over the " +
                    std::to_string(policy::kMaxStripRoundings) +
                    " roundings of the running sum allowed");
    return false;
  }
  // The strip is allocated before the accumulator in the same block, written
  // only by these copies, and read only after the last of them (by the
  // consumer), so it can hold the running sums.
  auto *stripAlloc = llvm::dyn_cast_or_null<AllocOp>(strip->def);
  size_t accPos = indexIn(block, &accAlloc);
  if (!stripAlloc || indexIn(block, stripAlloc) >= accPos)
    return false;
  // The top-level op (in `block`) holding each of the strip's accesses.
  auto topOf = [&](Op *op) {
    for (size_t i = accPos; i < block.ops.size(); ++i) {
      bool inside = false;
      walkOp(*block.ops[i], [&](Op &o) { inside |= &o == op; });
      if (inside)
        return i;
    }
    return block.ops.size();
  };
  size_t lastEvacuation = 0;
  for (auto &e : evacuations)
    lastEvacuation = std::max(lastEvacuation, topOf(e[2].op));
  if (lastEvacuation == block.ops.size())
    return false;
  for (const OpSite &s : sites[strip]) {
    if (s.op == stripAlloc)
      continue;
    bool evacuation = llvm::any_of(evacuations, [&](auto &e) { return e[2].op == s.op; });
    if (!evacuation && (s.op->write() && s.op->write()->base == strip))
      return false;
    if (!evacuation && topOf(s.op) <= lastEvacuation)
      return false;
  }

  // Rewrite: sums into the strip, evacuations gone, the accumulator gone.
  for (const OpSite &s : sites[acc]) {
    if (auto *z = llvm::dyn_cast<MemsetOp>(s.op))
      z->dst.base = strip;
    else if (auto *add = llvm::dyn_cast<TensorTensorOp>(s.op))
      add->dst.base = add->lhs.base = strip;
  }
  for (auto &e : evacuations) {
    Block &b = *e[0].block;
    llvm::erase_if(b.ops, [&](const std::unique_ptr<Op> &op) {
      return op.get() == e[0].op || op.get() == e[1].op || op.get() == e[2].op;
    });
  }
  block.ops.erase(block.ops.begin() + accPos);
  dropEmptyLoops(block);
  return true;
}

/// Folds the first accumulator of the form found in `block` (recursively).
bool foldIn(Block &block, SiteMap &sites, std::vector<std::string> &notes) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    Op *op = block.ops[i].get();
    auto *loop = llvm::dyn_cast<ForOp>(op);
    auto *alloc = llvm::dyn_cast<AllocOp>(op);
    // After a fold the sites are stale: the caller collects them again.
    if ((loop && foldIn(loop->body, sites, notes)) ||
        (alloc && foldAccumulator(block, *alloc, sites, notes)))
      return true;
  }
  return false;
}

class StripAccumulatePass : public Pass {
public:
  llvm::StringRef name() const override { return "strip-accumulate"; }
  llvm::StringRef description() const override {
    return "K-blocked partial sums accumulate in the cached strip itself (fp32 adds, the running "
           "sum stored in the strip's type), without an fp32 accumulator of the strip's size";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    bool changed = false;
    std::vector<std::string> notes;
    for (;;) {
      SiteMap sites;
      llvm::SmallVector<ForOp *, 6> loops;
      collect(kernel.body, sites, loops);
      notes.clear(); // each round walks every accumulator again
      if (!foldIn(kernel.body, sites, notes))
        break;
      changed = true;
    }
    kernel.notes.insert(kernel.notes.end(), notes.begin(), notes.end());
    return changed ? PassResult::Changed : PassResult::Unchanged;
  }
};

} // namespace

std::unique_ptr<Pass> createStripAccumulatePass() { return std::make_unique<StripAccumulatePass>(); }

} // namespace tessel::passes
