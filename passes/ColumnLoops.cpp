//===- passes/ColumnLoops.cpp - A weight's column-block loops -------------===//
#include "passes/ColumnLoops.h"

#include "ir/Clone.h"

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

/// `e` with every subexpression equal to `from` replaced by `to`.
IndexExpr replaceExpr(const IndexExpr &e, const IndexExpr &from, const IndexExpr &to) {
  if (e.structurallyEqual(from) || e.simplified().structurallyEqual(from))
    return to;
  switch (e.kind()) {
  case IndexExpr::Kind::Add: return replaceExpr(e.lhs(), from, to) + replaceExpr(e.rhs(), from, to);
  case IndexExpr::Kind::Sub: return replaceExpr(e.lhs(), from, to) - replaceExpr(e.rhs(), from, to);
  case IndexExpr::Kind::Min: return min(replaceExpr(e.lhs(), from, to), replaceExpr(e.rhs(), from, to));
  default: return e; // constants, variables, and c * e (TileGen writes no min under a product)
  }
}

/// Rewrites, in every access and loop bound of `loop`'s body, `from` into `to`.
void replaceInBody(ForOp &loop, const IndexExpr &from, const IndexExpr &to) {
  auto fix = [&](IndexExpr &e) { e = replaceExpr(e, from, to).simplified(); };
  for (auto &op : loop.body.ops)
    walkOp(*op, [&](Op &o) {
      if (auto *l = llvm::dyn_cast<ForOp>(&o)) {
        fix(l->lo);
        fix(l->hi);
      }
      llvm::SmallVector<Access *, 4> accesses = o.reads();
      accesses.append(o.writes());
      for (Access *a : accesses)
        for (Index &i : a->indices) {
          fix(i.start);
          if (i.extent)
            fix(*i.extent);
        }
    });
}

/// A loop that may be a column loop once its partial last block is split
/// off: constant bounds, two whole blocks or more, and a partial one.
bool raggedCandidate(const ForOp &loop) {
  if (!loop.lo.isConst() || !loop.hi.isConst() || loop.step <= 0)
    return false;
  const int64_t span = loop.hi.constValue() - loop.lo.constValue();
  return span % loop.step != 0 && span / loop.step >= 2;
}

/// Splits `block`'s ragged column loops (splitRaggedColumnLoops), searching
/// the bodies of loops that are not.
int splitRagged(Kernel &kernel, Block &block) {
  const int64_t P = kernel.geometry.partitions;
  int split = 0;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    auto *loop = llvm::dyn_cast<ForOp>(block.ops[i].get());
    if (!loop)
      continue;
    if (!raggedCandidate(*loop)) {
      split += splitRagged(kernel, loop->body);
      continue;
    }
    const int64_t B = loop->step, lo = loop->lo.constValue();
    const int64_t cut = lo + (loop->hi.constValue() - lo) / B * B;
    const IndexExpr partial = min(IndexExpr(B), loop->hi - IndexExpr::var(loop->iv)).simplified();
    // The whole blocks' loop, tried on a copy: split only where it is then
    // a column loop.
    ValueMap trialMap;
    Block trial;
    trial.ops.push_back(cloneOp(*loop, kernel, trialMap));
    auto &wholeTrial = llvm::cast<ForOp>(*trial.ops.front());
    wholeTrial.hi = IndexExpr(cut);
    replaceInBody(wholeTrial, min(IndexExpr(B), loop->hi - IndexExpr::var(wholeTrial.iv)).simplified(),
                  IndexExpr(B));
    llvm::SmallVector<ColumnLoop, 1> found;
    collectColumnLoops(trial, P, found);
    if (found.size() != 1 || found.front().nLoop != &wholeTrial) {
      split += splitRagged(kernel, loop->body);
      continue;
    }
    ValueMap map;
    std::unique_ptr<Op> tail = cloneOp(*loop, kernel, map);
    llvm::cast<ForOp>(*tail).lo = IndexExpr(cut);
    loop->hi = IndexExpr(cut);
    replaceInBody(*loop, partial, IndexExpr(B));
    block.ops.insert(block.ops.begin() + i + 1, std::move(tail));
    ++i;
    ++split;
  }
  return split;
}

} // namespace

int splitRaggedColumnLoops(Kernel &kernel) { return splitRagged(kernel, kernel.body); }

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
