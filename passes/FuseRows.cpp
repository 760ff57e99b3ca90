//===- passes/FuseRows.cpp - Row-wise chains in one row-strip loop --------===//
//
// `fuse-rows` runs a chain of row-wise nests (elementwise ops, reductions
// along a row, per-row broadcasts: softmax's max, shift, exp, sum, divide)
// one row strip at a time, with the intermediates kept in SBUF:
//  1. two consecutive top-level row-strip loops over the same rows merge
//     when every HBM tensor one writes and the other touches is accessed
//     row-locally in both (rows `%m +: e`, e at most the step): iteration m
//     of the second then reads only what iteration m of the first wrote;
//  2. an HBM scratch tensor used by one loop only, row-locally, becomes an
//     SBUF strip (the loop's rows x the tensor's width) allocated in the
//     loop's body: its stores become copies into the strip, and a load of it
//     into a tile becomes reads of the strip itself (the tile is dropped).
// The strips of a loop together stay within half of SBUF (the rest is the
// nests' tiles); a tensor that does not fit stays in HBM. Loops that share
// no tensor are `fuse-siblings`' business; a matmul nest walking row blocks
// (`%mb + %mi`) is not row-local and keeps its own loop.
//
//===----------------------------------------------------------------------===//
#include "passes/LoopFusion.h"
#include "passes/Passes.h"

#include "ir/Builder.h"
#include "support/DType.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// The largest value `e` can take, when a constant bounds it.
std::optional<int64_t> constBound(const IndexExpr &e) {
  if (e.isConst())
    return e.constValue();
  if (e.kind() != IndexExpr::Kind::Min)
    return std::nullopt;
  auto l = constBound(e.lhs()), r = constBound(e.rhs());
  if (l && r)
    return std::min(*l, *r);
  return l ? l : r;
}

/// Whether every access to `v` within `loop` is rank 2 and covers rows
/// `iv +: e` with e at most the loop's step, and no DMA moves it transposed.
bool rowLocal(ForOp &loop, const Value *v) {
  bool ok = true;
  IndexExpr iv = IndexExpr::var(loop.iv);
  auto check = [&](const Access &a) {
    if (a.base != v)
      return;
    ok &= a.indices.size() == 2 && a.indices[0].isRange() &&
          a.indices[0].start.simplified().structurallyEqual(iv);
    if (ok) {
      auto bound = constBound(*a.indices[0].extent);
      ok &= bound && *bound <= loop.step;
    }
  };
  walkOp(loop, [&](Op &o) {
    for (Access *a : o.reads())
      check(*a);
    for (Access *w : o.writes())
      check(*w);
    if (auto *dma = llvm::dyn_cast<DmaOp>(&o))
      ok &= !dma->transpose || (dma->src.base != v && dma->dst.base != v);
  });
  return ok;
}

bool sameRows(const ForOp &a, const ForOp &b) {
  return a.lo.isConst() && a.hi.isConst() && a.lo.structurallyEqual(b.lo) &&
         a.hi.structurallyEqual(b.hi) && a.step == b.step && a.parallel == b.parallel;
}

/// Whether `b` may join `a`: they share some tensor, every shared one is an
/// HBM tensor accessed row-locally by both, and a scratch tensor is among them.
bool chained(ForOp &a, ForOp &b) {
  Footprint fa = footprintOf(a), fb = footprintOf(b);
  llvm::SmallPtrSet<const Value *, 8> shared;
  for (const Value *v : fa.writes)
    if (fb.reads.count(v) || fb.writes.count(v))
      shared.insert(v);
  for (const Value *v : fb.writes)
    if (fa.reads.count(v))
      shared.insert(v);
  bool scratch = false;
  for (const Value *v : shared) {
    if (v->type.space != MemSpace::HBM || !rowLocal(a, v) || !rowLocal(b, v))
      return false;
    scratch |= v->role == TensorRole::Scratch;
  }
  return scratch;
}

/// Merges chained consecutive top-level loops (only allocs between them,
/// which move above the first). Returns whether anything changed.
bool mergeChains(Kernel &kernel) {
  bool changed = false;
  Block &top = kernel.body;
  for (size_t i = 0; i < top.ops.size(); ++i) {
    auto *a = llvm::dyn_cast<ForOp>(top.ops[i].get());
    if (!a)
      continue;
    size_t j = i + 1;
    while (j < top.ops.size() && llvm::isa<AllocOp>(top.ops[j].get()))
      ++j;
    auto *b = j < top.ops.size() ? llvm::dyn_cast<ForOp>(top.ops[j].get()) : nullptr;
    if (!b || !sameRows(*a, *b) || !chained(*a, *b))
      continue;
    appendBody(*a, *b);
    std::unique_ptr<Op> loop = std::move(top.ops[i]);
    for (size_t k = i + 1; k < j; ++k)
      top.ops[k - 1] = std::move(top.ops[k]);
    top.ops[j - 1] = std::move(loop);
    top.ops.erase(top.ops.begin() + j);
    changed = true;
    i = j - 2; // the merged loop (now at j - 1) may take the next one too
  }
  return changed;
}

/// Points `a` (an access to the HBM tensor `c`) at the strip `s`: rows relative to the strip.
void retarget(Access &a, const Value *c, Value *s) {
  if (a.base != c)
    return;
  a.base = s;
  a.indices[0].start = IndexExpr(0);
}

