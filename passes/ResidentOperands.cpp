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

bool readFromHeld(Block &block, size_t at, const Value *x, Value *held) {
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

/// A load in the loop that reads the same data in every iteration.
struct InvariantLoad {
  Block *block;
  size_t at;
};

/// Whether nothing about `a` changes with the loop variable `iv`.
bool invariant(const Access &a, const Value *iv) {
  for (const Index &i : a.indices)
    if (i.start.mentions(iv) || (i.extent && i.extent->mentions(iv)))
      return false;
  return true;
}

/// The loads of `block` (recursively, through loops of constant bounds) of
/// HBM tensors `written` does not hold, that do not depend on `iv`.
void findInvariantLoads(Block &block, const Value *iv, const Footprint &loop,
                        std::vector<InvariantLoad> &out) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (auto *inner = llvm::dyn_cast<ForOp>(block.ops[i].get())) {
      if (inner->lo.isConst() && inner->hi.isConst())
        findInvariantLoads(inner->body, iv, loop, out);
      continue;
    }
    auto *dma = llvm::dyn_cast<DmaOp>(block.ops[i].get());
    if (dma && i > 0 && llvm::isa<AllocOp>(block.ops[i - 1].get()) &&
        dma->src.base->type.space == MemSpace::HBM && dma->src.indices.size() == 2 &&
        dma->src.base->type.dims.size() == 2 && !loop.writes.count(dma->src.base) &&
        invariant(dma->src, iv) && invariant(dma->dst, iv))
      out.push_back({&block, i});
  }
}

/// `%X_res = alloc sbuf` holding all of `x` (transposed: x's columns on the
/// partitions), and the loop filling it one partition tile of x's rows at a
/// time, appended to `out`.
Value *appendHeldFill(Kernel &kernel, Block &out, Value *x, bool transposed, llvm::SMLoc loc) {
  const int64_t P = kernel.geometry.partitions;
  const TensorType &t = x->type;
  int64_t rows = t.dims[0].size, cols = t.dims[1].size;
  std::vector<Dim> dims = {t.dims[0], t.dims[1]};
  if (transposed)
    std::swap(dims[0], dims[1]);
  else if (rows > P)
    dims[0].size = (rows + P - 1) / P * P;
  Value *held = appendAlloc(kernel, out, x->name + "_res", MemSpace::SBUF, t.dtype, dims, 1, loc);
  ForOp &fill = appendLoop(kernel, out, "r", IndexExpr(0), IndexExpr(rows), P, loc);
  IndexExpr r = IndexExpr::var(fill.iv);
  IndexExpr ext = rows <= P ? IndexExpr(rows)
                  : rows % P == 0 ? IndexExpr(P)
                                  : min(IndexExpr(P), IndexExpr(rows) - r);
  auto dma = std::make_unique<DmaOp>();
  dma->loc = loc;
  dma->transpose = transposed;
  dma->src = makeAccess(x, {{r, ext}, {IndexExpr(0), IndexExpr(cols)}});
  dma->dst = transposed ? makeAccess(held, {{IndexExpr(0), IndexExpr(cols)}, {r, ext}})
                        : makeAccess(held, {{r, ext}, {IndexExpr(0), IndexExpr(cols)}});
  dma->src.loc = dma->dst.loc = loc;
  fill.body.ops.push_back(std::move(dma));
  return held;
}

} // namespace

std::vector<std::string> keepOperandsResident(Kernel &kernel, size_t at, int64_t budget) {
  const int64_t P = kernel.geometry.partitions;
  auto &loop = llvm::cast<ForOp>(*kernel.body.ops[at]);
  std::vector<InvariantLoad> loads;
  findInvariantLoads(loop.body, loop.iv, footprintOf(loop), loads);
  int64_t used = sbufFootprint(loop, P);
  std::map<std::pair<const Value *, bool>, Value *> held;
  std::vector<std::string> kept;
  Block fills;
  // Latest first: a rewrite only moves the ops after its own load.
  for (auto it = loads.rbegin(); it != loads.rend(); ++it) {
    auto &dma = llvm::cast<DmaOp>(*it->block->ops[it->at]);
    Value *x = dma.src.base;
    if (dma.transpose && x->type.dims[1].size > P)
      continue;
    Value *&h = held[{x, dma.transpose}];
    if (!h) {
      TensorType t = x->type;
      if (dma.transpose)
        std::swap(t.dims[0], t.dims[1]);
      else if (t.dims[0].size > P)
        t.dims[0].size = (t.dims[0].size + P - 1) / P * P;
      t.space = MemSpace::SBUF;
      int64_t bytes = t.bytesPerPartition(P);
      if (used + bytes > budget) {
        held.erase({x, dma.transpose});
        continue;
      }
      used += bytes;
      h = appendHeldFill(kernel, fills, x, dma.transpose, dma.loc);
      kept.push_back(x->name);
    }
    readFromHeld(*it->block, it->at, x, h);
  }
  kernel.body.ops.insert(kernel.body.ops.begin() + at, std::make_move_iterator(fills.ops.begin()),
                         std::make_move_iterator(fills.ops.end()));
  return kept;
}

} // namespace tessel::passes
