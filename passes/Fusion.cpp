#include "passes/Fusion.h"

#include "ir/Builder.h"
#include "ir/Clone.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {
namespace {

using namespace ir;

/// Whether `op` (recursively) reads / writes `v`, or mentions loop var `iv`.
bool reads(Op &op, const Value *v) {
  bool found = false;
  walkOp(op, [&](Op &o) {
    for (Access *a : o.reads())
      found |= a->base == v;
  });
  return found;
}

bool writes(Op &op, const Value *v) {
  bool found = false;
  walkOp(op, [&](Op &o) {
    for (Access *w : o.writes())
      found |= w->base == v;
  });
  return found;
}

bool mentionsVar(Op &op, const Value *iv) {
  bool found = false;
  auto check = [&](const Access &a) {
    for (const Index &idx : a.indices)
      found |= idx.start.mentions(iv) || (idx.extent && idx.extent->mentions(iv));
  };
  walkOp(op, [&](Op &o) {
    if (auto *f = llvm::dyn_cast<ForOp>(&o))
      found |= f->lo.mentions(iv) || f->hi.mentions(iv);
    for (Access *a : o.reads())
      check(*a);
    for (Access *w : o.writes())
      check(*w);
  });
  return found;
}

struct ConsumerSite {
  ForOp *rowLoop;  // Q's row-strip loop
  size_t stripPos; // index of `alloc S` in its body; the fill loop follows
  Value *strip;
};

/// Q's body: [..., %S = alloc sbuf, fill loop (reads C, writes S), ...]
/// with no other read of C.
std::optional<ConsumerSite> matchConsumer(ForOp &q, Value *c) {
  Block &b = q.body;
  for (size_t i = 0; i + 1 < b.ops.size(); ++i) {
    auto *alloc = llvm::dyn_cast<AllocOp>(b.ops[i].get());
    auto *fill = llvm::dyn_cast<ForOp>(b.ops[i + 1].get());
    if (!alloc || !fill || alloc->result->type.space != MemSpace::SBUF || !reads(*fill, c) ||
        !writes(*fill, alloc->result))
      continue;
    bool elsewhere = false;
    for (size_t j = 0; j < b.ops.size(); ++j)
      if (j != i + 1)
        elsewhere |= reads(*b.ops[j], c);
    // The fill loop only moves C into S: loads of C, transposes and copies
    // through its own tiles -- no computation, no other tensor.
    bool pure = true;
    walkOp(*fill, [&](Op &o) {
      pure &= llvm::isa<ForOp, AllocOp, DmaOp, TransposeOp, CopyOp>(o);
      for (Access *a : o.reads())
        pure &= a->base == c || a->base->type.space != MemSpace::HBM;
      for (Access *w : o.writes())
        pure &= w->base == alloc->result || w->base->type.space != MemSpace::HBM;
    });
    if (elsewhere || !pure)
      return std::nullopt;
    return ConsumerSite{&q, i, alloc->result};
  }
  return std::nullopt;
}

bool sameRowStrips(const ForOp &a, const ForOp &b) {
  return a.lo.isConst() && a.hi.isConst() && b.lo.isConst() && b.hi.isConst() &&
         a.lo.constValue() == b.lo.constValue() && a.hi.constValue() == b.hi.constValue() &&
         a.step == b.step;
}

/// Replaces the stores into `c` within `block` (recursively) by writes into
/// the strip `s` of the row strip starting at `rowIv`. Returns false when a
/// store has a shape it cannot retarget.
bool retargetStores(Kernel &kernel, Block &block, Value *c, Value *s, Value *rowIv,
                    bool &addedTransposes) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    Op *op = block.ops[i].get();
    if (auto *loop = llvm::dyn_cast<ForOp>(op)) {
      if (!retargetStores(kernel, loop->body, c, s, rowIv, addedTransposes))
        return false;
      continue;
    }
    auto *store = llvm::dyn_cast<DmaOp>(op);
    if (!store || store->dst.base != c)
      continue;
    if (store->transpose || store->dst.indices.size() != 2 || !store->dst.indices[0].isRange() ||
        !store->dst.indices[1].isRange() || s->type.dims.size() != 2)
      return false;
    // C's index along each dimension, as an index into the strip: the
    // row-blocked dimension (its start moves with the row strip) becomes
    // block-relative.
    auto stripIndex = [&](unsigned cDim) -> std::optional<std::pair<unsigned, Index>> {
      const Dim &d = c->type.dims[cDim];
      for (unsigned e = 0; e < 2; ++e)
        if (s->type.dims[e].label == d.label) {
          Index idx = store->dst.indices[cDim];
          if (idx.start.mentions(rowIv))
            idx.start = (idx.start - IndexExpr::var(rowIv)).simplified();
          return std::make_pair(e, idx);
        }
      return std::nullopt;
    };
    auto i0 = stripIndex(0), i1 = stripIndex(1);
    if (!i0 || !i1 || i0->first == i1->first)
      return false;
    if (i0->first == 0) {
      // Same layout: a vector-engine copy of the tile into the strip.
      auto copy = std::make_unique<CopyOp>();
      copy->loc = store->loc;
      copy->dst.base = s;
      copy->dst.indices = {i0->second, i1->second};
      copy->src = store->src;
      block.ops[i] = std::move(copy);
      continue;
    }
    // Swapped layout: transpose partitions x partitions pieces of the tile on
    // the tensor engine into the strip. The tile's column extent must be constant.
    const Access &src = store->src;
    if (!src.indices[1].extent || !src.indices[1].extent->isConst() || !src.indices[0].extent)
      return false;
    int64_t width = src.indices[1].extent->constValue();
    IndexExpr rows = *src.indices[0].extent;
    const Dim &rowDim = src.base->type.dims[0], &colDim = src.base->type.dims[1];
    Block holder; // appendLoop/appendAlloc build into a block; the loop then replaces the store
    const int64_t tile = kernel.geometry.partitions;
    ForOp &built = appendLoop(kernel, holder, "j", 0, width, tile, store->loc);
    IndexExpr j = IndexExpr::var(built.iv);
    IndexExpr ej = width % tile == 0 ? IndexExpr(tile) : min(IndexExpr(tile), IndexExpr(width) - j);
    Value *p = appendAlloc(kernel, built.body, s->name + "_psum", MemSpace::PSUM, DType::F32,
                           {Dim{colDim.label, tile}, Dim{rowDim.label, tile}}, 2, store->loc);
    auto tr = std::make_unique<TransposeOp>();
    tr->loc = store->loc;
    tr->dst = makeAccess(p, {{0, ej}, {0, rows}});
    tr->src = makeAccess(src.base, {{src.indices[0].start, rows}, {(src.indices[1].start + j).simplified(), ej}});
    built.body.ops.push_back(std::move(tr));
    auto copy = std::make_unique<CopyOp>();
    copy->loc = store->loc;
    copy->dst.base = s;
    // i1 is the strip's partition dim (C's column dimension), i0 its free dim.
    copy->dst.indices = {Index{(i1->second.start + j).simplified(), ej}, Index{i0->second.start, rows}};
    copy->src = makeAccess(p, {{0, ej}, {0, rows}});
    built.body.ops.push_back(std::move(copy));
    block.ops[i] = std::move(holder.ops.front());
    addedTransposes = true;
  }
  return true;
}

