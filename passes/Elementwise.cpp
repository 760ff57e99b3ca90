//===- passes/Elementwise.cpp - Matching and transposing elementwise nests ===//
#include "passes/Elementwise.h"

#include "ir/Builder.h"
#include "ir/Clone.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace tessel::passes {

using namespace ir;

namespace {

bool isCompute(const Op &op) {
  return llvm::isa<ActivationOp, TensorTensorOp, TensorScalarOp, CopyOp>(op);
}

/// The extent of the tile at `iv` along a dimension of `size` cut in `tile`s.
IndexExpr extent(int64_t size, int64_t tile, Value *iv) {
  return size % tile == 0 ? IndexExpr(tile) : min(IndexExpr(tile), IndexExpr(size) - IndexExpr::var(iv));
}

} // namespace

bool sameIndices(const Access &a, const Access &b) {
  if (a.indices.size() != b.indices.size())
    return false;
  for (size_t i = 0; i < a.indices.size(); ++i) {
    const Index &x = a.indices[i], &y = b.indices[i];
    if (!x.start.structurallyEqual(y.start) || x.isRange() != y.isRange() ||
        (x.isRange() && !x.extent->structurallyEqual(*y.extent)))
      return false;
  }
  return true;
}

void eraseUnusedTiles(Block &block) {
  llvm::SmallPtrSet<const Value *, 8> used;
  for (auto &op : block.ops)
    walkOp(*op, [&](Op &x) {
      for (Access *a : x.reads())
        used.insert(a->base);
      for (Access *w : x.writes())
        used.insert(w->base);
    });
  llvm::erase_if(block.ops, [&](const std::unique_ptr<Op> &op) {
    auto *alloc = llvm::dyn_cast<AllocOp>(op.get());
    return alloc && alloc->result->type.space == MemSpace::SBUF && !used.count(alloc->result);
  });
}

std::optional<ElementwiseNest> matchElementwiseNest(Op &op) {
  auto *outer = llvm::dyn_cast<ForOp>(&op);
  if (!outer || outer->body.ops.size() != 1)
    return std::nullopt;
  auto *inner = llvm::dyn_cast<ForOp>(outer->body.ops[0].get());
  if (!inner)
    return std::nullopt;
  ElementwiseNest nest;
  nest.outer = outer;
  nest.inner = inner;
  llvm::SmallPtrSet<Value *, 4> tiles; // SBUF tiles allocated in the body
  for (auto &o : inner->body.ops) {
    if (auto *a = llvm::dyn_cast<AllocOp>(o.get())) {
      if (a->result->type.space != MemSpace::SBUF)
        return std::nullopt;
      tiles.insert(a->result);
    } else if (auto *dma = llvm::dyn_cast<DmaOp>(o.get())) {
      if (dma->tag != DmaTag::None || dma->transpose)
        return std::nullopt;
      bool load = dma->src.base->type.space == MemSpace::HBM && tiles.count(dma->dst.base);
      bool store = dma->dst.base->type.space == MemSpace::HBM && tiles.count(dma->src.base);
      if (load && !nest.compute)
        nest.loads.push_back(dma);
      else if (store && nest.compute && !nest.store)
        nest.store = dma;
      else
        return std::nullopt;
    } else if (isCompute(*o) && !nest.compute) {
      nest.compute = o.get();
    } else {
      return std::nullopt;
    }
  }
  if (!nest.compute || !nest.store || nest.loads.empty() ||
      nest.compute->write()->base != nest.store->src.base)
    return std::nullopt;
  // Pointwise: every operand tile covers the result tile's region, and the
  // compute reads only the loaded tiles.
  for (DmaOp *load : nest.loads)
    if (!sameIndices(load->src, nest.store->dst) ||
        load->src.base->type.dims.size() != 2 || load->src.base == nest.dest())
      return std::nullopt;
  for (Access *r : nest.compute->reads())
    if (!llvm::any_of(nest.loads, [&](DmaOp *l) { return l->dst.base == r->base; }))
      return std::nullopt;
  if (nest.dest()->type.dims.size() != 2)
    return std::nullopt;
  return nest;
}

