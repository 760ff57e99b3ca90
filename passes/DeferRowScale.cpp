//===- passes/DeferRowScale.cpp - A per-row scale after the matmul --------===//
//
// `defer-row-scale`: scaling the rows of a matmul's left operand scales the
// rows of its result, so a row strip divided by a per-row value
//   tensor_scalar divide %P[r, c] <- %E[r, c], %s[r, 0 +: 1]
// and only read, transposed on the tensor engine, as the stationary operand
// of a matmul (P @ V) is not divided: the transposes read %E, and the
// evacuations of the matmul's accumulators divide instead,
//   copy %o <- %acc   =>   tensor_scalar divide %o <- %acc, %s
// Softmax's normalisation before `@ V` is the case: the vector engine
// divides a [rows, D] result instead of the [rows, S] strip (at S = 2048,
// D = 128, a sixteenth of the work), on a fused attention strip where the
// vector engine bounds the kernel. Row i of every buffer on the way (the
// strip, its transposes, the accumulator) must be row i of the strip: their
// row offsets are 0 once loops that run once are taken at their value
// (fuse-rows' one-tile strips). The rounding moves: E @ V is rounded once,
// then divided, where P was rounded before the matmul.
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// Every op of `loop` (nested ones too) reading or writing `v`.
struct Users {
  std::vector<Op *> readers, writers;
};

Users usersOf(ForOp &loop, const Value *v) {
  Users u;
  walkOp(loop, [&](Op &o) {
    if (llvm::any_of(o.reads(), [&](Access *a) { return a->base == v; }))
      u.readers.push_back(&o);
    if (llvm::any_of(o.writes(), [&](Access *w) { return w->base == v; }))
      u.writers.push_back(&o);
  });
  return u;
}

/// Whether index `i` of `a` starts at 0, loops that run once at their value.
bool startsAtZero(ForOp &loop, const Access &a, unsigned i) {
  IndexExpr e = a.indices[i].start;
  walkOp(loop, [&](Op &o) {
    if (auto *inner = llvm::dyn_cast<ForOp>(&o); inner && inner->constTripCount() == 1)
      e = e.substitute(inner->iv, inner->lo);
  });
  e = e.simplified();
  return e.isConst() && e.constValue() == 0;
}

/// The matmul evacuations the scale moves to, when `p`'s only readers are
/// transposes whose results reach, by copies into one stationary strip, only
/// matmuls whose accumulators are only copied out; all of it row-aligned.
std::optional<std::vector<CopyOp *>> evacuations(ForOp &loop, const Value *p) {
  std::vector<CopyOp *> out;
  const Value *stationary = nullptr;
  size_t fills = 0; // the copies of P's transposes into the stationary strip
  for (Op *r : usersOf(loop, p).readers) {
    auto *tr = llvm::dyn_cast<TransposeOp>(r);
    if (!tr || !startsAtZero(loop, tr->src, 0))
      return std::nullopt;
    Users t = usersOf(loop, tr->dst.base);
    for (Op *w : t.writers)
      if (auto *other = llvm::dyn_cast<TransposeOp>(w); !other || other->src.base != p)
        return std::nullopt;
    for (Op *c : t.readers) {
      auto *copy = llvm::dyn_cast<CopyOp>(c);
      if (!copy || (stationary && copy->dst.base != stationary) || !startsAtZero(loop, copy->dst, 1))
        return std::nullopt;
      stationary = copy->dst.base;
      ++fills;
    }
  }
  // Every row of the stationary strip must be a row of P, scaled alike.
  if (!stationary || usersOf(loop, stationary).writers.size() != fills)
    return std::nullopt;
  llvm::SmallPtrSet<const Value *, 2> accs;
  for (Op *r : usersOf(loop, stationary).readers) {
    auto *mm = llvm::dyn_cast<MatmulOp>(r);
    if (!mm || mm->stationary.base != stationary || mm->moving.base == stationary ||
        !startsAtZero(loop, mm->stationary, 1) || !startsAtZero(loop, mm->dst, 0))
      return std::nullopt;
    accs.insert(mm->dst.base);
  }
  for (const Value *acc : accs) {
    Users u = usersOf(loop, acc);
    for (Op *w : u.writers)
      if (auto *mm = llvm::dyn_cast<MatmulOp>(w); !mm || mm->stationary.base != stationary)
        return std::nullopt;
    for (Op *r : u.readers) {
      auto *copy = llvm::dyn_cast<CopyOp>(r);
      if (!copy || !startsAtZero(loop, copy->src, 0))
        return std::nullopt;
      out.push_back(copy);
    }
  }
  return out;
}