/// The transposes added into a strip need a PSUM bank next to the
/// producer's accumulators, which double-buffering may already fill (8 banks):
/// multi-bank accumulators of the fused copy give up their second buffer.
void makeRoomForTransposes(Block &block, int64_t partitions) {
  for (auto &op : block.ops) {
    if (auto *alloc = llvm::dyn_cast<AllocOp>(op.get())) {
      const TensorType &t = alloc->result->type;
      if (t.space == MemSpace::PSUM && t.partitionFolds(partitions) > 1)
        alloc->bufs = 1;
    } else if (auto *loop = llvm::dyn_cast<ForOp>(op.get())) {
      makeRoomForTransposes(loop->body, partitions);
    }
  }
}

/// Sorts the top-level users of the scratch tensor `c` into the loop nests
/// writing it and those reading it; false when another op touches it (a
/// top-level op, or a nest both reading and writing it).
bool splitUsers(Block &top, const AllocOp &cAlloc, llvm::SmallVectorImpl<ForOp *> &producers,
                llvm::SmallVectorImpl<ForOp *> &consumers) {
  Value *c = cAlloc.result;
  for (auto &op : top.ops) {
    if (op.get() == &cAlloc)
      continue;
    bool r = reads(*op, c), w = writes(*op, c);
    auto *loop = llvm::dyn_cast<ForOp>(op.get());
    if ((r || w) && (!loop || (r && w)))
      return false;
    if (w)
      producers.push_back(loop);
    else if (r)
      consumers.push_back(loop);
  }
  return true;
}