namespace {

/// Builds the nest computing D^T = f(A^T, ...) tile by tile, reading each
/// operand through a transposing DMA and storing into `dt`.
std::unique_ptr<Op> buildTransposed(Kernel &kernel, const ElementwiseNest &e, Value *dt) {
  Value *d = e.dest();
  const Dim &mDim = d->type.dims[0], &nDim = d->type.dims[1];
  // Partition-wide tiles of D's columns, moving-wide (one PSUM bank, as the
  // producers' accumulators) of its rows, or all of them when fewer.
  const int64_t rowTile = kernel.geometry.partitions;
  const int64_t width = std::min<int64_t>(kernel.geometry.maxMoving, mDim.size);
  llvm::SMLoc loc = e.outer->loc;
  Block holder;
  ForOp &rows = appendLoop(kernel, holder, "m", 0, mDim.size, width, loc);
  IndexExpr em = extent(mDim.size, width, rows.iv);
  ForOp &cols = appendLoop(kernel, rows.body, "n", 0, nDim.size, rowTile, loc);
  IndexExpr en = extent(nDim.size, rowTile, cols.iv);
  IndexExpr m = IndexExpr::var(rows.iv), n = IndexExpr::var(cols.iv);
  Block &body = cols.body;
  ValueMap map;
  for (DmaOp *load : e.loads) {
    Value *src = load->src.base;
    Value *tile = appendAlloc(kernel, body, src->name + "_tile", MemSpace::SBUF, src->type.dtype,
                              {Dim{nDim.label, rowTile}, Dim{mDim.label, width}}, 2, load->loc);
    map[load->dst.base] = tile;
    auto dma = std::make_unique<DmaOp>();
    dma->loc = load->loc;
    dma->transpose = true;
    dma->dst = makeAccess(tile, {{0, en}, {0, em}});
    dma->src = makeAccess(src, {{m, em}, {n, en}});
    body.ops.push_back(std::move(dma));
  }
  Value *out = appendAlloc(kernel, body, dt->name + "_tile", MemSpace::SBUF, d->type.dtype,
                           {Dim{nDim.label, rowTile}, Dim{mDim.label, width}}, 2, e.compute->loc);
  map[e.store->src.base] = out;
  std::unique_ptr<Op> compute = cloneOp(*e.compute, kernel, map);
  for (Access *a : compute->reads())
    *a = makeAccess(a->base, {{0, en}, {0, em}});
  *compute->write() = makeAccess(out, {{0, en}, {0, em}});
  body.ops.push_back(std::move(compute));
  auto store = std::make_unique<DmaOp>();
  store->loc = e.store->loc;
  store->dst = makeAccess(dt, {{n, en}, {m, em}});
  store->src = makeAccess(out, {{0, en}, {0, em}});
  body.ops.push_back(std::move(store));
  return std::move(holder.ops.front());
}

} // namespace

bool transposeElementwiseNests(Kernel &kernel) {
  // How each HBM tensor is read: through transposing DMAs, or otherwise.
  struct Reads {
    llvm::SmallVector<DmaOp *, 4> transposed;
    unsigned other = 0;
  };
  llvm::DenseMap<Value *, Reads> reads;
  llvm::DenseMap<Value *, unsigned> writes;
  walk(kernel.body, [&](Op &op, llvm::ArrayRef<ForOp *>) {
    auto *dma = llvm::dyn_cast<DmaOp>(&op);
    for (Access *a : op.reads())
      if (a->base->type.space == MemSpace::HBM) {
        if (dma && dma->transpose)
          reads[a->base].transposed.push_back(dma);
        else
          ++reads[a->base].other;
      }
    if (Access *w = op.write(); w && w->base->type.space == MemSpace::HBM)
      ++writes[w->base];
  });
  bool changed = false;
  for (auto &op : kernel.body.ops) {
    auto e = matchElementwiseNest(*op);
    if (!e)
      continue;
    Value *d = e->dest();
    Reads &r = reads[d];
    if (d->role != TensorRole::Scratch || r.transposed.empty() || r.other || writes[d] != 1 ||
        !llvm::all_of(e->loads, [](DmaOp *l) { return l->src.base->role == TensorRole::Scratch; }))
      continue;
    // D^T takes D's place (its alloc), with the dimensions swapped.
    Value *dt = kernel.newValue(ValueKind::Buffer, kernel.uniqueName(d->name + "T"));
    dt->type = d->type;
    std::swap(dt->type.dims[0], dt->type.dims[1]);
    dt->role = TensorRole::Scratch;
    dt->loc = d->loc;
    auto *alloc = llvm::cast<AllocOp>(d->def);
    alloc->result = dt;
    dt->def = alloc;
    for (DmaOp *load : r.transposed) {
      load->transpose = false;
      load->src.base = dt;
      std::swap(load->src.indices[0], load->src.indices[1]);
    }
    op = buildTransposed(kernel, *e, dt);
    changed = true;
  }
  return changed;
}

} // namespace tessel::passes
