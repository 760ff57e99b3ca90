//===- passes/GatherRowPartials.cpp - A row's partial results reduced once ===//
//
// `gather-row-partials`: a loop over a row's column blocks that reduces each
// block into a [P, 1] tile and combines it into a running result,
//   for %n = lo to hi step w {
//     %part = alloc sbuf<dt, [M:128, B:1]>
//     tensor_reduce max %part[r, 0 +: 1] <- %S[r, %n +: w]      (or an
//     activation's accumulate %part[r, 0 +: 1])
//     tensor_tensor max %acc[r', 0 +: 1] <- %acc[r', 0 +: 1], %part[r, 0 +: 1]
//   }
// pays one dependent vector-engine instruction per block for the combine
// (a [P, 1] tile costs the engine's fixed overhead, MIN_II and the
// dependent-instruction overhead: about 0.2 us on trn1). Each block's
// partial goes to a column of its own instead, and one reduction of the T
// columns and one combine follow the loop:
//   %parts = alloc sbuf<dt, [M:128, B:T]>
//   for %n = 0 to T step 1 {
//     tensor_reduce max %parts[r, %n +: 1] <- %S[r, lo + w * %n +: w] }
//   %part = alloc sbuf<dt, [M:128, B:1]>
//   tensor_reduce max %part[r, 0 +: 1] <- %parts[r, 0 +: T]
//   tensor_tensor max %acc[r', 0 +: 1] <- %acc[r', 0 +: 1], %part[r, 0 +: 1]
// The loop counts blocks (its variable scaled in every access), since an
// access cannot divide. Softmax's row max and (after fold-row-sums) its row
// sum on an SBUF strip are the cases. A max is the same; a sum adds the same
// fp32 partials in another order.
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"
#include "passes/Policy.h"

#include "ir/Clone.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;


bool mentions(const Access &a, const Value *v) {
  return llvm::any_of(a.indices, [&](const Index &i) {
    return i.start.mentions(v) || (i.extent && i.extent->mentions(v));
  });
}

/// Every op of `block` (nested too) that accesses `v`.
unsigned uses(Block &block, const Value *v) {
  unsigned n = 0;
  for (auto &op : block.ops)
    walkOp(*op, [&](Op &o) {
      llvm::SmallVector<Access *, 4> accesses = o.reads();
      accesses.append(o.writes());
      n += llvm::any_of(accesses, [&](Access *a) { return a->base == v; });
    });
  return n;
}

/// The partial written by `op` into a [P, 1] tile, and the reduction it is.
Access *partialOf(Op &op, AluOp &alu) {
  if (auto *reduce = llvm::dyn_cast<TensorReduceOp>(&op)) {
    alu = reduce->alu;
    return &reduce->dst;
  }
  if (auto *act = llvm::dyn_cast<ActivationOp>(&op); act && act->accumulator) {
    alu = AluOp::Add;
    return &*act->accumulator;
  }
  return nullptr;
}

struct Match {
  size_t alloc, writer, combine;
  Access *partial;
};

/// `loop`'s partial tile and its combine, when the loop gathers.
std::optional<Match> match(ForOp &loop) {
  if (!loop.lo.isConst() || !loop.hi.isConst() || loop.step < 2)
    return std::nullopt;
  int64_t span = loop.hi.constValue() - loop.lo.constValue();
  if (span % loop.step || span / loop.step < 2 || span / loop.step > policy::kMaxGatheredPartials)
    return std::nullopt;
  Block &b = loop.body;
  for (size_t c = 0; c < b.ops.size(); ++c) {
    auto *combine = llvm::dyn_cast<TensorTensorOp>(b.ops[c].get());
    if (!combine || combine->lhs.base != combine->dst.base || !sameIndices(combine->lhs, combine->dst) ||
        mentions(combine->dst, loop.iv) || uses(b, combine->dst.base) != 1)
      continue;
    const Value *part = combine->rhs.base;
    auto *alloc = llvm::dyn_cast_or_null<AllocOp>(part->def);
    if (!alloc || part->type.space != MemSpace::SBUF || part->type.dims.size() != 2 ||
        part->type.dims[1].size != 1 || uses(b, part) != 2)
      continue;
    size_t a = 0, w = 0;
    while (a < c && b.ops[a].get() != alloc)
      ++a;
    for (w = a + 1; w < c; ++w) {
      AluOp alu;
      Access *partial = partialOf(*b.ops[w], alu);
      if (partial && partial->base == part && partial->indices.size() == 2 && alu == combine->alu &&
          (alu == AluOp::Add || alu == AluOp::Max || alu == AluOp::Min) && sameIndices(*partial, combine->rhs) &&
          !mentions(*partial, loop.iv) && b.ops[w]->writes().size() == (llvm::isa<ActivationOp>(*b.ops[w]) ? 2u : 1u))
        return Match{a, w, c, partial};
    }
  }
  return std::nullopt;
}