/// Rewrites every access of `v` in `block` (recursively) with `f`.
void rewriteAccesses(Block &block, const Value *v, const std::function<void(Access &)> &f) {
  for (auto &op : block.ops)
    walkOp(*op, [&](Op &o) {
      for (Access *a : o.reads())
        if (a->base == v)
          f(*a);
      for (Access *w : o.writes())
        if (w->base == v)
          f(*w);
    });
}

/// `alloc %T; dma %T[...] <- %S[...]` with T written nowhere else and of S's
/// dtype: the readers of T read S (at the load's offsets) and both ops go.
bool dropLoadTile(Block &block, size_t at, Value *s) {
  auto *dma = llvm::dyn_cast<DmaOp>(block.ops[at].get());
  auto *alloc = at > 0 ? llvm::dyn_cast<AllocOp>(block.ops[at - 1].get()) : nullptr;
  if (!dma || dma->src.base != s || !alloc || dma->dst.base != alloc->result ||
      alloc->result->type.dtype != s->type.dtype || dma->dst.indices.size() != 2)
    return false;
  Value *t = alloc->result;
  bool onlyWrite = true;
  for (size_t k = at + 1; k < block.ops.size(); ++k)
    walkOp(*block.ops[k], [&](Op &o) {
      for (Access *w : o.writes())
        onlyWrite &= w->base != t;
    });
  if (!onlyWrite)
    return false;
  Access src = dma->src, dst = dma->dst;
  Block rest;
  for (size_t k = at + 1; k < block.ops.size(); ++k)
    rest.ops.push_back(std::move(block.ops[k]));
  rewriteAccesses(rest, t, [&](Access &a) {
    a.base = s;
    for (size_t d = 0; d < 2; ++d)
      a.indices[d].start = (a.indices[d].start + src.indices[d].start - dst.indices[d].start).simplified();
  });
  block.ops.resize(at - 1);
  for (auto &op : rest.ops)
    block.ops.push_back(std::move(op));
  return true;
}

/// In `block` (recursively): stores into the strip become copies; loads
/// from it become reads of the strip, or copies when the tile must stay.
void replaceMoves(Block &block, Value *s) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get())) {
      replaceMoves(loop->body, s);
      continue;
    }
    auto *dma = llvm::dyn_cast<DmaOp>(block.ops[i].get());
    if (!dma || (dma->src.base != s && dma->dst.base != s))
      continue;
    if (dropLoadTile(block, i, s)) {
      i -= 2; // the alloc and the load are gone; the op now at i - 1 is next
      continue;
    }
    auto copy = std::make_unique<CopyOp>();
    copy->loc = dma->loc;
    copy->dst = dma->dst;
    copy->src = dma->src;
    block.ops[i] = std::move(copy);
  }
}

/// Turns the HBM scratch tensors used row-locally by one top-level loop into
/// SBUF strips of that loop, within half of SBUF per loop. Returns their names.
std::vector<std::string> keepStripsOnChip(Kernel &kernel) {
  std::vector<std::string> kept;
  Block &top = kernel.body;
  llvm::DenseMap<const ForOp *, int64_t> used; // strip bytes per partition, per loop
  for (size_t ci = 0; ci < top.ops.size(); ++ci) {
    auto *cAlloc = llvm::dyn_cast<AllocOp>(top.ops[ci].get());
    if (!cAlloc || cAlloc->result->type.space != MemSpace::HBM ||
        cAlloc->result->role != TensorRole::Scratch || cAlloc->result->type.dims.size() != 2)
      continue;
    Value *c = cAlloc->result;
    ForOp *loop = nullptr;
    unsigned users = 0;
    for (auto &op : top.ops) {
      Footprint f = footprintOf(*op);
      if (op.get() != cAlloc && (f.reads.count(c) || f.writes.count(c))) {
        ++users;
        loop = llvm::dyn_cast<ForOp>(op.get());
      }
    }
    if (users != 1 || !loop || loop->step > kernel.geometry.partitions || !rowLocal(*loop, c))
      continue;
    const TensorType &t = c->type;
    int64_t bytes = t.dims[1].size * dtypeBytes(t.dtype);
    if (used[loop] + bytes > kernel.geometry.sbufBytes / 2)
      continue;
    used[loop] += bytes;
    Block holder;
    Value *s = appendAlloc(kernel, holder, c->name + "_rows", MemSpace::SBUF, t.dtype,
                           {Dim{t.dims[0].label, loop->step}, t.dims[1]}, 1, cAlloc->loc);
    rewriteAccesses(loop->body, c, [&](Access &a) { retarget(a, c, s); });
    replaceMoves(loop->body, s);
    loop->body.ops.insert(loop->body.ops.begin(), std::move(holder.ops.front()));
    kept.push_back(c->name);
    top.ops.erase(top.ops.begin() + ci);
    --ci;
  }
  return kept;
}

class FuseRowsPass : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-rows"; }
  llvm::StringRef description() const override {
    return "run a chain of row-wise nests (softmax's max, exp, sum, divide) one row strip at a "
           "time, their intermediates in SBUF strips instead of HBM";
  }
  PassResult run(Kernel &kernel, PassContext &) override {
    if (!mergeChains(kernel))
      return PassResult::Unchanged;
    std::vector<std::string> kept = keepStripsOnChip(kernel);
    std::string names;
    for (const std::string &n : kept)
      names += (names.empty() ? "%" : ", %") + n;
    kernel.notes.push_back(kept.empty() ? "[fuse-rows] row-wise nests merged; no strip fits SBUF"
                                        : "[fuse-rows] kept in SBUF, one row strip at a time: " +
                                              names);
    return PassResult::Changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseRowsPass() { return std::make_unique<FuseRowsPass>(); }

} // namespace tessel::passes