/// Replaces `target` (somewhere in `block`) with `with`; erases it when null.
bool replaceOp(Block &block, Op *target, std::unique_ptr<Op> &with) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (block.ops[i].get() == target) {
      if (with)
        block.ops[i] = std::move(with);
      else
        block.ops.erase(block.ops.begin() + i);
      return true;
    }
    if (auto *inner = llvm::dyn_cast<ForOp>(block.ops[i].get());
        inner && replaceOp(inner->body, target, with))
      return true;
  }
  return false;
}

/// Drops the tiles nothing uses any more, then the loops left with nothing to do.
void prune(Block &block) {
  for (auto &op : block.ops)
    if (auto *inner = llvm::dyn_cast<ForOp>(op.get()))
      prune(inner->body);
  eraseUnusedTiles(block);
  llvm::erase_if(block.ops, [](const std::unique_ptr<Op> &op) {
    auto *inner = llvm::dyn_cast<ForOp>(op.get());
    return inner && inner->body.ops.empty();
  });
}

/// Whether every op of `loop` writing `v` comes before `op` in program order.
bool writtenBefore(ForOp &loop, const Value *v, const Op *op) {
  bool seen = false, ok = true;
  walkOp(loop, [&](Op &o) {
    seen |= &o == op;
    if (seen && &o != op && llvm::any_of(o.writes(), [&](Access *w) { return w->base == v; }))
      ok = false;
  });
  return ok;
}

/// Whether `d` divides (or multiplies) a strip of `loop`'s body by a
/// per-row tile, element for element, and is the strip's only writer.
bool rowScale(ForOp &loop, TensorScalarOp &d) {
  if (d.reverse || !d.scalarTile || (d.alu != AluOp::Divide && d.alu != AluOp::Mul))
    return false;
  Value *p = d.dst.base, *e = d.src.base;
  bool local = llvm::any_of(loop.body.ops, [&](const std::unique_ptr<Op> &op) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    return alloc && alloc->result == p;
  });
  return local && p != e && p->type.dims == e->type.dims && p->type.dtype == e->type.dtype &&
         sameIndices(d.dst, d.src) && usersOf(loop, p).writers.size() == 1 &&
         startsAtZero(loop, d.dst, 0) && startsAtZero(loop, *d.scalarTile, 0) &&
         writtenBefore(loop, e, &d) && writtenBefore(loop, d.scalarTile->base, &d);
}

/// The scale `d` moved after the matmuls it feeds (their evacuations `evac`).
void defer(ForOp &loop, TensorScalarOp &d, llvm::ArrayRef<CopyOp *> evac) {
  for (Op *r : usersOf(loop, d.dst.base).readers)
    llvm::cast<TransposeOp>(r)->src.base = d.src.base;
  for (CopyOp *c : evac) {
    auto scaled = std::make_unique<TensorScalarOp>();
    scaled->loc = c->loc;
    scaled->alu = d.alu;
    scaled->dst = c->dst;
    scaled->src = c->src;
    Access s = *d.scalarTile;
    s.indices[0] = Index{IndexExpr(0), c->dst.indices[0].extent};
    scaled->scalarTile = s;
    std::unique_ptr<Op> with = std::move(scaled);
    replaceOp(loop.body, c, with);
  }
  std::unique_ptr<Op> none;
  replaceOp(loop.body, &d, none);
  prune(loop.body);
}

bool deferIn(ForOp &loop) {
  bool changed = false;
  for (auto &op : loop.body.ops)
    if (auto *inner = llvm::dyn_cast<ForOp>(op.get()))
      changed |= deferIn(*inner);
  std::vector<TensorScalarOp *> scales;
  walkOp(loop, [&](Op &o) {
    if (auto *ts = llvm::dyn_cast<TensorScalarOp>(&o))
      scales.push_back(ts);
  });
  for (TensorScalarOp *d : scales) {
    if (!rowScale(loop, *d))
      continue;
    auto evac = evacuations(loop, d->dst.base);
    if (!evac || evac->empty())
      continue;
    defer(loop, *d, *evac);
    return true; // the ops collected may be gone; the caller runs this again
  }
  return changed;
}

class DeferRowScalePass : public Pass {
public:
  llvm::StringRef name() const override { return "defer-row-scale"; }
  llvm::StringRef description() const override {
    return "divide a matmul's result rows instead of its left operand's (softmax's 1 / sum "
           "applied to P @ V, not to P)";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    bool changed = false;
    // One scale per call (the ops it collected may be gone after it), so
    // each loop is run again until none is left: every head of a batched
    // attention has its own.
    for (auto &op : kernel.body.ops)
      if (auto *loop = llvm::dyn_cast<ForOp>(op.get()))
        while (deferIn(*loop))
          changed = true;
    if (!changed)
      return PassResult::Unchanged;
    kernel.notes.push_back("[defer-row-scale] a per-row scale of a matmul's operand applied to "
                           "its result instead");
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createDeferRowScalePass() { return std::make_unique<DeferRowScalePass>(); }

} // namespace tessel::passes
