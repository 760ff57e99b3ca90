//===- passes/ContractionGroups.cpp - W^T tiles loaded from W's rows, g at a time -===//
//
// io-transpose's form for a transposed weight streamed along the
// contraction (`X @ W.T` read in place, W stored [N, K]): each contraction
// step loads W^T's tile [K:128, N:n] transposing, from n of W's rows and
// only 128 of its columns, so each partition reads one 256-byte run (half
// the DMA engines' rate) however the tile is transposed. Taking g steps at
// once, the loads read g * 128 contiguous columns of each of W's rows:
//
//   for %k = 0 to K step 128 {                for %k = 0 to K step 128 g {
//     %T = alloc [K:128, N:n]                   %Tg = alloc [K:128 g, N:n]
//     dma transpose %T <- %W[%r +: n,    =>     for %rt = 0 to n step 128 {
//                          %k +: 128]             dma %rows <- %W[%r + %rt +: 128, %k +: 128 g]
//     <uses of %T, of %k> }                       for %kj { transpose; copy %Tg[%kj +: 128, %rt +: 128] } }
//                                               for %ki = 0 to 128 g step 128 {
//                                                 <the uses: %T -> %Tg[%ki + .., ..], %k -> %k + %ki> } }
//
// The same products accumulate in the same order; an accumulator reset on
// the first %k is reset on the first (%k, %ki).
//
//===----------------------------------------------------------------------===//
#include "passes/ContractionGroups.h"
#include "passes/ResidentOperands.h"

#include "ir/Builder.h"
#include "ir/Clone.h"

#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// The transposing load at the head of `loop` (`alloc %T; dma transpose %T[0
/// +: P, c +: rows] <- %W[r +: rows, %k +: P]`) that grouping takes, or null.
DmaOp *groupableLoad(ForOp &loop, const std::string &input, int64_t P, int64_t groups) {
  Block &b = loop.body;
  if (b.ops.size() < 3 || !loop.lo.isConst() || !loop.hi.isConst() || loop.step != P ||
      ForOp::tripCount(loop.lo.constValue(), loop.hi.constValue(), loop.step) % groups != 0)
    return nullptr;
  auto *alloc = opAt<AllocOp>(b, 0);
  auto *dma = opAt<DmaOp>(b, 1);
  if (!alloc || !dma || !dma->transpose || dma->tag != DmaTag::None || dma->src.base->name != input ||
      dma->dst.base != alloc->result || alloc->result->type.space != MemSpace::SBUF ||
      dma->src.base->type.space != MemSpace::HBM || dma->src.indices.size() != 2 || dma->dst.indices.size() != 2)
    return nullptr;
  for (const Index &i : dma->src.indices)
    if (!i.isRange() || i.isPatterned())
      return nullptr;
  for (const Index &i : dma->dst.indices)
    if (!i.isRange() || i.isPatterned())
      return nullptr;
  const Index &rows = dma->src.indices[0], &col = dma->src.indices[1];
  const Index &part = dma->dst.indices[0], &free = dma->dst.indices[1];
  if (!col.hasExtent(P) || !col.start.advancesWith(loop.iv) || !part.hasExtent(P) || !part.start.isConst() ||
      part.start.constValue() != 0 || rows.start.mentions(loop.iv) || rows.extent->mentions(loop.iv) ||
      free.start.mentions(loop.iv) || !free.extent->structurallyEqual(*rows.extent))
    return nullptr;
  const IndexExpr &n = *rows.extent;
  bool tiles = n.isConst() && n.constValue() % P == 0;
  if (!tiles && !(n.isConst() && n.constValue() < P) && n.kind() != IndexExpr::Kind::Min)
    return nullptr;
  bool writtenLater = false;
  for (size_t k = 2; k < b.ops.size(); ++k)
    walkOp(*b.ops[k], [&](Op &o) {
      for (Access *w : o.writes())
        writtenLater |= w->base == alloc->result;
    });
  return writtenLater ? nullptr : dma;
}