/// Only matmul nests writing nothing else to HBM are producers: an
/// elementwise nest over the same rows is left to fuse-epilogue, which
/// removes it altogether, and a nest that also writes another tensor (two
/// siblings merged) would move that write into the consumer, possibly past
/// the tensor's readers.
bool isMatmulProducer(ForOp &p, const Value *c) {
  bool mm = false, other = false;
  walkOp(p, [&](Op &o) {
    mm |= llvm::isa<MatmulOp>(o);
    if (Access *w = o.write())
      other |= w->base != c && w->base->type.space == MemSpace::HBM;
  });
  return mm && !other;
}

} // namespace


bool fuseProducers(Kernel &kernel, StripPlacement placement) {
  bool changed = false;
  Block &top = kernel.body;
  for (size_t ci = 0; ci < top.ops.size(); ++ci) {
    auto *cAlloc = llvm::dyn_cast<AllocOp>(top.ops[ci].get());
    if (!cAlloc || cAlloc->result->type.space != MemSpace::HBM ||
        cAlloc->result->role != TensorRole::Scratch)
      continue;
    Value *c = cAlloc->result;
    llvm::SmallVector<ForOp *, 2> producers, consumers;
    if (!splitUsers(top, *cAlloc, producers, consumers) || producers.empty() ||
        producers.size() != consumers.size() ||
        !llvm::all_of(producers, [c](ForOp *p) { return isMatmulProducer(*p, c); }))
      continue;
    // Pair every consumer row-strip loop with the producer loop over the same rows.
    llvm::SmallVector<std::pair<ForOp *, ConsumerSite>, 2> pairs;
    for (ForOp *q : consumers) {
      auto site = matchConsumer(*q, c);
      auto p = llvm::find_if(producers, [&](ForOp *p) { return sameRowStrips(*p, *q); });
      if (!site || p == producers.end())
        break;
      pairs.push_back({*p, *site});
    }
    if (pairs.size() != consumers.size())
      continue;

    // Build every fused body first; commit only if all retarget cleanly.
    struct Fused {
      ConsumerSite site;
      std::vector<std::unique_ptr<Op>> ops;
      ForOp *column = nullptr;
    };
    std::vector<Fused> fused;
    bool ok = true;
    for (auto &[p, site] : pairs) {
      Fused f{site, {}, nullptr};
      ValueMap map;
      map[p->iv] = site.rowLoop->iv;
      Block clone;
      for (const auto &op : p->body.ops)
        clone.ops.push_back(cloneOp(*op, kernel, map));
      bool addedTransposes = false;
      ok &= retargetStores(kernel, clone, c, site.strip, site.rowLoop->iv, addedTransposes);
      if (addedTransposes)
        makeRoomForTransposes(clone, kernel.geometry.partitions);
      f.ops = std::move(clone.ops);
      if (placement == StripPlacement::PerColumnBlock) {
        // The one column loop reading the strip; a consumer whose columns
        // are split over two loops (a peeled partial tile) keeps its strip
        // unfused here, since the strip cannot live in both.
        Block &qb = site.rowLoop->body;
        unsigned readers = 0;
        for (size_t j = site.stripPos + 2; j < qb.ops.size(); ++j)
          if (auto *col = llvm::dyn_cast<ForOp>(qb.ops[j].get()); col && reads(*col, site.strip)) {
            f.column = f.column ? f.column : col;
            ++readers;
          }
        ok &= readers == 1;
      }
      fused.push_back(std::move(f));
    }
    if (!ok)
      continue;

    for (Fused &f : fused) {
      Block &qb = f.site.rowLoop->body;
      std::unique_ptr<Op> stripAlloc = std::move(qb.ops[f.site.stripPos]);
      qb.ops.erase(qb.ops.begin() + f.site.stripPos, qb.ops.begin() + f.site.stripPos + 2);
      Block &dest = placement == StripPlacement::PerRowStrip ? qb : f.column->body;
      size_t at = placement == StripPlacement::PerRowStrip ? f.site.stripPos : 0;
      std::vector<std::unique_ptr<Op>> insert;
      insert.push_back(std::move(stripAlloc));
      for (auto &op : f.ops)
        insert.push_back(std::move(op));
      dest.ops.insert(dest.ops.begin() + at, std::make_move_iterator(insert.begin()),
                      std::make_move_iterator(insert.end()));
    }
    llvm::erase_if(top.ops, [&](const std::unique_ptr<Op> &op) {
      return op.get() == cAlloc || llvm::is_contained(producers, op.get());
    });
    changed = true;
    ci = 0; // the top level changed: rescan from the start
  }
  return changed;
}

