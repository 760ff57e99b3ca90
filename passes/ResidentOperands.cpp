//===- passes/ResidentOperands.cpp - Loads kept on chip across a loop -----===//
//
// A row-strip loop that `fuse-rows` built from a matmul chain (attention's
// Q @ K.T, the row-wise softmax, P @ V) reloads the matmuls' other operands
// (K.T, V) in every strip: S / 128 times each at a strip of one partition
// tile, as much traffic as the S x S intermediates the fusion removed. They
// do not depend on the strip, so when they fit they are loaded once, before
// the loop, into buffers holding the whole tensor, and the loop reads those.
//
//===----------------------------------------------------------------------===//
#include "passes/ResidentOperands.h"
#include "passes/LoopFusion.h"

#include "ir/Builder.h"
#include "ir/IndexBounds.h"

#include "llvm/Support/Casting.h"

#include <functional>
#include <map>

namespace tessel::passes {

using namespace ir;

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

namespace {

bool writtenAfter(Block &block, size_t at, const Value *t) {
  bool written = false;
  for (size_t k = at + 1; k < block.ops.size(); ++k)
    walkOp(*block.ops[k], [&](Op &o) {
      for (Access *w : o.writes())
        written |= w->base == t;
    });
  return written;
}

} // namespace

bool readFromHeld(Block &block, size_t at, const Value *x, Value *held, int64_t firstRow) {
  auto *dma = llvm::dyn_cast<DmaOp>(block.ops[at].get());
  auto *alloc = at > 0 ? llvm::dyn_cast<AllocOp>(block.ops[at - 1].get()) : nullptr;
  if (!dma || dma->src.base != x || !alloc || dma->dst.base != alloc->result ||
      dma->tag != DmaTag::None || alloc->result->type.dtype != x->type.dtype ||
      dma->dst.indices.size() != 2 || dma->src.indices.size() != 2)
    return false;
  Value *t = alloc->result;
  if (writtenAfter(block, at, t))
    return false;
  const Access &src = dma->src, &dst = dma->dst;
  // Tile element (i, j) is held element (i + off[0], j + off[1]).
  IndexExpr off[2];
  for (unsigned d = 0; d < 2; ++d)
    off[d] = src.indices[dma->transpose ? 1 - d : d].start - dst.indices[d].start;
  off[dma->transpose ? 1 : 0] = off[dma->transpose ? 1 : 0] - firstRow;
  Block rest;
  for (size_t k = at + 1; k < block.ops.size(); ++k)
    rest.ops.push_back(std::move(block.ops[k]));
  rewriteAccesses(rest, t, [&](Access &a) {
    a.base = held;
    for (unsigned d = 0; d < 2; ++d)
      a.indices[d].start = (a.indices[d].start + off[d]).simplified();
  });
  block.ops.resize(at - 1);
  for (auto &op : rest.ops)
    block.ops.push_back(std::move(op));
  return true;
}

int64_t sbufFootprint(Op &op, int64_t partitions) {
  int64_t bytes = 0;
  walkOp(op, [&](Op &o) {
    if (auto *alloc = llvm::dyn_cast<AllocOp>(&o);
        alloc && alloc->result->type.space == MemSpace::SBUF)
      bytes += alloc->result->type.bytesPerPartition(partitions) * alloc->bufs;
  });
  return bytes;
}

namespace {

/// A load in the loop that reads the same data in every iteration, and the
/// rows of its tensor it reads over them: [lo, hi); its first row modulo the
/// partitions, the same at every iteration of the loops around it (-1 when
/// it is not), and its rows per tile at most.
struct InvariantLoad {
  Block *block;
  size_t at;
  int64_t lo, hi;
  int64_t firstRowMod, tileRows;
};

/// Whether nothing about `a` changes with the loop variable `iv`.
bool invariant(const Access &a, const Value *iv) {
  for (const Index &i : a.indices)
    if (i.start.mentions(iv) || (i.extent && i.extent->mentions(iv)))
      return false;
  return true;
}

/// The loads of `block` (recursively, through loops of constant bounds,
/// `nest` around it) of HBM tensors `loop` does not write, that do not depend on `iv`.
void findInvariantLoads(Block &block, const Value *iv, const Footprint &loop, int64_t partitions,
                        std::vector<ForOp *> &nest, std::vector<InvariantLoad> &out) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (auto *inner = llvm::dyn_cast<ForOp>(block.ops[i].get())) {
      if (inner->lo.isConst() && inner->hi.isConst()) {
        nest.push_back(inner);
        findInvariantLoads(inner->body, iv, loop, partitions, nest, out);
        nest.pop_back();
      }
      continue;
    }
    auto *dma = llvm::dyn_cast<DmaOp>(block.ops[i].get());
    auto *tile = i > 0 ? llvm::dyn_cast<AllocOp>(block.ops[i - 1].get()) : nullptr;
    if (!dma || !tile || tile->result != dma->dst.base || dma->tag != DmaTag::None ||
        tile->result->type.dtype != dma->src.base->type.dtype || dma->dst.indices.size() != 2 ||
        writtenAfter(block, i, tile->result) || dma->src.base->type.space != MemSpace::HBM ||
        dma->src.indices.size() != 2 || dma->src.base->type.dims.size() != 2 ||
        loop.writes.count(dma->src.base) || !invariant(dma->src, iv) || !invariant(dma->dst, iv))
      continue; // what readFromHeld takes, and only that: every held buffer gets its readers
    const Index &rows = dma->src.indices[0];
    LoopNestBounds bounds(nest);
    auto lo = bounds.min(rows.start);
    auto hi = rows.extent ? bounds.max(rows.start + *rows.extent) : std::nullopt;
    auto tileRows = rows.extent ? bounds.max(*rows.extent) : std::nullopt;
    auto mod = bounds.residue(rows.start, partitions);
    if (lo && hi && tileRows)
      out.push_back({&block, i, lo->value, hi->value, mod.value_or(-1), tileRows->value});
  }
}

