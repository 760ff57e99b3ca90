//===- passes/LoopFusion.cpp - Merging independent loops, sharing fills ---===//
#include "passes/LoopFusion.h"

#include "ir/Clone.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {

using namespace ir;

namespace {

void noteUses(const IndexExpr &e, Footprint &f) {
  llvm::SmallVector<const Value *, 4> vars;
  e.collectVars(vars);
  f.uses.insert(vars.begin(), vars.end());
}

void noteUses(const Access &a, Footprint &f) {
  f.uses.insert(a.base);
  for (const Index &idx : a.indices) {
    noteUses(idx.start, f);
    if (idx.extent)
      noteUses(*idx.extent, f);
  }
}

template <typename Set> bool intersects(const Set &a, const Set &b) {
  return llvm::any_of(a, [&](const Value *v) { return b.count(v); });
}

bool sameIterations(const ForOp &a, const ForOp &b) {
  return a.lo.structurallyEqual(b.lo) && a.hi.structurallyEqual(b.hi) && a.step == b.step &&
         a.parallel == b.parallel;
}

/// Renames, in `op` and everything nested in it, every mention of the values in `map`.
void renameIn(Op &op, const ValueMap &map) {
  walkOp(op, [&](Op &o) {
    if (auto *loop = llvm::dyn_cast<ForOp>(&o)) {
      loop->lo = remapExpr(loop->lo, map);
      loop->hi = remapExpr(loop->hi, map);
    }
    if (auto *mm = llvm::dyn_cast<MatmulOp>(&o))
      for (Value *&iv : mm->resetOn)
        if (auto it = map.find(iv); it != map.end())
          iv = it->second;
    if (AffineIndex *index = affineIndexOf(o)) // a mask's offset names loop variables too
      index->offset = remapExpr(index->offset, map);
    for (Access *a : o.reads())
      *a = remapAccess(*a, map);
    for (Access *w : o.writes())
      *w = remapAccess(*w, map);
  });
}

/// `b` computes what `a` computes, with `corr` mapping b's values to a's
/// (extended with the values both define).
bool equivalent(Op &a, Op &b, ValueMap &corr);

bool equivalentAccess(const Access &a, const Access &b, const ValueMap &corr) {
  Access mapped = remapAccess(b, corr);
  if (mapped.base != a.base || mapped.indices.size() != a.indices.size())
    return false;
  for (size_t i = 0; i < a.indices.size(); ++i) {
    const Index &x = a.indices[i], &y = mapped.indices[i];
    if (!x.start.simplified().structurallyEqual(y.start.simplified()) || x.isRange() != y.isRange() ||
        (x.isRange() && !x.extent->simplified().structurallyEqual(y.extent->simplified())))
      return false;
  }
  return true;
}

bool equivalentBlocks(Block &a, Block &b, ValueMap &corr) {
  if (a.ops.size() != b.ops.size())
    return false;
  for (size_t i = 0; i < a.ops.size(); ++i)
    if (!equivalent(*a.ops[i], *b.ops[i], corr))
      return false;
  return true;
}

bool equivalent(Op &a, Op &b, ValueMap &corr) {
  if (a.kind != b.kind)
    return false;
  if (auto *fa = llvm::dyn_cast<ForOp>(&a)) {
    auto *fb = llvm::cast<ForOp>(&b);
    if (!fa->lo.structurallyEqual(remapExpr(fb->lo, corr)) ||
        !fa->hi.structurallyEqual(remapExpr(fb->hi, corr)) || fa->step != fb->step ||
        fa->parallel != fb->parallel)
      return false;
    corr[fb->iv] = fa->iv;
    return equivalentBlocks(fa->body, fb->body, corr);
  }
  if (auto *aa = llvm::dyn_cast<AllocOp>(&a)) {
    auto *ab = llvm::cast<AllocOp>(&b);
    const TensorType &ta = aa->result->type, &tb = ab->result->type;
    if (ta.space != tb.space || ta.dtype != tb.dtype || ta.dims.size() != tb.dims.size() ||
        aa->bufs != ab->bufs)
      return false;
    for (size_t i = 0; i < ta.dims.size(); ++i)
      if (ta.dims[i].size != tb.dims[i].size || ta.dims[i].label != tb.dims[i].label)
        return false;
    corr[ab->result] = aa->result;
    return true;
  }
  // Instructions: only the data movers a fill holds.
  if (auto *da = llvm::dyn_cast<DmaOp>(&a)) {
    auto *db = llvm::cast<DmaOp>(&b);
    if (da->transpose != db->transpose || da->tag != db->tag)
      return false;
  } else if (!llvm::isa<TransposeOp, CopyOp>(a)) {
    return false;
  }
  auto ra = a.reads(), rb = b.reads();
  if (ra.size() != rb.size() || !equivalentAccess(*a.write(), *b.write(), corr))
    return false;
  for (size_t i = 0; i < ra.size(); ++i)
    if (!equivalentAccess(*ra[i], *rb[i], corr))
      return false;
  return true;
}

} // namespace

void appendBody(ForOp &a, ForOp &b) {
  ValueMap rename;
  rename[b.iv] = a.iv;
  for (auto &op : b.body.ops) {
    renameIn(*op, rename);
    a.body.ops.push_back(std::move(op));
  }
}

