//===- passes/ColumnLoops.cpp - A weight's column-block loops -------------===//
#include "passes/ColumnLoops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

bool fixedIn(const IndexExpr &e, const Value *v) { return !e.mentions(v); }

/// Whether `e` is `%v + c` for a constant c (coefficient 1, no other
/// variable): its value at `%v := %v2 + %h` is known for every block.
bool isVarPlusConst(const IndexExpr &e, const Value *v) {
  int64_t c = 0;
  llvm::SmallVector<std::pair<const Value *, int64_t>, 2> terms;
  return e.linearForm(c, terms) && terms.size() == 1 && terms[0].first == v && terms[0].second == 1;
}

/// The rows of `kLoop`'s step a tile load moves: P, or, when the
/// contraction is not a multiple of P, `min(P, hi - %k)` (TileGen's partial
/// last tile: `row` must start at %k itself).
bool contractionRows(const Index &row, const ForOp &kLoop, int64_t P) {
  if ((kLoop.hi.constValue() - kLoop.lo.constValue()) % P == 0)
    return row.hasExtent(P);
  IndexExpr partial = min(IndexExpr(P), kLoop.hi - IndexExpr::var(kLoop.iv));
  return row.extent && row.start.structurallyEqual(IndexExpr::var(kLoop.iv)) &&
         row.extent->simplified().structurallyEqual(partial.simplified());
}

/// The tiles `kLoop` (a child of the column loop `nLoop`, of step P) streams
/// with columns that are `nLoop`'s block: `dma %T[0 +: P, 0 +: B] <-
/// %W[%k + a +: P, %n + c +: B]` (rows `min(P, K - %k)` when the contraction
/// K is not a multiple of P), %T read only inside `kLoop`.
void columnTiles(ForOp &nLoop, ForOp &kLoop, int64_t P, llvm::SmallVectorImpl<ColumnTile> &out) {
  const int64_t B = nLoop.step;
  if (kLoop.step != P || !kLoop.lo.isConst() || !kLoop.hi.isConst() || kLoop.constTripCount() < 1)
    return;
  for (auto &op : kLoop.body.ops) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    if (!alloc)
      continue;
    const TensorType &t = alloc->result->type;
    if (t.space != MemSpace::SBUF || t.dims.size() != 2 || t.dims[0].size != P || t.dims[1].size != B)
      continue;
    Value *tile = alloc->result;
    DmaOp *load = nullptr;
    int writers = 0;
    walk(kLoop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
      if (Access *w = o.write(); w && w->base == tile) {
        ++writers;
        load = llvm::dyn_cast<DmaOp>(&o);
      }
    });
    if (writers != 1 || !load || load->transpose || load->tag != DmaTag::None ||
        load->src.base->type.space != MemSpace::HBM || load->src.indices.size() != 2 ||
        load->dst.indices.size() != 2 || llvm::none_of(kLoop.body.ops, [&](auto &o) { return o.get() == load; }))
      continue;
    const Index &row = load->src.indices[0], &col = load->src.indices[1];
    const Index &dRow = load->dst.indices[0], &dCol = load->dst.indices[1];
    if (!contractionRows(row, kLoop, P) || !isVarPlusConst(row.start, kLoop.iv) || !col.hasExtent(B) ||
        !isVarPlusConst(col.start, nLoop.iv) || !dRow.extent || !dRow.extent->structurallyEqual(*row.extent) ||
        !dCol.hasExtent(B) ||
        !dRow.start.isConst() || dRow.start.constValue() != 0 || !dCol.start.isConst() ||
        dCol.start.constValue() != 0)
      continue;
    out.push_back({&kLoop, alloc, load});
  }
}

bool restartsPer(ForOp &loop, const Value *iv) {
  bool found = false;
  walk(loop.body, [&](Op &o, llvm::ArrayRef<ForOp *>) {
    if (auto *mm = llvm::dyn_cast<MatmulOp>(&o))
      found |= llvm::is_contained(mm->resetOn, iv);
  });
  return found;
}

} // namespace

void collectColumnLoops(Block &block, int64_t P, llvm::SmallVectorImpl<ColumnLoop> &out) {
  for (auto &op : block.ops) {
    auto *loop = llvm::dyn_cast<ForOp>(op.get());
    if (!loop)
      continue;
    const int64_t B = loop->step;
    ColumnLoop c{loop, {}};
    if (loop->lo.isConst() && loop->hi.isConst() && B > 0 &&
        (loop->hi.constValue() - loop->lo.constValue()) % B == 0 && loop->constTripCount() >= 2 &&
        !restartsPer(*loop, loop->iv))
      for (auto &inner : loop->body.ops)
        if (auto *k = llvm::dyn_cast<ForOp>(inner.get());
            k && fixedIn(k->lo, loop->iv) && fixedIn(k->hi, loop->iv))
          columnTiles(*loop, *k, P, c.tiles);
    if (c.tiles.empty())
      collectColumnLoops(loop->body, P, out);
    else
      out.push_back(std::move(c));
  }
}


} // namespace tessel::passes
