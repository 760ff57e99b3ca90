//===- passes/FoldActivationInputs.cpp - Shifts into the activation -------===//
//
// `fold-activation-inputs`: the scalar engine computes fn(x * scale + bias)
// with a per-partition bias tile, so a vector-engine op that only shifts or
// scales the activation's input tile is one pass over the data too many:
//   tensor_scalar sub %t[r] <- %x[r'], %s[p]; activation exp %e <- %t[r]
//   => activation exp %e <- %x[r'] bias %neg   (%neg = -%s, once per loop)
// for add / sub of a [P, 1] tile or a number and mul by a number, when the
// tile %t is read by the activation alone. Softmax's `x - max(x)` before
// `exp` is the case: on a fused attention row strip the vector engine, not
// the tensor engine, bounds the kernel, and this takes one of its passes
// over the S-wide strip. A tile subtracted is negated once, before the loop
// running the pair, into an fp32 [P, 1] tile (it must not change in that
// loop). The activation adds in fp32 where the vector engine rounded the
// shifted tile to its dtype: the result is as close to exact or closer.
//
//===----------------------------------------------------------------------===//
#include "passes/Elementwise.h"
#include "passes/Passes.h"

#include "ir/Builder.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

unsigned uses(Block &block, const Value *v) {
  unsigned n = 0;
  for (auto &op : block.ops)
    walkOp(*op, [&](Op &o) {
      for (Access *a : o.reads())
        n += a->base == v;
      for (Access *w : o.writes())
        n += w->base == v;
    });
  return n;
}

bool definedIn(Block &block, const Value *v) {
  bool found = false;
  for (auto &op : block.ops)
    walkOp(*op, [&](Op &o) {
      if (auto *alloc = llvm::dyn_cast<AllocOp>(&o))
        found |= alloc->result == v;
    });
  return found;
}

/// `%neg = -%s[...]`, in fp32, appended to `out`; returns the access to it.
Access negated(Kernel &kernel, Block &out, const Access &s, llvm::SMLoc loc) {
  const TensorType &t = s.base->type;
  Value *neg = appendAlloc(kernel, out, s.base->name + "_neg", MemSpace::SBUF, DType::F32, t.dims,
                           1, loc);
  Access a = s;
  a.base = neg;
  auto op = std::make_unique<TensorScalarOp>();
  op->loc = loc;
  op->alu = AluOp::Mul;
  op->dst = a;
  op->src = s;
  op->scalar = -1.0;
  out.ops.push_back(std::move(op));
  return a;
}

/// Folds the tensor_scalar at `loop.body.ops[i]` into the activation reading
/// its tile; a negated bias tile goes into `before` (ops to run before the
/// loop). Returns whether it did.
bool foldAt(Kernel &kernel, ForOp &loop, size_t i, Block &before) {
  Block &body = loop.body;
  auto *ts = llvm::dyn_cast<TensorScalarOp>(body.ops[i].get());
  if (!ts || ts->reverse || ts->dst.base->type.space != MemSpace::SBUF ||
      !definedIn(body, ts->dst.base) || uses(body, ts->dst.base) != 2)
    return false;
  size_t j = i + 1;
  while (j < body.ops.size() && llvm::isa<AllocOp>(body.ops[j].get()))
    ++j;
  auto *act = j < body.ops.size() ? llvm::dyn_cast<ActivationOp>(body.ops[j].get()) : nullptr;
  if (!act || act->src.base != ts->dst.base || !sameIndices(act->src, ts->dst) ||
      act->scale != 1.0 || act->bias != 0.0 || act->scaleTile || act->biasTile)
    return false;
  bool tile = ts->scalarTile.has_value();
  switch (ts->alu) {
  case AluOp::Add:
  case AluOp::Sub:
    if (!tile) {
      act->bias = ts->alu == AluOp::Add ? ts->scalar : -ts->scalar;
    } else if (ts->alu == AluOp::Add) {
      act->biasTile = ts->scalarTile;
    } else {
      const Access &s = *ts->scalarTile;
      bool invariant = !definedIn(body, s.base);
      walkOp(loop, [&](Op &o) {
        for (Access *w : o.writes())
          invariant &= w->base != s.base;
      });
      for (const Index &x : s.indices)
        invariant &= !x.start.mentions(loop.iv) && !(x.extent && x.extent->mentions(loop.iv));
      if (!invariant)
        return false;
      act->biasTile = negated(kernel, before, s, ts->loc);
    }
    break;
  case AluOp::Mul:
    if (tile)
      return false;
    act->scale = ts->scalar;
    break;
  default:
    return false;
  }
  act->src = ts->src;
  body.ops.erase(body.ops.begin() + i);
  return true;
}

/// Folds in the loop at `parent.ops[at]` and the loops nested in it; the
/// negations go right before the loop. Returns how many ops it added to `parent`.
size_t foldLoop(Kernel &kernel, Block &parent, size_t at, bool &changed) {
  auto &loop = llvm::cast<ForOp>(*parent.ops[at]);
  for (size_t i = 0; i < loop.body.ops.size(); ++i)
    if (llvm::isa<ForOp>(loop.body.ops[i].get()))
      i += foldLoop(kernel, loop.body, i, changed);
  Block before;
  bool here = false;
  for (size_t i = 0; i < loop.body.ops.size(); ++i)
    here |= foldAt(kernel, loop, i, before);
  if (!here)
    return 0;
  changed = true;
  eraseUnusedTiles(loop.body);
  size_t added = before.ops.size();
  parent.ops.insert(parent.ops.begin() + at, std::make_move_iterator(before.ops.begin()),
                    std::make_move_iterator(before.ops.end()));
  return added;
}

class FoldActivationInputsPass : public Pass {
public:
  llvm::StringRef name() const override { return "fold-activation-inputs"; }
  llvm::StringRef description() const override {
    return "fold a shift or scale of an activation's input tile (softmax's x - max) into the "
           "activation's bias and scale";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    bool changed = false;
    for (size_t i = 0; i < kernel.body.ops.size(); ++i)
      if (llvm::isa<ForOp>(kernel.body.ops[i].get()))
        i += foldLoop(kernel, kernel.body, i, changed);
    if (!changed)
      return PassResult::Unchanged;
    kernel.notes.push_back("[fold-activation-inputs] shifts of activation inputs taken as the "
                           "activation's bias");
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldActivationInputsPass() {
  return std::make_unique<FoldActivationInputsPass>();
}

} // namespace tessel::passes