/// The fill of `tg` ([K:P g, N:n]) from W's rows: per partition tile of the
/// rows, one plain load of P g columns, then a transpose and a copy per tile.
void appendFill(Kernel &kernel, Block &out, const DmaOp &dma, Value *tg, int64_t P, int64_t groups) {
  const Index &rows = dma.src.indices[0], &col = dma.src.indices[1];
  const IndexExpr &n = *rows.extent;
  const TensorType &w = dma.src.base->type;
  llvm::SMLoc loc = dma.loc;
  Block *body = &out;
  IndexExpr rt(0), rowsExt = n;
  if (n.isConst() && n.constValue() > P) {
    ForOp &rl = appendLoop(kernel, out, "rt", 0, n.constValue(), P, loc);
    body = &rl.body;
    rt = IndexExpr::var(rl.iv);
    rowsExt = IndexExpr(P);
  }
  Value *r = appendAlloc(kernel, *body, dma.src.base->name + "_rows", MemSpace::SBUF, w.dtype,
                         {{w.dims[0].label, P}, {w.dims[1].label, P * groups}}, 2, loc);
  auto load = std::make_unique<DmaOp>();
  load->loc = loc;
  load->dst = makeAccess(r, {{0, rowsExt}, {0, P * groups}});
  load->src = makeAccess(dma.src.base, {{(rows.start + rt).simplified(), rowsExt}, {col.start, P * groups}});
  body->ops.push_back(std::move(load));
  ForOp &kj = appendLoop(kernel, *body, "kj", 0, P * groups, P, loc);
  IndexExpr j = IndexExpr::var(kj.iv);
  Value *ps = appendAlloc(kernel, kj.body, dma.src.base->name + "_Tpsum", MemSpace::PSUM, DType::F32,
                          {{w.dims[1].label, P}, {w.dims[0].label, P}}, 2, loc);
  auto tr = std::make_unique<TransposeOp>();
  tr->loc = loc;
  tr->dst = makeAccess(ps, {{0, P}, {0, rowsExt}});
  tr->src = makeAccess(r, {{0, rowsExt}, {j, P}});
  auto copy = std::make_unique<CopyOp>();
  copy->loc = loc;
  copy->dst = makeAccess(tg, {{j, P}, {(dma.dst.indices[1].start + rt).simplified(), rowsExt}});
  copy->src = tr->dst;
  kj.body.ops.push_back(std::move(tr));
  kj.body.ops.push_back(std::move(copy));
}

} // namespace

bool groupAlongContraction(Kernel &kernel, ForOp &loop, const std::string &input, int64_t groups) {
  const int64_t P = kernel.geometry.partitions;
  DmaOp *dma = groups > 1 ? groupableLoad(loop, input, P, groups) : nullptr;
  if (!dma)
    return false;
  auto *alloc = llvm::cast<AllocOp>(loop.body.ops[0].get());
  Value *t = alloc->result;
  TensorType tt = t->type;
  Block head;
  Value *tg = appendAlloc(kernel, head, t->name + "_g", MemSpace::SBUF, tt.dtype,
                          {{tt.dims[0].label, P * groups}, tt.dims[1]}, alloc->bufs, alloc->loc);
  appendFill(kernel, head, *dma, tg, P, groups);
  ForOp &inner = appendLoop(kernel, head, loop.iv->name + "i", 0, P * groups, P, loop.loc);
  IndexExpr ki = IndexExpr::var(inner.iv);
  IndexExpr shifted = (IndexExpr::var(loop.iv) + ki).simplified();
  for (size_t k = 2; k < loop.body.ops.size(); ++k)
    inner.body.ops.push_back(std::move(loop.body.ops[k]));
  for (auto &op : inner.body.ops) {
    substituteInOp(*op, loop.iv, shifted);
    walkOp(*op, [&](Op &o) {
      if (auto *mm = llvm::dyn_cast<MatmulOp>(&o); mm && llvm::is_contained(mm->resetOn, loop.iv))
        mm->resetOn.push_back(inner.iv);
    });
  }
  rewriteAccesses(inner.body, t, [&](Access &a) {
    a.base = tg;
    a.indices[0].start = (a.indices[0].start + ki).simplified();
  });
  loop.step = P * groups;
  loop.body.ops.clear();
  for (auto &op : head.ops)
    loop.body.ops.push_back(std::move(op));
  return true;
}

} // namespace tessel::passes