Footprint footprintOf(Op &op) {
  Footprint f;
  walkOp(op, [&](Op &o) {
    if (auto *alloc = llvm::dyn_cast<AllocOp>(&o)) {
      f.defines.insert(alloc->result);
      return;
    }
    if (auto *loop = llvm::dyn_cast<ForOp>(&o)) {
      f.defines.insert(loop->iv);
      noteUses(loop->lo, f);
      noteUses(loop->hi, f);
      return;
    }
    for (Access *a : o.reads()) {
      f.reads.insert(a->base);
      noteUses(*a, f);
    }
    if (Access *w = o.write()) {
      f.writes.insert(w->base);
      noteUses(*w, f);
    }
  });
  return f;
}

bool independent(const Footprint &a, const Footprint &b) {
  return !intersects(a.writes, b.reads) && !intersects(a.writes, b.writes) &&
         !intersects(b.writes, a.reads);
}

bool canSwap(const Footprint &moved, const Footprint &other) {
  return independent(moved, other) && !intersects(moved.uses, other.defines) &&
         !intersects(other.uses, moved.defines);
}

bool mergeLoops(Block &block, const std::function<bool(ForOp &, ForOp &)> &eligible,
                const std::function<void(ForOp &)> &onMerged) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < block.ops.size() && !again; ++i) {
      auto *a = llvm::dyn_cast<ForOp>(block.ops[i].get());
      if (!a)
        continue;
      for (size_t j = i + 1; j < block.ops.size() && !again; ++j) {
        auto *b = llvm::dyn_cast<ForOp>(block.ops[j].get());
        if (!b || !sameIterations(*a, *b))
          continue;
        Footprint fa = footprintOf(*a), fb = footprintOf(*b);
        if (!independent(fa, fb))
          continue;
        // B moves up next to A, or A down next to B, past the ops between.
        bool up = true, down = true;
        for (size_t k = i + 1; k < j; ++k) {
          Footprint fk = footprintOf(*block.ops[k]);
          up &= canSwap(fb, fk);
          down &= canSwap(fa, fk);
        }
        if ((!up && !down) || !eligible(*a, *b))
          continue;
        appendBody(*a, *b);
        if (up) {
          block.ops.erase(block.ops.begin() + j);
        } else {
          block.ops[j] = std::move(block.ops[i]);
          block.ops.erase(block.ops.begin() + i);
        }
        onMerged(*a);
        mergeLoops(a->body, eligible, onMerged);
        changed = again = true;
      }
    }
  }
  return changed;
}

const Value *fillSource(ForOp &fill, const Value *strip) {
  const Value *source = nullptr;
  bool pure = true;
  Footprint f = footprintOf(fill);
  walkOp(fill, [&](Op &o) {
    if (llvm::isa<ForOp, AllocOp>(o))
      return;
    auto *dma = llvm::dyn_cast<DmaOp>(&o);
    pure &= (dma && dma->tag == DmaTag::None) || llvm::isa<TransposeOp, CopyOp>(o);
    for (Access *a : o.reads()) {
      if (a->base->type.space != MemSpace::HBM)
        continue;
      pure &= !source || source == a->base;
      source = a->base;
    }
    for (Access *w : o.writes())
      pure &= w->base == strip || f.defines.count(w->base);
  });
  return pure && f.writes.count(strip) ? source : nullptr;
}

bool shareFills(Block &block) {
  bool changed = false;
  for (size_t i = 0; i + 1 < block.ops.size(); ++i) {
    auto *s1 = llvm::dyn_cast<AllocOp>(block.ops[i].get());
    auto *f1 = llvm::dyn_cast<ForOp>(block.ops[i + 1].get());
    if (!s1 || !f1 || s1->result->type.space != MemSpace::SBUF)
      continue;
    const Value *source = fillSource(*f1, s1->result);
    if (!source)
      continue;
    for (size_t j = i + 2; j + 1 < block.ops.size(); ++j) {
      auto *s2 = llvm::dyn_cast<AllocOp>(block.ops[j].get());
      auto *f2 = llvm::dyn_cast<ForOp>(block.ops[j + 1].get());
      if (!s2 || !f2 || fillSource(*f2, s2->result) != source)
        continue;
      ValueMap corr;
      if (!equivalent(*s1, *s2, corr) || !equivalent(*f1, *f2, corr))
        continue;
      // Every other writer of either strip would make them differ.
      bool onlyFills = true;
      for (size_t k = 0; k < block.ops.size(); ++k)
        if (k != i + 1 && k != j + 1) {
          Footprint fk = footprintOf(*block.ops[k]);
          onlyFills &= !fk.writes.count(s1->result) && !fk.writes.count(s2->result);
        }
      if (!onlyFills)
        continue;
      ValueMap rename;
      rename[s2->result] = s1->result;
      block.ops.erase(block.ops.begin() + j, block.ops.begin() + j + 2);
      for (size_t k = j; k < block.ops.size(); ++k)
        renameIn(*block.ops[k], rename);
      changed = true;
      --j;
    }
  }
  return changed;
}

} // namespace tessel::passes