/// `%X_res = alloc sbuf` holding rows [lo, hi) of `x` (transposed: x's
/// columns on the partitions), and the loop filling it one partition tile of
/// those rows at a time, appended to `out`.
Value *appendHeldFill(Kernel &kernel, Block &out, Value *x, bool transposed, int64_t lo,
                      int64_t hi, llvm::SMLoc loc) {
  const int64_t P = kernel.geometry.partitions;
  const TensorType &t = x->type;
  int64_t rows = hi - lo, cols = t.dims[1].size;
  std::vector<Dim> dims = {Dim{t.dims[0].label, rows}, t.dims[1]};
  if (transposed)
    std::swap(dims[0], dims[1]);
  else if (rows > P)
    dims[0].size = (rows + P - 1) / P * P;
  Value *held = appendAlloc(kernel, out, x->name + "_res", MemSpace::SBUF, t.dtype, dims, 1, loc);
  ForOp &fill = appendLoop(kernel, out, "r", IndexExpr(lo), IndexExpr(hi), P, loc);
  IndexExpr r = IndexExpr::var(fill.iv), at = (r - lo).simplified();
  IndexExpr ext = rows <= P ? IndexExpr(rows)
                  : rows % P == 0 ? IndexExpr(P)
                                  : min(IndexExpr(P), IndexExpr(hi) - r);
  auto dma = std::make_unique<DmaOp>();
  dma->loc = loc;
  dma->transpose = transposed;
  dma->src = makeAccess(x, {{r, ext}, {IndexExpr(0), IndexExpr(cols)}});
  dma->dst = transposed ? makeAccess(held, {{IndexExpr(0), IndexExpr(cols)}, {at, ext}})
                        : makeAccess(held, {{at, ext}, {IndexExpr(0), IndexExpr(cols)}});
  dma->src.loc = dma->dst.loc = loc;
  fill.body.ops.push_back(std::move(dma));
  return held;
}

/// What one held buffer keeps: rows [lo, hi) of a tensor, maybe transposed.
struct Held {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  Value *buffer = nullptr;
};

using HeldKey = std::pair<const Value *, bool>;

/// The rows of each (tensor, transposed) the loads read; a region must start
/// on a partition tile when it spans several (reads stay in their group).
std::map<HeldKey, Held> regionsOf(llvm::ArrayRef<InvariantLoad> loads, int64_t P) {
  std::map<HeldKey, Held> held;
  for (const InvariantLoad &l : loads) {
    auto &dma = llvm::cast<DmaOp>(*l.block->ops[l.at]);
    Held &h = held[{dma.src.base, dma.transpose}];
    h.lo = std::min(h.lo, l.lo);
    h.hi = std::max(h.hi, l.hi);
  }
  for (auto &[key, h] : held)
    if (h.hi - h.lo > P && h.lo % P != 0)
      h.lo = h.lo / P * P;
  // A tile's rows on the partitions must stay in one partition group of the
  // held buffer (each head's 96 rows of a stacked weight, the second head's
  // at 96, would cross one: that weight streams).
  for (const InvariantLoad &l : loads) {
    auto &dma = llvm::cast<DmaOp>(*l.block->ops[l.at]);
    Held &h = held[{dma.src.base, dma.transpose}];
    if (dma.transpose || h.lo == INT64_MAX)
      continue;
    int64_t at = ((l.firstRowMod - h.lo) % P + P) % P;
    if (l.firstRowMod < 0 || at + l.tileRows > P)
      h.lo = INT64_MAX;
  }
  return held;
}

} // namespace

std::vector<std::string> keepOperandsResident(Kernel &kernel, size_t at, int64_t budget) {
  const int64_t P = kernel.geometry.partitions;
  auto &loop = llvm::cast<ForOp>(*kernel.body.ops[at]);
  std::vector<InvariantLoad> loads;
  std::vector<ForOp *> nest;
  findInvariantLoads(loop.body, loop.iv, footprintOf(loop), P, nest, loads);
  int64_t used = 0;
  std::map<HeldKey, Held> held = regionsOf(loads, P);
  std::vector<std::string> kept;
  Block fills;
  // Latest first: a rewrite only moves the ops after its own load.
  for (auto it = loads.rbegin(); it != loads.rend(); ++it) {
    auto &dma = llvm::cast<DmaOp>(*it->block->ops[it->at]);
    Value *x = dma.src.base;
    Held &h = held[{x, dma.transpose}];
    if ((dma.transpose && x->type.dims[1].size > P) || h.lo == INT64_MAX)
      continue; // never held: every load of it stays
    if (!h.buffer) {
      TensorType t = x->type;
      t.dims[0].size = h.hi - h.lo;
      if (dma.transpose)
        std::swap(t.dims[0], t.dims[1]);
      else if (t.dims[0].size > P)
        t.dims[0].size = (t.dims[0].size + P - 1) / P * P;
      t.space = MemSpace::SBUF;
      int64_t bytes = t.bytesPerPartition(P);
      if (used + bytes > budget) {
        h.lo = INT64_MAX;
        continue;
      }
      used += bytes;
      h.buffer = appendHeldFill(kernel, fills, x, dma.transpose, h.lo, h.hi, dma.loc);
      kept.push_back(x->name);
    }
    readFromHeld(*it->block, it->at, x, h.buffer, h.lo);
  }
  kernel.body.ops.insert(kernel.body.ops.begin() + at, std::make_move_iterator(fills.ops.begin()),
                         std::make_move_iterator(fills.ops.end()));
  return kept;
}

} // namespace tessel::passes
