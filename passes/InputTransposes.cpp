//===- passes/InputTransposes.cpp - A transposed input read in place ------===//
//
// TileGen writes the transpose of a kernel input (`A.T`, a weight `W.T`
// stored [out, in] as PyTorch keeps it) to an HBM scratch tensor before any
// nest reads it:
//
//   %AT = alloc hbm<bf16, [M, K]>
//   for %a { for %b {
//     dma %t <- %A[%a +: 128, %b +: 128]; transpose %p <- %t; copy %t2 <- %p
//     dma %AT[%b +: 128, %a +: 128] <- %t2 } }
//
// so every element of %AT is the element of %A with its indices swapped.
// Each read of %AT (a DMA, as every read of HBM is) then reads %A with its
// indices swapped and the opposite `transpose` flag: a transposing load of
// %AT (the consumer wanted %AT^T = %A) becomes a plain load of %A, a plain
// load becomes a transposing one (which io-transpose may then place on the
// tensor engine). The nest may read a block of the input at a constant
// offset (one head of a tensor with heads: `%K[%a + 2048 +: 128, ...]`),
// which the swapped reads then add. The scratch and the nest that wrote it go. A plain read
// turned transposing pays the transpose on every read, so that is done only
// when the reads cover each element once; a weight read again by every row
// strip keeps its scratch, where it is transposed once.
//
//===----------------------------------------------------------------------===//
#include "passes/InputTransposes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <optional>

namespace tessel::passes {
namespace {

using namespace ir;

/// A 2-D access of `t.arg` reading what `a` (2-D, of the scratch) reads,
/// with the two indices swapped and the offsets added.
Access swapped(const Access &a, const ArgumentTranspose &t) {
  Access s;
  s.base = t.arg;
  s.loc = a.loc;
  s.indices = {a.indices[1], a.indices[0]};
  for (unsigned d = 0; d < 2; ++d)
    if (t.offset[d] != 0)
      s.indices[d].start = (s.indices[d].start + t.offset[d]).simplified();
  return s;
}

/// The constant `load - store` of two slice starts of the same extent.
std::optional<int64_t> constantOffset(const Index &load, const Index &store) {
  if (load.isRange() != store.isRange() ||
      (load.isRange() && !load.extent->structurallyEqual(*store.extent)))
    return std::nullopt;
  IndexExpr diff = (load.start - store.start).simplified();
  if (!diff.isConst())
    return std::nullopt;
  return diff.constValue();
}

/// The input argument `v` is, or that `v` views (the same data under other
/// labels: a weight used both as W and W.T); null when neither.
Value *viewedArgument(Kernel &kernel, Value *v) {
  if (v->kind == ValueKind::Argument)
    return v;
  for (auto &op : kernel.body.ops)
    if (auto *view = llvm::dyn_cast<ViewOp>(op.get()); view && view->result == v)
      return view->source;
  return nullptr;
}

/// The argument whose transpose the top-level loop nest `nest` writes to
/// the 2-D scratch `scratch`, element for element, with the constant
/// offsets of its indices (into `t.arg` and `t.offset`); false when the
/// nest does anything else.
bool transposedArgument(Kernel &kernel, ForOp &nest, const Value *scratch, ArgumentTranspose &t) {
  std::vector<Op *> ops;
  walkOp(nest, [&](Op &op) {
    if (!llvm::isa<ForOp>(op) && !llvm::isa<AllocOp>(op))
      ops.push_back(&op);
  });
  if (ops.size() != 4)
    return false;
  auto *load = llvm::dyn_cast<DmaOp>(ops[0]);
  auto *tr = llvm::dyn_cast<TransposeOp>(ops[1]);
  auto *copy = llvm::dyn_cast<CopyOp>(ops[2]);
  auto *store = llvm::dyn_cast<DmaOp>(ops[3]);
  if (!load || !tr || !copy || !store || load->transpose || store->transpose ||
      load->tag != DmaTag::None || store->tag != DmaTag::None || store->dst.base != scratch)
    return false;
  Value *arg = load->src.base, *root = viewedArgument(kernel, arg);
  if (!root || root->kind != ValueKind::Argument || root->role != TensorRole::Input ||
      arg->type.dims.size() != 2 || arg->type.dtype != scratch->type.dtype ||
      tr->src.base != load->dst.base || copy->src.base != tr->dst.base ||
      store->src.base != copy->dst.base || load->src.indices.size() != 2 ||
      store->dst.indices.size() != 2)
    return false;
  for (unsigned d = 0; d < 2; ++d) {
    std::optional<int64_t> off = constantOffset(load->src.indices[d], store->dst.indices[1 - d]);
    if (!off)
      return false;
    t.offset[d] = *off;
  }
  t.arg = arg;
  return true;
}

/// The largest value of a tile extent: its constant, or the constant side
/// of a `min(c, ...)` (a partial tile); 0 when neither.
int64_t extentBound(const IndexExpr &e) {
  if (e.isConst())
    return e.constValue();
  if (e.kind() == IndexExpr::Kind::Min) {
    if (e.lhs().isConst())
      return e.lhs().constValue();
    if (e.rhs().isConst())
      return e.rhs().constValue();
  }
  return 0;
}

/// Every DMA of the kernel that reads `v`; false when something other than
/// a DMA reads it.
bool dmaReaders(Kernel &kernel, const Value *v, std::vector<ScratchReader> &out) {
  bool onlyDmas = true;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *> loops) {
    for (Access *a : op.reads())
      if (a->base == v) {
        auto *dma = llvm::dyn_cast<DmaOp>(&op);
        if (!dma || dma->tag != DmaTag::None || a->indices.size() != 2) {
          onlyDmas = false;
          continue;
        }
        int64_t elements = 1;
        for (const Index &i : a->indices)
          elements *= i.isRange() ? extentBound(*i.extent) : 1;
        for (const ForOp *loop : loops)
          elements *= loop->constTripCount();
        out.push_back({dma, elements});
      }
  });
  return onlyDmas;
}