/// Rewrites the matched loop `block.ops[i]`.
void gather(Kernel &kernel, Block &block, size_t i, const Match &m) {
  auto *loop = llvm::cast<ForOp>(block.ops[i].get());
  Block &b = loop->body;
  auto *combine = llvm::cast<TensorTensorOp>(b.ops[m.combine].get());
  auto *alloc = llvm::cast<AllocOp>(b.ops[m.alloc].get());
  Value *part = alloc->result;
  int64_t lo = loop->lo.constValue(), blocks = (loop->hi.constValue() - lo) / loop->step;

  Value *parts = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(part->name + "s"));
  parts->type = part->type;
  parts->type.dims[1].size = blocks;
  parts->role = part->role;
  parts->loc = part->loc;
  auto partsAlloc = std::make_unique<AllocOp>();
  partsAlloc->result = parts;
  partsAlloc->bufs = alloc->bufs;
  partsAlloc->loc = alloc->loc;
  parts->def = partsAlloc.get();

  // The loop counts blocks.
  IndexExpr iv = IndexExpr::var(loop->iv);
  for (auto &op : b.ops)
    substituteInOp(*op, loop->iv, (IndexExpr(lo) + iv * loop->step).simplified());
  loop->lo = IndexExpr(0);
  loop->hi = IndexExpr(blocks);
  loop->step = 1;
  m.partial->base = parts;
  m.partial->indices[1] = Index(iv, IndexExpr(1));

  // After the loop: one reduction of the partials, one combine.
  auto reduce = std::make_unique<TensorReduceOp>();
  reduce->alu = combine->alu;
  reduce->loc = combine->loc;
  reduce->dst = combine->rhs;
  reduce->src = combine->rhs;
  reduce->src.base = parts;
  reduce->src.indices[1] = Index(IndexExpr(0), IndexExpr(blocks));
  std::unique_ptr<Op> allocOp = std::move(b.ops[m.alloc]), combineOp = std::move(b.ops[m.combine]);
  b.ops.erase(b.ops.begin() + m.combine);
  b.ops.erase(b.ops.begin() + m.alloc);
  block.ops.insert(block.ops.begin() + i, std::move(partsAlloc));
  auto after = block.ops.begin() + i + 2;
  after = block.ops.insert(after, std::move(allocOp)) + 1;
  after = block.ops.insert(after, std::move(reduce)) + 1;
  block.ops.insert(after, std::move(combineOp));
}

bool gatherIn(Kernel &kernel, Block &block) {
  bool changed = false;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get());
    if (!loop)
      continue;
    changed |= gatherIn(kernel, loop->body);
    if (std::optional<Match> m = match(*loop)) {
      gather(kernel, block, i, *m);
      changed = true;
      i += 3; // the partials' alloc before the loop, the alloc, reduction and combine after it
    }
  }
  return changed;
}

class GatherRowPartialsPass : public Pass {
public:
  llvm::StringRef name() const override { return "gather-row-partials"; }
  llvm::StringRef description() const override {
    return "a row's per-block partial reductions written to columns of one tile and reduced once "
           "after the loop, not combined block by block";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    if (!gatherIn(kernel, kernel.body))
      return PassResult::Unchanged;
    kernel.notes.push_back("[gather-row-partials] per-block row partials reduced once after their loop");
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createGatherRowPartialsPass() { return std::make_unique<GatherRowPartialsPass>(); }

} // namespace tessel::passes