bool hoistFusedStrips(Kernel &kernel) {
  bool changed = false;
  for (auto &topOp : kernel.body.ops) {
    auto *row = llvm::dyn_cast<ForOp>(topOp.get());
    if (!row)
      continue;
    Block &rb = row->body;
    for (size_t ci = 0; ci < rb.ops.size(); ++ci) {
      auto *column = llvm::dyn_cast<ForOp>(rb.ops[ci].get());
      if (!column || column->body.ops.empty())
        continue;
      Block &cb = column->body;
      auto *stripAlloc = llvm::dyn_cast<AllocOp>(cb.ops[0].get());
      if (!stripAlloc || stripAlloc->result->type.space != MemSpace::SBUF)
        continue;
      Value *strip = stripAlloc->result;
      // The strip's computation: the ops up to the last writer of the strip
      // before its first reader (what follows, such as the load of B's
      // column block in TileGen's held form, is the column block's own work).
      size_t firstReader = 1, end = 1;
      while (firstReader < cb.ops.size() && !reads(*cb.ops[firstReader], strip))
        ++firstReader;
      for (size_t j = 1; j < firstReader; ++j)
        if (writes(*cb.ops[j], strip))
          end = j + 1;
      if (end == 1 || firstReader == cb.ops.size())
        continue;
      bool invariant = true;
      for (size_t j = 1; j < end; ++j)
        invariant &= !mentionsVar(*cb.ops[j], column->iv);
      if (!invariant)
        continue;
      std::vector<std::unique_ptr<Op>> hoisted;
      for (size_t j = 0; j < end; ++j)
        hoisted.push_back(std::move(cb.ops[j]));
      cb.ops.erase(cb.ops.begin(), cb.ops.begin() + end);
      rb.ops.insert(rb.ops.begin() + ci, std::make_move_iterator(hoisted.begin()),
                    std::make_move_iterator(hoisted.end()));
      // Visit the hoisted ops next: in a chain of more than two matmuls the
      // strip's computation holds the column loop of a deeper producer, with
      // that producer's strip still inside it (fuse nests them level by level).
      changed = true;
    }
  }
  return changed;
}

} // namespace tessel::passes