/// Whether reading `arg` in place is cheaper than the scratch. A transposing
/// read of the scratch becomes a plain one: always. A plain read becomes a
/// transposing one, paid on every read, where the scratch paid one
/// transpose per element: only when those reads cover each element once
/// (an operand strip loaded once; not a weight reloaded for every row
/// strip). Partial tiles count whole, so the scratch counts with each
/// dimension rounded up to the reads' tile.
bool cheaperInPlace(llvm::ArrayRef<ScratchReader> readers, const Value *scratch) {
  int64_t transposed = 0;
  int64_t tile[2] = {1, 1};
  for (const ScratchReader &r : readers) {
    if (r.dma->transpose)
      continue;
    if (r.elements == 0)
      return false;
    transposed += r.elements;
    for (unsigned d = 0; d < 2; ++d) {
      const Index &i = r.dma->src.indices[d];
      tile[d] = std::max(tile[d], i.isRange() ? extentBound(*i.extent) : 1);
    }
  }
  const auto &dims = scratch->type.dims;
  return transposed <= int64_t(llvm::alignTo(dims[0].size, tile[0])) *
                           int64_t(llvm::alignTo(dims[1].size, tile[1]));
}

} // namespace

std::optional<ArgumentTranspose> matchArgumentTranspose(Kernel &kernel, size_t i) {
  auto *alloc = llvm::dyn_cast<AllocOp>(kernel.body.ops[i].get());
  if (!alloc || alloc->result->type.space != MemSpace::HBM ||
      alloc->result->role != TensorRole::Scratch || alloc->result->type.dims.size() != 2)
    return std::nullopt;
  Value *scratch = alloc->result;
  // The one top-level nest that writes the scratch.
  std::optional<size_t> writer;
  bool single = true;
  for (size_t j = 0; j < kernel.body.ops.size(); ++j)
    walkOp(*kernel.body.ops[j], [&](Op &op) {
      for (Access *w : op.writes())
        if (w->base == scratch) {
          single &= !writer || *writer == j;
          writer = j;
        }
    });
  if (!writer || !single || *writer <= i)
    return std::nullopt;
  auto *nest = llvm::dyn_cast<ForOp>(kernel.body.ops[*writer].get());
  ArgumentTranspose t{i, *writer, scratch, nullptr, {0, 0}, {}};
  if (!nest || !transposedArgument(kernel, *nest, scratch, t) || !dmaReaders(kernel, scratch, t.readers) ||
      llvm::any_of(t.readers, [](const ScratchReader &r) { return r.dma->dst.base->type.space != MemSpace::SBUF; }))
    return std::nullopt;
  return t;
}

void readArgumentTransposed(const ScratchReader &r, const ArgumentTranspose &t) {
  r.dma->src = swapped(r.dma->src, t);
  r.dma->transpose = !r.dma->transpose;
}

bool absorbInputTransposes(Kernel &kernel) {
  bool changed = false;
  for (size_t i = 0; i < kernel.body.ops.size(); ++i) {
    std::optional<ArgumentTranspose> t = matchArgumentTranspose(kernel, i);
    if (!t || !cheaperInPlace(t->readers, t->scratch))
      continue;
    for (const ScratchReader &r : t->readers)
      readArgumentTransposed(r, *t);
    // The nest after the alloc: erase it first so `i` stays the alloc's.
    kernel.body.ops.erase(kernel.body.ops.begin() + t->writerAt);
    kernel.body.ops.erase(kernel.body.ops.begin() + i);
    --i;
    changed = true;
  }
  return changed;
}

} // namespace tessel::passes
